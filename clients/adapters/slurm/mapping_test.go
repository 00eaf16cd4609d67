package slurm

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// fixtureSnapshot reads the recorded outputs: squeue.json (or the named squeue fixture),
// sinfo.json and partitions.txt.
func fixtureSnapshot(t *testing.T, squeue string) *Snapshot {
	t.Helper()
	f := newFakeSlurm(t, squeue)
	snap, err := (&Reader{Runner: f}).Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

func mustMap(t *testing.T, snap *Snapshot, opts Options) *ClusterState {
	t.Helper()
	st, err := Map(snap, opts)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func TestMapNodes(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	want := map[string]*sluicev1.Node{
		"sn1": {Name: "sn1", Allocatable: map[string]string{"cpu": "4", "memory": "4000Mi", "nvidia.com/gpu": "2"},
			Labels: map[string]string{"slurm.partition/batch": "true", "slurm.partition/gpu": "true"}},
		"sn2": {Name: "sn2", Allocatable: map[string]string{"cpu": "4", "memory": "4000Mi", "nvidia.com/gpu": "2"},
			Labels: map[string]string{"slurm.partition/batch": "true", "slurm.partition/gpu": "true"}},
		// Drained for maintenance while a job runs on it.
		"sn3": {Name: "sn3", Allocatable: map[string]string{"cpu": "4", "memory": "4000Mi"},
			Labels: map[string]string{"slurm.partition/batch": "true"}, Unschedulable: true},
	}
	if len(st.Nodes) != len(want) {
		t.Fatalf("%d nodes, want %d", len(st.Nodes), len(want))
	}
	for name, w := range want {
		if !proto.Equal(st.Nodes[name], w) {
			t.Errorf("node %s:\n got %v\nwant %v", name, st.Nodes[name], w)
		}
	}
	st = mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{GPUResource: "gpu"})
	if st.Nodes["sn1"].GetAllocatable()["gpu"] != "2" {
		t.Errorf("GPUResource ignored: %v", st.Nodes["sn1"].GetAllocatable())
	}
}

func TestMapJobsFromRecordedSqueue(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})

	type want struct {
		kind      JobKind
		queue     string
		priority  int32
		status    sluicev1.TaskStatus
		nodes     []string
		resources map[string]string
	}
	pending := sluicev1.TaskStatus_TASK_STATUS_PENDING
	cases := map[string]want{
		// Gang of two running on sn1 and sn2: 4 CPUs, 2000M and one GPU per node in all.
		"job-1": {KindRunning, "batch", 0, sluicev1.TaskStatus_TASK_STATUS_RUNNING, []string{"sn1", "sn2"},
			map[string]string{"cpu": "2", "memory": "1000Mi", "nvidia.com/gpu": "1"}},
		// Held, nice 50.
		"job-2": {KindWaiting, "batch", -50, pending, []string{""}, map[string]string{"cpu": "4", "memory": "2000Mi"}},
		// Held, nice -100, --gres=gpu:2 in partition gpu.
		"job-3": {KindWaiting, "gpu", 100, pending, []string{""}, map[string]string{"cpu": "1", "memory": "100Mi", "nvidia.com/gpu": "2"}},
		// Requeued held: waits again; its stale ReqNodeList does not pin it.
		"job-4": {KindWaiting, "batch", 0, pending, []string{""}, map[string]string{"cpu": "1", "memory": "100Mi"}},
		// Submitted without -H: Slurm runs it; reported so that its node counts it.
		"job-5": {KindRunning, "batch", 0, sluicev1.TaskStatus_TASK_STATUS_RUNNING, []string{"sn3"}, map[string]string{"cpu": "1", "memory": "100Mi"}},
		// --gpus=2 over two nodes, partitions gpu,batch.
		"job-6": {KindWaiting, "gpu", 0, pending, []string{"", ""}, map[string]string{"cpu": "1", "memory": "200Mi", "nvidia.com/gpu": "1"}},
		"job-7": {KindWaiting, "batch", 0, pending, []string{""}, map[string]string{"cpu": "1", "memory": "100Mi"}},
		// Released onto sn1, waiting there for resources.
		"job-8": {KindDispatched, "batch", 0, sluicev1.TaskStatus_TASK_STATUS_BOUND, []string{"sn1"}, map[string]string{"cpu": "4", "memory": "100Mi"}},
	}
	if len(st.Jobs) != len(cases) {
		t.Errorf("%d jobs, want %d (skipped: %v)", len(st.Jobs), len(cases), st.Skipped)
	}
	for name, w := range cases {
		job, sj := st.Jobs[name], st.SlurmJobs[name]
		if job == nil || sj == nil {
			t.Errorf("%s missing", name)
			continue
		}
		if sj.Kind != w.kind || job.GetQueue() != w.queue || job.GetPriority() != w.priority || job.GetNamespace() != "slurm" {
			t.Errorf("%s: kind %s queue %s priority %d ns %s; want %s %s %d", name, sj.Kind, job.GetQueue(), job.GetPriority(), job.GetNamespace(), w.kind, w.queue, w.priority)
		}
		if job.GetMinAvailable() != int32(len(w.nodes)) || len(sj.TaskNames) != len(w.nodes) {
			t.Errorf("%s: minAvailable %d, %d tasks; want %d", name, job.GetMinAvailable(), len(sj.TaskNames), len(w.nodes))
		}
		for i, tn := range sj.TaskNames {
			task := st.Tasks[tn]
			if task.GetStatus() != w.status || task.GetNode() != w.nodes[i] || task.GetJob() != name {
				t.Errorf("%s: status %s node %q job %s; want %s %q", tn, task.GetStatus(), task.GetNode(), task.GetJob(), w.status, w.nodes[i])
			}
			if !reflect.DeepEqual(task.GetResources(), w.resources) {
				t.Errorf("%s: resources %v, want %v", tn, task.GetResources(), w.resources)
			}
		}
	}
	if got := st.Jobs["job-1"].GetLabels(); got[LabelAccount] != "physics" || got[LabelJobName] != "train" || got[LabelJobID] != "1" {
		t.Errorf("job-1 labels %v", got)
	}
	if !st.Jobs["job-1"].GetCreatedAt().IsValid() {
		t.Error("job-1 has no creation time")
	}
	// A job that cannot be requeued is no victim when evicting means requeueing.
	if p := st.Tasks["job-7-0"].Preemptable; p == nil || *p {
		t.Errorf("job-7-0 preemptable %v", p)
	}
	if p := st.Tasks["job-2-0"].Preemptable; p != nil {
		t.Errorf("job-2-0 preemptable %v", *p)
	}
	stCancel := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{EvictMode: EvictCancel})
	if p := stCancel.Tasks["job-7-0"].Preemptable; p != nil {
		t.Errorf("with evict=cancel job-7-0 preemptable %v", *p)
	}
	// Waiting tasks are confined to their partitions and spread one per node.
	aff := st.Tasks["job-6-0"].GetAffinity()
	var parts []string
	for _, term := range aff.GetNodeRequired() {
		parts = append(parts, term.GetMatchExpressions()[0].GetKey())
	}
	if !reflect.DeepEqual(parts, []string{"slurm.partition/gpu", "slurm.partition/batch"}) {
		t.Errorf("job-6 partitions %v", parts)
	}
	anti := aff.GetTaskAntiAffinity()
	if len(anti) != 1 || !anti[0].GetRequired() || anti[0].GetTopologyKey() != "kubernetes.io/hostname" || anti[0].GetSelector()[LabelJobID] != "6" {
		t.Errorf("job-6 anti-affinity %v", anti)
	}
	if st.Tasks["job-2-0"].GetAffinity().GetTaskAntiAffinity() != nil {
		t.Error("a one-node job got an anti-affinity")
	}
	if st.Tasks["job-1-0"].GetAffinity() != nil {
		t.Error("a running task carries placement constraints")
	}

	wantQueues := map[string]*sluicev1.Queue{
		"batch": {Name: "batch", Weight: 1, Priority: 1},
		"gpu":   {Name: "gpu", Weight: 1, Priority: 2},
	}
	if len(st.Queues) != 2 || !proto.Equal(st.Queues["batch"], wantQueues["batch"]) || !proto.Equal(st.Queues["gpu"], wantQueues["gpu"]) {
		t.Errorf("queues %v", st.Queues)
	}
}

func TestMapCompletingJob(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue-completing.json"), Options{})
	sj := st.SlurmJobs["job-4"]
	if sj == nil || sj.Kind != KindCompleting {
		t.Fatalf("job-4: %+v", sj)
	}
	task := st.Tasks["job-4-0"]
	if task.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_RELEASING || task.GetNode() != "sn2" {
		t.Errorf("job-4-0: %v", task)
	}
	if st.Jobs["job-4"].GetPhase() != sluicev1.JobPhase_JOB_PHASE_RUNNING {
		t.Errorf("job-4 phase %s", st.Jobs["job-4"].GetPhase())
	}
}

func TestMapQueueByAccountAndPriorityFromSlurm(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{QueueBy: QueueByAccount, PriorityFrom: PriorityFromSlurm})
	got := map[string]string{}
	for name, j := range st.Jobs {
		got[name] = j.GetQueue()
	}
	want := map[string]string{"job-1": "physics", "job-2": "bio", "job-3": "physics", "job-4": "default", "job-5": "default",
		"job-6": "default", "job-7": "default", "job-8": "default"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("queues by job %v, want %v", got, want)
	}
	if len(st.Queues) != 3 || st.Queues["bio"] == nil || st.Queues["physics"] == nil || st.Queues["default"] == nil {
		t.Errorf("queues %v", st.Queues)
	}
	// Slurm's priority/basic priorities exceed int32; held jobs have 0.
	if p := st.Jobs["job-1"].GetPriority(); p != 2147483647 {
		t.Errorf("job-1 priority %d", p)
	}
	if p := st.Jobs["job-3"].GetPriority(); p != 0 {
		t.Errorf("held job-3 priority %d", p)
	}
}

func TestMapPartitionFilter(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{Partitions: []string{"gpu"}})
	if len(st.Nodes) != 2 || st.Nodes["sn3"] != nil {
		t.Errorf("nodes %v", slices.Sorted(maps.Keys(st.Nodes)))
	}
	// Waiting jobs of partition gpu; jobs of batch only where they hold gpu's nodes
	// (job-1 runs on sn1 and sn2, job-8 waits on sn1; job-5 on sn3 is out of sight).
	if got := slices.Sorted(maps.Keys(st.Jobs)); !reflect.DeepEqual(got, []string{"job-1", "job-3", "job-6", "job-8"}) {
		t.Errorf("jobs %v (skipped %v)", got, st.Skipped)
	}
	if got := slices.Sorted(maps.Keys(st.Queues)); !reflect.DeepEqual(got, []string{"batch", "gpu"}) {
		t.Errorf("queues %v", got)
	}
	if q := st.Jobs["job-1"].GetQueue(); q != "batch" {
		t.Errorf("job-1 in queue %s", q)
	}
	// job-6 names gpu and batch; only gpu is managed.
	if terms := st.Tasks["job-6-0"].GetAffinity().GetNodeRequired(); len(terms) != 1 {
		t.Errorf("job-6 terms %v", terms)
	}
}

func TestMapRejectsBadOptions(t *testing.T) {
	for _, o := range []Options{{QueueBy: "user"}, {PriorityFrom: "qos"}, {EvictMode: "suspend"}, {Namespace: "a/b"}} {
		if _, err := Map(&Snapshot{}, o); err == nil {
			t.Errorf("%+v accepted", o)
		}
	}
}

func TestDiff(t *testing.T) {
	running := mustMap(t, fixtureSnapshot(t, "squeue-completing.json"), Options{})
	if d := running.Diff(running); len(d) != 0 {
		t.Errorf("diff with itself: %v", d)
	}
	if d := running.Diff(nil); len(d) != len(running.Deltas()) {
		t.Errorf("diff from nothing: %d deltas, want %d", len(d), len(running.Deltas()))
	}
	requeued := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	var got []string
	for _, d := range requeued.Diff(running) {
		switch k := d.GetChange().(type) {
		case *sluicev1.Delta_UpsertTask:
			got = append(got, "task "+k.UpsertTask.GetName()+" "+strings.TrimPrefix(k.UpsertTask.GetStatus().String(), "TASK_STATUS_"))
		case *sluicev1.Delta_UpsertJob:
			got = append(got, "job "+k.UpsertJob.GetName())
		case *sluicev1.Delta_Delete:
			got = append(got, "delete "+k.Delete.GetName())
		default:
			got = append(got, "other")
		}
	}
	// job-4 went from completing on sn2 to waiting, held.
	want := []string{"job job-4", "task job-4-0 PENDING"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("diff %v, want %v", got, want)
	}
	// A job that is gone is deleted; its tasks go with it.
	gone := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	delete(gone.Jobs, "job-6")
	delete(gone.Tasks, "job-6-0")
	delete(gone.Tasks, "job-6-1")
	delete(gone.Tasks, "job-1-1")
	d := gone.Diff(requeued)
	if len(d) != 2 || d[0].GetDelete().GetName() != "job-1-1" || d[1].GetDelete().GetName() != "job-6" ||
		d[1].GetDelete().GetKind() != sluicev1.ObjectKind_OBJECT_KIND_JOB || d[1].GetDelete().GetNamespace() != "slurm" {
		t.Errorf("deletes %v", d)
	}
}

func TestMapRespectsBeginTimeButNotRequeueDelay(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	held := func(id int64, eligible time.Time, restarts int64) Job {
		return Job{
			JobID: Num{id, true}, Partition: "batch", JobState: Strings{StatePending}, StateReason: "JobHeldUser",
			NodeCount: Num{1, true}, TresReqStr: "cpu=1,mem=100M,node=1", EligibleTime: Num{eligible.Unix(), true},
			RestartCnt: Num{restarts, true},
		}
	}
	snap := &Snapshot{
		Now:        now,
		Partitions: []Partition{{Name: "batch", State: "UP"}},
		Nodes:      []Node{{Name: "n1", CPUs: Num{4, true}, Partitions: Strings{"batch"}}},
		Jobs: []Job{
			held(1, now.Add(time.Hour), 0),       // sbatch -H --begin=now+1hour: the user's wish
			held(2, now.Add(121*time.Second), 1), // requeued: Slurm's delay, lifted at start
			held(3, now.Add(-time.Minute), 0),
		},
	}
	st := mustMap(t, snap, Options{})
	if got := slices.Sorted(maps.Keys(st.Jobs)); !reflect.DeepEqual(got, []string{"job-2", "job-3"}) {
		t.Errorf("jobs %v (skipped %v)", got, st.Skipped)
	}
	if st.Skipped["held with a begin time in the future"] != 1 {
		t.Errorf("skipped %v", st.Skipped)
	}
}

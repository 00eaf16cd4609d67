package service

import (
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// The server's fields are the server's: what a plan commit set survives upserts that leave it
// unset, through the API.

func TestLabelOnlyUpsertKeepsJobPhase(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c", node("n1", cpuMem("4", "8Gi")), job("j0", "", 0), task("t0", "j0", cpu("1")))
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT}); err != nil {
		t.Fatal(err)
	}
	j := h.getJob("c", "j0")
	if j.GetPhase() != sluicev1.JobPhase_JOB_PHASE_RUNNING {
		t.Fatalf("after the commit the job is %s, want RUNNING", j.GetPhase())
	}
	tk := h.getTask("c", "t0")
	if tk.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_BOUND || tk.GetNode() != "n1" {
		t.Fatalf("after the commit the task is %s on %q, want BOUND on n1", tk.GetStatus(), tk.GetNode())
	}
	// The resource manager adds a label and says nothing of the phase or creation time.
	h.apply("c", &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
		Name: "j0", Labels: map[string]string{"team": "a"}}}})
	j2 := h.getJob("c", "j0")
	if j2.GetPhase() != sluicev1.JobPhase_JOB_PHASE_RUNNING || j2.GetLabels()["team"] != "a" ||
		!j2.GetCreatedAt().AsTime().Equal(j.GetCreatedAt().AsTime()) {
		t.Errorf("after a label-only upsert: %v; want RUNNING, the label, created %v", j2, j.GetCreatedAt().AsTime())
	}
	// A task upsert without status or node keeps both.
	h.apply("c", taskMsg(&sluicev1.Task{Name: "t0", Job: "j0", Resources: cpu("1"), Labels: map[string]string{"x": "y"}}))
	if tk := h.getTask("c", "t0"); tk.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_BOUND || tk.GetNode() != "n1" {
		t.Errorf("after a label-only task upsert: %s on %q, want BOUND on n1", tk.GetStatus(), tk.GetNode())
	}
	// The resource manager may still set the phase.
	h.apply("c", &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
		Name: "j0", Phase: sluicev1.JobPhase_JOB_PHASE_PENDING}}})
	if j := h.getJob("c", "j0"); j.GetPhase() != sluicev1.JobPhase_JOB_PHASE_PENDING {
		t.Errorf("explicit phase: %s, want PENDING", j.GetPhase())
	}
}

func TestRunningReportKeepsDeviceIDs(t *testing.T) {
	h := newHarness(t)
	gpus := []*sluicev1.Device{{Id: "gpu-0", Type: "nvidia.com/gpu"}, {Id: "gpu-1", Type: "nvidia.com/gpu"}}
	report := func(st sluicev1.TaskStatus, node string, ids ...string) *sluicev1.Delta {
		return taskMsg(&sluicev1.Task{Name: "t0", Job: "j0", Resources: cpu("1"), Status: st, Node: node, DeviceIds: ids,
			Devices: []*sluicev1.DeviceRequest{{Type: "nvidia.com/gpu"}}})
	}
	h.apply("c",
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: cpu("4"), Devices: gpus}}},
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n2", Allocatable: cpu("4"), Devices: gpus}}},
		job("j0", "", 0), report(sluicev1.TaskStatus_TASK_STATUS_PENDING, ""))
	// The plan gives the task gpu-1 (the store's commit, which CommitPlan runs).
	out, err := h.store.CommitPlan("c", &state.PlanCommit{BaseRevision: h.store.Revision("c"), Decisions: []state.PlanDecision{
		{Kind: state.Bind, Task: "default/t0", Node: "n1", DeviceIDs: []string{"gpu-1"}}}})
	if err != nil || out.Rejected[0] != "" {
		t.Fatalf("commit: %+v, %v", out, err)
	}
	steps := []struct {
		name    string
		report  *sluicev1.Delta
		status  sluicev1.TaskStatus
		node    string
		devices []string
	}{
		{"running without device ids", report(sluicev1.TaskStatus_TASK_STATUS_RUNNING, "n1"),
			sluicev1.TaskStatus_TASK_STATUS_RUNNING, "n1", []string{"gpu-1"}},
		{"running without node or device ids", report(sluicev1.TaskStatus_TASK_STATUS_RUNNING, ""),
			sluicev1.TaskStatus_TASK_STATUS_RUNNING, "n1", []string{"gpu-1"}},
		{"running with others", report(sluicev1.TaskStatus_TASK_STATUS_RUNNING, "n1", "gpu-0"),
			sluicev1.TaskStatus_TASK_STATUS_RUNNING, "n1", []string{"gpu-0"}},
		{"pending again", report(sluicev1.TaskStatus_TASK_STATUS_PENDING, ""),
			sluicev1.TaskStatus_TASK_STATUS_PENDING, "", nil},
	}
	var started *sluicev1.Task
	for _, s := range steps {
		h.apply("c", s.report)
		tk := h.getTask("c", "t0")
		if tk.GetStatus() != s.status || tk.GetNode() != s.node || !slices.Equal(tk.GetDeviceIds(), s.devices) {
			t.Errorf("%s: task is %s on %q with %v, want %s on %q with %v", s.name,
				tk.GetStatus(), tk.GetNode(), tk.GetDeviceIds(), s.status, s.node, s.devices)
		}
		if started == nil {
			started = tk
		} else if s.status == sluicev1.TaskStatus_TASK_STATUS_RUNNING && !proto.Equal(tk.GetStartedAt(), started.GetStartedAt()) {
			t.Errorf("%s: started_at %v, want the first report's %v", s.name, tk.GetStartedAt(), started.GetStartedAt())
		}
	}
	if started.GetStartedAt() == nil {
		t.Error("a task reported running got no started_at")
	}
	// Without a stored node to keep, a running report must name one.
	_, err = h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: "c", Batch: batchOf(report(sluicev1.TaskStatus_TASK_STATUS_RUNNING, ""))})
	wantViolation(t, err, "batch.deltas[0].upsert_task.node", ReasonInvalidReference)
}

func TestModRevision(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	rev1 := h.apply("c", node("n1", cpu("4")), queue("q", 1), job("j", "q", 0), task("t", "j", cpu("1")))
	rev2 := h.apply("c", task("t", "j", cpu("2")))
	if rev2 <= rev1 {
		t.Fatalf("revisions %d then %d", rev1, rev2)
	}
	q, err := h.cs.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "c", Name: "q"})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c", Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{
		"node": n.GetNode().GetModRevision(), "queue": q.GetQueue().GetModRevision(),
		"job": h.getJob("c", "j").GetModRevision(), "task": h.getTask("c", "t").GetModRevision(),
	}
	want := map[string]uint64{"node": rev1, "queue": rev1, "job": rev1, "task": rev2}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s mod_revision %d, want %d", k, got[k], w)
		}
	}
	// Lists carry it too.
	tasks, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c"})
	if err != nil {
		t.Fatal(err)
	}
	jobs, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c"})
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c"})
	if err != nil {
		t.Fatal(err)
	}
	queues, err := h.cs.ListQueues(ctx, &sluicev1.ListQueuesRequest{Cluster: "c"})
	if err != nil {
		t.Fatal(err)
	}
	if tasks.GetTasks()[0].GetModRevision() != rev2 || jobs.GetJobs()[0].GetModRevision() != rev1 ||
		nodes.GetNodes()[0].GetModRevision() != rev1 || queues.GetQueues()[0].GetModRevision() != rev1 {
		t.Errorf("listed mod_revisions: task %d, job %d, node %d, queue %d", tasks.GetTasks()[0].GetModRevision(),
			jobs.GetJobs()[0].GetModRevision(), nodes.GetNodes()[0].GetModRevision(), queues.GetQueues()[0].GetModRevision())
	}
	// A commit is a change: the bound task's revision moves, the job's with its phase.
	resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	if err != nil {
		t.Fatal(err)
	}
	rev3 := resp.GetCommit().GetRevision()
	if tk := h.getTask("c", "t"); rev3 <= rev2 || tk.GetModRevision() != rev3 || h.getJob("c", "j").GetModRevision() != rev3 {
		t.Errorf("after the commit at %d: task mod_revision %d, job %d", rev3, tk.GetModRevision(), h.getJob("c", "j").GetModRevision())
	}
	// An upsert's mod_revision is ignored: what a client read, it can write back as it is.
	read := h.getTask("c", "t")
	read.ModRevision = 1
	rev4 := h.apply("c", taskMsg(read))
	if tk := h.getTask("c", "t"); tk.GetModRevision() != rev4 || tk.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_BOUND {
		t.Errorf("written back: mod_revision %d (want %d), status %s", tk.GetModRevision(), rev4, tk.GetStatus())
	}
}

// getJob and getTask read one object of the default namespace and fail the test on error.
func (h *harness) getJob(cluster, name string) *sluicev1.Job {
	h.t.Helper()
	resp, err := h.cs.GetJob(ctxT(h.t), &sluicev1.GetJobRequest{Cluster: cluster, Name: name})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetJob()
}

func (h *harness) getTask(cluster, name string) *sluicev1.Task {
	h.t.Helper()
	resp, err := h.cs.GetTask(ctxT(h.t), &sluicev1.GetTaskRequest{Cluster: cluster, Name: name})
	if err != nil {
		h.t.Fatal(err)
	}
	return resp.GetTask()
}

// Every field of the object messages carries its behaviour, and mod_revision is output only:
// the annotations are the API's contract, so a field added without one fails here.
func TestObjectFieldsDeclareTheirBehaviour(t *testing.T) {
	objects := []proto.Message{
		&sluicev1.Node{}, &sluicev1.Queue{}, &sluicev1.Job{}, &sluicev1.Task{}, &sluicev1.PriorityClass{},
		&sluicev1.NamespaceQuota{}, &sluicev1.DisruptionBudget{}, &sluicev1.HyperNode{},
	}
	for _, m := range objects {
		fields := m.ProtoReflect().Descriptor().Fields()
		for i := 0; i < fields.Len(); i++ {
			f := fields.Get(i)
			bs := proto.GetExtension(f.Options(), annotations.E_FieldBehavior).([]annotations.FieldBehavior)
			if len(bs) == 0 {
				t.Errorf("%s has no google.api.field_behavior", f.FullName())
			}
			outputOnly := slices.Contains(bs, annotations.FieldBehavior_OUTPUT_ONLY)
			if want := f.Name() == "mod_revision" || f.Name() == "status" && f.Message() != nil; outputOnly != want {
				t.Errorf("%s: OUTPUT_ONLY is %v, want %v", f.FullName(), outputOnly, want)
			}
		}
		if fields.ByName("mod_revision") == nil {
			t.Errorf("%s has no mod_revision", m.ProtoReflect().Descriptor().FullName())
		}
	}
}

// TestChunkedResyncKeepsServerOwnedFields: a chunked resync that leaves the server's fields
// unset keeps a running job's phase and creation time and a bound task's node and device ids,
// as a replace_all batch does.
func TestChunkedResyncKeepsServerOwnedFields(t *testing.T) {
	gpus := []*sluicev1.Device{{Id: "gpu-0", Type: "nvidia.com/gpu"}, {Id: "gpu-1", Type: "nvidia.com/gpu"}}
	nodes := []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: cpu("4"), Devices: gpus}}},
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n2", Allocatable: cpu("4"), Devices: gpus}}},
	}
	report := func(st sluicev1.TaskStatus) *sluicev1.Delta {
		return taskMsg(&sluicev1.Task{Name: "t0", Job: "j0", Resources: cpu("1"), Status: st,
			Devices: []*sluicev1.DeviceRequest{{Type: "nvidia.com/gpu"}}})
	}
	type owned struct {
		phase   sluicev1.JobPhase
		created int64
		status  sluicev1.TaskStatus
		node    string
		devices string
		started bool
	}
	run := func(chunked bool) owned {
		h := newHarness(t)
		ctx := ctxT(t)
		h.apply("c", append(slices.Clone(nodes), job("j0", "", 0), report(sluicev1.TaskStatus_TASK_STATUS_PENDING))...)
		out, err := h.store.CommitPlan("c", &state.PlanCommit{BaseRevision: h.store.Revision("c"),
			Decisions: []state.PlanDecision{{Kind: state.Bind, Task: "default/t0", Node: "n1", DeviceIDs: []string{"gpu-1"}}},
			Phases:    []state.PhaseChange{{Job: "default/j0", Phase: api.JobRunning}}})
		if err != nil || out.Rejected[0] != "" {
			t.Fatalf("commit: %+v, %v", out, err)
		}
		created := h.getJob("c", "j0").GetCreatedAt().AsTime().UnixNano()
		// The resource manager resends everything: the task running, without its node or
		// device ids, the job without its phase.
		c, _ := h.openSync(ctx, "c", 0)
		if chunked {
			c.chunk(1, false, report(sluicev1.TaskStatus_TASK_STATUS_RUNNING), job("j0", "", 0))
			c.chunk(1, true, nodes...)
			wantAck(t, c.recv(), 1)
		} else {
			wantAck(t, c.batch(1, true, append(slices.Clone(nodes), report(sluicev1.TaskStatus_TASK_STATUS_RUNNING), job("j0", "", 0))...), 1)
		}
		j, tk := h.getJob("c", "j0"), h.getTask("c", "t0")
		if got := j.GetCreatedAt().AsTime().UnixNano(); got != created {
			t.Errorf("chunked=%v: created_at moved from %d to %d", chunked, created, got)
		}
		return owned{j.GetPhase(), created, tk.GetStatus(), tk.GetNode(), strings.Join(tk.GetDeviceIds(), ","), tk.GetStartedAt() != nil}
	}
	want := owned{phase: sluicev1.JobPhase_JOB_PHASE_RUNNING, status: sluicev1.TaskStatus_TASK_STATUS_RUNNING,
		node: "n1", devices: "gpu-1", started: true}
	for _, chunked := range []bool{false, true} {
		got := run(chunked)
		want.created = got.created
		if got != want {
			t.Errorf("chunked=%v: %+v, want %+v", chunked, got, want)
		}
	}
}

package framework

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// counter is a test plugin that counts allocate and deallocate events.
type counter struct{ alloc, dealloc int }

func (c *counter) Name() string { return "counter" }
func (c *counter) OnSessionOpen(s *Session) {
	s.AddEventHandler(&EventHandler{
		AllocateFunc:   func(*Event) { c.alloc++ },
		DeallocateFunc: func(*Event) { c.dealloc++ },
	})
}
func (c *counter) OnSessionClose(*Session) {}

func res(cpu, memGi float64) api.Resource {
	return *api.NewResource(map[string]float64{"cpu": cpu, "memory": memGi * (1 << 30)})
}

// testSession opens a session with one 4-cpu node running two 1-cpu tasks of job "run" and
// a job "new" with two pending 1-cpu tasks.
func testSession(t *testing.T) (*Session, *counter) {
	t.Helper()
	c := &counter{}
	reg := NewRegistry()
	reg.RegisterPlugin("counter", func(conf.Arguments) (Plugin, error) { return c, nil })
	cfg := &conf.Config{Actions: []string{}, Tiers: []conf.Tier{{Plugins: []conf.PluginOption{{Name: "counter"}}}}}
	snap := &Snapshot{
		Cluster: "c",
		Nodes:   []*api.Node{{Name: "n1", Allocatable: res(4, 16)}},
		Queues:  []*api.Queue{{Name: "default", Weight: 1}},
		Jobs: []*api.Job{
			{Name: "run", Namespace: "ns", Queue: "default", MinAvailable: 1, Phase: api.JobRunning},
			{Name: "new", Namespace: "ns", Queue: "default", MinAvailable: 2, Phase: api.JobInqueue},
		},
		Tasks: []*api.Task{
			{Name: "run-0", Namespace: "ns", Job: "run", Resources: res(1, 1), Status: api.Running, Node: "n1", Preemptable: true},
			{Name: "run-1", Namespace: "ns", Job: "run", Resources: res(1, 1), Status: api.Running, Node: "n1", Preemptable: true},
			{Name: "new-0", Namespace: "ns", Job: "new", Resources: res(1, 1), Status: api.Pending},
			{Name: "new-1", Namespace: "ns", Job: "new", Resources: res(2, 1), Status: api.Pending},
		},
	}
	s, err := OpenSession(snap, cfg, reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

type nodeFigures struct{ idle, used, releasing, pipelined string }

func figures(n *api.NodeInfo) nodeFigures {
	return nodeFigures{n.Idle.String(), n.Used.String(), n.Releasing.String(), n.Pipelined.String()}
}

func TestStatementDiscardUndoesEverything(t *testing.T) {
	s, c := testSession(t)
	n := s.Nodes["n1"]
	before := figures(n)
	jobNew, jobRun := s.Jobs["ns/new"], s.Jobs["ns/run"]
	st := s.NewStatement()
	if err := st.Evict(jobRun.Tasks["ns/run-1"], EvictReason{Action: "preempt", ForTask: "ns/new-1"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Allocate(jobNew.Tasks["ns/new-0"], n); err != nil {
		t.Fatal(err)
	}
	if err := st.Pipeline(jobNew.Tasks["ns/new-1"], "n1"); err != nil {
		t.Fatal(err)
	}
	if got := n.Releasing.MilliCPU; got != 1000 {
		t.Fatalf("releasing cpu %v, want 1000", got)
	}
	if got := n.FutureIdle().MilliCPU; got != 0 {
		t.Fatalf("future idle cpu %v, want 0 (4 idle - 2 running - 1 allocated + 1 releasing - 2 pipelined)", got)
	}
	if jobNew.ReadyTaskNum() != 1 || jobNew.WaitingTaskNum() != 1 || !jobNew.IsPipelined() {
		t.Fatalf("job new: ready %d waiting %d", jobNew.ReadyTaskNum(), jobNew.WaitingTaskNum())
	}
	st.Discard()
	if after := figures(n); after != before {
		t.Fatalf("node accounting not restored:\n got %+v\nwant %+v", after, before)
	}
	if jobNew.Tasks["ns/new-0"].Status != api.Pending || jobNew.Tasks["ns/new-1"].Status != api.Pending ||
		jobRun.Tasks["ns/run-1"].Status != api.Running {
		t.Fatal("task statuses not restored")
	}
	if jobNew.Tasks["ns/new-0"].NodeName != "" || len(n.Tasks) != 2 {
		t.Fatalf("placements not removed: node has %d tasks", len(n.Tasks))
	}
	if !jobNew.Allocated.IsEmpty() || jobRun.Allocated.MilliCPU != 2000 {
		t.Fatalf("job allocated sums wrong: new %s, run %s", jobNew.Allocated, jobRun.Allocated)
	}
	if c.alloc != 3 || c.dealloc != 3 {
		t.Fatalf("events: %d allocate, %d deallocate; want 3 and 3 (each op and its undo)", c.alloc, c.dealloc)
	}
	if st.Operations() != 0 {
		t.Fatal("discarded statement still holds operations")
	}
}

func TestStatementCommitMakesDecisions(t *testing.T) {
	s, _ := testSession(t)
	n := s.Nodes["n1"]
	jobNew, jobRun := s.Jobs["ns/new"], s.Jobs["ns/run"]
	st := s.NewStatement()
	if err := st.Evict(jobRun.Tasks["ns/run-0"], EvictReason{Action: "preempt", ForTask: "ns/new-1", Rule: "priority"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Allocate(jobNew.Tasks["ns/new-0"], n); err != nil {
		t.Fatal(err)
	}
	if err := st.Pipeline(jobNew.Tasks["ns/new-1"], "n1"); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	if jobNew.Tasks["ns/new-0"].Status != api.Binding {
		t.Fatalf("committed allocation is %s, want Binding", jobNew.Tasks["ns/new-0"].Status)
	}
	r := s.Close()
	want := []Decision{
		{Kind: DecisionEvict, Task: "ns/run-0", Job: "ns/run", Node: "n1", Action: "preempt", ForTask: "ns/new-1", Reason: "priority"},
		{Kind: DecisionBind, Task: "ns/new-0", Job: "ns/new", Node: "n1"},
		{Kind: DecisionPipeline, Task: "ns/new-1", Job: "ns/new", Node: "n1"},
	}
	if len(r.Decisions) != len(want) {
		t.Fatalf("got %d decisions %+v, want %d", len(r.Decisions), r.Decisions, len(want))
	}
	for i := range want {
		g := r.Decisions[i]
		w := want[i]
		if g.Kind != w.Kind || g.Task != w.Task || g.Job != w.Job || g.Node != w.Node || g.Action != w.Action || g.ForTask != w.ForTask || g.Reason != w.Reason {
			t.Errorf("decision %d: got %+v, want %+v", i, g, w)
		}
	}
}

func TestAllocateFailureLeavesTaskPending(t *testing.T) {
	s, _ := testSession(t)
	n := s.Nodes["n1"]
	job := s.Jobs["ns/new"]
	st := s.NewStatement()
	if err := st.Allocate(job.Tasks["ns/new-0"], n); err != nil {
		t.Fatal(err)
	}
	// 2 cpu do not fit in the 1 left idle: Allocate must fail and change nothing.
	if err := st.Allocate(job.Tasks["ns/new-1"], n); err == nil {
		t.Fatal("allocation beyond idle resources succeeded")
	}
	if job.Tasks["ns/new-1"].Status != api.Pending || job.Tasks["ns/new-1"].NodeName != "" || st.Operations() != 1 || len(n.Tasks) != 3 {
		t.Fatal("failed allocation left traces")
	}
}

func TestJobPhaseAfterCycle(t *testing.T) {
	cases := []struct {
		phase   api.JobPhase
		ready   int
		min     int32
		want    api.JobPhase
		comment string
	}{
		{api.JobInqueue, 2, 2, api.JobRunning, "gang placed"},
		{api.JobInqueue, 1, 2, api.JobInqueue, "inqueue stays inqueue"},
		{api.JobPending, 0, 1, api.JobPending, "pending stays pending"},
		{api.JobRunning, 0, 1, api.JobPending, "Volcano: a running job below its gang falls back to pending"},
	}
	for _, c := range cases {
		j := api.NewJobInfo(&api.Job{Name: "j", Namespace: "ns", MinAvailable: c.min, Phase: c.phase}, 0)
		for i := 0; i < c.ready; i++ {
			ti := api.NewTaskInfo(&api.Task{Name: string(rune('a' + i)), Namespace: "ns", Job: "j", Status: api.Running, Node: "n"}, 0)
			j.AddTaskInfo(ti)
		}
		if got := phaseAfter(j); got != c.want {
			t.Errorf("%s: got %s, want %s", c.comment, got, c.want)
		}
	}
}

func TestStatementMergeKeepsUndoOrder(t *testing.T) {
	s, c := testSession(t)
	n := s.Nodes["n1"]
	before := figures(n)
	jobNew, jobRun := s.Jobs["ns/new"], s.Jobs["ns/run"]
	job := s.NewStatement()
	if err := job.Allocate(jobNew.Tasks["ns/new-0"], n); err != nil {
		t.Fatal(err)
	}
	onNode := s.NewStatement()
	if err := onNode.Evict(jobRun.Tasks["ns/run-1"], EvictReason{Action: "preempt", ForTask: "ns/new-1"}); err != nil {
		t.Fatal(err)
	}
	if err := onNode.Pipeline(jobNew.Tasks["ns/new-1"], "n1"); err != nil {
		t.Fatal(err)
	}
	job.Merge(onNode)
	job.Merge(job) // a no-op
	if job.Operations() != 3 || onNode.Operations() != 0 {
		t.Fatalf("after merge: job holds %d operations, node statement %d; want 3 and 0", job.Operations(), onNode.Operations())
	}
	onNode.Discard() // empty: must not undo what moved to job
	if jobRun.Tasks["ns/run-1"].Status != api.Releasing {
		t.Fatal("discarding the merged-away statement undid an eviction")
	}
	// The pipeline needs the eviction's room: undoing the eviction first would leave the node
	// over-committed in between. Discard must undo the merged operations before the job's own.
	job.Discard()
	if after := figures(n); after != before {
		t.Fatalf("node accounting not restored:\n got %+v\nwant %+v", after, before)
	}
	if c.alloc != 3 || c.dealloc != 3 {
		t.Fatalf("events: %d allocate, %d deallocate; want 3 and 3 (each op and its undo)", c.alloc, c.dealloc)
	}
	for _, k := range []string{"ns/new-0", "ns/new-1"} {
		if jobNew.Tasks[k].Status != api.Pending {
			t.Fatalf("%s is %s after discard, want Pending", k, jobNew.Tasks[k].Status)
		}
	}

	// Merged and committed: every operation becomes a decision, the job's own first.
	s2, _ := testSession(t)
	n2 := s2.Nodes["n1"]
	j2 := s2.NewStatement()
	if err := j2.Allocate(s2.Jobs["ns/new"].Tasks["ns/new-0"], n2); err != nil {
		t.Fatal(err)
	}
	o2 := s2.NewStatement()
	if err := o2.Evict(s2.Jobs["ns/run"].Tasks["ns/run-0"], EvictReason{Action: "preempt", ForTask: "ns/new-1"}); err != nil {
		t.Fatal(err)
	}
	j2.Merge(o2)
	j2.Commit()
	r := s2.Close()
	if len(r.Decisions) != 2 || r.Decisions[0].Kind != DecisionBind || r.Decisions[1].Kind != DecisionEvict {
		t.Fatalf("decisions after merge and commit: %+v", r.Decisions)
	}
}

func TestLeaveUndispatchedKeepsRoomWithoutDecision(t *testing.T) {
	s, _ := testSession(t)
	n := s.Nodes["n1"]
	job := s.Jobs["ns/new"]
	job.DeleteTaskInfo(job.Tasks["ns/new-1"]) // no task left pending
	st := s.NewStatement()
	if err := st.Allocate(job.Tasks["ns/new-0"], n); err != nil {
		t.Fatal(err)
	}
	st.LeaveUndispatched()
	st.Discard() // emptied: nothing left to undo
	if st.Operations() != 0 || job.Tasks["ns/new-0"].Status != api.Allocated || n.Idle.MilliCPU != 1000 {
		t.Fatalf("left allocations not in effect: %d ops, task %s, idle cpu %v", st.Operations(), job.Tasks["ns/new-0"].Status, n.Idle.MilliCPU)
	}
	r := s.Close()
	if len(r.Decisions) != 0 {
		t.Fatalf("decisions %+v, want none", r.Decisions)
	}
	for _, o := range r.Jobs {
		// No task is pending or pipelined, yet the job is explained: its task waits undispatched.
		if o.Job == "ns/new" && (o.Explanation == nil || o.Ready != 1 || o.Pending != 0) {
			t.Fatalf("job outcome %+v: want 1 ready, none pending, and an explanation", o)
		}
	}
}

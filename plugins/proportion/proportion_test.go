package proportion

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

const gi = 1 << 30

func cpu(cores float64) api.Resource { return tu.Res(map[string]float64{"cpu": cores}) }

// figures closes the session and returns the published queue figures by name.
func figures(t *testing.T, ssn *framework.Session) map[string]framework.QueueFigures {
	t.Helper()
	out := map[string]framework.QueueFigures{}
	for _, q := range ssn.Close().Queues {
		out[q.Queue] = q.QueueFigures
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }

// weighted is the acceptance example: queues a (weight 2, capability 50 cpu, guarantee 10),
// b (weight 3), c (weight 5, guarantee 20) on 10 nodes of 10 cpu, requesting 80, 60 and 30
// one-cpu tasks.
func weighted() *tu.Cluster {
	c := tu.NewCluster()
	a := c.Queue("a", 2)
	a.Capability, a.Guarantee = cpu(50), cpu(10)
	c.Queue("b", 3)
	c.Queue("c", 5).Guarantee = cpu(20)
	for i := range 10 {
		c.Node("n"+string(rune('0'+i)), tu.CPU(10, 100))
	}
	for name, n := range map[string]int{"a": 80, "b": 60, "c": 30} {
		j := c.Job("j"+name, name, 1)
		c.Tasks(j, "j"+name, n, api.Pending, "", tu.CPU(1, 1))
	}
	return c
}

func TestDeservedWeighted(t *testing.T) {
	ssn := weighted().Open(t, tu.OneTier(Name), builders)
	got := figures(t, ssn)
	for q, want := range map[string]float64{"a": 28, "b": 42, "c": 30} {
		f, ok := got[q]
		if !ok {
			t.Fatalf("no figures for queue %s", q)
		}
		if !near(f.Deserved.MilliCPU, want*1000) {
			t.Errorf("queue %s: deserved cpu %v, want %v", q, f.Deserved.MilliCPU/1000, want)
		}
		// Memory is capped by the request (1Gi per task).
		if req := map[string]float64{"a": 80, "b": 60, "c": 30}[q]; !near(f.Deserved.Memory, req*gi) {
			t.Errorf("queue %s: deserved memory %v Gi, want %v", q, f.Deserved.Memory/gi, req)
		}
		if f.Share != 0 || f.Overused {
			t.Errorf("queue %s: share %v overused %v, want 0 false", q, f.Share, f.Overused)
		}
	}
}

func TestRealCapability(t *testing.T) {
	ssn := weighted().Open(t, tu.OneTier(Name), builders)
	p := ssn.Plugins()[0].(*plugin)
	// total 100 cpu, total guarantee 30: a = min(100-30+10, 50), b = 70, c = 90.
	for q, want := range map[string]float64{"a": 50, "b": 70, "c": 90} {
		if got := p.queues[q].realCapability.MilliCPU / 1000; !near(got, want) {
			t.Errorf("queue %s: realCapability cpu %v, want %v", q, got, want)
		}
	}
	if got := p.queues["a"].realCapability.Memory; !near(got, 1000*gi) {
		t.Errorf("queue a: capability without memory should leave memory at the cluster's, got %v", got)
	}
}

func TestDeservedGuaranteeAndCapability(t *testing.T) {
	tests := []struct {
		name       string
		setup      func(c *tu.Cluster)
		wantCPU    map[string]float64
		wantMemory map[string]float64 // GiB, checked when given
	}{
		{
			name: "guarantee above request",
			setup: func(c *tu.Cluster) {
				c.Queue("g", 1).Guarantee = cpu(6)
				c.Queue("o", 1)
				c.Tasks(c.Job("jg", "g", 1), "g", 2, api.Pending, "", cpu(1))
				c.Tasks(c.Job("jo", "o", 1), "o", 10, api.Pending, "", cpu(1))
			},
			wantCPU: map[string]float64{"g": 6, "o": 4},
		},
		{
			name: "capability caps the share, the rest goes to the other queue",
			setup: func(c *tu.Cluster) {
				c.Queue("capped", 3).Capability = cpu(2)
				c.Queue("o", 1)
				c.Tasks(c.Job("jc", "capped", 1), "c", 10, api.Pending, "", cpu(1))
				c.Tasks(c.Job("jo", "o", 1), "o", 10, api.Pending, "", cpu(1))
			},
			wantCPU: map[string]float64{"capped": 2, "o": 8},
		},
		{
			name: "equal weights, both asking for more than half",
			setup: func(c *tu.Cluster) {
				c.Queue("x", 1)
				c.Queue("y", 1)
				c.Tasks(c.Job("jx", "x", 1), "x", 10, api.Pending, "", cpu(1))
				c.Tasks(c.Job("jy", "y", 1), "y", 10, api.Pending, "", cpu(1))
			},
			wantCPU: map[string]float64{"x": 5, "y": 5},
		},
		{
			name: "queue without jobs is unknown",
			setup: func(c *tu.Cluster) {
				c.Queue("idle", 5)
				c.Queue("busy", 1)
				c.Tasks(c.Job("jb", "busy", 1), "b", 10, api.Pending, "", cpu(1))
			},
			wantCPU: map[string]float64{"busy": 10, "idle": 0},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Node("n1", cpu(10))
			tc.setup(c)
			got := figures(t, c.Open(t, tu.OneTier(Name), builders))
			for q, want := range tc.wantCPU {
				if g := got[q].Deserved.MilliCPU / 1000; !near(g, want) {
					t.Errorf("queue %s: deserved cpu %v, want %v", q, g, want)
				}
			}
		})
	}
}

// reclaimCluster: two queues of weight 1 on one 4-cpu node; q1 runs 4 one-cpu tasks, q2 has
// a pending gang of two.
func reclaimCluster() *tu.Cluster {
	c := tu.NewCluster()
	c.Queue("q1", 1)
	c.Queue("q2", 1)
	c.Node("n1", tu.CPU(4, 16))
	hog := c.Job("hog", "q1", 1)
	hog.Phase = api.JobRunning
	c.Tasks(hog, "hog", 4, api.Running, "n1", tu.CPU(1, 1))
	c.Tasks(c.Job("fair", "q2", 2), "fair", 2, api.Pending, "", tu.CPU(1, 1))
	return c
}

func TestReclaimable(t *testing.T) {
	ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
	p := ssn.Plugins()[0].(*plugin)
	for _, q := range []string{"q1", "q2"} {
		if got := p.queues[q].deserved.MilliCPU; !near(got, 2000) {
			t.Errorf("queue %s deserved cpu %v, want 2", q, got/1000)
		}
	}
	reclaimer := tu.TaskOf(t, ssn, "fair", "fair-0")
	var cands []*api.TaskInfo
	for i := range 4 {
		cands = append(cands, tu.TaskOf(t, ssn, "hog", "hog-"+string(rune('0'+i))))
	}
	if got, want := tu.Names(ssn.Reclaimable(reclaimer, cands)), []string{"hog-0", "hog-1"}; !slices.Equal(got, want) {
		t.Errorf("Reclaimable = %v, want %v", got, want)
	}
	// A queue at its deserved share gives nothing.
	if got := ssn.Reclaimable(reclaimer, cands[:0]); got != nil {
		t.Errorf("Reclaimable(no candidates) = %v", tu.Names(got))
	}
	// Current Volcano compares the victim queue's allocation with each victim's request, not
	// the reclaimer's: a reclaimer asking for a resource the victim queue lacks still gets
	// victims, while a candidate asking for more than its queue holds is skipped.
	gpuTask := reclaimer.Clone()
	gpuReq := tu.Res(map[string]float64{"cpu": 1, "nvidia.com/gpu": 1})
	gpuTask.Resreq = &gpuReq
	if got, want := tu.Names(ssn.Reclaimable(gpuTask, cands)), []string{"hog-0", "hog-1"}; !slices.Equal(got, want) {
		t.Errorf("Reclaimable(gpu reclaimer) = %v, want %v", got, want)
	}
	big := cands[0].Clone()
	bigReq := tu.Res(map[string]float64{"cpu": 8})
	big.Resreq = &bigReq
	if got := ssn.Reclaimable(reclaimer, []*api.TaskInfo{big}); got != nil {
		t.Errorf("a candidate bigger than its queue's allocation was offered: %v", tu.Names(got))
	}
}

func TestPreemptive(t *testing.T) {
	ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
	task := tu.TaskOf(t, ssn, "fair", "fair-0")
	if !ssn.Preemptive(ssn.Queues["q2"], task) {
		t.Error("q2 (allocated 0, deserved 2) may reclaim for a 1-cpu task")
	}
	if ssn.Preemptive(ssn.Queues["q1"], task) {
		t.Error("q1 (allocated 4, deserved 2) may not reclaim")
	}
}

func TestOverusedAndReason(t *testing.T) {
	ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
	// q1 deserves 2 cpu, 4Gi and holds 4 cpu, 4Gi: overused. q2 holds nothing.
	if !ssn.Overused(ssn.Queues["q1"]) {
		t.Error("q1 should be overused")
	}
	if ssn.Overused(ssn.Queues["q2"]) {
		t.Error("q2 should not be overused")
	}
	want := "queue q1 overused: allocated cpu 4 >= deserved 2"
	if got := ssn.QueueReason("q1"); got != want {
		t.Errorf("QueueReason(q1) = %q, want %q", got, want)
	}
	if got := ssn.QueueReason("q2"); got != "" {
		t.Errorf("QueueReason(q2) = %q, want none", got)
	}
	f := figures(t, ssn)
	if !f["q1"].Overused || f["q2"].Overused || !near(f["q1"].Share, 2) || f["q2"].Share != 0 {
		t.Errorf("figures q1 %+v q2 %+v", f["q1"], f["q2"])
	}
}

func TestQueueOrder(t *testing.T) {
	ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
	q1, q2 := ssn.Queues["q1"], ssn.Queues["q2"]
	if !ssn.QueueOrderFn(q2, q1) || ssn.QueueOrderFn(q1, q2) {
		t.Error("q2 (share 0) should go before q1 (share 2)")
	}

	c := reclaimCluster()
	c.Snap.Queues[0].Priority = 10 // q1
	ssn = c.Open(t, tu.OneTier(Name), builders)
	if !ssn.QueueOrderFn(ssn.Queues["q1"], ssn.Queues["q2"]) {
		t.Error("a higher queue priority goes first whatever the share")
	}
}

func TestAllocatable(t *testing.T) {
	ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
	q2 := ssn.Queues["q2"]
	small := tu.TaskOf(t, ssn, "fair", "fair-0")
	tests := []struct {
		name  string
		queue *api.QueueInfo
		req   api.Resource
		want  bool
	}{
		{"fits in deserved", q2, tu.CPU(2, 2), true},
		{"cpu beyond deserved", q2, tu.CPU(3, 1), false},
		{"memory beyond deserved", q2, tu.CPU(1, 3), false},
		{"only requested dimensions count", q2, cpu(2), true},
		{"scalar the queue does not deserve", q2, tu.Res(map[string]float64{"cpu": 1, "nvidia.com/gpu": 1}), false},
		{"overused queue", ssn.Queues["q1"], tu.CPU(1, 1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			task := small.Clone()
			task.Resreq = tc.req.Clone()
			if got := ssn.Allocatable(tc.queue, task); got != tc.want {
				t.Errorf("Allocatable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAllocatableClosedQueue(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", cpu(4))
	c.Queue("closed", 1).State = api.QueueClosed
	c.Task(c.Job("jc", "closed", 1), "jc-0", api.Pending, "", cpu(1))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	task := tu.TaskOf(t, ssn, "jc", "jc-0")
	if ssn.Allocatable(ssn.Queues["closed"], task) {
		t.Error("a closed queue takes no new task")
	}
	// A closed queue does not reclaim either (Volcano's current rule).
	if ssn.Preemptive(ssn.Queues["closed"], task) {
		t.Error("a closed queue must not reclaim")
	}
}

func TestEventsUpdateAllocation(t *testing.T) {
	ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
	st := ssn.NewStatement()
	for _, name := range []string{"hog-0", "hog-1"} {
		if err := st.Evict(tu.TaskOf(t, ssn, "hog", name), framework.EvictReason{Action: "reclaim"}); err != nil {
			t.Fatal(err)
		}
	}
	// q1 now holds 2 cpu, 2Gi against deserved 2 cpu, 4Gi: not overused.
	if ssn.Overused(ssn.Queues["q1"]) {
		t.Error("q1 should no longer be overused after two evictions")
	}
	for _, name := range []string{"fair-0", "fair-1"} {
		if err := st.Pipeline(tu.TaskOf(t, ssn, "fair", name), "n1"); err != nil {
			t.Fatal(err)
		}
	}
	if !ssn.Overused(ssn.Queues["q2"]) {
		t.Error("q2 should be at its deserved share after pipelining two tasks")
	}
	st.Discard()
	if !ssn.Overused(ssn.Queues["q1"]) || ssn.Overused(ssn.Queues["q2"]) {
		t.Error("discard should restore the allocations")
	}
}

func TestJobEnqueueable(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", cpu(10))
	c.Queue("q", 1).Capability = cpu(6)
	c.Queue("closed", 1).State = api.QueueClosed
	run := c.Job("run", "q", 1)
	run.Phase = api.JobRunning
	c.Task(run, "run-0", api.Running, "n1", cpu(1))
	for _, name := range []string{"j1", "j2"} {
		j := c.Job(name, "q", 1)
		j.Phase, j.MinResources = api.JobPending, cpu(3)
		c.Task(j, name+"-0", api.Pending, "", cpu(3))
	}
	be := c.Job("be", "q", 1)
	be.Phase = api.JobPending
	c.Task(be, "be-0", api.Pending, "", cpu(1))
	cl := c.Job("cl", "closed", 1)
	cl.Phase = api.JobPending
	c.Task(cl, "cl-0", api.Pending, "", cpu(1))
	ssn := c.Open(t, tu.OneTier(Name), builders)

	// run holds 1 cpu, elastic 1 (no minResources): j1 needs 3+1+0-1 = 3 <= 6.
	if !ssn.JobEnqueueable(tu.JobOf(t, ssn, "j1")) {
		t.Fatal("j1 should be enqueueable")
	}
	ssn.JobEnqueued(tu.JobOf(t, ssn, "j1")) // as the enqueue action does
	// j2 needs 3+1+3-1 = 6 <= 6.
	if !ssn.JobEnqueueable(tu.JobOf(t, ssn, "j2")) {
		t.Fatal("j2 should be enqueueable")
	}
	ssn.JobEnqueued(tu.JobOf(t, ssn, "j2"))
	// A third 3-cpu job would need 9 > 6.
	j3 := tu.JobOf(t, ssn, "j1").Clone()
	j3.UID, j3.Name, j3.JobFitErrors = "ns/j3", "j3", ""
	if ssn.JobEnqueueable(j3) {
		t.Error("j3 should be rejected by the queue's capability")
	}
	if want := "queue q resource quota insufficient: cpu 9 > capability 6"; j3.JobFitErrors != want {
		t.Errorf("JobFitErrors = %q, want %q", j3.JobFitErrors, want)
	}
	if !ssn.JobEnqueueable(tu.JobOf(t, ssn, "be")) {
		t.Error("a job without minResources is always enqueueable")
	}
	cj := tu.JobOf(t, ssn, "cl")
	if ssn.JobEnqueueable(cj) || !strings.Contains(cj.JobFitErrors, "not open") {
		t.Errorf("a job of a closed queue must be rejected (reason %q)", cj.JobFitErrors)
	}
}

func TestInqueueAccounting(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", cpu(10))
	c.Queue("q", 1).Capability = cpu(6)
	in := c.Job("in", "q", 1) // Inqueue, not running yet: its minResources are reserved
	in.MinResources = cpu(4)
	c.Task(in, "in-0", api.Pending, "", cpu(4))
	run := c.Job("run", "q", 2) // Running with 1 of min 2 cpu held: 1 cpu stays reserved
	run.Phase, run.MinResources = api.JobRunning, cpu(2)
	c.Task(run, "run-0", api.Running, "n1", cpu(1))
	c.Task(run, "run-1", api.Succeeded, "", cpu(1))
	nw := c.Job("new", "q", 1)
	nw.Phase, nw.MinResources = api.JobPending, cpu(1)
	c.Task(nw, "new-0", api.Pending, "", cpu(1))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	p := ssn.Plugins()[0].(*plugin)
	attr := p.queues["q"]
	if !near(attr.inqueue.MilliCPU, 4000) {
		t.Errorf("inqueue = %v cpu, want 4 (the running job has fewer allocated tasks than minAvailable)", attr.inqueue.MilliCPU/1000)
	}
	// new: 1 + allocated 1 + inqueue 4 - elastic 0 = 6 <= 6.
	if !ssn.JobEnqueueable(tu.JobOf(t, ssn, "new")) {
		t.Error("new should fit exactly")
	}
	if !near(attr.inqueue.MilliCPU, 4000) {
		t.Errorf("a vote alone booked the job: inqueue %v cpu, want 4", attr.inqueue.MilliCPU/1000)
	}
	ssn.JobEnqueued(tu.JobOf(t, ssn, "new"))
	if !near(attr.inqueue.MilliCPU, 5000) {
		t.Errorf("inqueue after enqueue = %v cpu, want 5", attr.inqueue.MilliCPU/1000)
	}
}

func TestRunningJobReservation(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", cpu(10))
	c.Queue("q", 1)
	run := c.Job("run", "q", 1)
	run.Phase, run.MinResources = api.JobRunning, cpu(3)
	c.Task(run, "run-0", api.Running, "n1", cpu(1))
	c.Task(run, "run-1", api.Pending, "", cpu(2))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	attr := ssn.Plugins()[0].(*plugin).queues["q"]
	if !near(attr.inqueue.MilliCPU, 2000) {
		t.Errorf("inqueue = %v cpu, want 2 (min 3 less 1 held)", attr.inqueue.MilliCPU/1000)
	}
	if !near(attr.elastic.MilliCPU, 0) {
		t.Errorf("elastic = %v, want 0", attr.elastic.MilliCPU)
	}
}

func TestAllocationStopsAtDeserved(t *testing.T) {
	ssn := weighted().Open(t, tu.OneTier(Name), builders)
	st := ssn.NewStatement()
	for q, want := range map[string]int{"a": 28, "b": 42, "c": 30} {
		j := tu.JobOf(t, ssn, "j"+q)
		queue := ssn.Queues[q]
		placed := 0
		for _, task := range j.TasksIn(api.Pending) {
			if !ssn.Allocatable(queue, task) {
				break
			}
			for _, n := range ssn.NodeList {
				if task.Resreq.LessEqual(n.Idle, api.Zero) {
					if err := st.Allocate(task, n); err != nil {
						t.Fatal(err)
					}
					placed++
					break
				}
			}
		}
		if placed != want {
			t.Errorf("queue %s: placed %d tasks, want %d", q, placed, want)
		}
	}
}

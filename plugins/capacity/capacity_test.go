package capacity

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
	"github.com/sluice-sched/sluice/plugins/priority"
)

var builders = map[string]framework.PluginBuilder{Name: New}

const gi = 1 << 30

func cpu(cores float64) api.Resource { return tu.Res(map[string]float64{"cpu": cores}) }

func gpu(cores, gpus float64) api.Resource {
	return tu.Res(map[string]float64{"cpu": cores, "nvidia.com/gpu": gpus})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6*math.Max(1, math.Abs(b)) }

const hierarchy = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: capacity\n    enableHierarchy: true\n"

func hierarchyWithLevel(n string) string {
	return hierarchy + "    arguments:\n      ancestorReclaimLevel: " + n + "\n"
}

func pluginOf(ssn *framework.Session) *plugin { return ssn.Plugins()[0].(*plugin) }

func figures(t *testing.T, ssn *framework.Session) map[string]framework.QueueFigures {
	t.Helper()
	out := map[string]framework.QueueFigures{}
	for _, q := range ssn.Close().Queues {
		out[q.Queue] = q.QueueFigures
	}
	return out
}

func TestNewArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    conf.Arguments
		wantErr string
	}{
		{"none", nil, ""},
		{"level", conf.Arguments{"ancestorReclaimLevel": 2}, ""},
		{"level as string", conf.Arguments{"ancestorReclaimLevel": "1"}, ""},
		{"negative level", conf.Arguments{"ancestorReclaimLevel": -1}, "ancestorReclaimLevel"},
		{"level not a number", conf.Arguments{"ancestorReclaimLevel": "x"}, "ancestorReclaimLevel"},
		{"dra switch", conf.Arguments{"capacity.DynamicResourceAllocationEnable": true}, ""},
		{"dra switch not a bool", conf.Arguments{"capacity.DRAConsumableCapacityEnable": "maybe"}, "DRAConsumableCapacityEnable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("unexpected error %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
			}
		})
	}
}

// flat: 10 cpu, 40Gi. q1 deserves 4 cpu, capability 6 cpu; q2 deserves 4 cpu with a guarantee
// of 3; q3 is best-effort; idle has no jobs. q1 runs 3 one-cpu tasks, q2 runs 1, q3 runs 2.
func flat() *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", tu.CPU(10, 40))
	q1 := c.Queue("q1", 1)
	q1.Deserved, q1.Capability = cpu(4), cpu(6)
	q2 := c.Queue("q2", 1)
	q2.Deserved, q2.Guarantee = cpu(4), cpu(3)
	c.Queue("q3", 1)
	c.Queue("idle", 1).Deserved = cpu(2)
	for _, q := range []struct {
		name    string
		running int
	}{{"q1", 3}, {"q2", 1}, {"q3", 2}} {
		j := c.Job("run-"+q.name, q.name, 1)
		j.Phase = api.JobRunning
		c.Tasks(j, "run-"+q.name, q.running, api.Running, "n1", tu.CPU(1, 1))
		c.Tasks(c.Job("new-"+q.name, q.name, 1), "new-"+q.name, 4, api.Pending, "", tu.CPU(1, 1))
	}
	return c
}

func TestFlatBuild(t *testing.T) {
	ssn := flat().Open(t, tu.OneTier(Name), builders)
	p := pluginOf(ssn)
	if p.queues["idle"] != nil {
		t.Error("without hierarchy a queue without jobs is unknown")
	}
	tests := []struct {
		queue                    string
		realCPU, deservedCPU, sh float64
		realMemGiB               float64
		allocatedCPU, requestCPU float64
	}{
		// real capability: 10 - 3 (all guarantees) + own guarantee, capped by capability.
		{queue: "q1", realCPU: 6, deservedCPU: 4, sh: 0.75, realMemGiB: 40, allocatedCPU: 3, requestCPU: 7},
		{queue: "q2", realCPU: 10, deservedCPU: 4, sh: 0.25, realMemGiB: 40, allocatedCPU: 1, requestCPU: 5},
		{queue: "q3", realCPU: 7, deservedCPU: 0, sh: 1, realMemGiB: 40, allocatedCPU: 2, requestCPU: 6},
	}
	for _, tc := range tests {
		a := p.queues[tc.queue]
		if a == nil {
			t.Fatalf("queue %s unknown", tc.queue)
		}
		if !near(a.realCapability.MilliCPU, tc.realCPU*1000) || !near(a.realCapability.Memory, tc.realMemGiB*gi) {
			t.Errorf("%s: realCapability %s, want cpu %v memory %vGi", tc.queue, a.realCapability, tc.realCPU, tc.realMemGiB)
		}
		if !near(a.deserved.MilliCPU, tc.deservedCPU*1000) || a.deserved.Memory != 0 {
			t.Errorf("%s: deserved %s, want cpu %v and no memory", tc.queue, a.deserved, tc.deservedCPU)
		}
		if !near(a.share, tc.sh) {
			t.Errorf("%s: share %v, want %v", tc.queue, a.share, tc.sh)
		}
		if !near(a.allocated.MilliCPU, tc.allocatedCPU*1000) || !near(a.request.MilliCPU, tc.requestCPU*1000) {
			t.Errorf("%s: allocated %s request %s", tc.queue, a.allocated, a.request)
		}
	}
}

func TestDeservedCappedAndRaised(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", gpu(8, 2))
	big := c.Queue("big", 1)
	big.Deserved = gpu(20, 4) // capped by the real capability: 8 - 2 (guarantee of g) cpu, 2 gpus
	g := c.Queue("g", 1)
	g.Deserved, g.Guarantee = cpu(1), cpu(2) // raised to its guarantee
	c.Task(c.Job("jb", "big", 1), "jb-0", api.Pending, "", cpu(1))
	c.Task(c.Job("jg", "g", 1), "jg-0", api.Pending, "", cpu(1))
	p := pluginOf(c.Open(t, tu.OneTier(Name), builders))
	if d := p.queues["big"].deserved; !near(d.MilliCPU, 6000) || !near(d.Scalars["nvidia.com/gpu"], 2000) {
		t.Errorf("big deserved %s, want cpu 6, gpu 2", d)
	}
	if d := p.queues["g"].deserved; !near(d.MilliCPU, 2000) {
		t.Errorf("g deserved %s, want cpu 2", d)
	}
}

func TestFlatQueueOrder(t *testing.T) {
	tests := []struct {
		name  string
		setup func(c *tu.Cluster)
		l, r  string
		want  bool
	}{
		{"smaller share first", nil, "q2", "q1", true},
		{"larger share later", nil, "q1", "q2", false},
		{"deserved before best-effort on equal share", func(c *tu.Cluster) {
			// q1 at 4 of 4: share 1, like best-effort q3.
			c.Tasks(c.Job("more", "q1", 1), "more", 1, api.Running, "n1", tu.CPU(1, 1))
		}, "q1", "q3", true},
		{"best-effort after deserved on equal share", func(c *tu.Cluster) {
			c.Tasks(c.Job("more", "q1", 1), "more", 1, api.Running, "n1", tu.CPU(1, 1))
		}, "q3", "q1", false},
		{"priority beats share", func(c *tu.Cluster) { c.Snap.Queues[2].Priority = 5 }, "q3", "q2", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := flat()
			if tc.setup != nil {
				tc.setup(c)
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			if got := ssn.QueueOrderFn(ssn.Queues[tc.l], ssn.Queues[tc.r]); got != tc.want {
				t.Errorf("QueueOrderFn(%s, %s) = %v, want %v", tc.l, tc.r, got, tc.want)
			}
		})
	}
}

func TestAllocatable(t *testing.T) {
	tests := []struct {
		name   string
		queue  string
		req    api.Resource
		closed bool
		want   bool
		reason string
	}{
		{name: "within capability", queue: "q1", req: tu.CPU(3, 1), want: true},
		{name: "beyond capability", queue: "q1", req: tu.CPU(4, 1), want: false,
			reason: "queue q1 capacity insufficient: cpu 7 > capability 6"},
		{name: "past deserved is fine", queue: "q2", req: tu.CPU(6, 1), want: true},
		{name: "scalar the cluster lacks", queue: "q2", req: gpu(1, 1), want: false,
			reason: "queue q2 capacity insufficient: nvidia.com/gpu 1 > capability 0"},
		{name: "closed queue", queue: "q3", req: tu.CPU(1, 1), closed: true, want: false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := flat()
			if tc.closed {
				c.Snap.Queues[2].State = api.QueueClosed
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			task := tu.TaskOf(t, ssn, "new-"+tc.queue, "new-"+tc.queue+"-0").Clone()
			task.Resreq = tc.req.Clone()
			if got := ssn.Allocatable(ssn.Queues[tc.queue], task); got != tc.want {
				t.Errorf("Allocatable = %v, want %v", got, tc.want)
			}
			if got := ssn.QueueReason(tc.queue); got != tc.reason {
				t.Errorf("QueueReason = %q, want %q", got, tc.reason)
			}
		})
	}
}

func TestPreemptive(t *testing.T) {
	tests := []struct {
		name  string
		queue string
		req   api.Resource
		want  bool
	}{
		{"below deserved", "q1", cpu(1), true},
		{"reaching deserved exactly", "q2", cpu(3), true},
		{"past deserved", "q1", cpu(2), false},
		{"past real capability", "q2", cpu(10), false},
		{"best-effort queue never reclaims", "q3", cpu(1), false},
		{"only dimensions in play count", "q2", tu.CPU(1, 1), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := flat().Open(t, tu.OneTier(Name), builders)
			task := tu.TaskOf(t, ssn, "new-"+tc.queue, "new-"+tc.queue+"-0").Clone()
			task.Resreq = tc.req.Clone()
			if got := ssn.Preemptive(ssn.Queues[tc.queue], task); got != tc.want {
				t.Errorf("Preemptive = %v, want %v", got, tc.want)
			}
		})
	}
	c := flat()
	c.Snap.Queues[0].State = api.QueueClosed
	ssn := c.Open(t, tu.OneTier(Name), builders)
	if ssn.Preemptive(ssn.Queues["q1"], tu.TaskOf(t, ssn, "new-q1", "new-q1-0")) {
		t.Error("a closed queue may not reclaim")
	}
}

// reclaimCluster: 8 cpu. hog (deserved 2, guarantee 1) runs 4 tasks of 1 cpu; be (best-effort)
// runs 2; gpu (deserved 1 gpu) runs a gpu task; want (deserved 4) has pending work.
func reclaimCluster() *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", gpu(8, 1))
	hog := c.Queue("hog", 1)
	hog.Deserved, hog.Guarantee = cpu(2), cpu(1)
	c.Queue("be", 1)
	c.Queue("gpuq", 1).Deserved = tu.Res(map[string]float64{"nvidia.com/gpu": 1})
	c.Queue("want", 1).Deserved = cpu(4)
	for _, r := range []struct {
		queue string
		n     int
		res   api.Resource
	}{{"hog", 4, cpu(1)}, {"be", 2, cpu(1)}, {"gpuq", 1, gpu(0, 1)}} {
		j := c.Job(r.queue, r.queue, 1)
		j.Phase = api.JobRunning
		c.Tasks(j, r.queue, r.n, api.Running, "n1", r.res)
	}
	c.Tasks(c.Job("w", "want", 1), "w", 4, api.Pending, "", cpu(1))
	return c
}

func candidates(t *testing.T, ssn *framework.Session, jobs ...string) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, j := range jobs {
		out = append(out, tu.JobOf(t, ssn, j).SortedTasks()...)
	}
	return out
}

func TestReclaimable(t *testing.T) {
	tests := []struct {
		name      string
		reclaimer api.Resource
		jobs      []string
		want      []string
	}{
		// hog holds 4 of 2 deserved: two go, in reverse task order; the guarantee (1) is safe.
		{"above deserved", cpu(1), []string{"hog"}, []string{"hog-3", "hog-2"}},
		// A best-effort queue's tasks ask for nothing it deserves: all may go.
		{"best-effort queue", cpu(1), []string{"be"}, []string{"be-1", "be-0"}},
		// The gpu task shares no dimension with a cpu-only reclaimer.
		{"no shared dimension", cpu(1), []string{"gpuq"}, nil},
		// gpuq holds 1 of 1 deserved gpu: not above it.
		{"at deserved", gpu(1, 1), []string{"gpuq"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := reclaimCluster().Open(t, tu.OneTier(Name), builders)
			reclaimer := tu.TaskOf(t, ssn, "w", "w-0").Clone()
			reclaimer.Resreq, reclaimer.InitResreq = tc.reclaimer.Clone(), tc.reclaimer.Clone()
			got := tu.Names(ssn.Reclaimable(reclaimer, candidates(t, ssn, tc.jobs...)))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Reclaimable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestReclaimableKeepsGuarantee(t *testing.T) {
	c := reclaimCluster()
	c.Snap.Queues[0].Guarantee = cpu(3) // hog keeps 3 of its 4
	ssn := c.Open(t, tu.OneTier(Name), builders)
	got := tu.Names(ssn.Reclaimable(tu.TaskOf(t, ssn, "w", "w-0"), candidates(t, ssn, "hog")))
	if !slices.Equal(got, []string{"hog-3"}) {
		t.Errorf("Reclaimable = %v, want [hog-3]", got)
	}
}

// TestUnifiedEvictable follows Volcano's capacity.go gang-aware callback: preemption takes every
// candidate; reclaim walks the candidates in the order offered, each queue above its deserved
// amount giving until it is down to it, never below its guarantee.
func TestUnifiedEvictable(t *testing.T) {
	tests := []struct {
		name string
		kind framework.EvictionKind
		// guarantee, if set, replaces hog's guarantee of 1 cpu.
		guarantee float64
		jobs      []string
		// reverse offers the candidates in reverse.
		reverse bool
		want    []string
	}{
		{name: "preemption takes every candidate", kind: framework.EvictionKindGangPreempt, jobs: []string{"hog", "gpuq", "be"},
			want: []string{"hog-0", "hog-1", "hog-2", "hog-3", "gpuq-0", "be-0", "be-1"}},
		// hog holds 4 of 2 deserved: the first two offered go.
		{name: "above deserved, in the order offered", kind: framework.EvictionKindGangReclaim, jobs: []string{"hog"}, want: []string{"hog-0", "hog-1"}},
		{name: "the order offered decides which go", kind: framework.EvictionKindGangReclaim, jobs: []string{"hog"}, reverse: true, want: []string{"hog-3", "hog-2"}},
		{name: "the guarantee stays", kind: framework.EvictionKindGangReclaim, guarantee: 3, jobs: []string{"hog"}, want: []string{"hog-0"}},
		// A best-effort queue's tasks ask for nothing it deserves: all may go.
		{name: "best-effort queue", kind: framework.EvictionKindGangReclaim, jobs: []string{"be"}, want: []string{"be-0", "be-1"}},
		// gpuq holds 1 of 1 deserved gpu: not above it.
		{name: "at deserved", kind: framework.EvictionKindGangReclaim, jobs: []string{"gpuq"}},
		{name: "each queue counts its own victims", kind: framework.EvictionKindGangReclaim, jobs: []string{"be", "gpuq", "hog"},
			want: []string{"be-0", "be-1", "hog-0", "hog-1"}},
		{name: "any kind but gang preemption is judged as reclaim", kind: framework.EvictionKindUnknown, jobs: []string{"hog"}, want: []string{"hog-0", "hog-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := reclaimCluster()
			if tc.guarantee > 0 {
				c.Snap.Queues[0].Guarantee = cpu(tc.guarantee)
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			cands := candidates(t, ssn, tc.jobs...)
			if tc.reverse {
				slices.Reverse(cands)
			}
			ctx := &framework.EvictionContext{Kind: tc.kind, Job: tu.JobOf(t, ssn, "w")}
			if got := tu.Names(ssn.UnifiedEvictable(ctx, cands)); !slices.Equal(got, tc.want) {
				t.Errorf("UnifiedEvictable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEnqueueableAndEnqueued(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", cpu(10))
	q := c.Queue("q", 1)
	q.Deserved, q.Capability = cpu(2), cpu(6)
	c.Queue("closed", 1).State = api.QueueClosed
	run := c.Job("run", "q", 1)
	run.Phase = api.JobRunning
	c.Task(run, "run-0", api.Running, "n1", cpu(1))
	for _, name := range []string{"j1", "j2", "j3"} {
		j := c.Job(name, "q", 1)
		j.Phase, j.MinResources = api.JobPending, cpu(3)
		c.Task(j, name+"-0", api.Pending, "", cpu(3))
	}
	be := c.Job("nomin", "q", 1)
	be.Phase = api.JobPending
	c.Task(be, "nomin-0", api.Pending, "", cpu(1))
	cl := c.Job("cl", "closed", 1)
	cl.Phase, cl.MinResources = api.JobPending, cpu(1)
	c.Task(cl, "cl-0", api.Pending, "", cpu(1))
	ssn := c.Open(t, tu.OneTier(Name), builders)

	// run holds 1 with no minResources: elastic 1. j1 needs 3+1+0-1 = 3 <= 6.
	for _, step := range []struct {
		job  string
		want bool
	}{{"j1", true}, {"j2", true}, {"j3", false}} {
		j := tu.JobOf(t, ssn, step.job)
		got := ssn.JobEnqueueable(j)
		if got != step.want {
			t.Fatalf("JobEnqueueable(%s) = %v, want %v", step.job, got, step.want)
		}
		if got {
			ssn.JobEnqueued(j)
		}
	}
	if want := "queue q resource quota insufficient: cpu 9 > capability 6"; tu.JobOf(t, ssn, "j3").JobFitErrors != want {
		t.Errorf("JobFitErrors = %q, want %q", tu.JobOf(t, ssn, "j3").JobFitErrors, want)
	}
	if got := pluginOf(ssn).queues["q"].inqueue.MilliCPU; !near(got, 6000) {
		t.Errorf("inqueue %v, want 6 cpu after two admissions", got/1000)
	}
	if !ssn.JobEnqueueable(tu.JobOf(t, ssn, "nomin")) {
		t.Error("a job without minResources is always enqueueable")
	}
	if j := tu.JobOf(t, ssn, "cl"); ssn.JobEnqueueable(j) || !strings.Contains(j.JobFitErrors, "not open") {
		t.Errorf("a job of a closed queue must be rejected (reason %q)", j.JobFitErrors)
	}
}

func TestInqueueDeductsAllocated(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", cpu(10))
	c.Queue("q", 1)
	in := c.Job("in", "q", 2) // Inqueue with 1 of its 3 min cpu allocated
	in.MinResources = cpu(3)
	c.Task(in, "in-0", api.Running, "n1", cpu(1))
	c.Task(in, "in-1", api.Pending, "", cpu(2))
	run := c.Job("run", "q", 1) // Running, gang met, 1 of min 2 held
	run.Phase, run.MinResources = api.JobRunning, cpu(2)
	c.Task(run, "run-0", api.Running, "n1", cpu(1))
	short := c.Job("short", "q", 2) // Running below its gang: reserves nothing
	short.Phase, short.MinResources = api.JobRunning, cpu(4)
	c.Task(short, "short-0", api.Running, "n1", cpu(1))
	attr := pluginOf(c.Open(t, tu.OneTier(Name), builders)).queues["q"]
	if !near(attr.inqueue.MilliCPU, 3000) {
		t.Errorf("inqueue %v cpu, want 3 (2 for in, 1 for run)", attr.inqueue.MilliCPU/1000)
	}
}

func TestEventsUpdateAllocation(t *testing.T) {
	ssn := flat().Open(t, tu.OneTier(Name), builders)
	p := pluginOf(ssn)
	st := ssn.NewStatement()
	if err := st.Evict(tu.TaskOf(t, ssn, "run-q1", "run-q1-0"), framework.EvictReason{Action: "reclaim"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Allocate(tu.TaskOf(t, ssn, "new-q2", "new-q2-0"), ssn.Nodes["n1"]); err != nil {
		t.Fatal(err)
	}
	if a := p.queues["q1"]; !near(a.allocated.MilliCPU, 2000) || !near(a.share, 0.5) {
		t.Errorf("q1 after eviction: allocated %s share %v", a.allocated, a.share)
	}
	if a := p.queues["q2"]; !near(a.allocated.MilliCPU, 2000) || !near(a.share, 0.5) {
		t.Errorf("q2 after allocation: allocated %s share %v", a.allocated, a.share)
	}
	st.Discard()
	if !near(p.queues["q1"].allocated.MilliCPU, 3000) || !near(p.queues["q2"].allocated.MilliCPU, 1000) {
		t.Error("discard should restore the allocations")
	}
}

func TestFigures(t *testing.T) {
	c := flat()
	c.Tasks(c.Job("more", "q3", 1), "more", 1, api.Running, "n1", tu.CPU(1, 1))
	f := figures(t, c.Open(t, tu.OneTier(Name), builders))
	tests := []struct {
		queue               string
		allocated, deserved float64
		share               float64
		overused            bool
	}{
		{"q1", 3, 4, 0.75, false},
		{"q2", 1, 4, 0.25, false},
		{"q3", 3, 0, 1, false},
		{"idle", 0, 2, 0, false},
	}
	for _, tc := range tests {
		g, ok := f[tc.queue]
		if !ok {
			t.Fatalf("no figures for %s", tc.queue)
		}
		if !near(g.Allocated.MilliCPU, tc.allocated*1000) || !near(g.Deserved.MilliCPU, tc.deserved*1000) ||
			!near(g.Share, tc.share) || g.Overused != tc.overused {
			t.Errorf("%s: allocated %s deserved %s share %v overused %v", tc.queue, g.Allocated, g.Deserved, g.Share, g.Overused)
		}
	}
}

func TestOverusedFigure(t *testing.T) {
	c := flat()
	c.Tasks(c.Job("more", "q1", 1), "more", 2, api.Running, "n1", tu.CPU(1, 1)) // 5 of 4
	f := figures(t, c.Open(t, tu.OneTier(Name), builders))
	if g := f["q1"]; !g.Overused || !near(g.Share, 1.25) {
		t.Errorf("q1: share %v overused %v, want 1.25 true", g.Share, g.Overused)
	}
}

// tree: root has org (capability 8 cpu, guarantee 2) and lab (deserved 2); org has team-a
// (deserved 3, guarantee 1) and team-b (deserved 1, capability 3 cpu); 10 cpu, 20Gi, 2 gpus.
func tree() *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", tu.Res(map[string]float64{"cpu": 10, "memory": 20 * gi, "nvidia.com/gpu": 2}))
	org := c.Queue("org", 1)
	org.Capability = tu.Res(map[string]float64{"cpu": 8, "nvidia.com/gpu": 1})
	org.Guarantee = cpu(2)
	c.Queue("lab", 1).Deserved = cpu(2)
	a := c.Queue("team-a", 1)
	a.Parent, a.Deserved, a.Guarantee = "org", cpu(3), cpu(1)
	b := c.Queue("team-b", 1)
	b.Parent, b.Deserved, b.Capability = "org", cpu(1), cpu(3)
	for _, q := range []string{"team-a", "team-b", "lab"} {
		j := c.Job("run-"+q, q, 1)
		j.Phase = api.JobRunning
		c.Task(j, "run-"+q+"-0", api.Running, "n1", cpu(1))
		c.Tasks(c.Job("new-"+q, q, 1), "new-"+q, 3, api.Pending, "", cpu(1))
	}
	return c
}

func TestHierarchicalBuild(t *testing.T) {
	ssn := tree().Open(t, hierarchy, builders)
	p := pluginOf(ssn)
	if !p.ready {
		t.Fatal("tree should be ready")
	}
	tests := []struct {
		queue        string
		ancestors    []string
		realCPU      float64
		realGPU      float64
		allocatedCPU float64
		deservedCPU  float64
	}{
		// root: the cluster total; deserved is the children's, org raised to its guarantee.
		{"root", nil, 10, 2000, 3, 4},
		// org: root's 10 less the guarantees under root (2), plus its own 2; its cap 8.
		{"org", []string{"root"}, 8, 1000, 2, 2},
		{"lab", []string{"root"}, 8, 2000, 1, 2},
		// team-a: org's 8 less the guarantees under org (1), plus 1.
		{"team-a", []string{"root", "org"}, 8, 1000, 1, 3},
		// team-b: 7 capped by its capability 3; gpu inherited from org.
		{"team-b", []string{"root", "org"}, 3, 1000, 1, 1},
	}
	for _, tc := range tests {
		a := p.queues[tc.queue]
		if a == nil {
			t.Fatalf("queue %s unknown", tc.queue)
		}
		if !slices.Equal(a.ancestors, tc.ancestors) {
			t.Errorf("%s: ancestors %v, want %v", tc.queue, a.ancestors, tc.ancestors)
		}
		realCPU := tc.realCPU
		if realCPU != math.MaxFloat64 {
			realCPU *= 1000
		}
		if !near(a.realCapability.MilliCPU, realCPU) || !near(a.realCapability.Scalars["nvidia.com/gpu"], tc.realGPU) {
			t.Errorf("%s: realCapability %v cpu, %v gpu", tc.queue, a.realCapability.MilliCPU, a.realCapability.Scalars["nvidia.com/gpu"])
		}
		if !near(a.allocated.MilliCPU, tc.allocatedCPU*1000) {
			t.Errorf("%s: allocated %s", tc.queue, a.allocated)
		}
		if !near(a.deserved.MilliCPU, tc.deservedCPU*1000) {
			t.Errorf("%s: deserved %s, want cpu %v", tc.queue, a.deserved, tc.deservedCPU)
		}
	}
}

func TestHierarchyBroken(t *testing.T) {
	tests := []struct {
		name  string
		setup func(c *tu.Cluster)
	}{
		{"job in an inner queue", func(c *tu.Cluster) {
			c.Task(c.Job("inner", "org", 1), "inner-0", api.Pending, "", cpu(1))
		}},
		{"unknown parent", func(c *tu.Cluster) { c.Queue("orphan", 1).Parent = "nowhere" }},
		{"cycle", func(c *tu.Cluster) {
			c.Queue("x", 1).Parent = "y"
			c.Queue("y", 1).Parent = "x"
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tree()
			tc.setup(c)
			ssn := c.Open(t, hierarchy, builders)
			task := tu.TaskOf(t, ssn, "new-lab", "new-lab-0")
			if ssn.Allocatable(ssn.Queues["lab"], task) {
				t.Error("a broken tree allocates nothing")
			}
			if ssn.JobEnqueueable(tu.JobOf(t, ssn, "new-lab")) {
				t.Error("a broken tree enqueues nothing")
			}
			if v := ssn.Reclaimable(task, candidates(t, ssn, "run-team-a")); v != nil {
				t.Errorf("a broken tree reclaims nothing, got %v", tu.Names(v))
			}
			gang := &framework.EvictionContext{Kind: framework.EvictionKindGangReclaim, Job: tu.JobOf(t, ssn, "new-lab")}
			if v := ssn.UnifiedEvictable(gang, candidates(t, ssn, "run-team-a")); v != nil {
				t.Errorf("a broken tree reclaims nothing for a gang, got %v", tu.Names(v))
			}
			gang.Kind = framework.EvictionKindGangPreempt
			if v := ssn.UnifiedEvictable(gang, candidates(t, ssn, "run-team-a")); len(v) == 0 {
				t.Error("capacity does not judge gang preemption, even with a broken tree")
			}
		})
	}
}

func TestHierarchicalAllocatable(t *testing.T) {
	tests := []struct {
		name   string
		queue  string
		req    api.Resource
		want   bool
		reason string
	}{
		{name: "leaf within limits", queue: "team-b", req: cpu(2), want: true},
		{name: "leaf capability", queue: "team-b", req: cpu(3), want: false,
			reason: "queue team-b capacity insufficient: cpu 4 > capability 3"},
		{name: "ancestor capability reached exactly", queue: "team-a", req: cpu(6), want: true},
		{name: "ancestor capability", queue: "team-a", req: cpu(7), want: false,
			reason: "queue team-a (ancestor org) capacity insufficient: cpu 9 > capability 8"},
		{name: "inner queue takes nothing", queue: "org", req: cpu(1), want: false},
		{name: "under root: the cluster less the guarantees", queue: "lab", req: cpu(7), want: true},
		{name: "under root: past the cluster less the guarantees", queue: "lab", req: cpu(8), want: false,
			reason: "queue lab capacity insufficient: cpu 9 > capability 8"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := tree().Open(t, hierarchy, builders)
			task := tu.TaskOf(t, ssn, "new-lab", "new-lab-0").Clone()
			task.Resreq = tc.req.Clone()
			if got := ssn.Allocatable(ssn.Queues[tc.queue], task); got != tc.want {
				t.Errorf("Allocatable = %v, want %v", got, tc.want)
			}
			if got := ssn.QueueReason(tc.queue); got != tc.reason {
				t.Errorf("QueueReason = %q, want %q", got, tc.reason)
			}
		})
	}
}

func TestHierarchicalQueueOrder(t *testing.T) {
	c := tree()
	// team-a: 1 of 3 (share 1/3); team-b: 1 of 1 (share 1); lab: 1 of 2 (share 0.5).
	// org holds 2 and deserves its guarantee of 2: share 1.
	ssn := c.Open(t, hierarchy, builders)
	tests := []struct {
		l, r string
		want bool
	}{
		{"team-a", "team-b", true}, // siblings by their own shares
		{"team-b", "team-a", false},
		{"lab", "team-a", true}, // lab (0.5) against org (1)
		{"team-a", "lab", false},
		{"lab", "org", true}, // a leaf before an inner queue
		{"org", "lab", false},
	}
	for _, tc := range tests {
		if got := ssn.QueueOrderFn(ssn.Queues[tc.l], ssn.Queues[tc.r]); got != tc.want {
			t.Errorf("QueueOrderFn(%s, %s) = %v, want %v", tc.l, tc.r, got, tc.want)
		}
	}
}

func TestVictimQueueOrder(t *testing.T) {
	ssn := tree().Open(t, hierarchy, builders)
	a, b, lab := ssn.Queues["team-a"], ssn.Queues["team-b"], ssn.Queues["lab"]
	if !ssn.VictimQueueOrderFn(b, lab, a) {
		t.Error("for team-a, its sibling team-b gives victims before lab")
	}
	if ssn.VictimQueueOrderFn(lab, b, a) {
		t.Error("lab is further from team-a than team-b")
	}
}

func TestHierarchicalEnqueue(t *testing.T) {
	c := tree()
	j := c.Job("big", "team-a", 1)
	j.Phase, j.MinResources = api.JobPending, cpu(6)
	c.Task(j, "big-0", api.Pending, "", cpu(6))
	k := c.Job("small", "team-a", 1)
	k.Phase, k.MinResources = api.JobPending, cpu(1)
	c.Task(k, "small-0", api.Pending, "", cpu(1))
	ssn := c.Open(t, hierarchy, builders)
	// org holds 2 (elastic 2): 6 + 2 - 2 = 6 <= 8, team-a: 6 + 1 - 1 <= 8.
	big := tu.JobOf(t, ssn, "big")
	if !ssn.JobEnqueueable(big) {
		t.Fatalf("big should be enqueueable: %s", big.JobFitErrors)
	}
	ssn.JobEnqueued(big)
	p := pluginOf(ssn)
	for _, q := range []string{"team-a", "org", "root"} {
		if got := p.queues[q].inqueue.MilliCPU; !near(got, 6000) {
			t.Errorf("%s inqueue %v, want 6 cpu", q, got/1000)
		}
	}
	// small: team-a 1 + 1 + 6 - 1 = 7 <= 8; org 1 + 2 + 6 - 2 = 7 <= 8: fits; a second big would not.
	if !ssn.JobEnqueueable(tu.JobOf(t, ssn, "small")) {
		t.Error("small should be enqueueable")
	}
	again := big.Clone()
	again.JobFitErrors = ""
	if ssn.JobEnqueueable(again) {
		t.Error("a second big job exceeds the capability")
	}
	if want := "queue team-a resource quota insufficient: cpu 12 > capability 8"; again.JobFitErrors != want {
		t.Errorf("JobFitErrors = %q, want %q", again.JobFitErrors, want)
	}
	// lab's queue is fine but a job asking past org's capability through team-b is stopped
	// at org: team-b 3 + 1 + 0 - 1 = 3 <= 3, org 3 + 2 + 6 - 2 = 9 > 8.
	viaB := big.Clone()
	viaB.Queue, viaB.JobFitErrors = "team-b", ""
	viaB.MinResources = &api.Resource{MilliCPU: 3000}
	if ssn.JobEnqueueable(viaB) {
		t.Error("org's capability should stop a job of team-b")
	}
	if want := "queue team-b (ancestor org) resource quota insufficient: cpu 9 > capability 8"; viaB.JobFitErrors != want {
		t.Errorf("JobFitErrors = %q, want %q", viaB.JobFitErrors, want)
	}
	inner := tu.JobOf(t, ssn, "new-lab").Clone()
	inner.Queue, inner.JobFitErrors = "org", ""
	if ssn.JobEnqueueable(inner) {
		t.Error("a job of an inner queue is rejected")
	}
}

// TestEnqueueWithinDeserved: a job that keeps its queue within its deserved amount (raised to
// its guarantee) is admitted even when the cluster is full; one that goes past it is checked
// against the real capabilities, the root's being the cluster total.
func TestEnqueueWithinDeserved(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", tu.Res(map[string]float64{"cpu": 4, "nvidia.com/gpu": 2}))
	c.Queue("dept", 1).Guarantee = tu.Res(map[string]float64{"cpu": 4, "nvidia.com/gpu": 2})
	for _, q := range []struct {
		name string
		g    api.Resource
	}{
		{"full", tu.Res(map[string]float64{"cpu": 2, "nvidia.com/gpu": 1})},
		{"wants", tu.Res(map[string]float64{"cpu": 2, "nvidia.com/gpu": 1})},
		{"gpu-only", tu.Res(map[string]float64{"nvidia.com/gpu": 1})},
	} {
		a := c.Queue(q.name, 1)
		a.Parent, a.Guarantee = "dept", q.g
	}
	run := c.Job("run", "full", 1)
	run.Phase, run.MinResources = api.JobRunning, tu.Res(map[string]float64{"cpu": 4, "nvidia.com/gpu": 2})
	c.Task(run, "run-0", api.Running, "n1", tu.Res(map[string]float64{"cpu": 4, "nvidia.com/gpu": 2}))
	add := func(name, queue string, r api.Resource) {
		j := c.Job(name, queue, 1)
		j.Phase, j.MinResources = api.JobPending, r
		c.Task(j, name+"-0", api.Pending, "", r)
	}
	add("in", "wants", tu.Res(map[string]float64{"cpu": 2, "nvidia.com/gpu": 1}))
	add("past", "wants", tu.Res(map[string]float64{"cpu": 3, "nvidia.com/gpu": 1}))
	add("cpu", "gpu-only", tu.Res(map[string]float64{"cpu": 1, "nvidia.com/gpu": 1}))
	ssn := c.Open(t, hierarchy, builders)
	if j := tu.JobOf(t, ssn, "in"); !ssn.JobEnqueueable(j) {
		t.Errorf("a job within its queue's guarantee is admitted on a full cluster: %s", j.JobFitErrors)
	}
	if j := tu.JobOf(t, ssn, "past"); ssn.JobEnqueueable(j) {
		t.Error("a job past its queue's guarantee is stopped by the full cluster")
	} else if want := "queue wants resource quota insufficient: cpu 3 > capability 2"; j.JobFitErrors != want {
		// wants may use the cluster (root: 4 cpu) less dept's guarantees (4) plus its own (2).
		t.Errorf("JobFitErrors = %q, want %q", j.JobFitErrors, want)
	}
	// gpu-only deserves no cpu: asking for cpu is past its deserved amount.
	if j := tu.JobOf(t, ssn, "cpu"); ssn.JobEnqueueable(j) {
		t.Error("cpu beyond a gpu-only deserved amount is stopped by the full cluster")
	}
}

// levelTree: root has dept-x (deserved 4) with team-x1 (deserved 2) and dept-y (deserved 4)
// with team-y1 (deserved 2) and team-y2 (deserved 2). team-x1 runs 3, team-y1 runs 3.
func levelTree() *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", cpu(8))
	c.Queue("dept-x", 1).Deserved = cpu(4)
	c.Queue("dept-y", 1).Deserved = cpu(4)
	for _, q := range []struct{ name, parent string }{{"team-x1", "dept-x"}, {"team-y1", "dept-y"}, {"team-y2", "dept-y"}} {
		a := c.Queue(q.name, 1)
		a.Parent, a.Deserved = q.parent, cpu(2)
	}
	for _, q := range []string{"team-x1", "team-y1"} {
		j := c.Job("run-"+q, q, 1)
		j.Phase = api.JobRunning
		c.Tasks(j, "run-"+q, 3, api.Running, "n1", cpu(1))
	}
	c.Tasks(c.Job("w", "team-y2", 1), "w", 2, api.Pending, "", cpu(1))
	c.Tasks(c.Job("wx", "team-x1", 1), "wx", 1, api.Pending, "", cpu(1))
	return c
}

func TestAncestorReclaimLevel(t *testing.T) {
	tests := []struct {
		name   string
		config string
		want   []string
	}{
		// Without the level each queue above its deserved gives: team-x1 and team-y1 one each.
		{"level 0", hierarchy, []string{"run-team-y1-2", "run-team-x1-2"}},
		// With level 1, team-x1's parent dept-x (3 of 4) is not above its deserved amount, so
		// team-x1 keeps its task; team-y1 shares dept-y with the reclaimer and is not checked.
		{"level 1", hierarchyWithLevel("1"), []string{"run-team-y1-2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := levelTree().Open(t, tc.config, builders)
			got := tu.Names(ssn.Reclaimable(tu.TaskOf(t, ssn, "w", "w-0"), candidates(t, ssn, "run-team-x1", "run-team-y1")))
			if !slices.Equal(got, tc.want) {
				t.Errorf("Reclaimable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAncestorPreemptive(t *testing.T) {
	c := levelTree()
	// team-y2 itself holds 2 of 2 after this: not below its deserved amount.
	j := c.Job("y2run", "team-y2", 1)
	j.Phase = api.JobRunning
	c.Tasks(j, "y2run", 2, api.Running, "n1", cpu(1))
	for _, tc := range []struct {
		config string
		want   bool
	}{{hierarchy, false}, {hierarchyWithLevel("1"), false}} {
		ssn := c.Open(t, tc.config, builders)
		if got := ssn.Preemptive(ssn.Queues["team-y2"], tu.TaskOf(t, ssn, "w", "w-0")); got != tc.want {
			t.Errorf("%q: Preemptive = %v, want %v (dept-y holds 5 of 4)", tc.config, got, tc.want)
		}
	}
	// With dept-y below its deserved amount, level 1 lets team-y2 reclaim through it.
	c = levelTree()
	c.Snap.Queues[1].Deserved = cpu(8)
	j = c.Job("y2run", "team-y2", 1)
	j.Phase = api.JobRunning
	c.Tasks(j, "y2run", 2, api.Running, "n1", cpu(1))
	for _, tc := range []struct {
		config string
		want   bool
	}{{hierarchy, false}, {hierarchyWithLevel("1"), true}} {
		ssn := c.Open(t, tc.config, builders)
		if got := ssn.Preemptive(ssn.Queues["team-y2"], tu.TaskOf(t, ssn, "w", "w-0")); got != tc.want {
			t.Errorf("%q: Preemptive = %v, want %v", tc.config, got, tc.want)
		}
	}
}

// TestReclaimAction runs allocate and reclaim: q1 (deserved 2) fills the 4-cpu node, q2
// (deserved 2) reclaims two tasks and pipelines its gang. Reclaim serves starving jobs only,
// as Volcano's, so priority is in the tier to say that the job is starving.
func TestReclaimAction(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", tu.CPU(4, 16))
	c.Queue("q1", 1).Deserved = cpu(2)
	c.Queue("q2", 1).Deserved = cpu(2)
	hog := c.Job("hog", "q1", 1)
	hog.Phase = api.JobRunning
	c.Tasks(hog, "hog", 4, api.Running, "n1", tu.CPU(1, 1))
	c.Tasks(c.Job("fair", "q2", 2), "fair", 2, api.Pending, "", tu.CPU(1, 1))

	cfg, err := conf.Parse([]byte("actions: \"allocate, reclaim\"\ntiers:\n- plugins:\n  - name: capacity\n  - name: priority\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	reg.RegisterPlugin(priority.Name, priority.New)
	actions.Register(reg)
	ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: api.Epoch})
	if err != nil {
		t.Fatal(err)
	}
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	res := ssn.Close()
	var evicted, pipelined []string
	for _, d := range res.Decisions {
		switch d.Kind {
		case framework.DecisionEvict:
			evicted = append(evicted, d.Task)
		case framework.DecisionPipeline:
			pipelined = append(pipelined, d.Task)
		}
	}
	slices.Sort(evicted)
	if want := []string{"ns/hog-2", "ns/hog-3"}; !slices.Equal(evicted, want) {
		t.Errorf("evicted %v, want %v", evicted, want)
	}
	if want := []string{"ns/fair-0", "ns/fair-1"}; !slices.Equal(pipelined, want) {
		t.Errorf("pipelined %v, want %v", pipelined, want)
	}
	for _, q := range res.Queues {
		if !near(q.Allocated.MilliCPU, 2000) || !near(q.Deserved.MilliCPU, 2000) {
			t.Errorf("queue %s: allocated %s deserved %s, want 2 cpu each", q.Queue, q.Allocated, q.Deserved)
		}
	}
}

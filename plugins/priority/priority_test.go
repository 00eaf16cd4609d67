package priority

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

func TestNewIgnoresArguments(t *testing.T) {
	p, err := New(map[string]any{"anything": 1})
	if err != nil || p.Name() != Name {
		t.Fatalf("New = %v, %v", p, err)
	}
}

func TestTaskOrder(t *testing.T) {
	tests := []struct {
		name string
		l, r int32
		want int
	}{
		{"higher first", 10, 1, -1},
		{"lower last", 1, 10, 1},
		{"equal no opinion", 5, 5, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			j := c.Job("j", "q", 1)
			a := c.Task(j, "a", api.Pending, "", tu.CPU(1, 1))
			a.Priority, a.HasPriority = tc.l, true
			b := c.Task(j, "b", api.Pending, "", tu.CPU(1, 1))
			b.Priority, b.HasPriority = tc.r, true
			ssn := c.Open(t, tu.OneTier(Name), builders)
			if got := ssn.TaskCompare(tu.TaskOf(t, ssn, "j", "a"), tu.TaskOf(t, ssn, "j", "b")); got != tc.want {
				t.Errorf("TaskCompare = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestJobOrder(t *testing.T) {
	tests := []struct {
		name        string
		first, next int32 // priorities of the older and the newer job
		wantOlder   bool  // whether the older job goes first
	}{
		{"higher priority first", 1, 10, false},
		{"older higher priority first", 10, 1, true},
		{"tie falls back to creation time", 5, 5, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			old := c.Job("old", "q", 1)
			old.Priority, old.HasPriority = tc.first, true
			nw := c.Job("new", "q", 1)
			nw.Priority, nw.HasPriority = tc.next, true
			ssn := c.Open(t, tu.OneTier(Name), builders)
			if got := ssn.JobOrderFn(tu.JobOf(t, ssn, "old"), tu.JobOf(t, ssn, "new")); got != tc.wantOlder {
				t.Errorf("JobOrderFn(old, new) = %v, want %v", got, tc.wantOlder)
			}
		})
	}
}

func TestJobOrderFromPriorityClass(t *testing.T) {
	c := tu.NewCluster()
	c.PriorityClass("high", 1000)
	c.Queue("q", 1)
	c.Job("old", "q", 1)
	c.Job("new", "q", 1).PriorityClass = "high"
	ssn := c.Open(t, tu.OneTier(Name), builders)
	if !ssn.JobOrderFn(tu.JobOf(t, ssn, "new"), tu.JobOf(t, ssn, "old")) {
		t.Error("job of priority class high should go first")
	}
}

// openCandidates opens a session where job p (priority 10) has a pending task p-0 (task
// priority 10) and running tasks p-low (task priority 5) and p-eq (10), beside jobs low (1),
// same (10) and high (100) with one running task each, and returns it with the running tasks
// as candidates: high-0, low-0, p-eq, p-low, same-0.
func openCandidates(t *testing.T) (*framework.Session, []*api.TaskInfo) {
	t.Helper()
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(16, 64))
	mk := func(name string, prio int32) *api.Job {
		j := c.Job(name, "q", 1)
		j.Priority, j.HasPriority = prio, true
		return j
	}
	p, low, same, high := mk("p", 10), mk("low", 1), mk("same", 10), mk("high", 100)
	c.Task(p, "p-0", api.Pending, "", tu.CPU(1, 1))
	own := c.Task(p, "p-low", api.Running, "n1", tu.CPU(1, 1))
	own.Priority, own.HasPriority = 5, true
	c.Task(p, "p-eq", api.Running, "n1", tu.CPU(1, 1))
	c.Task(low, "low-0", api.Running, "n1", tu.CPU(1, 1))
	c.Task(same, "same-0", api.Running, "n1", tu.CPU(1, 1))
	c.Task(high, "high-0", api.Running, "n1", tu.CPU(1, 1))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	return ssn, []*api.TaskInfo{
		tu.TaskOf(t, ssn, "high", "high-0"),
		tu.TaskOf(t, ssn, "low", "low-0"),
		tu.TaskOf(t, ssn, "p", "p-eq"),
		tu.TaskOf(t, ssn, "p", "p-low"),
		tu.TaskOf(t, ssn, "same", "same-0"),
	}
}

func TestPreemptable(t *testing.T) {
	ssn, cands := openCandidates(t)
	preemptor := tu.TaskOf(t, ssn, "p", "p-0")
	got := tu.Names(ssn.Preemptable(preemptor, cands))
	want := []string{"low-0", "p-low"}
	if !slices.Equal(got, want) {
		t.Errorf("Preemptable = %v, want %v", got, want)
	}
	// No lower-priority candidate: the plugin decides "none", so nobody may be evicted.
	if got := ssn.Preemptable(preemptor, cands[:1]); got != nil {
		t.Errorf("Preemptable(higher only) = %v, want none", tu.Names(got))
	}
}

// TestUnifiedEvictable follows Volcano's priority.go: preemption keeps the tasks of jobs of
// lower priority than the evicting job (its own tasks, of equal job priority, stay), reclaim
// keeps everything.
func TestUnifiedEvictable(t *testing.T) {
	tests := []struct {
		name string
		kind framework.EvictionKind
		// job names the evicting job ("": none).
		job string
		// offer picks the candidates offered, by index (nil: all).
		offer []int
		want  []string
	}{
		{name: "gang preemption: lower job priority only", kind: framework.EvictionKindGangPreempt, job: "p", want: []string{"low-0"}},
		{name: "gang preemption by a low job: nothing", kind: framework.EvictionKindGangPreempt, job: "low"},
		{name: "gang preemption by a high job: all but its own", kind: framework.EvictionKindGangPreempt, job: "high", want: []string{"low-0", "p-eq", "p-low", "same-0"}},
		{name: "gang preemption keeps the order offered", kind: framework.EvictionKindGangPreempt, job: "high", offer: []int{4, 1}, want: []string{"same-0", "low-0"}},
		{name: "gang reclaim: every candidate", kind: framework.EvictionKindGangReclaim, job: "p", want: []string{"high-0", "low-0", "p-eq", "p-low", "same-0"}},
		{name: "any other kind is judged as preemption", kind: framework.EvictionKindUnknown, job: "p", want: []string{"low-0"}},
		{name: "no evicting job: nothing", kind: framework.EvictionKindGangPreempt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, cands := openCandidates(t)
			if tc.offer != nil {
				var picked []*api.TaskInfo
				for _, i := range tc.offer {
					picked = append(picked, cands[i])
				}
				cands = picked
			}
			ctx := &framework.EvictionContext{Kind: tc.kind}
			if tc.job != "" {
				ctx.Job = tu.JobOf(t, ssn, tc.job)
			}
			if got := tu.Names(ssn.UnifiedEvictable(ctx, cands)); !slices.Equal(got, tc.want) {
				t.Errorf("UnifiedEvictable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNoReclaimable(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(4, 4))
	hi := c.Job("hi", "q", 1)
	hi.Priority, hi.HasPriority = 100, true
	lo := c.Job("lo", "q", 1)
	c.Task(hi, "hi-0", api.Pending, "", tu.CPU(1, 1))
	c.Task(lo, "lo-0", api.Running, "n1", tu.CPU(1, 1))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	if got := ssn.Reclaimable(tu.TaskOf(t, ssn, "hi", "hi-0"), []*api.TaskInfo{tu.TaskOf(t, ssn, "lo", "lo-0")}); got != nil {
		t.Errorf("Reclaimable = %v, want none (priority does not vote on reclaim)", tu.Names(got))
	}
}

func TestJobStarving(t *testing.T) {
	tests := []struct {
		name     string
		statuses []api.TaskStatus
		want     bool
	}{
		{"all running", []api.TaskStatus{api.Running, api.Running}, false},
		{"one pending", []api.TaskStatus{api.Running, api.Pending}, true},
		{"pipelined counts", []api.TaskStatus{api.Running, api.Pipelined}, false},
		{"succeeded counts as ready", []api.TaskStatus{api.Running, api.Succeeded}, false},
		{"failed task counts against", []api.TaskStatus{api.Running, api.Failed}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("n1", tu.CPU(8, 8))
			j := c.Job("j", "q", 1)
			for i, s := range tc.statuses {
				node := ""
				if s == api.Running || s == api.Pipelined {
					node = "n1"
				}
				c.Task(j, "t-"+string(rune('a'+i)), s, node, tu.CPU(1, 1))
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			if got := ssn.JobStarving(tu.JobOf(t, ssn, "j")); got != tc.want {
				t.Errorf("JobStarving = %v, want %v", got, tc.want)
			}
		})
	}
}

package gang

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

// task describes one task of a test job: its role and status (Running and Pipelined tasks go on
// node n1).
type task struct {
	role   string
	status api.TaskStatus
}

func tasks(role string, status api.TaskStatus, n int) []task {
	out := make([]task, n)
	for i := range out {
		out[i] = task{role, status}
	}
	return out
}

// open builds a session with one job "j" of the given gang and tasks.
func open(t *testing.T, min int32, byRole map[string]int32, ts []task) (*framework.Session, *api.JobInfo) {
	t.Helper()
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(64, 64))
	j := c.Job("j", "q", min)
	j.MinAvailableByRole = byRole
	for i, tk := range ts {
		node := ""
		if tk.status == api.Running || tk.status == api.Pipelined || tk.status == api.Allocated {
			node = "n1"
		}
		c.Task(j, "t"+string(rune('a'+i)), tk.status, node, tu.CPU(1, 1)).Role = tk.role
	}
	ssn := c.Open(t, tu.OneTier(Name), builders)
	return ssn, tu.JobOf(t, ssn, "j")
}

func TestJobValid(t *testing.T) {
	tests := []struct {
		name       string
		min        int32
		byRole     map[string]int32
		tasks      []task
		wantReason string // "" means valid
	}{
		{"enough pending tasks", 3, nil, tasks("w", api.Pending, 3), ""},
		{"too few tasks", 3, nil, tasks("w", api.Pending, 2), ReasonNotEnoughTasks},
		{"failed tasks are not valid", 2, nil, append(tasks("w", api.Running, 1), task{"w", api.Failed}), ReasonNotEnoughTasks},
		{"role below its minimum", 3, map[string]int32{"ps": 1, "w": 2}, tasks("w", api.Pending, 3), ReasonNotEnoughPodsOfTask},
		{"roles meet their minimums", 3, map[string]int32{"ps": 1, "w": 2}, append(tasks("w", api.Pending, 2), task{"ps", api.Running}), ""},
		{"role minimums above minAvailable are not checked", 1, map[string]int32{"ps": 1, "w": 2}, tasks("w", api.Pending, 1), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, j := open(t, tc.min, tc.byRole, tc.tasks)
			got := ssn.JobValid(j)
			switch {
			case tc.wantReason == "" && got != nil:
				t.Errorf("JobValid = %+v, want valid", got)
			case tc.wantReason != "" && (got == nil || got.Reason != tc.wantReason):
				t.Errorf("JobValid = %+v, want reason %s", got, tc.wantReason)
			}
		})
	}
}

func TestJobValidMessage(t *testing.T) {
	ssn, j := open(t, 3, nil, tasks("w", api.Pending, 2))
	want := "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"
	if got := ssn.JobValid(j); got == nil || got.Message != want {
		t.Errorf("JobValid = %+v, want message %q", got, want)
	}
}

// openVictims opens a session with the configuration on jobs a (minAvailable 2, 4 running
// tasks: 2 may go), b (minAvailable 2, 2 running: none may go), c (minAvailable 0, 1 running: it
// may go) and p (one pending task), and returns it with candidates from a, b and c, mixed.
func openVictims(t *testing.T, config string) (*framework.Session, []*api.TaskInfo) {
	t.Helper()
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(64, 64))
	a := c.Job("a", "q", 2)
	b := c.Job("b", "q", 2)
	cj := c.Job("c", "q", 0)
	p := c.Job("p", "q", 1)
	c.Tasks(a, "a", 4, api.Running, "n1", tu.CPU(1, 1))
	c.Tasks(b, "b", 2, api.Running, "n1", tu.CPU(1, 1))
	c.Tasks(cj, "c", 1, api.Running, "n1", tu.CPU(1, 1))
	c.Task(p, "p-0", api.Pending, "", tu.CPU(1, 1))
	ssn := c.Open(t, config, builders)
	var cands []*api.TaskInfo
	for _, name := range []string{"a-0", "b-0", "a-1", "c-0", "b-1", "a-2", "a-3"} {
		cands = append(cands, tu.TaskOf(t, ssn, string(name[0]), name))
	}
	return ssn, cands
}

func TestEvictable(t *testing.T) {
	ssn, cands := openVictims(t, tu.OneTier(Name))
	preemptor := tu.TaskOf(t, ssn, "p", "p-0")
	want := []string{"a-0", "a-1", "c-0"}
	for name, fn := range map[string]func(*api.TaskInfo, []*api.TaskInfo) []*api.TaskInfo{
		"Preemptable": ssn.Preemptable, "Reclaimable": ssn.Reclaimable,
	} {
		if got := tu.Names(fn(preemptor, cands)); !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	if got := ssn.Preemptable(preemptor, cands[1:2]); got != nil {
		t.Errorf("Preemptable(b-0) = %v, want none", tu.Names(got))
	}
}

// TestUnifiedEvictable: gang's gang-aware callback permits every candidate, tight gangs
// included, in the order offered (Volcano's gang.go), whatever the enable flags say.
func TestUnifiedEvictable(t *testing.T) {
	flagsOff := tu.OneTier(Name) + "    enablePreemptable: false\n    enableReclaimable: false\n"
	all := []string{"a-0", "b-0", "a-1", "c-0", "b-1", "a-2", "a-3"}
	tests := []struct {
		name   string
		config string
		kind   framework.EvictionKind
		// offer picks the candidates offered, by index (nil: all).
		offer []int
		want  []string
	}{
		{name: "gang preemption takes every candidate", config: tu.OneTier(Name), kind: framework.EvictionKindGangPreempt, want: all},
		{name: "gang reclaim takes every candidate", config: tu.OneTier(Name), kind: framework.EvictionKindGangReclaim, want: all},
		{name: "a tight gang alone", config: tu.OneTier(Name), kind: framework.EvictionKindGangPreempt, offer: []int{4, 1}, want: []string{"b-1", "b-0"}},
		{name: "preemptable and reclaimable switched off", config: flagsOff, kind: framework.EvictionKindGangReclaim, want: all},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, cands := openVictims(t, tc.config)
			if tc.offer != nil {
				var picked []*api.TaskInfo
				for _, i := range tc.offer {
					picked = append(picked, cands[i])
				}
				cands = picked
			}
			ctx := &framework.EvictionContext{Kind: tc.kind, Job: tu.JobOf(t, ssn, "p")}
			if got := tu.Names(ssn.UnifiedEvictable(ctx, cands)); !slices.Equal(got, tc.want) {
				t.Errorf("UnifiedEvictable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestJobOrder(t *testing.T) {
	tests := []struct {
		name               string
		oldReady, newReady bool
		wantOlder          bool
	}{
		{"not ready before ready", true, false, false},
		{"ready after not ready", false, true, true},
		{"both ready: creation order", true, true, true},
		{"neither ready: creation order", false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("n1", tu.CPU(8, 8))
			for _, jr := range []struct {
				name  string
				ready bool
			}{{"old", tc.oldReady}, {"new", tc.newReady}} {
				j := c.Job(jr.name, "q", 1)
				if jr.ready {
					c.Task(j, jr.name+"-0", api.Running, "n1", tu.CPU(1, 1))
				} else {
					c.Task(j, jr.name+"-0", api.Pending, "", tu.CPU(1, 1))
				}
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			if got := ssn.JobOrderFn(tu.JobOf(t, ssn, "old"), tu.JobOf(t, ssn, "new")); got != tc.wantOlder {
				t.Errorf("JobOrderFn(old, new) = %v, want %v", got, tc.wantOlder)
			}
		})
	}
}

func TestJobReadyPipelinedStarving(t *testing.T) {
	tests := []struct {
		name                            string
		min                             int32
		byRole                          map[string]int32
		tasks                           []task
		wantReady, wantPipe, wantStarve bool
	}{
		{"ready", 2, nil, tasks("w", api.Running, 2), true, true, false},
		{"allocated counts as ready", 2, nil, append(tasks("w", api.Running, 1), task{"w", api.Allocated}), true, true, false},
		{"pipelined only", 2, nil, append(tasks("w", api.Running, 1), task{"w", api.Pipelined}), false, true, false},
		{"short of the gang", 3, nil, append(tasks("w", api.Running, 1), task{"w", api.Pipelined}, task{"w", api.Pending}), false, false, true},
		{"role short although count met", 2, map[string]int32{"ps": 1, "w": 1}, append(tasks("w", api.Running, 2), task{"ps", api.Pending}), false, false, false},
		{"role met by pipelined task", 2, map[string]int32{"ps": 1, "w": 1}, append(tasks("w", api.Running, 1), task{"ps", api.Pipelined}), false, true, false},
		{"one task short", 2, nil, tasks("w", api.Running, 1), false, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, j := open(t, tc.min, tc.byRole, tc.tasks)
			if got := ssn.JobReady(j); got != tc.wantReady {
				t.Errorf("JobReady = %v, want %v", got, tc.wantReady)
			}
			if got := ssn.JobPipelined(j); got != tc.wantPipe {
				t.Errorf("JobPipelined = %v, want %v", got, tc.wantPipe)
			}
			if got := ssn.JobStarving(j); got != tc.wantStarve {
				t.Errorf("JobStarving = %v, want %v", got, tc.wantStarve)
			}
		})
	}
}

func TestBestEffortPendingCountsAsReady(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(8, 8))
	j := c.Job("j", "q", 2)
	c.Task(j, "run", api.Running, "n1", tu.CPU(1, 1))
	c.Task(j, "be", api.Pending, "", api.Resource{})
	ssn := c.Open(t, tu.OneTier(Name), builders)
	ji := tu.JobOf(t, ssn, "j")
	if !ssn.JobReady(ji) || !ssn.JobPipelined(ji) {
		t.Error("a pending best-effort task should count towards the gang")
	}
	// Starving looks at placed and pipelined tasks only.
	if !ssn.JobStarving(ji) {
		t.Error("JobStarving = false, want true")
	}
}

func TestSessionCloseExplainsGang(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(8, 8))
	short := c.Job("short", "q", 4)
	c.Tasks(short, "short-run", 3, api.Running, "n1", tu.CPU(1, 1))
	c.Task(short, "short-wait", api.Pending, "", tu.CPU(1, 1))
	given := c.Job("given", "q", 2)
	c.Tasks(given, "given", 2, api.Pending, "", tu.CPU(1, 1))
	pending := c.Job("pending", "q", 2)
	pending.Phase = api.JobPending
	c.Tasks(pending, "pending", 2, api.Pending, "", tu.CPU(1, 1))
	ok := c.Job("ok", "q", 1)
	c.Task(ok, "ok-run", api.Running, "n1", tu.CPU(1, 1))
	c.Task(ok, "ok-wait", api.Pending, "", tu.CPU(1, 1))
	pipe := c.Job("pipe", "q", 2)
	c.Task(pipe, "pipe-run", api.Running, "n1", tu.CPU(1, 1))
	c.Task(pipe, "pipe-p", api.Pipelined, "n1", tu.CPU(1, 1))
	c.Task(pipe, "pipe-wait", api.Pending, "", tu.CPU(1, 1))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	tu.JobOf(t, ssn, "given").JobFitErrors = "queue q overused"
	ssn.Close()

	want := map[string]string{
		"short":   "gang: 3 of minAvailable 4 placeable",
		"given":   "queue q overused",
		"pending": "", // not enqueued: the gang was never tried
		"ok":      "", // ready
		"pipe":    "", // pipelined
	}
	for name, w := range want {
		if got := tu.JobOf(t, ssn, name).JobFitErrors; got != w {
			t.Errorf("%s: JobFitErrors = %q, want %q", name, got, w)
		}
	}
}

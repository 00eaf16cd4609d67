package pdb

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

func web() map[string]string { return map[string]string{"app": "web"} }

// cluster (jobs in UID order: ns/plain, ns/web, other/other): job web runs 4 tasks labelled app=web (and tier=front on the first two), job
// plain runs 2 unlabelled tasks, job other runs 1 app=web task in namespace other.
func cluster(budgets ...*api.DisruptionBudget) *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", tu.CPU(8, 16))
	c.Queue("q", 1)
	w := c.Job("web", "q", 1)
	w.Phase = api.JobRunning
	for i, t := range c.Tasks(w, "web", 4, api.Running, "n1", tu.CPU(1, 1)) {
		t.Labels = web()
		if i < 2 {
			t.Labels = map[string]string{"app": "web", "tier": "front"}
		}
	}
	p := c.Job("plain", "q", 1)
	p.Phase = api.JobRunning
	c.Tasks(p, "plain", 2, api.Running, "n1", tu.CPU(1, 1))
	o := c.Job("other", "q", 1)
	o.Namespace, o.Phase = "other", api.JobRunning
	c.Task(o, "other-0", api.Running, "n1", tu.CPU(1, 1)).Labels = web()
	c.Snap.Budgets = budgets
	return c
}

func minAvail(name, v string, sel map[string]string) *api.DisruptionBudget {
	return &api.DisruptionBudget{Name: name, Namespace: tu.Namespace, Selector: sel, MinAvailable: v}
}

func maxUnavail(name, v string, sel map[string]string) *api.DisruptionBudget {
	return &api.DisruptionBudget{Name: name, Namespace: tu.Namespace, Selector: sel, MaxUnavailable: v}
}

func allTasks(t *testing.T, ssn *framework.Session) []*api.TaskInfo {
	t.Helper()
	var out []*api.TaskInfo
	for _, j := range ssn.SortedJobs() {
		out = append(out, j.SortedTasks()...)
	}
	return out
}

func TestAllowed(t *testing.T) {
	tests := []struct {
		name   string
		budget *api.DisruptionBudget
		// pending adds that many pending app=web tasks (expected but not healthy).
		pending int
		want    int
	}{
		{"minAvailable count", minAvail("b", "3", web()), 0, 1},
		{"minAvailable all", minAvail("b", "4", web()), 0, 0},
		{"minAvailable above healthy", minAvail("b", "6", web()), 0, 0},
		{"minAvailable percent rounds up", minAvail("b", "60%", web()), 0, 1}, // ceil(2.4) = 3
		{"maxUnavailable count", maxUnavail("b", "1", web()), 0, 1},
		{"maxUnavailable with a task down", maxUnavail("b", "1", web()), 1, 0}, // 4 - (5 - 1)
		{"maxUnavailable percent rounds up", maxUnavail("b", "30%", web()), 0, 2},
		{"maxUnavailable above expected", maxUnavail("b", "10", web()), 0, 4},
		{"malformed allows nothing", minAvail("b", "x", web()), 0, 0},
		{"neither set allows every healthy task", &api.DisruptionBudget{Name: "b", Namespace: tu.Namespace, Selector: web()}, 0, 4},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster(tc.budget)
			for i := range tc.pending {
				c.Task(c.Snap.Jobs[0], "late-"+string(rune('0'+i)), api.Pending, "", tu.CPU(1, 1)).Labels = web()
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			p := ssn.Plugins()[0].(*plugin)
			if got := p.budgets[0].allowed(); got != tc.want {
				t.Errorf("allowed = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestMatches(t *testing.T) {
	tests := []struct {
		name   string
		budget *api.DisruptionBudget
		task   *api.Task
		want   bool
	}{
		{"selector matches", minAvail("b", "1", web()), &api.Task{Namespace: tu.Namespace, Labels: map[string]string{"app": "web", "x": "y"}}, true},
		{"value differs", minAvail("b", "1", web()), &api.Task{Namespace: tu.Namespace, Labels: map[string]string{"app": "db"}}, false},
		{"label missing", minAvail("b", "1", map[string]string{"app": "web", "tier": "front"}), &api.Task{Namespace: tu.Namespace, Labels: web()}, false},
		{"other namespace", minAvail("b", "1", web()), &api.Task{Namespace: "other", Labels: web()}, false},
		{"empty selector matches nothing", minAvail("b", "1", nil), &api.Task{Namespace: tu.Namespace, Labels: web()}, false},
		{"no labels", minAvail("b", "1", web()), &api.Task{Namespace: tu.Namespace}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := matches(tc.budget, api.NewTaskInfo(tc.task, 0)); got != tc.want {
				t.Errorf("matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestEvictableCallbacks(t *testing.T) {
	tests := []struct {
		name    string
		budgets []*api.DisruptionBudget
		want    []string
	}{
		{"no budget", nil, []string{"plain-0", "plain-1", "web-0", "web-1", "web-2", "web-3", "other-0"}},
		// One of the four app=web tasks may go: the first offered.
		{"one allowed", []*api.DisruptionBudget{minAvail("b", "3", web())},
			[]string{"plain-0", "plain-1", "web-0", "other-0"}},
		{"none allowed", []*api.DisruptionBudget{minAvail("b", "100%", web())},
			[]string{"plain-0", "plain-1", "other-0"}},
		// front allows 0; web allows 2. web-0 and web-1 are refused by front but still use up
		// web's allowance (Volcano's counting), so web-2 and web-3 are refused too.
		{"refused tasks still count", []*api.DisruptionBudget{
			maxUnavail("front", "0", map[string]string{"tier": "front"}),
			minAvail("web", "2", web()),
		}, []string{"plain-0", "plain-1", "other-0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := cluster(tc.budgets...).Open(t, tu.OneTier(Name), builders)
			cands := allTasks(t, ssn)
			evictor := tu.TaskOf(t, ssn, "plain", "plain-0")
			for what, got := range map[string][]*api.TaskInfo{
				"Preemptable": ssn.Preemptable(evictor, cands),
				"Reclaimable": ssn.Reclaimable(evictor, cands),
				"VictimTasks": ssn.VictimTasks(cands),
			} {
				if names := tu.Names(got); !slices.Equal(names, tc.want) {
					t.Errorf("%s = %v, want %v", what, names, tc.want)
				}
			}
		})
	}
}

func TestVictimTasksNeverAbstains(t *testing.T) {
	ssn := cluster(minAvail("b", "4", web())).Open(t, tu.OneTier(Name), builders)
	p := ssn.Plugins()[0].(*plugin)
	got := p.filter([]*api.TaskInfo{tu.TaskOf(t, ssn, "web", "web-0")})
	if got == nil || len(got) != 0 {
		t.Errorf("filter = %v, want an empty non-nil list", got)
	}
}

func TestBudgetFollowsEvictions(t *testing.T) {
	ssn := cluster(minAvail("b", "2", web())).Open(t, tu.OneTier(Name), builders)
	evictor := tu.TaskOf(t, ssn, "plain", "plain-0")
	webTasks := tu.JobOf(t, ssn, "web").SortedTasks()
	if got := tu.Names(ssn.Preemptable(evictor, webTasks)); !slices.Equal(got, []string{"web-0", "web-1"}) {
		t.Fatalf("before eviction: %v, want [web-0 web-1]", got)
	}
	st := ssn.NewStatement()
	if err := st.Evict(webTasks[0], framework.EvictReason{Action: "preempt"}); err != nil {
		t.Fatal(err)
	}
	// web-0 is Releasing: 3 healthy, 1 more may go.
	if got := tu.Names(ssn.Preemptable(evictor, webTasks[1:])); !slices.Equal(got, []string{"web-1"}) {
		t.Errorf("after one eviction: %v, want [web-1]", got)
	}
	st.Discard()
	if got := tu.Names(ssn.Preemptable(evictor, webTasks[1:])); !slices.Equal(got, []string{"web-1", "web-2"}) {
		t.Errorf("after discard: %v, want [web-1 web-2]", got)
	}
}

// starving is a test plugin that makes preempt consider jobs below their gang.
type starving struct{}

func (starving) Name() string { return "starving" }
func (starving) OnSessionOpen(ssn *framework.Session) {
	ssn.AddJobStarvingFn("starving", func(j *api.JobInfo) bool { return j.IsStarving() })
}
func (starving) OnSessionClose(*framework.Session) {}

func TestPreemptRespectsBudget(t *testing.T) {
	tests := []struct {
		name    string
		request float64
		want    int
	}{
		{"one task's room", 1, 1},
		{"two tasks' room would break the budget", 2, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Node("n1", tu.CPU(4, 16))
			c.Queue("q", 1)
			w := c.Job("web", "q", 1)
			w.Phase = api.JobRunning
			for _, task := range c.Tasks(w, "web", 4, api.Running, "n1", tu.CPU(1, 1)) {
				task.Labels = web()
			}
			c.Task(c.Job("hi", "q", 1), "hi-0", api.Pending, "", tu.CPU(tc.request, 1))
			c.Snap.Budgets = []*api.DisruptionBudget{minAvail("b", "3", web())}

			// enabledVictim is off: Sluice's preempt offers every running task to the victim-tasks
			// callbacks after preempting (Volcano offers none), and pdb's filter would then evict
			// what its budget allows.
			cfg, err := conf.Parse([]byte("actions: \"preempt\"\ntiers:\n- plugins:\n  - name: starving\n  - name: pdb\n    enabledVictim: false\n"))
			if err != nil {
				t.Fatal(err)
			}
			reg := framework.NewRegistry()
			reg.RegisterPlugin(Name, New)
			reg.RegisterPlugin("starving", func(conf.Arguments) (framework.Plugin, error) { return starving{}, nil })
			actions.Register(reg)
			ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: api.Epoch})
			if err != nil {
				t.Fatal(err)
			}
			if err := ssn.RunActions(reg); err != nil {
				t.Fatal(err)
			}
			evicted := 0
			for _, d := range ssn.Close().Decisions {
				if d.Kind == framework.DecisionEvict {
					evicted++
				}
			}
			if evicted != tc.want {
				t.Errorf("evicted %d tasks, want %d", evicted, tc.want)
			}
		})
	}
}

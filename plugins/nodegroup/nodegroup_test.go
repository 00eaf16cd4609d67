package nodegroup

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

// config returns a one-tier configuration with the plugin, extra lines for its entry (flags)
// and its arguments.
func config(flags []string, args ...string) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodegroup\n"
	for _, f := range flags {
		s += "    " + f + "\n"
	}
	if len(args) > 0 {
		s += "    arguments:\n"
		for _, a := range args {
			s += "      " + a + "\n"
		}
	}
	return s
}

// cluster has nodes n1..n4 in groups group1..group4 and n5 without a group.
func cluster() *tu.Cluster {
	c := tu.NewCluster()
	for i := 1; i <= 4; i++ {
		c.Node(fmt.Sprintf("n%d", i), tu.CPU(4, 16)).Labels = map[string]string{LabelNodeGroup: fmt.Sprintf("group%d", i)}
	}
	c.Node("n5", tu.CPU(4, 16))
	return c
}

func aff(required, preferred []string) api.NodeGroupAffinity {
	return api.NodeGroupAffinity{Required: required, Preferred: preferred}
}

// code is a predicate outcome: "ok", or "U" / "UU" for Unschedulable /
// UnschedulableAndUnresolvable followed by the reason.
func code(err error) string {
	if err == nil {
		return "ok"
	}
	fe, ok := err.(*api.FitError)
	if !ok {
		return "error " + err.Error()
	}
	c := "U"
	if fe.Code == api.UnschedulableAndUnresolvable {
		c = "UU"
	}
	return c + " " + strings.Join(fe.Reasons, ", ")
}

const (
	ok      = "ok"
	noLabel = "UU " + ReasonLabelNotFound
	noAff   = "UU " + ReasonNoAffinity
	unsat   = "UU " + ReasonUnsatisfied
)

func TestPredicateAndScore(t *testing.T) {
	// The cases of Volcano's nodegroup_test.go, plus strict and preferred-order variants.
	full := func(q *api.Queue) {
		q.NodeGroupAffinity = aff([]string{"group1", "group3"}, []string{"group3"})
		q.NodeGroupAntiAffinity = aff([]string{"group2", "group4"}, []string{"group4"})
	}
	tests := []struct {
		name      string
		flags     []string
		args      []string
		queues    func(c *tu.Cluster) // declares the queues; the job goes to queue "q"
		wantScore [5]float64
		wantFit   [5]string
	}{
		{
			name:      "soft constraints are a subset of hard ones",
			queues:    func(c *tu.Cluster) { full(c.Queue("q", 1)) },
			wantScore: [5]float64{100, 0, 150, -1, 0},
			wantFit:   [5]string{ok, unsat, ok, ok, noLabel},
		},
		{
			name: "soft constraints are not a subset of hard ones",
			queues: func(c *tu.Cluster) {
				q := c.Queue("q", 1)
				q.NodeGroupAffinity = aff([]string{"group1"}, []string{"group3"})
				q.NodeGroupAntiAffinity = aff([]string{"group2"}, []string{"group4"})
			},
			wantScore: [5]float64{100, 0, 50, -1, 0},
			wantFit:   [5]string{ok, unsat, ok, ok, noLabel},
		},
		{
			name:      "queue without affinity, strict",
			queues:    func(c *tu.Cluster) { c.Queue("q", 1) },
			wantScore: [5]float64{0, 0, 0, 0, 0},
			wantFit:   [5]string{noAff, noAff, noAff, noAff, noLabel},
		},
		{
			name:      "queue without affinity, not strict: only unlabelled nodes fit",
			args:      []string{"strict: false"},
			queues:    func(c *tu.Cluster) { c.Queue("q", 1) },
			wantScore: [5]float64{0, 0, 0, 0, 0},
			wantFit:   [5]string{noAff, noAff, noAff, noAff, ok},
		},
		{
			name:      "queue with affinity, not strict: unlabelled nodes still do not fit",
			args:      []string{"strict: false"},
			queues:    func(c *tu.Cluster) { full(c.Queue("q", 1)) },
			wantScore: [5]float64{100, 0, 150, -1, 0},
			wantFit:   [5]string{ok, unsat, ok, ok, noLabel},
		},
		{
			name: "anti-affinity wins over affinity; a preferred anti-affinity lets a group back in",
			queues: func(c *tu.Cluster) {
				q := c.Queue("q", 1)
				q.NodeGroupAffinity = aff([]string{"group1", "group2"}, []string{"group1"})
				q.NodeGroupAntiAffinity = aff([]string{"group1"}, []string{"group2"})
			},
			wantScore: [5]float64{150, -1, 0, 0, 0},
			wantFit:   [5]string{unsat, ok, unsat, unsat, noLabel},
		},
		{
			name: "preferred order",
			args: []string{"enablePreferredOrder: true"},
			queues: func(c *tu.Cluster) {
				c.Queue("q", 1).NodeGroupAffinity = aff(nil, []string{"group1", "group3"})
			},
			wantScore: [5]float64{50, 0, 25, 0, 0},
			wantFit:   [5]string{ok, unsat, ok, unsat, noLabel},
		},
		{
			name:  "hierarchy: inherits from the parent",
			flags: []string{"enableHierarchy: true"},
			queues: func(c *tu.Cluster) {
				full(c.Queue("root", 1))
				c.Queue("mid", 1).Parent = "root"
				c.Queue("q", 1).Parent = "mid"
			},
			wantScore: [5]float64{100, 0, 150, -1, 0},
			wantFit:   [5]string{ok, unsat, ok, ok, noLabel},
		},
		{
			name:  "hierarchy: the nearest ancestor with affinity wins; no parent means root",
			flags: []string{"enableHierarchy: true"},
			queues: func(c *tu.Cluster) {
				full(c.Queue("root", 1))
				c.Queue("mid", 1).NodeGroupAffinity = aff([]string{"group2"}, nil)
				c.Queue("q", 1).Parent = "mid"
			},
			wantScore: [5]float64{0, 100, 0, 0, 0},
			wantFit:   [5]string{unsat, ok, unsat, unsat, noLabel},
		},
		{
			name: "hierarchy off: no inheritance",
			queues: func(c *tu.Cluster) {
				full(c.Queue("root", 1))
				c.Queue("q", 1).Parent = "root"
			},
			wantScore: [5]float64{0, 0, 0, 0, 0},
			wantFit:   [5]string{noAff, noAff, noAff, noAff, noLabel},
		},
		{
			name:  "hierarchy: a cycle inherits nothing",
			flags: []string{"enableHierarchy: true"},
			queues: func(c *tu.Cluster) {
				c.Queue("a", 1).Parent = "q"
				c.Queue("q", 1).Parent = "a"
			},
			wantScore: [5]float64{0, 0, 0, 0, 0},
			wantFit:   [5]string{noAff, noAff, noAff, noAff, noLabel},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := cluster()
			tc.queues(c)
			j := c.Job("j", "q", 1)
			c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
			ssn := c.Open(t, config(tc.flags, tc.args...), builders)
			task := tu.TaskOf(t, ssn, "j", "t")
			for i, n := range ssn.NodeList {
				s, err := ssn.NodeOrderFn(task, n)
				if err != nil || s != tc.wantScore[i] {
					t.Errorf("score on %s = %v, %v; want %v", n.Name, s, err, tc.wantScore[i])
				}
				if got := code(ssn.PredicateFn(task, n)); got != tc.wantFit[i] {
					t.Errorf("predicate on %s = %q, want %q", n.Name, got, tc.wantFit[i])
				}
			}
		})
	}
}

func TestNewArguments(t *testing.T) {
	p, err := New(conf.Arguments{ArgStrict: "false", ArgEnablePreferredOrder: true})
	if err != nil {
		t.Fatal(err)
	}
	if ng := p.(*plugin); ng.strict || !ng.preferredOrder {
		t.Errorf("plugin = %+v", ng)
	}
	if p, _ := New(nil); !p.(*plugin).strict {
		t.Error("strict must default to true")
	}
	for _, k := range []string{ArgStrict, ArgEnablePreferredOrder} {
		if _, err := New(conf.Arguments{k: "maybe"}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("New with malformed %s: error %v", k, err)
		}
	}
}

func TestResourceLimits(t *testing.T) {
	// Nodes n1 (group1) and n2 (group2), 16 cpu each; the queue may use both groups and
	// prefers group1. A running task of the queue already holds 2 cpu on n1.
	tests := []struct {
		name       string
		annotation string
		wantN1     string
		wantN2     string
	}{
		{"no annotation", "", ok, ok},
		{"under the limit", `{"group1":{"cpu":"5","memory":"8Gi"}}`, ok, ok},
		{"an unlisted dimension is not capped", `{"group1":{"memory":"1Gi"}}`, "UU " + reasonLimitsExceeded + " in group group1: memory", ok},
		{"over the limit counting running tasks", `{"group1":{"cpu":"3"}}`, "UU " + reasonLimitsExceeded + " in group group1: cpu", ok},
		{"numbers are quantities too", `{"group1":{"cpu":4}}`, ok, ok},
		{"malformed annotation", `{"group1":{"cpu":"lots"}}`, "UU " + ReasonLimitsInvalid, "UU " + ReasonLimitsInvalid},
		{"not JSON", `group1=3`, "UU " + ReasonLimitsInvalid, "UU " + ReasonLimitsInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Node("n1", tu.CPU(16, 64)).Labels = map[string]string{LabelNodeGroup: "group1"}
			c.Node("n2", tu.CPU(16, 64)).Labels = map[string]string{LabelNodeGroup: "group2"}
			q := c.Queue("q", 1)
			q.NodeGroupAffinity = aff([]string{"group1", "group2"}, []string{"group1"})
			if tc.annotation != "" {
				q.Annotations = map[string]string{AnnotationResourceLimits: tc.annotation}
			}
			run := c.Job("run", "q", 1)
			c.Task(run, "r", api.Running, "n1", tu.CPU(2, 4))
			j := c.Job("j", "q", 1)
			c.Task(j, "t", api.Pending, "", tu.CPU(2, 4))
			ssn := c.Open(t, config(nil), builders)
			task := tu.TaskOf(t, ssn, "j", "t")
			if got := code(ssn.PredicateFn(task, ssn.Nodes["n1"])); got != tc.wantN1 {
				t.Errorf("n1: %q, want %q", got, tc.wantN1)
			}
			if got := code(ssn.PredicateFn(task, ssn.Nodes["n2"])); got != tc.wantN2 {
				t.Errorf("n2: %q, want %q", got, tc.wantN2)
			}
		})
	}
}

func TestResourceLimitsFollowEvents(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n1", tu.CPU(16, 64)).Labels = map[string]string{LabelNodeGroup: "group1"}
	q := c.Queue("q", 1)
	q.NodeGroupAffinity = aff([]string{"group1"}, nil)
	q.Annotations = map[string]string{AnnotationResourceLimits: `{"group1":{"cpu":"5"}}`}
	j := c.Job("j", "q", 1)
	c.Tasks(j, "t", 3, api.Pending, "", tu.CPU(2, 1))
	ssn := c.Open(t, config(nil), builders)
	n1 := ssn.Nodes["n1"]
	t0, t1, t2 := tu.TaskOf(t, ssn, "j", "t-0"), tu.TaskOf(t, ssn, "j", "t-1"), tu.TaskOf(t, ssn, "j", "t-2")
	st := ssn.NewStatement()
	for _, task := range []*api.TaskInfo{t0, t1} {
		if err := ssn.PredicateFn(task, n1); err != nil {
			t.Fatalf("%s: %v", task.Name, err)
		}
		if err := st.Allocate(task, n1); err != nil {
			t.Fatal(err)
		}
	}
	if err := ssn.PredicateFn(t2, n1); err == nil {
		t.Error("third task fits although 6 cpu exceed the cap of 5")
	}
	st.Discard()
	if err := ssn.PredicateFn(t2, n1); err != nil {
		t.Errorf("after discard: %v", err)
	}
}

func TestAllocatePrefersGroups(t *testing.T) {
	// Three tasks of 4 cpu; group1 (n-a, preferred) has room for two, group2 (n-b, required
	// only) for the rest, group3 (n-c) is forbidden although it sorts last and is empty.
	c := tu.NewCluster()
	c.Node("n-a", tu.CPU(8, 64)).Labels = map[string]string{LabelNodeGroup: "group1"}
	c.Node("n-b", tu.CPU(8, 64)).Labels = map[string]string{LabelNodeGroup: "group2"}
	c.Node("n-c", tu.CPU(64, 64)).Labels = map[string]string{LabelNodeGroup: "group3"}
	q := c.Queue("q", 1)
	q.NodeGroupAffinity = aff([]string{"group1", "group2"}, []string{"group1"})
	q.NodeGroupAntiAffinity = aff([]string{"group3"}, nil)
	j := c.Job("j", "q", 3)
	c.Tasks(j, "t", 3, api.Pending, "", tu.CPU(4, 1))
	ssn := c.Open(t, config(nil), builders)
	reg := framework.NewRegistry()
	actions.Register(reg)
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ssn.Close().Decisions {
		if d.Kind == framework.DecisionBind {
			got[strings.TrimPrefix(d.Task, tu.Namespace+"/")] = d.Node
		}
	}
	want := map[string]string{"t-0": "n-a", "t-1": "n-a", "t-2": "n-b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("binds = %v, want %v", got, want)
	}
}

func TestPerNodePathDoesNotAllocate(t *testing.T) {
	c := cluster()
	q := c.Queue("q", 1)
	q.NodeGroupAffinity = aff([]string{"group1", "group3"}, []string{"group3"})
	q.Annotations = map[string]string{AnnotationResourceLimits: `{"group1":{"cpu":"64"}}`}
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
	ssn := c.Open(t, config(nil), builders)
	task := tu.TaskOf(t, ssn, "j", "t")
	n1 := ssn.Nodes["n1"]
	if a := testing.AllocsPerRun(100, func() { _ = ssn.PredicateFn(task, n1); _, _ = ssn.NodeOrderFn(task, n1) }); a != 0 {
		t.Errorf("%v allocations per predicate and score", a)
	}
}

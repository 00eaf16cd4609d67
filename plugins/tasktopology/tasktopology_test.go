package tasktopology

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

func config(args ...string) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: task-topology\n"
	if len(args) > 0 {
		s += "    arguments:\n"
		for _, a := range args {
			s += "      " + a + "\n"
		}
	}
	return s
}

// psWorker adds job "j" with ps-0..ps-(ps-1) and worker-0..worker-(workers-1), each asking for
// 1 cpu, pending, and the given annotations.
func psWorker(c *tu.Cluster, ps, workers int, ann map[string]string) *api.Job {
	j := c.Job("j", "q", int32(ps+workers))
	j.Annotations = ann
	for _, r := range []struct {
		role string
		n    int
	}{{"ps", ps}, {"worker", workers}} {
		for i := range r.n {
			c.Task(j, fmt.Sprintf("%s-%d", r.role, i), api.Pending, "", tu.CPU(1, 1)).Role = r.role
		}
	}
	return j
}

// order returns the job's pending tasks' names in the session's task order.
func order(t *testing.T, ssn *framework.Session) string {
	t.Helper()
	tasks := tu.JobOf(t, ssn, "j").TasksIn(api.Pending)
	sort.SliceStable(tasks, func(a, b int) bool { return ssn.TaskOrderFn(tasks[a], tasks[b]) })
	return strings.Join(tu.Names(tasks), " ")
}

// buckets describes the job's buckets: pending tasks by name, then bound count.
func buckets(p *plugin, job string) string {
	m := p.managers[job]
	if m == nil {
		return "none"
	}
	var out []string
	for _, b := range m.buckets {
		out = append(out, fmt.Sprintf("%v+%d", tu.Names(b.pending), b.bound))
	}
	return strings.Join(out, " ") + fmt.Sprintf(" max %d", m.bucketMaxSize)
}

func pluginOf(ssn *framework.Session) *plugin {
	for _, p := range ssn.Plugins() {
		if tp, ok := p.(*plugin); ok {
			return tp
		}
	}
	return nil
}

func TestBucketsAndTaskOrder(t *testing.T) {
	tests := []struct {
		name        string
		ann         map[string]string
		wantBuckets string
		wantOrder   string
	}{
		{
			// ps is self-anti-affine (priority 4): the two ps open two buckets; workers join
			// the lighter bucket on a tie.
			name:        "affinity with self anti-affinity",
			ann:         map[string]string{AnnotationAffinity: "ps,worker", AnnotationAntiAffinity: "ps"},
			wantBuckets: "[ps-0 worker-0 worker-2]+0 [ps-1 worker-1 worker-3]+0 max 3",
			wantOrder:   "ps-0 worker-0 worker-2 ps-1 worker-1 worker-3",
		},
		{
			name:        "task order puts workers first; neutral tasks share a bucket",
			ann:         map[string]string{AnnotationAffinity: "ps,worker", AnnotationTaskOrder: "worker,ps"},
			wantBuckets: "[ps-0 ps-1 worker-0 worker-1 worker-2 worker-3]+0 max 6",
			wantOrder:   "worker-0 worker-1 worker-2 worker-3 ps-0 ps-1",
		},
		{
			name:        "worker self anti-affinity spreads workers, ps follow the lighter bucket",
			ann:         map[string]string{AnnotationAntiAffinity: "worker"},
			wantBuckets: "[worker-0]+0 [worker-1]+0 [worker-2]+0 [worker-3]+0 max 1",
			wantOrder:   "worker-0 worker-1 worker-2 worker-3 ps-0 ps-1",
		},
		{
			name:        "a task order alone buckets nothing",
			ann:         map[string]string{AnnotationTaskOrder: "worker,ps"},
			wantBuckets: " max 0",
			wantOrder:   "ps-0 ps-1 worker-0 worker-1 worker-2 worker-3",
		},
		{
			name:        "unknown role disables the plugin for the job",
			ann:         map[string]string{AnnotationAffinity: "ps,chief"},
			wantBuckets: "none",
			wantOrder:   "ps-0 ps-1 worker-0 worker-1 worker-2 worker-3",
		},
		{
			name:        "a role twice in a group disables it",
			ann:         map[string]string{AnnotationAntiAffinity: "ps,ps"},
			wantBuckets: "none",
			wantOrder:   "ps-0 ps-1 worker-0 worker-1 worker-2 worker-3",
		},
		{
			name:        "whitespace is not trimmed",
			ann:         map[string]string{AnnotationAffinity: "ps, worker"},
			wantBuckets: "none",
			wantOrder:   "ps-0 ps-1 worker-0 worker-1 worker-2 worker-3",
		},
		{
			name:        "no annotations",
			wantBuckets: "none",
			wantOrder:   "ps-0 ps-1 worker-0 worker-1 worker-2 worker-3",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("n", tu.CPU(64, 64))
			psWorker(c, 2, 4, tc.ann)
			ssn := c.Open(t, config(), builders)
			if got := buckets(pluginOf(ssn), tu.Namespace+"/j"); got != tc.wantBuckets {
				t.Errorf("buckets = %s, want %s", got, tc.wantBuckets)
			}
			if got := order(t, ssn); got != tc.wantOrder {
				t.Errorf("order = %s, want %s", got, tc.wantOrder)
			}
		})
	}
}

func TestTaskOrderAcrossJobs(t *testing.T) {
	// A bucketed task goes before an unbucketed task of another job; two bucketed tasks of
	// different jobs are not compared.
	c := tu.NewCluster()
	c.Queue("q", 1)
	psWorker(c, 1, 1, map[string]string{AnnotationAffinity: "ps,worker"})
	k := c.Job("k", "q", 1)
	k.Annotations = map[string]string{AnnotationAffinity: "a;b"}
	c.Task(k, "a", api.Pending, "", tu.CPU(1, 1)).Role = "a"
	c.Task(k, "b", api.Pending, "", tu.CPU(1, 1)).Role = "b"
	c.Task(k, "c", api.Pending, "", tu.CPU(1, 1)).Role = "c"
	ssn := c.Open(t, config(), builders)
	ps, a, cc := tu.TaskOf(t, ssn, "j", "ps-0"), tu.TaskOf(t, ssn, "k", "a"), tu.TaskOf(t, ssn, "k", "c")
	if got := ssn.TaskCompare(cc, ps); got != 1 {
		t.Errorf("unbucketed c vs bucketed ps: %d, want 1", got)
	}
	if got := ssn.TaskCompare(a, ps); got != 0 {
		t.Errorf("bucketed tasks of different jobs: %d, want 0", got)
	}
}

func TestNodeOrder(t *testing.T) {
	// Buckets as in the first order test: B0 = ps-0 worker-0 worker-2, B1 = ps-1 worker-1
	// worker-3, largest 3. Nodes: big (64 cpu), big2 (64 cpu), small (2 cpu), tiny (0.5 cpu).
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("big", tu.CPU(64, 64))
	c.Node("big2", tu.CPU(64, 64))
	c.Node("small", tu.CPU(2, 64))
	c.Node("tiny", tu.CPU(0.5, 64))
	psWorker(c, 2, 4, map[string]string{AnnotationAffinity: "ps,worker", AnnotationAntiAffinity: "ps"})
	ssn := c.Open(t, config("task-topology.weight: 2"), builders)
	score := func(task, node string) float64 {
		s, err := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", task), ssn.Nodes[node])
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	check := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	// The whole bucket fits big: 3 pending tasks, ×2×100/3.
	check("ps-0 on big", score("ps-0", "big"), 200)
	// small holds 2 of the 3: one other task is left out.
	check("ps-0 on small", score("ps-0", "small"), 2*200.0/3)
	check("ps-0 on tiny", score("ps-0", "tiny"), 0)

	st := ssn.NewStatement()
	if err := st.Allocate(tu.TaskOf(t, ssn, "j", "ps-0"), ssn.Nodes["big"]); err != nil {
		t.Fatal(err)
	}
	// worker-0: 1 bucket task on big + 2 pending = 3.
	check("worker-0 on big", score("worker-0", "big"), 200)
	// small now holds the 2 pending tasks of B0.
	check("worker-0 on small", score("worker-0", "small"), 2*200.0/3)
	// ps-1 is anti-affine to the ps on big: 3 - 1.
	check("ps-1 on big", score("ps-1", "big"), 2*200.0/3)
	check("ps-1 on big2", score("ps-1", "big2"), 200)

	// Like Volcano, a discarded allocation is still counted.
	st.Discard()
	check("ps-1 on big after discard", score("ps-1", "big"), 2*200.0/3)
}

func TestRunningTasksFormNodeBuckets(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(8, 8))
	c.Node("n2", tu.CPU(8, 8))
	j := c.Job("j", "q", 2)
	j.Annotations = map[string]string{AnnotationAffinity: "ps,worker"}
	c.Task(j, "ps-0", api.Running, "n1", tu.CPU(1, 1)).Role = "ps"
	c.Task(j, "worker-0", api.Pending, "", tu.CPU(1, 1)).Role = "worker"
	ssn := c.Open(t, config(), builders)
	if got, want := buckets(pluginOf(ssn), "ns/j"), "[worker-0]+1 max 2"; got != want {
		t.Errorf("buckets = %s, want %s", got, want)
	}
	w := tu.TaskOf(t, ssn, "j", "worker-0")
	if s, _ := ssn.NodeOrderFn(w, ssn.Nodes["n1"]); s != 100 {
		t.Errorf("worker-0 on n1 = %v, want 100", s)
	}
	if s, _ := ssn.NodeOrderFn(w, ssn.Nodes["n2"]); s != 50 {
		t.Errorf("worker-0 on n2 = %v, want 50", s)
	}
}

func TestNewArguments(t *testing.T) {
	p, err := New(conf.Arguments{ArgWeight: "3"})
	if err != nil || p.(*plugin).weight != 3 {
		t.Fatalf("New = %v, %v", p, err)
	}
	if p, _ := New(nil); p.(*plugin).weight != 1 {
		t.Error("weight must default to 1")
	}
	if _, err := New(conf.Arguments{ArgWeight: "heavy"}); err == nil || !strings.Contains(err.Error(), ArgWeight) {
		t.Errorf("malformed weight: %v", err)
	}
}

func TestAllocateKeepsBucketsTogether(t *testing.T) {
	// Two nodes of 3 cpu. Without the plugin the tasks would go in name order (ps-0, ps-1,
	// worker-0 on a). With it each node gets one ps and its two workers.
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("a", tu.CPU(3, 64))
	c.Node("b", tu.CPU(3, 64))
	psWorker(c, 2, 4, map[string]string{AnnotationAffinity: "ps,worker", AnnotationAntiAffinity: "ps"})
	ssn := c.Open(t, config(), builders)
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
	want := map[string]string{"ps-0": "a", "worker-0": "a", "worker-2": "a", "ps-1": "b", "worker-1": "b", "worker-3": "b"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("binds = %v\nwant %v", got, want)
	}
}

func TestPerNodePathDoesNotAllocate(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n", tu.CPU(64, 64))
	psWorker(c, 2, 4, map[string]string{AnnotationAffinity: "ps,worker"})
	ssn := c.Open(t, config(), builders)
	task, n := tu.TaskOf(t, ssn, "j", "ps-0"), ssn.Nodes["n"]
	if a := testing.AllocsPerRun(100, func() { _, _ = ssn.NodeOrderFn(task, n) }); a != 0 {
		t.Errorf("%v allocations per score", a)
	}
}

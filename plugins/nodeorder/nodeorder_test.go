package nodeorder

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

var allWeights = []string{ArgLeastRequested, ArgMostRequested, ArgBalancedResource, ArgNodeAffinity,
	ArgPodAffinity, ArgTaintToleration, ArgImageLocality, ArgPodTopologySpread, ArgSelectorSpread}

// only is a configuration where every score has weight 0 except the given ones.
func only(weights map[string]int) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodeorder\n    arguments:\n"
	for _, k := range allWeights {
		s += fmt.Sprintf("      %s: %d\n", k, weights[k])
	}
	return s
}

const defaults = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nodeorder\n"

type world struct {
	c     *tu.Cluster
	j     *api.Job
	other *api.Job
}

func newWorld() *world {
	c := tu.NewCluster()
	c.Queue("q", 1)
	return &world{c: c, j: c.Job("j", "q", 1), other: c.Job("other", "q", 1)}
}

func (w *world) node(name string, cpu, memGiB float64, labels map[string]string) *api.Node {
	n := w.c.Node(name, tu.Res(map[string]float64{"cpu": cpu, "memory": memGiB * (1 << 30), "pods": 110}))
	n.Labels = labels
	return n
}

func (w *world) placed(name, node string, status api.TaskStatus, res api.Resource, labels map[string]string) *api.Task {
	t := w.c.Task(w.other, name, status, node, res)
	t.Labels = labels
	return t
}

func (w *world) pending(name string, res api.Resource) *api.Task {
	return w.c.Task(w.j, name, api.Pending, "", res)
}

// scores returns each node's total score for the task, per node and batch, by node name.
func scores(t *testing.T, ssn *framework.Session, ti *api.TaskInfo) map[string]float64 {
	t.Helper()
	batch, err := ssn.BatchNodeOrderFn(ti, ssn.NodeList)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, n := range ssn.NodeList {
		s, err := ssn.NodeOrderFn(ti, n)
		if err != nil {
			t.Fatal(err)
		}
		out[n.Name] = s + batch[n.Name]
	}
	return out
}

func format(ssn *framework.Session, s map[string]float64) string {
	var parts []string
	for _, n := range ssn.NodeList {
		parts = append(parts, fmt.Sprintf("%s=%g", n.Name, s[n.Name]))
	}
	return strings.Join(parts, " ")
}

func TestNewArguments(t *testing.T) {
	p, err := New(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := weights{least: 1, most: 0, balanced: 1, nodeAffinity: 2, podAffinity: 2, taint: 3, image: 1, spread: 2, selectorSpread: 0}
	if got := p.(*plugin).w; got != want {
		t.Errorf("defaults = %+v, want %+v", got, want)
	}
	p, err = New(conf.Arguments{ArgMostRequested: "4", ArgSelectorSpread: 2.0})
	if err != nil {
		t.Fatal(err)
	}
	if w := p.(*plugin).w; w.most != 4 || w.selectorSpread != 2 {
		t.Errorf("weights = %+v", w)
	}
	for _, k := range allWeights {
		if _, err := New(conf.Arguments{k: "heavy"}); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("New with malformed %s: error %v", k, err)
		}
	}
}

// TestLeastRequestedSpreads is the acceptance example: nodes of 12, 10 and 8 CPU, four tasks of
// 2 CPU and 1Gi placed one by one go to n-0, n-1, n-2, then n-0.
func TestLeastRequestedSpreads(t *testing.T) {
	w := newWorld()
	w.node("n-0", 12, 32, nil)
	w.node("n-1", 10, 32, nil)
	w.node("n-2", 8, 32, nil)
	w.c.Tasks(w.j, "t", 4, api.Pending, "", tu.CPU(2, 1))
	ssn := w.c.Open(t, only(map[string]int{ArgLeastRequested: 1}), builders)
	stmt := ssn.NewStatement()
	var got []string
	for i := range 4 {
		ti := tu.TaskOf(t, ssn, "j", fmt.Sprint("t-", i))
		s := scores(t, ssn, ti)
		if i == 0 {
			if f := format(ssn, s); f != "n-0=89 n-1=88 n-2=85" {
				t.Errorf("first scores %s", f)
			}
		}
		best := ssn.NodeList[0]
		for _, n := range ssn.NodeList[1:] {
			if s[n.Name] > s[best.Name] {
				best = n
			}
		}
		if err := stmt.Allocate(ti, best); err != nil {
			t.Fatal(err)
		}
		got = append(got, best.Name)
	}
	if strings.Join(got, ",") != "n-0,n-1,n-2,n-0" {
		t.Errorf("placements %v, want n-0,n-1,n-2,n-0", got)
	}
}

func TestNodeOrderScores(t *testing.T) {
	gib := float64(1 << 30)
	res := func(cpu, mem float64) api.Resource {
		return tu.Res(map[string]float64{"cpu": cpu, "memory": mem})
	}
	tests := []struct {
		name    string
		weights map[string]int
		setup   func(w *world) *api.Task
		want    float64
	}{
		{
			name:    "least allocated",
			weights: map[string]int{ArgLeastRequested: 1},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				w.placed("old", "n", api.Running, tu.CPU(1, 2), nil)
				return w.pending("t", tu.CPU(1, 2))
			},
			want: 50,
		},
		{
			name:    "least allocated counts Kubernetes' defaults for missing requests",
			weights: map[string]int{ArgLeastRequested: 2},
			setup: func(w *world) *api.Task {
				w.c.Node("n", res(1, 1000*(1<<20)))
				w.placed("be", "n", api.Running, api.Resource{}, nil) // 100m, 200Mi
				return w.pending("t", res(0.2, 100*(1<<20)))
			},
			want: 140, // cpu 300m of 1000m, memory 300Mi of 1000Mi: 70, times 2
		},
		{
			name:    "least allocated: over capacity scores 0",
			weights: map[string]int{ArgLeastRequested: 1},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				return w.pending("t", tu.CPU(8, 4))
			},
			want: 25, // cpu 0, memory 50
		},
		{
			name:    "pipelined and releasing tasks count as requested",
			weights: map[string]int{ArgLeastRequested: 1},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				w.placed("pipe", "n", api.Pipelined, tu.CPU(1, 2), nil)
				w.placed("rel", "n", api.Releasing, tu.CPU(1, 2), nil)
				return w.pending("t", tu.CPU(1, 2))
			},
			want: 25,
		},
		{
			name:    "most allocated",
			weights: map[string]int{ArgMostRequested: 1},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				w.placed("old", "n", api.Running, tu.CPU(1, 1), nil)
				return w.pending("t", tu.CPU(1, 1))
			},
			want: 37, // cpu 50, memory 25
		},
		{
			name:    "most allocated caps at capacity",
			weights: map[string]int{ArgMostRequested: 3},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				return w.pending("t", tu.CPU(8, 16))
			},
			want: 300,
		},
		{
			name:    "balanced allocation",
			weights: map[string]int{ArgBalancedResource: 1},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				w.placed("old", "n", api.Running, tu.CPU(1, 1), nil)
				return w.pending("t", tu.CPU(1, 1))
			},
			want: 87, // fractions 0.5 and 0.25
		},
		{
			name:    "balanced allocation with gpus",
			weights: map[string]int{ArgBalancedResource: 1},
			setup: func(w *world) *api.Task {
				w.c.Node("n", tu.Res(map[string]float64{"cpu": 4, "memory": 8 * gib, "nvidia.com/gpu": 8}))
				return w.pending("t", tu.Res(map[string]float64{"cpu": 1, "memory": gib, "nvidia.com/gpu": 2}))
			},
			want: 94, // fractions 0.25, 0.125, 0.25
		},
		{
			name:    "balanced allocation ignores gpus a task does not request",
			weights: map[string]int{ArgBalancedResource: 1},
			setup: func(w *world) *api.Task {
				w.c.Node("n", tu.Res(map[string]float64{"cpu": 4, "memory": 8 * gib, "nvidia.com/gpu": 8}))
				return w.pending("t", tu.CPU(1, 2))
			},
			want: 100,
		},
		{
			name:    "balanced allocation gives a best-effort task 0",
			weights: map[string]int{ArgBalancedResource: 1},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				return w.pending("t", api.Resource{})
			},
			want: 0,
		},
		{
			name:    "preferred node affinity is not normalised",
			weights: map[string]int{ArgNodeAffinity: 2},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, map[string]string{"disk": "ssd"})
				t := w.pending("t", tu.CPU(1, 1))
				t.Affinity = &api.Affinity{NodePreferred: []api.PreferredTerm{
					{Weight: 50, Term: api.NodeSelectorTerm{MatchExpressions: []api.SelectorRequirement{{Key: "disk", Operator: "Exists"}}}},
					{Weight: 20, Term: api.NodeSelectorTerm{MatchExpressions: []api.SelectorRequirement{{Key: "zone", Operator: "Exists"}}}},
				}}
				return t
			},
			want: 100,
		},
		{
			name:    "image locality scores nothing",
			weights: map[string]int{ArgImageLocality: 5},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				return w.pending("t", tu.CPU(1, 1))
			},
			want: 0,
		},
		{
			name:    "weights add up",
			weights: map[string]int{ArgLeastRequested: 1, ArgMostRequested: 2, ArgBalancedResource: 3},
			setup: func(w *world) *api.Task {
				w.node("n", 4, 8, nil)
				return w.pending("t", tu.CPU(2, 4))
			},
			want: 50 + 2*50 + 3*100,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			task := tc.setup(w)
			ssn := w.c.Open(t, only(tc.weights), builders)
			ti := tu.TaskOf(t, ssn, "j", task.Name)
			got, err := ssn.NodeOrderFn(ti, ssn.Nodes["n"])
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("NodeOrderFn = %g, want %g", got, tc.want)
			}
		})
	}
}

// TestEvictionLeavesRequested checks that a task evicted in the session no longer counts, as
// in Volcano's node view, and counts again when the eviction is undone.
func TestEvictionLeavesRequested(t *testing.T) {
	w := newWorld()
	w.node("n", 4, 8, nil)
	w.placed("old", "n", api.Running, tu.CPU(2, 4), nil)
	w.placed("be", "n", api.Running, api.Resource{}, nil)
	w.pending("t", tu.CPU(1, 2))
	ssn := w.c.Open(t, only(map[string]int{ArgLeastRequested: 1}), builders)
	ti, n := tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"]
	score := func() float64 {
		s, _ := ssn.NodeOrderFn(ti, n)
		return s
	}
	before := score() // cpu 3100m of 4000m: 22; memory 6Gi+200Mi of 8Gi: 22
	stmt := ssn.NewStatement()
	if err := stmt.Evict(tu.TaskOf(t, ssn, "other", "old"), framework.EvictReason{Action: "preempt"}); err != nil {
		t.Fatal(err)
	}
	after := score() // cpu 1100m: 72; memory 2Gi+200Mi: 72
	if err := stmt.Evict(tu.TaskOf(t, ssn, "other", "be"), framework.EvictReason{Action: "preempt"}); err != nil {
		t.Fatal(err)
	}
	empty := score() // cpu 1000m: 75; memory 2Gi: 75
	stmt.Discard()
	if got := []float64{before, after, empty, score()}; fmt.Sprint(got) != "[22 72 75 22]" {
		t.Errorf("scores before, after evictions, after discard = %v, want [22 72 75 22]", got)
	}
}

func TestBatchNodeOrder(t *testing.T) {
	prefer := api.Taint{Key: "soft", Effect: "PreferNoSchedule"}
	zones := func(w *world) {
		w.node("a1", 8, 8, map[string]string{"zone": "a"})
		w.node("a2", 8, 8, map[string]string{"zone": "a"})
		w.node("b1", 8, 8, map[string]string{"zone": "b"})
	}
	tests := []struct {
		name    string
		weights map[string]int // nil: the defaults
		setup   func(w *world) *api.Task
		want    string
	}{
		{
			name:    "taint toleration, normalised and reversed",
			weights: map[string]int{ArgTaintToleration: 1},
			setup: func(w *world) *api.Task {
				w.node("a", 8, 8, nil)
				w.node("b", 8, 8, nil).Taints = []api.Taint{prefer}
				w.node("c", 8, 8, nil).Taints = []api.Taint{prefer, {Key: "other", Effect: "PreferNoSchedule"}, {Key: "hard", Effect: "NoSchedule"}}
				return w.pending("t", tu.CPU(1, 1))
			},
			want: "a=100 b=50 c=0",
		},
		{
			name:    "tolerated PreferNoSchedule taints do not count",
			weights: map[string]int{ArgTaintToleration: 2},
			setup: func(w *world) *api.Task {
				w.node("a", 8, 8, nil)
				w.node("b", 8, 8, nil).Taints = []api.Taint{prefer}
				t := w.pending("t", tu.CPU(1, 1))
				t.Tolerations = []api.Toleration{{Key: "soft", Operator: "Exists"}}
				return t
			},
			want: "a=200 b=200",
		},
		{
			name:    "defaults without affinity, taints or spread",
			weights: nil,
			setup: func(w *world) *api.Task {
				w.node("a", 8, 8, nil)
				w.node("b", 8, 8, nil)
				return w.pending("t", tu.CPU(2, 2))
			},
			// least 75 + balanced 100 per node, plus taint toleration 100 x 3 in the batch.
			want: "a=475 b=475",
		},
		{
			name:    "preferred task affinity and anti-affinity",
			weights: map[string]int{ArgPodAffinity: 1},
			setup: func(w *world) *api.Task {
				zones(w)
				w.placed("db", "a1", api.Running, tu.CPU(1, 1), map[string]string{"app": "db"})
				w.placed("web", "a2", api.Running, tu.CPU(1, 1), map[string]string{"app": "web"})
				t := w.pending("t", tu.CPU(1, 1))
				t.Affinity = &api.Affinity{
					TaskAffinity:     []api.TaskAffinityTerm{{Selector: map[string]string{"app": "db"}, TopologyKey: "zone", Weight: 10}},
					TaskAntiAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "web"}, TopologyKey: "kubernetes.io/hostname", Weight: 5}},
				}
				return t
			},
			want: "a1=100 a2=50 b1=0",
		},
		{
			name:    "placed tasks' terms score the task",
			weights: map[string]int{ArgPodAffinity: 2},
			setup: func(w *world) *api.Task {
				zones(w)
				db := w.placed("db", "b1", api.Running, tu.CPU(1, 1), nil)
				db.Affinity = &api.Affinity{TaskAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "t"}, TopologyKey: "zone", Required: true}}}
				web := w.placed("web", "a1", api.Running, tu.CPU(1, 1), nil)
				web.Affinity = &api.Affinity{TaskAntiAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "t"}, TopologyKey: "kubernetes.io/hostname", Weight: 3}}}
				t := w.pending("t", tu.CPU(1, 1))
				t.Labels = map[string]string{"app": "t"}
				return t
			},
			// zone b +1 (required, hard weight 1), host a1 -3: a1 -3, a2 0, b1 1.
			want: "a1=0 a2=150 b1=200",
		},
		{
			name:    "task affinity terms of another namespace do not apply",
			weights: map[string]int{ArgPodAffinity: 1},
			setup: func(w *world) *api.Task {
				zones(w)
				w.placed("db", "a1", api.Running, tu.CPU(1, 1), map[string]string{"app": "db"}).Namespace = "x"
				w.other.Namespace = "x"
				t := w.pending("t", tu.CPU(1, 1))
				t.Affinity = &api.Affinity{TaskAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "db"}, TopologyKey: "zone", Weight: 10}}}
				return t
			},
			want: "a1=0 a2=0 b1=0",
		},
		{
			name:    "topology spread over zones",
			weights: map[string]int{ArgPodTopologySpread: 1},
			setup: func(w *world) *api.Task {
				zones(w)
				w.node("nozone", 8, 8, nil)
				w.placed("w0", "a1", api.Running, tu.CPU(1, 1), map[string]string{"app": "w"})
				w.placed("w1", "a2", api.Running, tu.CPU(1, 1), map[string]string{"app": "w"})
				w.placed("gone", "b1", api.Releasing, tu.CPU(1, 1), map[string]string{"app": "w"})
				t := w.pending("t", tu.CPU(1, 1))
				t.TopologySpread = []api.TopologySpread{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "ScheduleAnyway", Selector: map[string]string{"app": "w"}}}
				return t
			},
			// zone a: 2 x log(4) = 2.77 -> 3; zone b: 0; normalised 100*(3+0-s)/3; nozone ignored.
			want: "a1=0 a2=0 b1=100 nozone=0",
		},
		{
			name:    "topology spread over hosts",
			weights: map[string]int{ArgPodTopologySpread: 2},
			setup: func(w *world) *api.Task {
				w.node("h1", 8, 8, nil)
				w.node("h2", 8, 8, nil)
				w.node("h3", 8, 8, nil)
				w.placed("w0", "h1", api.Running, tu.CPU(1, 1), map[string]string{"app": "w"})
				w.placed("w1", "h1", api.Running, tu.CPU(1, 1), map[string]string{"app": "w"})
				w.placed("w2", "h2", api.Running, tu.CPU(1, 1), map[string]string{"app": "w"})
				t := w.pending("t", tu.CPU(1, 1))
				t.TopologySpread = []api.TopologySpread{{MaxSkew: 2, TopologyKey: "kubernetes.io/hostname", WhenUnsatisfiable: "ScheduleAnyway", Selector: map[string]string{"app": "w"}}}
				return t
			},
			// log(5) = 1.609 per task, plus maxSkew-1: h1 4.22 -> 4, h2 2.61 -> 3, h3 1;
			// normalised 100*(4+1-s)/4: 25, 50, 100; times 2.
			want: "h1=50 h2=100 h3=200",
		},
		{
			name:    "DoNotSchedule constraints are not scored",
			weights: map[string]int{ArgPodTopologySpread: 1},
			setup: func(w *world) *api.Task {
				zones(w)
				t := w.pending("t", tu.CPU(1, 1))
				t.TopologySpread = []api.TopologySpread{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "DoNotSchedule", Selector: map[string]string{"app": "w"}}}
				return t
			},
			want: "a1=0 a2=0 b1=0",
		},
		{
			name:    "selector spread gives every node 100 without spread constraints",
			weights: map[string]int{ArgSelectorSpread: 1},
			setup: func(w *world) *api.Task {
				zones(w)
				return w.pending("t", tu.CPU(1, 1))
			},
			want: "a1=100 a2=100 b1=100",
		},
		{
			name:    "selector spread skips tasks with spread constraints",
			weights: map[string]int{ArgSelectorSpread: 1},
			setup: func(w *world) *api.Task {
				zones(w)
				t := w.pending("t", tu.CPU(1, 1))
				t.TopologySpread = []api.TopologySpread{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "DoNotSchedule"}}
				return t
			},
			want: "a1=0 a2=0 b1=0",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			task := tc.setup(w)
			cfg := defaults
			if tc.weights != nil {
				cfg = only(tc.weights)
			}
			ssn := w.c.Open(t, cfg, builders)
			ti := tu.TaskOf(t, ssn, "j", task.Name)
			if got := format(ssn, scores(t, ssn, ti)); got != tc.want {
				t.Errorf("scores %s, want %s", got, tc.want)
			}
		})
	}
}

// TestBatchOverCandidates checks that normalisation runs over the candidate nodes given.
func TestBatchOverCandidates(t *testing.T) {
	w := newWorld()
	w.node("a", 8, 8, nil)
	w.node("b", 8, 8, nil).Taints = []api.Taint{{Key: "soft", Effect: "PreferNoSchedule"}}
	w.node("c", 8, 8, nil).Taints = []api.Taint{{Key: "soft", Effect: "PreferNoSchedule"}, {Key: "soft2", Effect: "PreferNoSchedule"}}
	w.pending("t", tu.CPU(1, 1))
	ssn := w.c.Open(t, only(map[string]int{ArgTaintToleration: 1}), builders)
	ti := tu.TaskOf(t, ssn, "j", "t")
	got, err := ssn.BatchNodeOrderFn(ti, []*api.NodeInfo{ssn.Nodes["a"], ssn.Nodes["b"]})
	if err != nil {
		t.Fatal(err)
	}
	if got["a"] != 100 || got["b"] != 0 {
		t.Errorf("scores over a and b = %v, want a=100 b=0", got)
	}
}

// TestConcurrentScores runs the scores for several tasks at once; run with -race.
func TestConcurrentScores(t *testing.T) {
	w := newWorld()
	for i := range 40 {
		w.node(fmt.Sprintf("n%02d", i), float64(8+i%5), 16, map[string]string{"zone": fmt.Sprint(i % 3)})
	}
	w.placed("db", "n03", api.Running, tu.CPU(1, 1), map[string]string{"app": "db"})
	for i := range 4 {
		t := w.pending(fmt.Sprint("t", i), tu.CPU(float64(1+i), 1))
		t.Affinity = &api.Affinity{TaskAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "db"}, TopologyKey: "zone", Weight: 10}}}
		t.TopologySpread = []api.TopologySpread{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "ScheduleAnyway", Selector: map[string]string{"app": "db"}}}
	}
	ssn := w.c.Open(t, defaults, builders)
	want := map[string]float64{}
	for i := range 4 {
		ti := tu.TaskOf(t, ssn, "j", fmt.Sprint("t", i))
		for _, s := range scores(t, ssn, ti) {
			want[ti.Name] += s
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]float64{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ti := tu.TaskOf(t, ssn, "j", fmt.Sprint("t", g%4))
			sum := 0.0
			batch, _ := ssn.BatchNodeOrderFn(ti, ssn.NodeList)
			for _, n := range ssn.NodeList {
				s, _ := ssn.NodeOrderFn(ti, n)
				sum += s + batch[n.Name]
			}
			mu.Lock()
			got[ti.Name] += sum
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, s := range want {
		if math.Abs(got[name]-2*s) > 1e-9 {
			t.Errorf("%s: %g over two runs, want %g", name, got[name], 2*s)
		}
	}
}

// BenchmarkScores measures one task scored on 1,000 nodes with the default weights, per node
// and batch.
func BenchmarkScores(b *testing.B) {
	w := newWorld()
	for i := range 1000 {
		n := w.node(fmt.Sprintf("n%04d", i), 64, 256, map[string]string{"zone": fmt.Sprint(i % 4)})
		w.placed(fmt.Sprint("p", i), n.Name, api.Running, tu.CPU(float64(i%8), 4), nil)
	}
	w.pending("t", tu.CPU(2, 4))
	ssn := w.c.Open(b, defaults, builders)
	ti := tu.TaskOf(b, ssn, "j", "t")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, n := range ssn.NodeList {
			if _, err := ssn.NodeOrderFn(ti, n); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := ssn.BatchNodeOrderFn(ti, ssn.NodeList); err != nil {
			b.Fatal(err)
		}
	}
}

package predicates

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

// config is a one-tier configuration with the predicates plugin and the given arguments
// (YAML mapping lines, indented by the caller's content).
func config(args ...string) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: predicates\n"
	if len(args) > 0 {
		s += "    arguments:\n"
		for _, a := range args {
			s += "      " + a + "\n"
		}
	}
	return s
}

// world is a test cluster: a queue, a job "j" for the task under test, and a job "other" for
// tasks already placed.
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

func (w *world) node(name string, labels map[string]string) *api.Node {
	n := w.c.Node(name, tu.Res(map[string]float64{"cpu": 16, "memory": 64 << 30, "pods": 110}))
	n.Labels = labels
	return n
}

// placed adds a running task of job "other" on node.
func (w *world) placed(name, node string, labels map[string]string) *api.Task {
	t := w.c.Task(w.other, name, api.Running, node, tu.CPU(1, 1))
	t.Labels = labels
	return t
}

// pending adds the pending task under test to job "j".
func (w *world) pending(name string) *api.Task {
	return w.c.Task(w.j, name, api.Pending, "", tu.CPU(1, 1))
}

func (w *world) open(t testing.TB, cfg string) *framework.Session {
	t.Helper()
	return w.c.Open(t, cfg, builders)
}

// verdict formats a predicate result: "ok", or the code and the reasons.
func verdict(err error) string {
	if err == nil {
		return "ok"
	}
	var fe *api.FitError
	if !errors.As(err, &fe) {
		return "error: " + err.Error()
	}
	code := "U"
	if fe.Code == api.UnschedulableAndUnresolvable {
		code = "UU"
	}
	return code + ": " + strings.Join(fe.Reasons, "; ")
}

// verdicts runs the predicate of task on every node, in name order.
func verdicts(t *testing.T, ssn *framework.Session, task string) []string {
	t.Helper()
	ti := tu.TaskOf(t, ssn, "j", task)
	if err := ssn.PrePredicateFn(ti); err != nil {
		return []string{"pre: " + verdict(err)}
	}
	var out []string
	for _, n := range ssn.NodeList {
		out = append(out, n.Name+" "+verdict(ssn.PredicateFn(ti, n)))
	}
	return out
}

func equal(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestNewArguments(t *testing.T) {
	tests := []struct {
		name    string
		args    conf.Arguments
		wantErr string
	}{
		{"defaults", nil, ""},
		{"all switches", conf.Arguments{ArgNodeAffinity: false, ArgNodePorts: "false", ArgTaintToleration: true, ArgPodAffinity: false,
			ArgPodTopologySpread: false, ArgCache: true, ArgProportional: true, ArgNodeUnschedulable: false,
			"predicate.GPUSharingEnable": true, "predicate.VolumeBindingEnable": false}, ""},
		{"malformed switch", conf.Arguments{ArgNodePorts: "maybe"}, ArgNodePorts},
		{"malformed accepted-only switch", conf.Arguments{"predicate.GPUSharingEnable": 3}, "predicate.GPUSharingEnable"},
		{"proportional rates", conf.Arguments{ArgResources: "nvidia.com/gpu, foo", "predicate.resources.nvidia.com/gpu.cpu": 4, "predicate.resources.foo.memory": "-2"}, ""},
		{"malformed rate", conf.Arguments{ArgResources: "nvidia.com/gpu", "predicate.resources.nvidia.com/gpu.memory": "lots"}, "predicate.resources.nvidia.com/gpu.memory"},
		{"malformed resource list", conf.Arguments{ArgResources: []any{"a"}}, ArgResources},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.args)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("New = %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("New error = %v, want one naming %s", err, tc.wantErr)
			}
		})
	}
	p, err := New(conf.Arguments{ArgResources: "nvidia.com/gpu, foo", "predicate.resources.nvidia.com/gpu.cpu": 4, "predicate.resources.foo.memory": "-2"})
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(p.(*plugin).opts.proportional)
	if want := "[{foo 1 1} {nvidia.com/gpu 4 1}]"; got != want {
		t.Errorf("proportional = %s, want %s", got, want)
	}
}

func TestPredicateNodeChecks(t *testing.T) {
	gpuTaint := api.Taint{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}
	tests := []struct {
		name  string
		cfg   string
		setup func(w *world, task *api.Task)
		want  []string
	}{
		{
			name:  "no constraints fit everywhere",
			setup: func(w *world, task *api.Task) { w.node("a", nil); w.node("b", nil) },
			want:  []string{"a ok", "b ok"},
		},
		{
			name: "pods capacity",
			setup: func(w *world, task *api.Task) {
				n := w.node("a", nil)
				n.Allocatable.MaxTaskNum = 1
				w.placed("p", "a", nil)
				w.c.Node("unset", tu.CPU(4, 4)) // no pods: unlimited
			},
			want: []string{"a U: too many tasks", "unset ok"},
		},
		{
			name: "cordoned node",
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Unschedulable = true
				w.node("b", nil)
			},
			want: []string{"a UU: node unschedulable", "b ok"},
		},
		{
			name: "cordoned node tolerated",
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Unschedulable = true
				task.Tolerations = []api.Toleration{{Key: "node.kubernetes.io/unschedulable", Operator: "Exists", Effect: "NoSchedule"}}
			},
			want: []string{"a ok"},
		},
		{
			name: "cordon check switched off",
			cfg:  config(ArgNodeUnschedulable + ": false"),
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Unschedulable = true
			},
			want: []string{"a ok"},
		},
		{
			name: "node selector",
			setup: func(w *world, task *api.Task) {
				w.node("cpu-0", map[string]string{"pool": "cpu"})
				w.node("gpu-0", map[string]string{"pool": "gpu"})
				task.NodeSelector = map[string]string{"pool": "gpu"}
			},
			want: []string{"cpu-0 UU: node selector/affinity mismatch", "gpu-0 ok"},
		},
		{
			name: "required node affinity",
			setup: func(w *world, task *api.Task) {
				w.node("a", map[string]string{"zone": "z1", "cores": "8"})
				w.node("b", map[string]string{"zone": "z2", "cores": "64"})
				w.node("c", map[string]string{"zone": "z3", "cores": "64"})
				task.Affinity = &api.Affinity{NodeRequired: []api.NodeSelectorTerm{
					{MatchExpressions: []api.SelectorRequirement{{Key: "zone", Operator: "In", Values: []string{"z1", "z2"}}, {Key: "cores", Operator: "Gt", Values: []string{"16"}}}},
					{MatchExpressions: []api.SelectorRequirement{{Key: "zone", Operator: "NotIn", Values: []string{"z1", "z2", "z3"}}}},
				}}
			},
			want: []string{"a UU: node selector/affinity mismatch", "b ok", "c UU: node selector/affinity mismatch"},
		},
		{
			name: "node affinity switched off",
			cfg:  config(ArgNodeAffinity + ": false"),
			setup: func(w *world, task *api.Task) {
				w.node("a", nil)
				task.NodeSelector = map[string]string{"pool": "gpu"}
			},
			want: []string{"a ok"},
		},
		{
			name: "taints",
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Taints = []api.Taint{gpuTaint}
				w.node("b", nil).Taints = []api.Taint{{Key: "soft", Effect: "PreferNoSchedule"}}
				w.node("c", nil).Taints = []api.Taint{{Key: "maint", Effect: "NoExecute"}}
			},
			want: []string{"a UU: untolerated taint dedicated=gpu:NoSchedule", "b ok", "c UU: untolerated taint maint:NoExecute"},
		},
		{
			name: "taint tolerated",
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Taints = []api.Taint{gpuTaint}
				task.Tolerations = []api.Toleration{{Key: "dedicated", Operator: "Equal", Value: "gpu", Effect: "NoSchedule"}}
			},
			want: []string{"a ok"},
		},
		{
			name: "taints switched off",
			cfg:  config(ArgTaintToleration + ": false"),
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Taints = []api.Taint{gpuTaint}
			},
			want: []string{"a ok"},
		},
		{
			name: "host ports",
			setup: func(w *world, task *api.Task) {
				w.node("a", nil)
				w.node("b", nil)
				w.placed("web", "a", nil).Ports = []int32{9090, 8080}
				task.Ports = []int32{0, 8080}
			},
			want: []string{"a U: host port 8080 in use", "b ok"},
		},
		{
			name: "host ports switched off",
			cfg:  config(ArgNodePorts + ": false"),
			setup: func(w *world, task *api.Task) {
				w.node("a", nil)
				w.placed("web", "a", nil).Ports = []int32{8080}
				task.Ports = []int32{8080}
			},
			want: []string{"a ok"},
		},
		{
			name: "resolvable reasons add up",
			setup: func(w *world, task *api.Task) {
				w.node("a", nil).Allocatable.MaxTaskNum = 1
				w.placed("web", "a", nil).Ports = []int32{8080}
				task.Ports = []int32{8080}
			},
			want: []string{"a U: too many tasks; host port 8080 in use"},
		},
		{
			name: "an unresolvable reason ends the run and keeps earlier ones",
			setup: func(w *world, task *api.Task) {
				n := w.node("a", nil)
				n.Allocatable.MaxTaskNum = 1
				n.Taints = []api.Taint{gpuTaint}
				w.placed("web", "a", nil)
			},
			want: []string{"a UU: too many tasks; untolerated taint dedicated=gpu:NoSchedule"},
		},
		{
			name: "node checks in Volcano's order",
			setup: func(w *world, task *api.Task) {
				n := w.node("a", map[string]string{"pool": "cpu"})
				n.Unschedulable = true
				n.Taints = []api.Taint{gpuTaint}
				task.NodeSelector = map[string]string{"pool": "gpu"}
			},
			want: []string{"a UU: node unschedulable"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			task := w.pending("t")
			tc.setup(w, task)
			cfg := tc.cfg
			if cfg == "" {
				cfg = config()
			}
			equal(t, verdicts(t, w.open(t, cfg), "t"), tc.want)
		})
	}
}

func TestPredicateTaskAffinity(t *testing.T) {
	zones := func(w *world) {
		w.node("a1", map[string]string{"zone": "a"})
		w.node("a2", map[string]string{"zone": "a"})
		w.node("b1", map[string]string{"zone": "b"})
		w.node("nozone", nil)
	}
	required := func(sel map[string]string, key string) []api.TaskAffinityTerm {
		return []api.TaskAffinityTerm{{Selector: sel, TopologyKey: key, Required: true}}
	}
	tests := []struct {
		name  string
		cfg   string
		setup func(w *world, task *api.Task)
		want  []string
	}{
		{
			name: "affinity to a placed task's zone",
			setup: func(w *world, task *api.Task) {
				zones(w)
				w.placed("ps", "a2", map[string]string{"app": "ps"})
				task.Affinity = &api.Affinity{TaskAffinity: required(map[string]string{"app": "ps"}, "zone")}
			},
			want: []string{"a1 ok", "a2 ok", "b1 UU: task affinity mismatch", "nozone UU: task affinity mismatch"},
		},
		{
			name: "the first of a self-affine group goes where the key exists",
			setup: func(w *world, task *api.Task) {
				zones(w)
				task.Labels = map[string]string{"app": "ps"}
				task.Affinity = &api.Affinity{TaskAffinity: required(map[string]string{"app": "ps"}, "zone")}
			},
			want: []string{"a1 ok", "a2 ok", "b1 ok", "nozone UU: task affinity mismatch"},
		},
		{
			name: "no matching task and not self-affine",
			setup: func(w *world, task *api.Task) {
				zones(w)
				task.Affinity = &api.Affinity{TaskAffinity: required(map[string]string{"app": "ps"}, "zone")}
			},
			want: []string{"a1 UU: task affinity mismatch", "a2 UU: task affinity mismatch", "b1 UU: task affinity mismatch", "nozone UU: task affinity mismatch"},
		},
		{
			name: "affinity counts only the task's namespace",
			setup: func(w *world, task *api.Task) {
				zones(w)
				p := w.placed("ps", "a2", map[string]string{"app": "ps"})
				p.Namespace = "elsewhere"
				w.other.Namespace = "elsewhere"
				task.Affinity = &api.Affinity{TaskAffinity: required(map[string]string{"app": "ps"}, "zone")}
			},
			want: []string{"a1 UU: task affinity mismatch", "a2 UU: task affinity mismatch", "b1 UU: task affinity mismatch", "nozone UU: task affinity mismatch"},
		},
		{
			name: "anti-affinity to a placed task's zone",
			setup: func(w *world, task *api.Task) {
				zones(w)
				w.placed("web", "a1", map[string]string{"app": "web"})
				task.Affinity = &api.Affinity{TaskAntiAffinity: required(map[string]string{"app": "web"}, "zone")}
			},
			want: []string{"a1 UU: task anti-affinity conflict", "a2 UU: task anti-affinity conflict", "b1 ok", "nozone ok"},
		},
		{
			name: "a placed task's anti-affinity repels the task",
			setup: func(w *world, task *api.Task) {
				zones(w)
				p := w.placed("db", "b1", nil)
				p.Affinity = &api.Affinity{TaskAntiAffinity: required(map[string]string{"tier": "web"}, "zone")}
				task.Labels = map[string]string{"tier": "web"}
			},
			want: []string{"a1 ok", "a2 ok", "b1 UU: anti-affinity of a placed task", "nozone ok"},
		},
		{
			name: "hostname anti-affinity spreads one per node",
			setup: func(w *world, task *api.Task) {
				zones(w)
				w.placed("w0", "a1", map[string]string{"app": "w"})
				task.Affinity = &api.Affinity{TaskAntiAffinity: required(map[string]string{"app": "w"}, "kubernetes.io/hostname")}
			},
			want: []string{"a1 UU: task anti-affinity conflict", "a2 ok", "b1 ok", "nozone ok"},
		},
		{
			name: "task affinity switched off",
			cfg:  config(ArgPodAffinity + ": false"),
			setup: func(w *world, task *api.Task) {
				zones(w)
				task.Affinity = &api.Affinity{TaskAffinity: required(map[string]string{"app": "ps"}, "zone")}
			},
			want: []string{"a1 ok", "a2 ok", "b1 ok", "nozone ok"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			task := w.pending("t")
			tc.setup(w, task)
			cfg := tc.cfg
			if cfg == "" {
				cfg = config()
			}
			equal(t, verdicts(t, w.open(t, cfg), "t"), tc.want)
		})
	}
}

func TestPredicateTopologySpread(t *testing.T) {
	spread := func(task *api.Task, skew int32, key string) {
		task.Labels = map[string]string{"app": "w"}
		task.TopologySpread = []api.TopologySpread{{MaxSkew: skew, TopologyKey: key, WhenUnsatisfiable: "DoNotSchedule", Selector: map[string]string{"app": "w"}}}
	}
	tests := []struct {
		name  string
		cfg   string
		setup func(w *world, task *api.Task)
		want  []string
	}{
		{
			name: "skew over zones",
			setup: func(w *world, task *api.Task) {
				w.node("a1", map[string]string{"zone": "a"})
				w.node("b1", map[string]string{"zone": "b"})
				w.node("c1", map[string]string{"zone": "c"})
				w.node("nozone", nil)
				w.placed("w0", "a1", map[string]string{"app": "w"})
				w.placed("w1", "a1", map[string]string{"app": "w"})
				w.placed("w2", "b1", map[string]string{"app": "w"})
				w.placed("x", "c1", map[string]string{"app": "x"})
				spread(task, 1, "zone")
			},
			want: []string{"a1 U: topology spread maxSkew exceeded on zone", "b1 U: topology spread maxSkew exceeded on zone", "c1 ok", "nozone UU: missing topology label zone"},
		},
		{
			name: "releasing tasks do not count",
			setup: func(w *world, task *api.Task) {
				w.node("a1", map[string]string{"zone": "a"})
				w.node("b1", map[string]string{"zone": "b"})
				w.c.Task(w.other, "gone", api.Releasing, "a1", tu.CPU(1, 1)).Labels = map[string]string{"app": "w"}
				spread(task, 1, "zone")
			},
			want: []string{"a1 ok", "b1 ok"},
		},
		{
			name: "only nodes the task may use are domains",
			setup: func(w *world, task *api.Task) {
				w.node("a1", map[string]string{"zone": "a", "pool": "x"})
				w.node("b1", map[string]string{"zone": "b", "pool": "y"})
				w.placed("w0", "a1", map[string]string{"app": "w"})
				spread(task, 1, "zone")
				task.NodeSelector = map[string]string{"pool": "x"}
			},
			// zone b is not eligible, so the global minimum is zone a's own count.
			want: []string{"a1 ok", "b1 UU: node selector/affinity mismatch"},
		},
		{
			name: "larger maxSkew",
			setup: func(w *world, task *api.Task) {
				w.node("a1", map[string]string{"zone": "a"})
				w.node("b1", map[string]string{"zone": "b"})
				w.placed("w0", "a1", map[string]string{"app": "w"})
				spread(task, 2, "zone")
			},
			want: []string{"a1 ok", "b1 ok"},
		},
		{
			name: "ScheduleAnyway is not a predicate",
			setup: func(w *world, task *api.Task) {
				w.node("a1", map[string]string{"zone": "a"})
				w.node("nozone", nil)
				spread(task, 1, "zone")
				task.TopologySpread[0].WhenUnsatisfiable = "ScheduleAnyway"
			},
			want: []string{"a1 ok", "nozone ok"},
		},
		{
			name: "spread switched off",
			cfg:  config(ArgPodTopologySpread + ": false"),
			setup: func(w *world, task *api.Task) {
				w.node("nozone", nil)
				spread(task, 1, "zone")
			},
			want: []string{"nozone ok"},
		},
		{
			name: "malformed constraint fails the pre-predicate",
			setup: func(w *world, task *api.Task) {
				w.node("a1", map[string]string{"zone": "a"})
				spread(task, 0, "zone")
			},
			want: []string{"pre: UU: topology spread on zone: maxSkew 0 is below 1"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld()
			task := w.pending("t")
			tc.setup(w, task)
			cfg := tc.cfg
			if cfg == "" {
				cfg = config()
			}
			equal(t, verdicts(t, w.open(t, cfg), "t"), tc.want)
		})
	}
}

func TestPredicateProportional(t *testing.T) {
	cfg := config(ArgProportional+": true", ArgResources+": nvidia.com/gpu",
		ArgResources+".nvidia.com/gpu.cpu: 4", ArgResources+".nvidia.com/gpu.memory: 8")
	w := newWorld()
	// 2 idle GPUs reserve 8 cpu and 16 GB (10^9) of memory for GPU tasks.
	w.c.Node("gpu", tu.Res(map[string]float64{"cpu": 12, "memory": 32e9, "nvidia.com/gpu": 2}))
	w.c.Node("cpu", tu.Res(map[string]float64{"cpu": 12, "memory": 32e9}))
	w.c.Task(w.j, "small", api.Pending, "", tu.Res(map[string]float64{"cpu": 4, "memory": 16e9}))
	w.c.Task(w.j, "big", api.Pending, "", tu.Res(map[string]float64{"cpu": 5, "memory": 1e9}))
	w.c.Task(w.j, "gputask", api.Pending, "", tu.Res(map[string]float64{"cpu": 12, "memory": 1e9, "nvidia.com/gpu": 1}))
	ssn := w.open(t, cfg)
	equal(t, verdicts(t, ssn, "small"), []string{"cpu ok", "gpu ok"})
	equal(t, verdicts(t, ssn, "big"), []string{"cpu ok", "gpu UU: idle cpu/memory reserved for nvidia.com/gpu"})
	equal(t, verdicts(t, ssn, "gputask"), []string{"cpu ok", "gpu ok"})
	// Off by default.
	equal(t, verdicts(t, w.open(t, config()), "big"), []string{"cpu ok", "gpu ok"})
}

// TestPredicateFollowsPlacement checks that the predicate sees placements and evictions made
// in the session: a port taken by an allocation, freed by an eviction.
func TestPredicateFollowsPlacement(t *testing.T) {
	w := newWorld()
	w.node("a", nil)
	first := w.pending("first")
	first.Ports = []int32{8080}
	second := w.pending("second")
	second.Ports = []int32{8080}
	w.placed("old", "a", nil).Ports = []int32{9090}
	ssn := w.open(t, config())
	a := ssn.Nodes["a"]
	ti := tu.TaskOf(t, ssn, "j", "second")
	if got := verdict(ssn.PredicateFn(ti, a)); got != "ok" {
		t.Fatalf("before: %s", got)
	}
	stmt := ssn.NewStatement()
	if err := stmt.Allocate(tu.TaskOf(t, ssn, "j", "first"), a); err != nil {
		t.Fatal(err)
	}
	if got := verdict(ssn.PredicateFn(ti, a)); got != "U: host port 8080 in use" {
		t.Fatalf("after allocate: %s", got)
	}
	stmt.Discard()
	if got := verdict(ssn.PredicateFn(ti, a)); got != "ok" {
		t.Fatalf("after discard: %s", got)
	}

	// An evicted task leaves Volcano's node view at once, ports and pod count included.
	w2 := newWorld()
	n := w2.node("a", nil)
	n.Allocatable.MaxTaskNum = 1
	w2.placed("old", "a", nil).Ports = []int32{8080}
	w2.pending("t").Ports = []int32{8080}
	ssn = w2.open(t, config())
	a = ssn.Nodes["a"]
	ti = tu.TaskOf(t, ssn, "j", "t")
	if got := verdict(ssn.PredicateFn(ti, a)); got != "U: too many tasks; host port 8080 in use" {
		t.Fatalf("before evict: %s", got)
	}
	if err := ssn.NewStatement().Evict(tu.TaskOf(t, ssn, "other", "old"), framework.EvictReason{Action: "preempt"}); err != nil {
		t.Fatal(err)
	}
	if got := verdict(ssn.PredicateFn(ti, a)); got != "ok" {
		t.Fatalf("after evict: %s", got)
	}
}

// TestPredicateAffinityFollowsPlacement checks anti-affinity against a task placed in the
// same session.
func TestPredicateAffinityFollowsPlacement(t *testing.T) {
	w := newWorld()
	w.node("a", nil)
	w.node("b", nil)
	for _, name := range []string{"w0", "w1"} {
		task := w.pending(name)
		task.Labels = map[string]string{"app": "w"}
		task.Affinity = &api.Affinity{TaskAntiAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "w"}, TopologyKey: "kubernetes.io/hostname", Required: true}}}
	}
	ssn := w.open(t, config())
	if err := ssn.NewStatement().Allocate(tu.TaskOf(t, ssn, "j", "w0"), ssn.Nodes["a"]); err != nil {
		t.Fatal(err)
	}
	equal(t, verdicts(t, ssn, "w1"), []string{"a UU: task anti-affinity conflict", "b ok"})
}

// TestPredicateConcurrent runs the predicate for several tasks on many nodes at once; run
// with -race.
func TestPredicateConcurrent(t *testing.T) {
	w := newWorld()
	for i := range 50 {
		w.node(fmt.Sprintf("n%02d", i), map[string]string{"zone": fmt.Sprint(i % 3)})
	}
	w.placed("ps", "n01", map[string]string{"app": "ps"})
	for i := range 4 {
		task := w.pending(fmt.Sprint("t", i))
		task.Affinity = &api.Affinity{TaskAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"app": "ps"}, TopologyKey: "zone", Required: true}}}
		task.TopologySpread = []api.TopologySpread{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: "DoNotSchedule", Selector: map[string]string{"app": "ps"}}}
	}
	ssn := w.open(t, config())
	want := map[string]int{}
	for i := range 4 {
		ti := tu.TaskOf(t, ssn, "j", fmt.Sprint("t", i))
		for _, n := range ssn.NodeList {
			if ssn.PredicateFn(ti, n) == nil {
				want[ti.Name]++
			}
		}
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ti := tu.TaskOf(t, ssn, "j", fmt.Sprint("t", g%4))
			fit := 0
			for _, n := range ssn.NodeList {
				if ssn.PredicateFn(ti, n) == nil {
					fit++
				}
			}
			mu.Lock()
			got[ti.Name] += fit
			mu.Unlock()
		}()
	}
	wg.Wait()
	for name, n := range want {
		if got[name] != 2*n {
			t.Errorf("%s: %d fits over two runs, want %d", name, got[name], 2*n)
		}
	}
}

func TestExplanationAggregates(t *testing.T) {
	w := newWorld()
	w.node("cpu-0", map[string]string{"pool": "cpu"})
	w.node("gpu-0", map[string]string{"pool": "gpu"}).Taints = []api.Taint{{Key: "dedicated", Value: "gpu", Effect: "NoSchedule"}}
	w.pending("t").NodeSelector = map[string]string{"pool": "gpu"}
	ssn := w.open(t, config())
	ti := tu.TaskOf(t, ssn, "j", "t")
	fe := api.NewFitErrors()
	fe.Total = len(ssn.NodeList)
	for _, n := range ssn.NodeList {
		if err := ssn.PredicateFn(ti, n); err != nil {
			fe.SetNodeError(n.Name, err)
		}
	}
	want := "0/2 nodes fit: 1 node selector/affinity mismatch, 1 untolerated taint dedicated=gpu:NoSchedule"
	if got := fe.Error(); got != want {
		t.Errorf("explanation = %q, want %q", got, want)
	}
}

// BenchmarkPredicate measures one task against 1,000 nodes, with a node selector, a
// toleration and a taint on every other node.
func BenchmarkPredicate(b *testing.B) {
	w := newWorld()
	for i := range 1000 {
		n := w.node(fmt.Sprintf("n%04d", i), map[string]string{"pool": "x", "zone": fmt.Sprint(i % 4)})
		if i%2 == 0 {
			n.Taints = []api.Taint{{Key: "dedicated", Value: "x", Effect: "NoSchedule"}}
		}
		w.placed(fmt.Sprint("p", i), n.Name, nil)
	}
	task := w.pending("t")
	task.NodeSelector = map[string]string{"pool": "x"}
	task.Tolerations = []api.Toleration{{Key: "dedicated", Operator: "Exists"}}
	ssn := w.open(b, config())
	ti := tu.TaskOf(b, ssn, "j", "t")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, n := range ssn.NodeList {
			if ssn.PredicateFn(ti, n) != nil {
				b.Fatal("unexpected failure")
			}
		}
	}
}

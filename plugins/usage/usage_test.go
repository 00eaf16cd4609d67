package usage

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

const gib = float64(1 << 30)

// config returns a one-tier configuration with the plugin and its arguments (YAML lines,
// indented under arguments), preceded by extra top-level lines.
func config(top string, args ...string) string {
	s := top + "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: usage\n"
	if len(args) > 0 {
		s += "    arguments:\n"
		for _, a := range args {
			s += "      " + a + "\n"
		}
	}
	return s
}

func parse(t *testing.T, args ...string) settings {
	t.Helper()
	cfg, err := conf.Parse([]byte(config("", args...)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := parseSettings(cfg.Tiers[0].Plugins[0].Arguments)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestArguments(t *testing.T) {
	d := defaults()
	if got := parse(t); got != d {
		t.Errorf("no arguments: %v, want defaults %v", got, d)
	}
	got := parse(t, "usage.weight: 2", "cpu.weight: 3", "memory.weight: 0",
		"thresholds: {cpu: 70.5, mem: 60}",
		"estimator: {request_ratio: 0.5, burst_ratio: 0.1, risk_threshold: 0.9, risk_factor: 2, be_cpu: 500m, be_mem: 1Gi}")
	want := settings{usageWeight: 2, cpuWeight: 3, memoryWeight: 0, cpuThreshold: 70.5, memThreshold: 60,
		requestRatio: 0.5, burstRatio: 0.1, riskThreshold: 0.9, riskFactor: 2, beCPU: 500, beMemory: gib}
	if got != want {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got := parse(t, "thresholds: {memory: 50}"); got.memThreshold != 50 || got.cpuThreshold != 80 {
		t.Errorf("memory alias: %v", got)
	}
	if got := parse(t, "thresholds: {memory: 50, mem: 40}"); got.memThreshold != 40 {
		t.Errorf("mem must win over memory: %v", got)
	}
	if got := parse(t, "estimator: {be_memory: 1Mi, be_cpu: 1}"); got.beMemory != 1<<20 || got.beCPU != 1000 {
		t.Errorf("be_memory alias and bare cpu quantity: %v", got)
	}

	bad := []struct{ arg, mention string }{
		{"usage.weight: heavy", "usage.weight"},
		{"thresholds: 80", "thresholds"},
		{"thresholds: {cpu: 120}", "cpu"},
		{"thresholds: {mem: -1}", "mem"},
		{"thresholds: {cpu: high}", "cpu"},
		{"estimator: {request_ratio: 1.5}", "request_ratio"},
		{"estimator: {risk_factor: 0.5}", "risk_factor"},
		{"estimator: {be_cpu: lots}", "be_cpu"},
		{"estimator: {be_mem: -1Gi}", "be_mem"},
		{"estimator: [1]", "estimator"},
	}
	for _, b := range bad {
		cfg, err := conf.Parse([]byte(config("", b.arg)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(cfg.Tiers[0].Plugins[0].Arguments); err == nil || !strings.Contains(err.Error(), b.mention) {
			t.Errorf("%s: error %v, want one naming %s", b.arg, err, b.mention)
		}
	}
}

// node adds a node of 8 cpu and 16Gi with the given usage (nil: none reported).
func node(c *tu.Cluster, name string, usage map[string]float64) {
	c.Node(name, tu.CPU(8, 16)).Usage = usage
}

func TestPredicate(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	node(c, "a-none", nil)
	node(c, "b-cool", map[string]float64{"cpu": 10, "memory": 10})
	node(c, "c-at-threshold", map[string]float64{"cpu": 80, "memory": 80})
	node(c, "d-hot-cpu", map[string]float64{"cpu": 80.5, "memory": 10})
	node(c, "e-hot-mem", map[string]float64{"cpu": 10, "memory": 95})
	node(c, "f-cpu-only", map[string]float64{"cpu": 90})
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
	ssn := c.Open(t, config(""), builders)
	task := tu.TaskOf(t, ssn, "j", "t")
	want := map[string]string{
		"a-none": "", "b-cool": "", "c-at-threshold": "",
		"d-hot-cpu": ReasonCPU, "e-hot-mem": ReasonMemory, "f-cpu-only": ReasonCPU,
	}
	for _, n := range ssn.NodeList {
		err := ssn.PredicateFn(task, n)
		got := ""
		if err != nil {
			fe := err.(*api.FitError)
			if fe.Code != api.UnschedulableAndUnresolvable {
				t.Errorf("%s: code %v", n.Name, fe.Code)
			}
			got = strings.Join(fe.Reasons, ",")
		}
		if got != want[n.Name] {
			t.Errorf("%s: %q, want %q", n.Name, got, want[n.Name])
		}
	}
}

func TestScore(t *testing.T) {
	// Node capacity 8 cpu, 16Gi. Scores are ((1-cpu)·wc + (1-mem)·wm)/(wc+wm)·100·usage.weight.
	tests := []struct {
		name  string
		args  []string
		usage map[string]float64
		// running is a running task on the node: its cpu and its start, seconds before now
		// (-1: no start time).
		running *struct{ cpu, startedAgo float64 }
		want    float64
	}{
		{name: "no usage reported", usage: nil, want: 0},
		{name: "defaults", usage: map[string]float64{"cpu": 40, "memory": 60}, want: 250},
		{name: "missing dimension counts as 0", usage: map[string]float64{"cpu": 50}, want: 375},
		{name: "weights", args: []string{"usage.weight: 1", "cpu.weight: 3", "memory.weight: 1"},
			usage: map[string]float64{"cpu": 20, "memory": 60}, want: 70},
		{name: "zero weights score 0", args: []string{"cpu.weight: 0", "memory.weight: 0"},
			usage: map[string]float64{"cpu": 20}, want: 0},
		{name: "a task running for long is in the report", usage: map[string]float64{"cpu": 40, "memory": 60},
			running: &struct{ cpu, startedAgo float64 }{4, 3600}, want: 250},
		// 4 cpu · 0.7 = 2.8 cpu = 35% of 8; memory 1Gi·0.7 = 4.375% of 16Gi.
		{name: "a task started 10s ago is not yet", usage: map[string]float64{"cpu": 40, "memory": 60},
			running: &struct{ cpu, startedAgo float64 }{4, 10}, want: (0.25 + 0.35625) / 2 * 500},
		{name: "nor one with no start time", usage: map[string]float64{"cpu": 40, "memory": 60},
			running: &struct{ cpu, startedAgo float64 }{4, -1}, want: (0.25 + 0.35625) / 2 * 500},
		// Composite load (0.6+0.7)/2 ≥ 0.6: the estimate is multiplied by 1.2 but capped at
		// the request: cpu 4·0.7·1.2 = 3.36 = 42%, memory 1Gi·0.84 = 5.25%.
		{name: "risk factor over the risk threshold", usage: map[string]float64{"cpu": 50, "memory": 70},
			running: &struct{ cpu, startedAgo float64 }{4, 10}, want: (0.08 + 0.2475) / 2 * 500},
		{name: "composite is capped at 1", usage: map[string]float64{"cpu": 95, "memory": 100},
			running: &struct{ cpu, startedAgo float64 }{4, 10}, want: 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			node(c, "n", tc.usage)
			if tc.running != nil {
				rj := c.Job("run", "q", 1)
				rt := c.Task(rj, "r", api.Running, "n", tu.CPU(tc.running.cpu, 1))
				if tc.running.startedAgo >= 0 {
					rt.StartedAt = api.Epoch.Add(-time.Duration(tc.running.startedAgo * float64(time.Second)))
				}
			}
			j := c.Job("j", "q", 1)
			c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
			ssn := c.Open(t, config("", tc.args...), builders)
			got, err := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"])
			if err != nil || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("score = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestMetricsInterval(t *testing.T) {
	// With metrics.interval 5s, a task started 10s ago is in the report already.
	c := tu.NewCluster()
	c.Queue("q", 1)
	node(c, "n", map[string]float64{"cpu": 40, "memory": 60})
	rj := c.Job("run", "q", 1)
	c.Task(rj, "r", api.Running, "n", tu.CPU(4, 1)).StartedAt = api.Epoch.Add(-10 * time.Second)
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
	ssn := c.Open(t, config("metrics:\n  interval: 5s\n"), builders)
	if got, _ := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"]); got != 250 {
		t.Errorf("score = %v, want 250", got)
	}
}

func TestEventsMoveShadow(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	node(c, "n", map[string]float64{"cpu": 0, "memory": 0})
	j := c.Job("j", "q", 2)
	c.Task(j, "a", api.Pending, "", tu.CPU(4, 0))
	c.Task(j, "b", api.Pending, "", tu.Res(nil))
	ssn := c.Open(t, config(""), builders)
	n := ssn.Nodes["n"]
	a, b := tu.TaskOf(t, ssn, "j", "a"), tu.TaskOf(t, ssn, "j", "b")
	score := func() float64 { s, _ := ssn.NodeOrderFn(b, n); return s }
	if got := score(); got != 500 {
		t.Fatalf("empty node: %v", got)
	}
	st := ssn.NewStatement()
	if err := st.Allocate(a, n); err != nil {
		t.Fatal(err)
	}
	// a: 4 cpu · 0.7 = 2.8 of 8 → cpu 0.35.
	if got, want := score(), (0.65+1)/2*500; math.Abs(got-want) > 1e-9 {
		t.Errorf("after allocating a: %v, want %v", got, want)
	}
	if err := st.Allocate(b, n); err != nil {
		t.Fatal(err)
	}
	// b requests nothing: 250m and 200Mi.
	if got, want := score(), (1-(2800.0+250)/8000+1-200.0/(16*1024))/2*500; math.Abs(got-want) > 1e-9 {
		t.Errorf("after allocating best-effort b: %v, want %v", got, want)
	}
	st.Discard()
	if got := score(); got != 500 {
		t.Errorf("after discard: %v, want 500", got)
	}
}

func TestAllocateSpreadsByShadowLoad(t *testing.T) {
	// Two equally loaded nodes: the first task goes to n1 (name order), and its shadow load
	// sends the second to n2. A hot node is never used.
	c := tu.NewCluster()
	c.Queue("q", 1)
	node(c, "n1", map[string]float64{"cpu": 20, "memory": 20})
	node(c, "n2", map[string]float64{"cpu": 20, "memory": 20})
	node(c, "n0-hot", map[string]float64{"cpu": 99, "memory": 0})
	j := c.Job("j", "q", 2)
	c.Tasks(j, "t", 2, api.Pending, "", tu.CPU(4, 1))
	ssn := c.Open(t, config(""), builders)
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
	if want := map[string]string{"t-0": "n1", "t-1": "n2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("binds = %v, want %v", got, want)
	}
}

func TestPerNodePathDoesNotAllocate(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	node(c, "n", map[string]float64{"cpu": 10, "memory": 10})
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
	ssn := c.Open(t, config(""), builders)
	task, n := tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"]
	if a := testing.AllocsPerRun(100, func() { _ = ssn.PredicateFn(task, n); _, _ = ssn.NodeOrderFn(task, n) }); a != 0 {
		t.Errorf("%v allocations per predicate and score", a)
	}
}

// TestWakeUp: the session wakes when the first running task still missing from the reported
// load enters it (start + metrics interval); tasks already in it, or without a start, do not
// count, and the score changes exactly then.
func TestWakeUp(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	node(c, "n", map[string]float64{"cpu": 40, "memory": 60})
	rj := c.Job("run", "q", 1)
	c.Task(rj, "old", api.Running, "n", tu.CPU(1, 1)).StartedAt = api.Epoch.Add(-time.Hour)
	c.Task(rj, "new", api.Running, "n", tu.CPU(4, 1)).StartedAt = api.Epoch.Add(-10 * time.Second)
	c.Task(rj, "newer", api.Running, "n", tu.CPU(2, 1)).StartedAt = api.Epoch.Add(-5 * time.Second)
	c.Task(rj, "unstarted", api.Bound, "n", tu.CPU(1, 1))
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", tu.CPU(1, 1))
	cfg := config("metrics:\n  interval: 30s\n")
	at, ok := c.Open(t, cfg, builders).WakeUp()
	if want := api.Epoch.Add(20 * time.Second); !ok || !at.Equal(want) {
		t.Fatalf("wake-up %v %v, want %v", at, ok, want)
	}
	score := func(now time.Time) float64 {
		reg := framework.NewRegistry()
		reg.RegisterPlugin(Name, New)
		parsed, err := conf.Parse([]byte(cfg))
		if err != nil {
			t.Fatal(err)
		}
		ssn, err := framework.OpenSession(&c.Snap, parsed, reg, framework.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		s, _ := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"])
		return s
	}
	if score(at.Add(-time.Nanosecond)) == score(at) {
		t.Error("the score did not change at the wake-up")
	}
}

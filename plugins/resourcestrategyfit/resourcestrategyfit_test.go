package resourcestrategyfit

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

const gib = float64(1 << 30)

func config(args ...string) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: resource-strategy-fit\n"
	if len(args) > 0 {
		s += "    arguments:\n"
		for _, a := range args {
			s += "      " + a + "\n"
		}
	}
	return s
}

func args(t *testing.T, lines ...string) conf.Arguments {
	t.Helper()
	cfg, err := conf.Parse([]byte(config(lines...)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Tiers[0].Plugins[0].Arguments
}

func res(cpu, memGiB float64, scalars map[string]float64) api.Resource {
	m := map[string]float64{"cpu": cpu, "memory": memGiB * gib}
	for k, v := range scalars {
		m[k] = v
	}
	return tu.Res(m)
}

func TestArguments(t *testing.T) {
	s, err := parseSettings(nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.weight != 10 || fmt.Sprint(s.strategies.exact) != "map[cpu:{false 1} memory:{false 1}]" || s.sra.weight != 0 || s.proportional != nil {
		t.Errorf("defaults: %+v", s)
	}
	s, err = parseSettings(args(t,
		"resourceStrategyFitWeight: -3",
		"resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: Bogus, weight: 0}, 'nvidia.*': {}, 'nvidia.com/*': {type: MostAllocated}}",
		"sra: {enable: true, resources: ' nvidia.com/gpu, foo ,foo', weight: 5, resourceWeight: {foo: -2, nvidia.com/gpu: 3}}",
		"proportional: {enable: true, resources: 'z,nvidia.com/gpu', resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: -8}}",
	))
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(s.weight, s.strategies.exact, s.strategies.prefixes, s.sra, *s.proportional)
	want := "10 map[cpu:{false 1} nvidia.com/gpu:{true 2}] [{nvidia.com/ {true 1}} {nvidia. {false 1}}] " +
		"{5 [nvidia.com/gpu foo] [3 1] 5} {[nvidia.com/gpu z] [{4 1} {1 1}]}"
	if got != want {
		t.Errorf("settings:\n got %s\nwant %s", got, want)
	}
	if s, _ := parseSettings(args(t, "sra: {resources: gpu, weight: 5}", "proportional: {resources: gpu}")); s.sra.weight != 0 || s.proportional != nil {
		t.Errorf("disabled sections must be off: %+v", s)
	}

	bad := []struct{ line, mention string }{
		{"resourceStrategyFitWeight: heavy", ArgWeight},
		{"resources: [cpu]", ArgResources},
		{"resources: {cpu: LeastAllocated}", "cpu"},
		{"resources: {cpu: {weight: x}}", "resources.cpu"},
		{"resources: {'*': {}}", "*"},
		{"resources: {'a*b': {}}", "a*b"},
		{"resources: {'a**': {}}", "a**"},
		{"sra: {enable: maybe}", ArgSRA},
		{"sra: {enable: true, resources: gpu, resourceWeight: {gpu: x}}", "gpu"},
		{"proportional: {enable: true, resources: gpu, resourceProportion: {gpu.cpu: x}}", "gpu.cpu"},
		{"proportional: 1", ArgProportional},
	}
	for _, b := range bad {
		if _, err := New(args(t, b.line)); err == nil || !strings.Contains(err.Error(), b.mention) {
			t.Errorf("%s: error %v, want one naming %s", b.line, err, b.mention)
		}
	}
}

func TestNodeOrder(t *testing.T) {
	// The node offers 8 cpu, 16Gi and 4 GPUs; a running task holds 2 cpu, 4Gi and 2 GPUs.
	tests := []struct {
		name string
		args []string
		// req is the pending task's request.
		req  api.Resource
		want float64
	}{
		{"default: cpu and memory least allocated", nil, res(2, 4, nil), (0.5 + 0.5) / 2 * 1000},
		{"weight", []string{"resourceStrategyFitWeight: 1"}, res(2, 4, nil), 50},
		{"most allocated gpu with weight", []string{"resources: {nvidia.com/gpu: {type: MostAllocated, weight: 2}, cpu: {type: LeastAllocated}}"},
			res(2, 4, map[string]float64{"nvidia.com/gpu": 1}), (0.75*2 + 0.5) / 3 * 1000},
		{"a wildcard matches; the longest prefix wins", []string{"resources: {'nvidia.com/*': {type: MostAllocated}, 'nvidia.*': {type: LeastAllocated}}"},
			res(2, 4, map[string]float64{"nvidia.com/gpu": 1}), 0.75 * 1000},
		{"an exact name beats a wildcard", []string{"resources: {'nvidia.com/*': {type: MostAllocated}, nvidia.com/gpu: {type: LeastAllocated}}"},
			res(2, 4, map[string]float64{"nvidia.com/gpu": 1}), 0.25 * 1000},
		{"overflow scores 0", []string{"resources: {nvidia.com/gpu: {type: MostAllocated}}"},
			res(2, 4, map[string]float64{"nvidia.com/gpu": 3}), 0},
		{"a resource the node lacks counts its weight with no score", []string{"resources: {cpu: {type: MostAllocated}, example.com/fpga: {weight: 3}}"},
			res(2, 4, map[string]float64{"example.com/fpga": 1}), 0.5 / 4 * 1000},
		{"resources not requested are not scored", []string{"resources: {nvidia.com/gpu: {type: MostAllocated}}"}, res(2, 4, nil), 0},
		{"sra: a task without the scarce resource avoids the node", []string{"resourceStrategyFitWeight: 0", "sra: {enable: true, resources: nvidia.com/gpu, weight: 10}"},
			res(2, 4, nil), 0},
		{"sra partial: one of two scarce resources present", []string{"resourceStrategyFitWeight: 0", "sra: {enable: true, resources: 'nvidia.com/gpu,example.com/fpga', weight: 2, resourceWeight: {example.com/fpga: 3}}"},
			res(2, 4, nil), (1 - 1.0/4) * 200},
		{"sra: requested but missing resource scores 0", []string{"resourceStrategyFitWeight: 0", "sra: {enable: true, resources: example.com/fpga, weight: 2}"},
			res(2, 4, map[string]float64{"example.com/fpga": 1}), 0},
		{"sra adds to the strategy score", []string{"resourceStrategyFitWeight: 1", "sra: {enable: true, resources: example.com/fpga, weight: 2}"},
			res(2, 4, nil), 50 + 200},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("n", res(8, 16, map[string]float64{"nvidia.com/gpu": 4}))
			run := c.Job("run", "q", 1)
			c.Task(run, "r", api.Running, "n", res(2, 4, map[string]float64{"nvidia.com/gpu": 2}))
			j := c.Job("j", "q", 1)
			c.Task(j, "t", api.Pending, "", tc.req)
			ssn := c.Open(t, config(tc.args...), builders)
			got, err := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"])
			if err != nil || math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("score = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestNoNodeOrderWithoutWeights(t *testing.T) {
	c := tu.NewCluster()
	ssn := c.Open(t, config("resourceStrategyFitWeight: 0", "sra: {enable: true, resources: gpu}"), builders)
	if ssn.HasNodeOrder() || ssn.HasPredicates() {
		t.Error("callbacks registered although every weight is 0 and proportional is off")
	}
}

func TestProportional(t *testing.T) {
	// A GPU node of 16 cpu, 64Gi and 2 GPUs keeps 4 cores and 8 GB per idle GPU: 8 cores and
	// 16e9 bytes. The CPU node has no GPU and keeps nothing.
	prop := "proportional: {enable: true, resources: nvidia.com/gpu, resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}}"
	tests := []struct {
		name    string
		req     api.Resource
		wantGPU bool
	}{
		{"leaves exactly the reserve", res(8, 16, nil), true},
		{"eats into the cpu reserve", res(9, 1, nil), false},
		{"memory: 15Gi left is above 16e9 bytes", res(1, 49, nil), true},
		{"memory: 14Gi left is below 16e9 bytes", res(1, 50, nil), false},
		{"a GPU task is not checked", res(16, 64, map[string]float64{"nvidia.com/gpu": 1}), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("cpu", res(16, 64, nil))
			c.Node("gpu", res(16, 64, map[string]float64{"nvidia.com/gpu": 2}))
			j := c.Job("j", "q", 1)
			c.Task(j, "t", api.Pending, "", tc.req)
			ssn := c.Open(t, config(prop), builders)
			task := tu.TaskOf(t, ssn, "j", "t")
			if err := ssn.PredicateFn(task, ssn.Nodes["cpu"]); err != nil {
				t.Errorf("cpu node: %v", err)
			}
			err := ssn.PredicateFn(task, ssn.Nodes["gpu"])
			if (err == nil) != tc.wantGPU {
				t.Errorf("gpu node: %v, want fit %v", err, tc.wantGPU)
			}
			if fe, ok := err.(*api.FitError); err != nil && (!ok || fe.Code != api.UnschedulableAndUnresolvable || fe.Reasons[0] != "proportional of resource nvidia.com/gpu check failed") {
				t.Errorf("gpu node error: %#v", err)
			}
		})
	}
}

func TestAllocateBinpacksGPUs(t *testing.T) {
	// GPUs most allocated: the GPU tasks pack onto the fuller node g2 although g1 sorts first.
	c := tu.NewCluster()
	c.Queue("q", 1)
	gpu := map[string]float64{"nvidia.com/gpu": 8}
	c.Node("g1", res(64, 256, gpu))
	c.Node("g2", res(64, 256, gpu))
	run := c.Job("run", "q", 1)
	c.Task(run, "r", api.Running, "g2", res(1, 1, map[string]float64{"nvidia.com/gpu": 2}))
	j := c.Job("j", "q", 2)
	c.Tasks(j, "t", 2, api.Pending, "", res(1, 1, map[string]float64{"nvidia.com/gpu": 2}))
	ssn := c.Open(t, config("resources: {'nvidia.com/*': {type: MostAllocated, weight: 5}, cpu: {type: LeastAllocated}}"), builders)
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
	if want := map[string]string{"t-0": "g2", "t-1": "g2"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("binds = %v, want %v", got, want)
	}
}

func TestPerNodePathDoesNotAllocate(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n", res(8, 16, map[string]float64{"nvidia.com/gpu": 4}))
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", res(1, 1, map[string]float64{"nvidia.com/gpu": 1}))
	ssn := c.Open(t, config("resources: {'nvidia.com/*': {type: MostAllocated}, cpu: {}}",
		"sra: {enable: true, resources: nvidia.com/gpu, weight: 1}",
		"proportional: {enable: true, resources: nvidia.com/gpu}"), builders)
	task, n := tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"]
	_, _ = ssn.NodeOrderFn(task, n) // builds the task's plan
	if a := testing.AllocsPerRun(100, func() { _ = ssn.PredicateFn(task, n); _, _ = ssn.NodeOrderFn(task, n) }); a != 0 {
		t.Errorf("%v allocations per predicate and score", a)
	}
}

func TestConcurrentScoring(t *testing.T) {
	// Scores of different nodes may be computed concurrently; the plan cache must hold up
	// (run with -race).
	c := tu.NewCluster()
	c.Queue("q", 1)
	for i := range 8 {
		c.Node(fmt.Sprintf("n%d", i), res(8, 16, nil))
	}
	j := c.Job("j", "q", 1)
	c.Tasks(j, "t", 4, api.Pending, "", res(1, 1, nil))
	ssn := c.Open(t, config(), builders)
	tasks := tu.JobOf(t, ssn, "j").TasksIn(api.Pending)
	done := make(chan float64)
	for _, n := range ssn.NodeList {
		go func() {
			sum := 0.0
			for _, task := range tasks {
				s, _ := ssn.NodeOrderFn(task, n)
				sum += s
			}
			done <- sum
		}()
	}
	for range ssn.NodeList {
		if got := <-done; math.Abs(got-4*(7.0/8+15.0/16)/2*1000) > 1e-9 {
			t.Errorf("sum of scores = %v", got)
		}
	}
}

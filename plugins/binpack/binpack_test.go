package binpack

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

func config(args ...string) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: binpack\n"
	if len(args) > 0 {
		s += "    arguments:\n"
		for _, a := range args {
			s += "      " + a + "\n"
		}
	}
	return s
}

const gib = float64(1 << 30)

func res(cpu, memGiB, gpu float64) api.Resource {
	m := map[string]float64{"cpu": cpu, "memory": memGiB * gib}
	if gpu > 0 {
		m["nvidia.com/gpu"] = gpu
	}
	return tu.Res(m)
}

func TestNewArguments(t *testing.T) {
	p, err := New(conf.Arguments{ArgWeight: 10, ArgCPU: -3, ArgResources: " nvidia.com/gpu, foo ,", "binpack.resources.nvidia.com/gpu": "2", "binpack.resources.foo": -1})
	if err != nil {
		t.Fatal(err)
	}
	bp := p.(*plugin)
	if got := fmt.Sprint(bp.weight, bp.weights); got != "10 map[cpu:1 foo:1 memory:1 nvidia.com/gpu:2]" {
		t.Errorf("weights = %s", got)
	}
	for _, k := range []string{ArgWeight, ArgCPU, ArgMemory, "binpack.resources.x"} {
		args := conf.Arguments{k: "much", ArgResources: "x"}
		if _, err := New(args); err == nil || !strings.Contains(err.Error(), k) {
			t.Errorf("New with malformed %s: error %v", k, err)
		}
	}
	if _, err := New(conf.Arguments{ArgResources: map[string]any{}}); err == nil {
		t.Error("New accepted a mapping for binpack.resources")
	}
}

func TestScore(t *testing.T) {
	tests := []struct {
		name string
		args []string
		node api.Resource
		used api.Resource // a running task on the node
		task api.Resource
		want float64
	}{
		{"cpu and memory", []string{ArgWeight + ": 10"}, res(8, 32, 0), res(0, 1, 0), res(2, 1, 0), (2.0/8 + 2.0/32) / 2 * 1000},
		{"resource weights", []string{ArgCPU + ": 3", ArgMemory + ": 1"}, res(8, 32, 0), res(2, 0, 0), res(2, 8, 0), (3*4.0/8 + 8.0/32) / 4 * 100},
		{"extra resource", []string{ArgResources + ": nvidia.com/gpu", ArgResources + ".nvidia.com/gpu: 2"}, res(8, 32, 8), api.Resource{}, res(2, 0, 4), (2.0/8 + 2*4.0/8) / 3 * 100},
		{"unweighed resource is ignored", nil, res(8, 32, 8), api.Resource{}, res(2, 0, 4), 2.0 / 8 * 100},
		{"overflowing resource scores 0 but keeps its weight", nil, res(8, 32, 0), res(4, 0, 0), res(6, 16, 0), (0 + 16.0/32) / 2 * 100},
		{"resource the node lacks scores 0", []string{ArgResources + ": nvidia.com/gpu"}, res(8, 32, 0), api.Resource{}, res(4, 0, 1), (4.0/8 + 0) / 2 * 100},
		{"zero weight", []string{ArgMemory + ": 0"}, res(8, 32, 0), api.Resource{}, res(4, 16, 0), 4.0 / 8 * 100},
		{"best-effort task", nil, res(8, 32, 0), res(4, 4, 0), api.Resource{}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("n", tc.node)
			j := c.Job("j", "q", 1)
			c.Task(j, "used", api.Running, "n", tc.used)
			c.Task(j, "t", api.Pending, "", tc.task)
			ssn := c.Open(t, config(tc.args...), builders)
			got, err := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"])
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tc.want) > 1e-9 {
				t.Errorf("score = %g, want %g", got, tc.want)
			}
		})
	}
}

// TestPipelinedNotUsed checks that pipelined tasks do not count as used, as in Volcano.
func TestPipelinedNotUsed(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n", res(8, 32, 0))
	j := c.Job("j", "q", 1)
	c.Task(j, "pipe", api.Pipelined, "n", res(4, 0, 0))
	c.Task(j, "t", api.Pending, "", res(2, 0, 0))
	ssn := c.Open(t, config(), builders)
	if got, _ := ssn.NodeOrderFn(tu.TaskOf(t, ssn, "j", "t"), ssn.Nodes["n"]); got != 25 {
		t.Errorf("score = %g, want 25", got)
	}
}

// TestFillsFirstNode is the acceptance example: three 8-CPU nodes where n-0 already holds a
// 1Gi task; four 2-CPU tasks placed one by one all go to n-0.
func TestFillsFirstNode(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	for i := range 3 {
		c.Node(fmt.Sprint("n-", i), tu.Res(map[string]float64{"cpu": 8, "memory": 32 * gib, "pods": 110}))
	}
	resident := c.Job("resident", "q", 1)
	c.Task(resident, "resident-0", api.Running, "n-0", res(0, 1, 0))
	j := c.Job("j", "q", 1)
	c.Tasks(j, "t", 4, api.Pending, "", res(2, 1, 0))
	ssn := c.Open(t, config(ArgWeight+": 10"), builders)
	stmt := ssn.NewStatement()
	for i := range 4 {
		ti := tu.TaskOf(t, ssn, "j", fmt.Sprint("t-", i))
		var best *api.NodeInfo
		bestScore := -1.0
		for _, n := range ssn.NodeList {
			s, err := ssn.NodeOrderFn(ti, n)
			if err != nil {
				t.Fatal(err)
			}
			if s > bestScore {
				best, bestScore = n, s
			}
		}
		if best.Name != "n-0" {
			t.Fatalf("task %d goes to %s, want n-0", i, best.Name)
		}
		if err := stmt.Allocate(ti, best); err != nil {
			t.Fatal(err)
		}
	}
}

func TestZeroWeightRegistersNothing(t *testing.T) {
	c := tu.NewCluster()
	c.Node("n", res(8, 32, 0))
	ssn := c.Open(t, config(ArgWeight+": 0"), builders)
	if ssn.HasNodeOrder() {
		t.Error("binpack.weight 0 registered a node order callback")
	}
}

// BenchmarkScore measures one task scored on 1,000 nodes.
func BenchmarkScore(b *testing.B) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	for i := range 1000 {
		c.Node(fmt.Sprintf("n%04d", i), res(64, 256, 8))
	}
	j := c.Job("j", "q", 1)
	c.Task(j, "t", api.Pending, "", res(2, 4, 1))
	ssn := c.Open(b, config(ArgResources+": nvidia.com/gpu"), builders)
	ti := tu.TaskOf(b, ssn, "j", "t")
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for _, n := range ssn.NodeList {
			if _, err := ssn.NodeOrderFn(ti, n); err != nil {
				b.Fatal(err)
			}
		}
	}
}

package rescheduling

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/actions/shuffle"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

const lnuConf = `actions: "shuffle"
tiers:
- plugins:
  - name: rescheduling
    arguments:
      interval: 1m
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 20, memory: 20}
          targetThresholds: {cpu: 50, memory: 50}
`

func open(t *testing.T, c *tu.Cluster, config string) (*framework.Session, *framework.Registry) {
	t.Helper()
	cfg, err := conf.Parse([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	actions.Register(reg)
	ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: api.Epoch})
	if err != nil {
		t.Fatal(err)
	}
	return ssn, reg
}

func TestNewArguments(t *testing.T) {
	strategies := func(items ...any) conf.Arguments { return conf.Arguments{"strategies": items} }
	lnu := func(params map[string]any) map[string]any {
		return map[string]any{"name": LowNodeUtilization, "params": params}
	}
	tests := []struct {
		name       string
		args       conf.Arguments
		wantErr    string
		interval   time.Duration
		lowCPU     float64
		targetMem  float64
		strategies int
	}{
		{name: "defaults", interval: DefaultInterval, lowCPU: 100, targetMem: 100, strategies: 1},
		{name: "interval", args: conf.Arguments{"interval": "90s", "metricsPeriod": "5m"}, interval: 90 * time.Second, lowCPU: 100, targetMem: 100, strategies: 1},
		{name: "bad interval", args: conf.Arguments{"interval": "soon"}, wantErr: "interval"},
		{name: "bare number interval", args: conf.Arguments{"interval": 5}, wantErr: "interval"},
		{name: "thresholds", args: strategies(lnu(map[string]any{
			"thresholds": map[string]any{"cpu": 20, "memory": 25.5}, "targetThresholds": map[string]any{"memory": 60},
		})), interval: DefaultInterval, lowCPU: 20, targetMem: 60, strategies: 1},
		{name: "empty list is the default", args: strategies(), interval: DefaultInterval, lowCPU: 100, targetMem: 100, strategies: 1},
		{name: "unknown strategy", args: strategies(map[string]any{"name": "gpuFragmentation"}), wantErr: "unknown strategy"},
		{name: "strategy without name", args: strategies(map[string]any{"params": map[string]any{}}), wantErr: "name"},
		{name: "threshold not a number", args: strategies(lnu(map[string]any{"thresholds": map[string]any{"cpu": "20"}})), wantErr: "thresholds"},
		{name: "thresholds not a mapping", args: strategies(lnu(map[string]any{"targetThresholds": 50})), wantErr: "targetThresholds"},
		{name: "strategies not a list", args: conf.Arguments{"strategies": "lowNodeUtilization"}, wantErr: "strategies"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := New(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one naming %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			p := got.(*plugin)
			if p.interval != tc.interval || len(p.strategies) != tc.strategies {
				t.Fatalf("interval %v strategies %d", p.interval, len(p.strategies))
			}
			lnu := p.strategies[0].lnu
			if lnu.thresholds[api.ResourceCPU] != tc.lowCPU || lnu.targets[api.ResourceMemory] != tc.targetMem {
				t.Errorf("thresholds %v targets %v", lnu.thresholds, lnu.targets)
			}
		})
	}
}

type fakeLog map[string]time.Time

func (f fakeLog) LastRun(k string) (time.Time, bool) { t, ok := f[k]; return t, ok }
func (f fakeLog) SetLastRun(k string, at time.Time)  { f[k] = at }

func TestDueAt(t *testing.T) {
	log := fakeLog{}
	steps := []struct {
		after time.Duration
		want  bool
	}{
		{0, true},                 // nothing recorded yet
		{30 * time.Second, false}, // within the interval
		{time.Minute, false},      // Volcano runs only once strictly more than the interval passed
		{61 * time.Second, true},
		{2 * time.Minute, false},
		{2*time.Minute + 2*time.Second, true},
	}
	for _, s := range steps {
		if got := dueAt(log, time.Minute, api.Epoch.Add(s.after)); got != s.want {
			t.Errorf("at +%v: due %v, want %v", s.after, got, s.want)
		}
	}
}

// lnuCluster: nodes of 10 cpu and 10Gi. low (10%, 10%) is under-used; hot (90% cpu, 40%
// memory) and warm (60%, 60%) are over-used, hot the busier; mid (30%, 30%) is neither.
func lnuCluster() *tu.Cluster {
	c := tu.NewCluster()
	c.Queue("q", 1)
	for _, n := range []struct {
		name     string
		cpu, mem float64
	}{{"hot", 90, 40}, {"low", 10, 10}, {"mid", 30, 30}, {"warm", 60, 60}} {
		c.Node(n.name, tu.CPU(10, 10)).Usage = map[string]float64{"cpu": n.cpu, "memory": n.mem}
	}
	j := c.Job("j", "q", 1)
	j.Phase = api.JobRunning
	add := func(name, node string, res api.Resource, prio int32, started int) {
		task := c.Task(j, name, api.Running, node, res)
		task.Priority, task.HasPriority = prio, true
		task.StartedAt = api.Epoch.Add(time.Duration(started) * time.Second)
	}
	add("hot-a", "hot", tu.CPU(2, 1), 0, 1)
	add("hot-b", "hot", tu.CPU(1, 0), 10, 1)
	add("hot-be", "hot", api.Resource{}, 0, 1)
	add("hot-new", "hot", tu.CPU(1, 0), 0, 5) // started last: goes before hot-a
	add("warm-0", "warm", tu.CPU(2, 1), 0, 1)
	add("warm-1", "warm", tu.CPU(1, 1), 0, 2)
	add("warm-2", "warm", tu.CPU(1, 1), 5, 3)
	add("mid-0", "mid", tu.CPU(1, 1), 0, 1)
	return c
}

func TestLowNodeUtilization(t *testing.T) {
	tests := []struct {
		name  string
		setup func(c *tu.Cluster)
		// offer limits the offered tasks (nil: all running tasks).
		offer []string
		want  []string
	}{
		// Room on low: cpu 5000-1000 = 4000m, memory 5Gi-1Gi = 4Gi.
		// hot: hot-be (no room used), hot-new (room 3000m, cpu 80%), hot-a (1000m, 60%),
		// hot-b (0m, 50%) - then the room is exactly used up. warm gets nothing.
		{name: "victims from the busiest node first",
			want: []string{"hot-be", "hot-new", "hot-a", "hot-b"}},
		// hot-b is not offered: hot ends at 60% with 1000m of room left. On warm, warm-1 (the
		// most recent of priority 0) uses the room up exactly: cpu 50%, memory 50%, and the
		// zero room stops the eviction.
		{name: "unoffered tasks are skipped; used-up room stops",
			offer: []string{"hot-be", "hot-new", "hot-a", "warm-0", "warm-1", "warm-2"},
			want:  []string{"hot-be", "hot-new", "hot-a", "warm-1"}},
		// With warm-1 asking 2 cpu the room goes to -1000m, not zero: Volcano goes on while warm
		// is at its target (memory 50%), so warm-0 goes too (cpu 20%, memory 40%: stop).
		{name: "negative room goes on", setup: func(c *tu.Cluster) {
			c.Snap.Tasks[5].Resources = tu.CPU(2, 1)
		},
			offer: []string{"hot-be", "hot-new", "hot-a", "warm-0", "warm-1", "warm-2"},
			want:  []string{"hot-be", "hot-new", "hot-a", "warm-1", "warm-0"}},
		{name: "no under-used node", setup: func(c *tu.Cluster) {
			c.Snap.Nodes[1].Usage = map[string]float64{"cpu": 20, "memory": 10} // at the threshold
		}},
		{name: "a cordoned node is not under-used", setup: func(c *tu.Cluster) {
			c.Snap.Nodes[1].Unschedulable = true
		}},
		{name: "no over-used node", setup: func(c *tu.Cluster) {
			c.Snap.Nodes[0].Usage = map[string]float64{"cpu": 50, "memory": 50}
			c.Snap.Nodes[3].Usage = map[string]float64{"cpu": 50, "memory": 50}
		}},
		{name: "every node under-used", setup: func(c *tu.Cluster) {
			for _, n := range c.Snap.Nodes {
				n.Usage = map[string]float64{"cpu": 1, "memory": 1}
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := lnuCluster()
			if tc.setup != nil {
				tc.setup(c)
			}
			ssn, _ := open(t, c, lnuConf)
			var offered []*api.TaskInfo
			for _, task := range tu.JobOf(t, ssn, "j").SortedTasks() {
				if tc.offer == nil || slices.Contains(tc.offer, task.Name) {
					offered = append(offered, task)
				}
			}
			got := ssn.VictimTasks(offered)
			if names := tu.Names(got); !slices.Equal(names, tc.want) {
				t.Errorf("VictimTasks = %v, want %v", names, tc.want)
			}
			for _, v := range got {
				if !slices.Contains(offered, v) {
					t.Errorf("victim %s is not one of the offered tasks", v.Name)
				}
			}
		})
	}
}

func TestSortForEviction(t *testing.T) {
	mk := func(name string, prio int32, be bool, started int) *api.TaskInfo {
		t := &api.TaskInfo{UID: name, Name: name, Priority: prio, BestEffort: be}
		t.StartedAt = api.Epoch.Add(time.Duration(started) * time.Second)
		return t
	}
	ts := []*api.TaskInfo{
		mk("g-old", 0, false, 1), mk("g-new", 0, false, 9), mk("be-old", 0, true, 1),
		mk("be-new", 0, true, 9), mk("high", 5, true, 9), mk("b-tie", 0, false, 9),
	}
	sortForEviction(ts)
	want := []string{"be-new", "be-old", "b-tie", "g-new", "g-old", "high"}
	if got := tu.Names(ts); !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestShuffleEvictsVictims(t *testing.T) {
	ssn, reg := open(t, lnuCluster(), lnuConf)
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range ssn.Close().Decisions {
		if d.Kind != framework.DecisionEvict || d.Action != shuffle.Name {
			t.Errorf("unexpected decision %+v", d)
			continue
		}
		got = append(got, d.Task)
	}
	// hot-be is Running too and requests nothing; all four come off hot.
	if want := []string{"ns/hot-be", "ns/hot-new", "ns/hot-a", "ns/hot-b"}; !slices.Equal(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
}

func TestDefaultStrategyFindsNothing(t *testing.T) {
	ssn, _ := open(t, lnuCluster(), "actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: rescheduling\n")
	if got := ssn.VictimTasks(tu.JobOf(t, ssn, "j").SortedTasks()); len(got) != 0 {
		t.Errorf("the 100%% defaults never find an over-used node, got %v", tu.Names(got))
	}
}

// TestWakeUp: a cycle that ran the strategies names the moment they are due again, and
// cycles sharing its memory run them again from exactly then.
func TestWakeUp(t *testing.T) {
	cfg, err := conf.Parse([]byte(lnuConf))
	if err != nil {
		t.Fatal(err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	actions.Register(reg)
	mem := framework.NewMemory()
	evicts := func(now time.Time) (int, time.Time, bool) {
		ssn, err := framework.OpenSession(&lnuCluster().Snap, cfg, reg, framework.Options{Now: now, Memory: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := ssn.RunActions(reg); err != nil {
			t.Fatal(err)
		}
		r := ssn.Close()
		return len(r.Decisions), r.WakeAt, !r.WakeAt.IsZero()
	}
	n, at, ok := evicts(api.Epoch)
	if n == 0 || !ok || !at.Equal(api.Epoch.Add(time.Minute+time.Nanosecond)) {
		t.Fatalf("first cycle: %d evictions, wake-up %v (%v), want some and epoch+1m+1ns", n, at, ok)
	}
	if n, again, _ := evicts(at.Add(-time.Nanosecond)); n != 0 || !again.Equal(at) {
		t.Errorf("just before the wake-up: %d evictions, wake-up %v; want none and %v", n, again, at)
	}
	if n, _, _ := evicts(at); n == 0 {
		t.Error("at the wake-up the strategies did not run")
	}
}

package plugins_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
)

// decisions runs one dry-run cycle and renders its decisions.
func decisions(t *testing.T, st *state.Store, cfg *conf.Config) []string {
	t.Helper()
	eng, err := engine.New(st, engine.Options{Registry: registry(), DefaultConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	p, err := eng.Schedule(context.Background(), "c", engine.ScheduleRequest{Mode: engine.DryRun, Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range p.Result.Decisions {
		out = append(out, fmt.Sprintf("%s %s %s", d.Kind, d.Task, d.Node))
	}
	for _, j := range p.Result.Jobs {
		if j.Explanation != nil {
			out = append(out, j.Job+": "+j.Explanation.Summary)
		}
	}
	return out
}

// TestNodeCacheChangesNoDecision checks that reusing predicate answers and scores across
// tasks of a placement class never changes a plan: the same clusters scheduled with the cache
// on and off (allocate's predicateErrorCacheEnable) give identical decisions and explanations.
func TestNodeCacheChangesNoDecision(t *testing.T) {
	base := string(conf.Default().Raw())
	off := base + "\nconfigurations:\n- name: allocate\n  arguments:\n    predicateErrorCacheEnable: false\n"
	cfgOn, err := conf.Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	cfgOff, err := conf.Parse([]byte(off))
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(1); seed <= 6; seed++ {
		spec := synth.Spec{Seed: seed, Nodes: 40, Jobs: 60, TasksPerJob: int(1 + seed%5), Queues: int(1 + seed%3), Shapes: synth.Mixed}
		c, err := synth.Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		// Make the cluster contended: some nodes already half full, one cordoned, one releasing.
		st := state.New()
		if err := c.Load(st, "c"); err != nil {
			t.Fatal(err)
		}
		snap := st.Snapshot("c")
		var extra []state.Change
		for i, n := range snap.Nodes() {
			if i%7 == 3 {
				cordoned := *n
				cordoned.Unschedulable = true
				extra = append(extra, state.Change{Node: &cordoned})
			}
		}
		for i, task := range snap.Tasks() {
			if i%9 == 0 {
				r := *task
				r.Status = api.Running
				r.Node = snap.Nodes()[i%len(snap.Nodes())].Name
				if i%18 == 0 {
					r.Status = api.Releasing
				}
				extra = append(extra, state.Change{Task: &r})
			}
		}
		if _, err := st.Apply("c", state.Batch{Changes: extra}); err != nil {
			t.Fatal(err)
		}
		on, offD := decisions(t, st, cfgOn), decisions(t, st, cfgOff)
		if len(on) != len(offD) {
			t.Fatalf("seed %d: %d lines with the cache, %d without", seed, len(on), len(offD))
		}
		binds := 0
		for i := range on {
			if on[i] != offD[i] {
				t.Fatalf("seed %d: line %d differs:\n cache on:  %s\n cache off: %s", seed, i, on[i], offD[i])
			}
			if len(on[i]) > 4 && on[i][:4] == "bind" {
				binds++
			}
		}
		if binds == 0 {
			t.Fatalf("seed %d: nothing bound; the test would prove nothing", seed)
		}
	}
	_ = framework.DecisionBind
}

// TestEvictionNodesChangeNoDecision checks that preempt and reclaim choose the same nodes, in
// the same order, whether the tasks of a placement class share predicate answers and scores
// (util.EvictionNodes) or not (predicateErrorCacheEnable: false): contended clusters full of
// running low-priority work in one queue, with high-priority and other queues' gangs pending,
// some nodes tainted or cordoned, decide alike, decision by decision and explanation by
// explanation, and do evict.
func TestEvictionNodesChangeNoDecision(t *testing.T) {
	const tiers = `
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`
	for _, actions := range []string{"enqueue, allocate, preempt, backfill", "enqueue, allocate, reclaim, backfill", "allocate, preempt, reclaim"} {
		on := "actions: \"" + actions + "\"" + tiers
		off := on + "configurations:\n- name: preempt\n  arguments:\n    predicateErrorCacheEnable: false\n" +
			"- name: reclaim\n  arguments:\n    predicateErrorCacheEnable: false\n"
		cfgOn, err := conf.Parse([]byte(on))
		if err != nil {
			t.Fatal(err)
		}
		cfgOff, err := conf.Parse([]byte(off))
		if err != nil {
			t.Fatal(err)
		}
		evicted := 0
		for seed := uint64(1); seed <= 6; seed++ {
			st := contendedCluster(t, seed)
			a, b := decisions(t, st, cfgOn), decisions(t, st, cfgOff)
			if len(a) != len(b) {
				t.Fatalf("%s, seed %d: %d lines with the cache, %d without", actions, seed, len(a), len(b))
			}
			for i := range a {
				if a[i] != b[i] {
					t.Fatalf("%s, seed %d: line %d differs:\n cache on:  %s\n cache off: %s", actions, seed, i, a[i], b[i])
				}
				if len(a[i]) > 5 && a[i][:5] == "evict" {
					evicted++
				}
			}
		}
		if evicted == 0 {
			t.Errorf("%s: nothing evicted; the test would prove nothing", actions)
		}
	}
}

// contendedCluster: mixed nodes (some tainted, one in nine cordoned) filled with running gangs
// of low priority in queue q000 (elastic down to half), and pending gangs of higher priority in
// every queue, of several shapes; the queues have equal weights.
func contendedCluster(t *testing.T, seed uint64) *state.Store {
	t.Helper()
	c, err := synth.Generate(synth.Spec{Seed: seed, Nodes: 30, Jobs: 0, TasksPerJob: 1, Queues: 3, Shapes: synth.Mixed})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range c.Queues {
		q.Weight = 1
	}
	for i, n := range c.Nodes {
		switch i % 9 {
		case 4:
			n.Unschedulable = true
		case 7:
			n.Taints = []api.Taint{{Key: "dedicated", Value: "x", Effect: "NoSchedule"}}
		}
	}
	st := state.New()
	if err := c.Load(st, "c"); err != nil {
		t.Fatal(err)
	}
	// Running gangs of two sizes (so that an eviction frees more or less than its preemptor
	// takes, and scores move), placed round-robin on the schedulable, untainted nodes while
	// they have room.
	size := int(2 + seed%3)
	var jobs []*api.Job
	var tasks []*api.Task
	for k, req := range []api.Resource{*api.NewResource(map[string]float64{"cpu": 1, "memory": 2 << 30}),
		*api.NewResource(map[string]float64{"cpu": 3, "memory": 6 << 30})} {
		fill := synth.Gangs{Prefix: fmt.Sprintf("run-%d", k), Count: 60, Size: size, MinAvailable: max(1, size/2), Queues: []string{"q000"},
			Priority: 10, HasPriority: true, Request: req, CreatedAt: api.Epoch.Add(time.Duration(k) * time.Minute)}
		js, ts := fill.Generate()
		jobs, tasks = append(jobs, js...), append(tasks, ts...)
	}
	var changes []state.Change
	for _, j := range jobs {
		j.Phase = api.JobRunning
		changes = append(changes, state.Change{Job: j})
	}
	free := map[string]float64{}
	for _, n := range c.Nodes {
		free[n.Name] = n.Allocatable.MilliCPU
	}
	next := 0
	for i := range tasks {
		task := tasks[(i*7)%len(tasks)] // interleave the two sizes
		if len(tasks)%7 == 0 {
			task = tasks[i]
		}
		for tries := 0; tries < len(c.Nodes); tries++ {
			n := c.Nodes[next%len(c.Nodes)]
			next++
			if n.Unschedulable || len(n.Taints) > 0 || free[n.Name] < task.Resources.MilliCPU {
				continue
			}
			free[n.Name] -= task.Resources.MilliCPU
			task.Status, task.Node, task.StartedAt = api.Running, n.Name, api.Epoch
			break
		}
		if task.Status == api.Running {
			changes = append(changes, state.Change{Task: task})
		}
	}
	for i, q := range []string{"q000", "q001", "q002"} {
		for k, req := range []api.Resource{*api.NewResource(map[string]float64{"cpu": 2, "memory": 4 << 30}),
			*api.NewResource(map[string]float64{"cpu": 4, "memory": 8 << 30})} {
			g := synth.Gangs{Prefix: fmt.Sprintf("want-%d-%d", i, k), Count: 6, Size: 1 + int(seed+uint64(k))%3, Queues: []string{q},
				Priority: int32(100 * (1 + k)), HasPriority: true, Request: req, CreatedAt: api.Epoch.Add(time.Hour)}
			js, ts := g.Generate()
			for _, j := range js {
				changes = append(changes, state.Change{Job: j})
			}
			for _, task := range ts {
				changes = append(changes, state.Change{Task: task})
			}
		}
	}
	if _, err := st.Apply("c", state.Batch{Changes: changes}); err != nil {
		t.Fatal(err)
	}
	return st
}

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

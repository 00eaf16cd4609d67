package plugins_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
)

// TestPausesChangeNoDecision runs the same cycles with a pacer that pauses the cycle at every
// checkpoint (each pause asks for the next one) and without, with the built-in actions and
// plugins: the plans must be the same, decision by decision, and the cycle must have been
// paused all along (in the session's open, between actions and in the actions' loops).
func TestPausesChangeNoDecision(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		spec := synth.Spec{Seed: seed, Nodes: 30, Jobs: 80, TasksPerJob: int(2 + seed), Queues: 3, Shapes: synth.Mixed}
		c, err := synth.Generate(spec)
		if err != nil {
			t.Fatal(err)
		}
		st := state.New()
		if err := c.Load(st, "c"); err != nil {
			t.Fatal(err)
		}
		eng, err := engine.New(st, engine.Options{Registry: registry(), DefaultConfig: conf.Default()})
		if err != nil {
			t.Fatal(err)
		}
		run := func(p *framework.Pacer) []string {
			plan, err := eng.Schedule(context.Background(), "c", engine.ScheduleRequest{Mode: engine.DryRun, Now: time.Unix(0, 0), Pacer: p})
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, d := range plan.Result.Decisions {
				out = append(out, fmt.Sprintf("%v %s %s", d.Kind, d.Task, d.Node))
			}
			for _, j := range plan.Result.Jobs {
				out = append(out, fmt.Sprintf("job %s %v pending=%d", j.Job, j.Phase, j.Pending))
			}
			return out
		}
		plain := run(nil)
		var pauses int
		var p *framework.Pacer
		p = framework.NewPacer(func() {
			pauses++
			p.Request()
		})
		p.Request()
		paced := run(p)
		if !slices.Equal(plain, paced) {
			t.Fatalf("seed %d: the paused cycle decided differently:\nplain: %v\npaced: %v", seed, plain, paced)
		}
		// Every job and task of the actions' loops is a checkpoint, besides the open's.
		if pauses < len(c.Tasks) {
			t.Fatalf("seed %d: %d pauses for %d tasks: the cycle was not paused at its checkpoints", seed, pauses, len(c.Tasks))
		}
		if len(plain) == 0 {
			t.Fatalf("seed %d: no decision; the test would prove nothing", seed)
		}
	}
}

// TestPacerPausesOnlyWhenAsked: without a request the pause function is never called, and
// concurrent requests before a checkpoint make one pause.
func TestPacerPausesOnlyWhenAsked(t *testing.T) {
	c, err := synth.Generate(synth.Spec{Seed: 1, Nodes: 5, Jobs: 5, TasksPerJob: 2, Queues: 1, Shapes: synth.Uniform})
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	if err := c.Load(st, "c"); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Registry: registry(), DefaultConfig: conf.Default()})
	if err != nil {
		t.Fatal(err)
	}
	pauses := 0
	p := framework.NewPacer(func() { pauses++ })
	if _, err := eng.Schedule(context.Background(), "c", engine.ScheduleRequest{Mode: engine.DryRun, Pacer: p}); err != nil {
		t.Fatal(err)
	}
	if pauses != 0 {
		t.Fatalf("%d pauses without a request", pauses)
	}
	p.Request()
	p.Request()
	if _, err := eng.Schedule(context.Background(), "c", engine.ScheduleRequest{Mode: engine.DryRun, Pacer: p}); err != nil {
		t.Fatal(err)
	}
	if pauses != 1 {
		t.Fatalf("%d pauses after two requests before a checkpoint, want 1", pauses)
	}
}

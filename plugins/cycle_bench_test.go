package plugins_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
)

func registry() *framework.Registry { return builtin.Registry() }

// benchCycle measures one full dry-run Schedule cycle (snapshot, session, actions, plan) on a
// generated cluster with the embedded default configuration.
func benchCycle(b *testing.B, spec synth.Spec) { benchCycleConfig(b, spec, conf.Default()) }

// w1Config is ../shared/bench/w1-config.yaml: the tiers used to measure Volcano side by side.
const w1Config = `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`

func benchCycleConfig(b *testing.B, spec synth.Spec, cfg *conf.Config) {
	c, err := synth.Generate(spec)
	if err != nil {
		b.Fatal(err)
	}
	st := state.New()
	if err := c.Load(st, "bench"); err != nil {
		b.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Registry: registry(), DefaultConfig: cfg})
	if err != nil {
		b.Fatal(err)
	}
	tasks := len(c.Tasks)
	b.ResetTimer()
	var placed int
	for i := 0; i < b.N; i++ {
		p, err := eng.Schedule(context.Background(), "bench", engine.ScheduleRequest{Mode: engine.DryRun, Now: time.Unix(0, 0)})
		if err != nil {
			b.Fatal(err)
		}
		placed = 0
		for _, d := range p.Result.Decisions {
			if d.Kind == framework.DecisionBind {
				placed++
			}
		}
	}
	b.StopTimer()
	if placed != tasks {
		b.Fatalf("placed %d of %d tasks", placed, tasks)
	}
	b.ReportMetric(float64(tasks)*float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkAllocateCycle is issue 3's benchmark: 1,000 nodes, 1,000 gangs of 10 tasks, one
// queue, the default plugins. Smaller sizes show how the cycle scales.
func BenchmarkAllocateCycle(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("nodes=%d/jobs=%d", n, n), func(b *testing.B) {
			benchCycle(b, synth.Spec{Seed: 1, Nodes: n, Jobs: n, TasksPerJob: 10, Queues: 1, Shapes: synth.Uniform})
		})
	}
}

// BenchmarkW1 is workload W1 of BENCHMARKS.md: 1,000 nodes, 1,000 gangs of 10, one queue,
// the W1 configuration.
func BenchmarkW1(b *testing.B) {
	cfg, err := conf.Parse([]byte(w1Config))
	if err != nil {
		b.Fatal(err)
	}
	benchCycleConfig(b, synth.Spec{Seed: 1, Nodes: 1000, Jobs: 1000, TasksPerJob: 10, Queues: 1, Shapes: synth.Uniform}, cfg)
}

// BenchmarkW2 is workload W2 of BENCHMARKS.md: 5,000 nodes, 5,000 gangs of 10 in 20 queues,
// mixed shapes, the embedded default configuration. Not every task fits, so it reports the
// cycle time and the placed count rather than requiring all placed.
func BenchmarkW2(b *testing.B) {
	spec := synth.Spec{Seed: 1, Nodes: 5000, Jobs: 5000, TasksPerJob: 10, Queues: 20, Shapes: synth.Mixed}
	c, err := synth.Generate(spec)
	if err != nil {
		b.Fatal(err)
	}
	st := state.New()
	if err := c.Load(st, "bench"); err != nil {
		b.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Registry: registry(), DefaultConfig: conf.Default()})
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	placed := 0
	for i := 0; i < b.N; i++ {
		p, err := eng.Schedule(context.Background(), "bench", engine.ScheduleRequest{Mode: engine.DryRun, Now: time.Unix(0, 0)})
		if err != nil {
			b.Fatal(err)
		}
		placed = 0
		for _, d := range p.Result.Decisions {
			if d.Kind == framework.DecisionBind {
				placed++
			}
		}
	}
	b.ReportMetric(float64(placed), "placed")
}

package main

import (
	"context"
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
)

// Bench workloads (--workload).
const (
	// wlPending: every generated job pending, nothing running (the default; W1, W2).
	wlPending = "pending"
	// wlSteadyIdle: the generated jobs bound by a committed first plan, nothing pending.
	wlSteadyIdle = "steady-idle"
	// wlSteadyArrivals: steady-idle, then --arrivals new gangs arrive as deltas before each
	// cycle, and each cycle's plan is committed.
	wlSteadyArrivals = "steady-arrivals"
	// wlPreempt: nodes full of low-priority running gangs, --arrivals high-priority gangs that
	// run only by preempting.
	wlPreempt = "preempt"
	// wlReclaim: 4 queues of equal weight, the first holding every node, the others with
	// --arrivals pending gangs between them.
	wlReclaim = "reclaim"
	// wlBigJob: one job of --tasks-per-job tasks.
	wlBigJob = "big-job"
)

// workloads lists the workloads in the order the help text gives them.
var workloads = []string{wlPending, wlSteadyIdle, wlSteadyArrivals, wlPreempt, wlReclaim, wlBigJob}

// Priorities of the preempt workload's jobs.
const (
	lowPriority  = 10
	highPriority = 1000
)

// preemptConfig is the preempt workload's configuration when --config gives none: Volcano's
// default tiers with preempt after allocate.
const preemptConfig = `actions: "enqueue, allocate, preempt, backfill"
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

// reclaimConfig is the reclaim workload's configuration when --config gives none: Volcano's
// default tiers with reclaim after allocate.
const reclaimConfig = `actions: "enqueue, allocate, reclaim, backfill"
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

// workloadConfig returns the embedded configuration of a workload that needs one, else nil.
func workloadConfig(w string) []byte {
	switch w {
	case wlPreempt:
		return []byte(preemptConfig)
	case wlReclaim:
		return []byte(reclaimConfig)
	}
	return nil
}

// repeatable reports whether every measured cycle of the workload sees the same state, so
// that each must decide as the first did.
func repeatable(w string) bool { return w != wlSteadyArrivals }

// checkWorkload validates the workload flags and adjusts the spec to the workload.
func checkWorkload(o *benchOptions) error {
	known := false
	for _, w := range workloads {
		known = known || w == o.workload
	}
	switch {
	case !known:
		return fmt.Errorf("--workload must be one of %v, got %q", workloads, o.workload)
	case o.arrivals < 0:
		return fmt.Errorf("--arrivals must not be negative, got %d", o.arrivals)
	case o.grpc && o.workload != wlPending && o.workload != wlBigJob:
		return fmt.Errorf("--grpc is supported with --workload %s and %s only", wlPending, wlBigJob)
	case o.watch && (o.workload != wlSteadyArrivals || o.grpc):
		return fmt.Errorf("--watch is supported with --workload %s (and without --grpc) only", wlSteadyArrivals)
	case o.watch && o.arrivals < 1:
		return fmt.Errorf("--watch needs --arrivals of at least 1")
	}
	switch o.workload {
	case wlBigJob:
		o.spec.Jobs = 1
	case wlPreempt, wlReclaim:
		// The running gangs are generated to fill the nodes; see prepare.
		o.spec.Jobs = 0
		if o.workload == wlReclaim {
			o.spec.Queues = 4
		}
	}
	return nil
}

// prepare brings the store to the workload's starting state before the warm-up cycle: the
// generated jobs bound by a committed plan (steady-*), or nodes full of running gangs and the
// arrivals that must evict them (preempt, reclaim).
func (b *benchRun) prepare(ctx context.Context) error {
	st := b.st
	w := b.o.workload
	if w == wlPending || w == wlBigJob {
		return nil
	}
	start := time.Now()
	var queues []string
	for _, q := range b.c.Queues {
		queues = append(queues, q.Name)
	}
	switch w {
	case wlPreempt, wlReclaim:
		// Running gangs that fill every node, elastic down to half their size (gang lets
		// a victim go only while its job keeps more than minAvailable ready tasks).
		size := b.o.spec.TasksPerJob
		fill := synth.Gangs{Prefix: "run", Count: b.c.Slots(synth.Gangs{}.Request) / size, Size: size,
			MinAvailable: max(1, size/2), Queues: queues, Priority: lowPriority, HasPriority: true, CreatedAt: b.c.Now()}
		if w == wlReclaim {
			fill.Queues = queues[:1]
		}
		if _, err := st.Apply(b.cluster, b.c.Add(fill)); err != nil {
			return fmt.Errorf("bench: %s: running gangs: %w", w, err)
		}
	}
	plan, err := b.eng.Schedule(ctx, b.cluster, engine.ScheduleRequest{Mode: engine.AutoCommit, Now: b.c.Now()})
	if err != nil {
		return fmt.Errorf("bench: %s: first plan: %w", w, err)
	}
	bound := len(plan.Commit.Applied)
	if err := b.markRunning(plan); err != nil {
		return err
	}
	switch w {
	case wlPreempt:
		g := synth.Gangs{Prefix: "high", Count: b.o.arrivals, Size: b.o.spec.TasksPerJob, Queues: queues,
			Priority: highPriority, HasPriority: true, CreatedAt: b.c.Now()}
		if _, err := st.Apply(b.cluster, b.c.Add(g)); err != nil {
			return fmt.Errorf("bench: %s: arrivals: %w", w, err)
		}
	case wlReclaim:
		g := synth.Gangs{Prefix: "want", Count: b.o.arrivals, Size: b.o.spec.TasksPerJob, Queues: queues[1:],
			CreatedAt: b.c.Now()}
		if _, err := st.Apply(b.cluster, b.c.Add(g)); err != nil {
			return fmt.Errorf("bench: %s: arrivals: %w", w, err)
		}
	}
	b.now = b.c.Now()
	b.printf("prepare workload=%s bound=%d jobs=%d tasks=%d prepare_s=%.3f\n", w, bound, len(b.c.Jobs), len(b.c.Tasks), time.Since(start).Seconds())
	return nil
}

// arrive adds the next cycle's arrivals (steady-arrivals only) and returns how long the store
// took to apply them.
func (b *benchRun) arrive(cycle int) (time.Duration, error) {
	if b.o.workload != wlSteadyArrivals || b.o.arrivals == 0 {
		return 0, nil
	}
	var queues []string
	for _, q := range b.c.Queues {
		queues = append(queues, q.Name)
	}
	g := synth.Gangs{Prefix: fmt.Sprintf("arrive-%03d", cycle), Count: b.o.arrivals, Size: b.o.spec.TasksPerJob,
		Queues: queues, CreatedAt: b.c.Now()}
	batch := b.c.Add(g)
	start := time.Now()
	if _, err := b.st.Apply(b.cluster, batch); err != nil {
		return 0, fmt.Errorf("bench: arrivals of cycle %d: %w", cycle, err)
	}
	d := time.Since(start)
	b.now = b.c.Now()
	return d, nil
}

// parseWorkloadConfig returns the configuration the workload runs with: --config's, else the
// workload's own, else nil (the engine's default).
func (b *benchRun) parseWorkloadConfig() error {
	if b.cfg != nil {
		return nil
	}
	text := workloadConfig(b.o.workload)
	if text == nil {
		return nil
	}
	cfg, err := conf.Parse(text)
	if err == nil {
		err = b.reg.Validate(cfg)
	}
	if err != nil {
		return fmt.Errorf("bench: the %s workload's configuration: %w", b.o.workload, err)
	}
	b.cfg, b.cfgText = cfg, text
	return nil
}

// markRunning reports, as a resource manager would once it carried the plan out, every task
// the committed plan bound as Running on its node and every job with a bound task as Running
// (reclaim takes only Running tasks as victims).
func (b *benchRun) markRunning(plan *engine.Plan) error {
	tasks := make(map[string]*api.Task, len(b.c.Tasks))
	for _, t := range b.c.Tasks {
		tasks[t.Key()] = t
	}
	jobs := make(map[string]*api.Job, len(b.c.Jobs))
	for _, j := range b.c.Jobs {
		jobs[j.Key()] = j
	}
	var batch state.Batch
	flush := func() error {
		if len(batch.Changes) == 0 {
			return nil
		}
		_, err := b.st.Apply(b.cluster, batch)
		batch.Changes = batch.Changes[:0]
		return err
	}
	started := map[string]bool{}
	for _, d := range plan.Commit.Applied {
		t, ok := tasks[d.Task]
		if d.Kind != framework.DecisionBind || !ok {
			continue
		}
		if j := jobs[d.Job]; j != nil && !started[d.Job] {
			started[d.Job] = true
			run := *j
			run.Phase = api.JobRunning
			batch.Changes = append(batch.Changes, state.Change{Job: &run})
		}
		run := *t
		run.Status, run.Node, run.DeviceIDs, run.StartedAt = api.Running, d.Node, d.DeviceIDs, b.c.Now()
		batch.Changes = append(batch.Changes, state.Change{Task: &run})
		if len(batch.Changes) >= 5000 {
			if err := flush(); err != nil {
				return fmt.Errorf("bench: mark running: %w", err)
			}
		}
	}
	if err := flush(); err != nil {
		return fmt.Errorf("bench: mark running: %w", err)
	}
	return nil
}

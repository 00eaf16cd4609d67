package sim

import (
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Config is one scheduler configuration to simulate.
type Config struct {
	// Name labels the configuration's results.
	Name string
	// Scheduler is the scheduler configuration (Volcano's scheduler-conf).
	Scheduler *conf.Config
	// Queues replace the cluster's queues of the same names for this configuration (to
	// compare queue weights, capabilities, ...); a queue the cluster lacks is added.
	Queues []*api.Queue
}

// Options tune a simulation.
type Options struct {
	// Registry holds the actions and plugins; required.
	Registry *framework.Registry
	// Period, when positive, adds a cycle every Period of virtual time while jobs wait or
	// run, for time-based plugins (cycles also run after every event).
	Period time.Duration
	// ReleaseDelay is how long an evicted task takes to stop: its resources are held until
	// then, when it returns to Pending (see the package documentation). Negative means 0.
	ReleaseDelay time.Duration
	// BackgroundRuntime is how long the jobs already in the cluster keep running; 0 means
	// for the whole simulation.
	BackgroundRuntime time.Duration
	// Progress, if set, is called about every ProgressEvery of wall time (default 1s).
	Progress      func(Progress)
	ProgressEvery time.Duration
	// MaxCyclesPerInstant bounds the cycles at one virtual instant (releases without delay
	// can chain cycles); 0 means 1000.
	MaxCyclesPerInstant int
}

// Progress is where a running simulation is.
type Progress struct {
	Config      string
	VirtualTime time.Duration
	JobsDone    int
	JobsTotal   int
	Cycles      int
	Wall        time.Duration
}

// Rate is the jobs finished per second of wall time.
func (p Progress) Rate() float64 {
	if p.Wall <= 0 {
		return 0
	}
	return float64(p.JobsDone) / p.Wall.Seconds()
}

// ETA estimates the wall time left from the jobs done so far.
func (p Progress) ETA() time.Duration {
	if p.JobsDone == 0 {
		return 0
	}
	left := float64(p.JobsTotal-p.JobsDone) / float64(p.JobsDone)
	return time.Duration(left * float64(p.Wall))
}

// Result is what one configuration did with the trace.
type Result struct {
	Config string
	// Jobs are the trace's jobs in trace order, with what happened to them.
	Jobs []JobRecord
	// Queues are the queues' names, sorted; Resources the resources measured (cpu, memory,
	// then the cluster's other resources, sorted).
	Queues    []string
	Resources []string
	// Nodes counts the cluster's nodes.
	Nodes int
	// Capacity is the cluster's allocatable amount of each resource (Resources order, in
	// the units Unit divides).
	Capacity []int64
	// Steps is the cluster's state over time: one step per instant at which it changed.
	Steps []Step
	// Cycles counts scheduling cycles; Binds, Evictions and Rejected the plans' decisions
	// (Rejected: refused by the commit, which a simulation never expects).
	Cycles, Binds, Evictions, Rejected int
	// Background counts the jobs the cluster already held.
	Background int
	// End is the virtual time of the last event.
	End time.Duration
	// Wall is how long the simulation took (not part of any output: outputs are
	// deterministic).
	Wall time.Duration
}

// JobRecord is one job's life in a simulation.
type JobRecord struct {
	Job *Job
	// Started is false for a job that never ran to its end.
	Started, Finished bool
	// Start is its first start, LastStart its last (after evictions), End its end.
	Start, LastStart, End time.Duration
	// Wait is the time it spent waiting: from submit to its first start, plus from each
	// stop after an eviction to its next start.
	Wait time.Duration
	// Evictions counts its evicted tasks; Restarts the times it was stopped and started over.
	Evictions, Restarts int
	// NeverFits says why a job that never started can never run on the cluster (larger
	// than it); Reason is, for another job that never started, the engine's explanation in
	// the last cycle.
	NeverFits, Reason string
}

// Step is the cluster's state from At until the next step.
type Step struct {
	At time.Duration
	// Allocated is, per queue (Result.Queues order) and resource, what its running tasks
	// hold (in the units Unit divides).
	Allocated [][]int64
	// Deserved and Share are the queues' figures from the last cycle (zero when no plugin
	// computes them).
	Deserved [][]int64
	Share    []float64
	// Pending and Running count the trace's jobs waiting and running, per queue.
	Pending, Running []int
}

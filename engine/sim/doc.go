// Package sim replays a workload trace in virtual time through Sluice's own engine, to see
// what a scheduler configuration does to waits, utilization and fairness before it runs on
// a real cluster.
//
// # The engine, not a copy of it
//
// Each configuration gets a private state.Store and engine.Engine in this process (with the
// registry the caller passes: the engine never imports plugins). The simulator plays the
// resource manager: it writes arrivals and completions as delta batches, asks for a cycle in
// auto-commit mode, and carries the committed plan out. Every decision a simulation reports
// is one the engine made and the store accepted.
//
// # Virtual time
//
// Time is the trace's, from 0; the cycles' clock is api.Epoch plus it. Events are handled in
// time order, and at one instant in this order: releases of evicted tasks, completions (the
// job and its tasks are deleted), arrivals (the job, phase Pending, and its tasks are
// upserted; its minResources are its gang's requests, as Volcano's job controller sets them,
// so that the enqueue action admits it only when it fits). Then one cycle runs, and its plan
// is committed. Cycles run only after events, and, with Options.Period, also every Period
// while jobs wait or run (for time-based plugins); there is no cycle after the last event.
//
// A bound task runs at once (the simulator reports it Running at the bind's instant). A job
// starts when MinAvailable of its tasks run (for a trace job, every task unless the trace says
// otherwise), and ends Duration later.
//
// # Evictions
//
// An evicted task keeps its resources (Releasing) for Options.ReleaseDelay, as a task that is
// being stopped does, then returns to Pending: its node is free and it waits to be placed
// again. If its job then has fewer running tasks than its gang, the job stops: its other
// tasks return to Pending too, its completion is cancelled, and once it is placed again it
// runs its whole Duration from the start (no checkpoint). Its wait counts from submission to
// the first start plus every stop to the next start; JobRecord counts its evictions and
// restarts. A job that keeps its gang running goes on and ends on time; its evicted tasks
// wait to be placed again.
//
// # Traces
//
// ReadSWF reads the Standard Workload Format 2.2 (the Parallel Workloads Archive's); ReadNative
// reads Sluice's own format, JSON lines or YAML (see native.go). GenerateSWF writes synthetic
// traces of the kind of ../shared/traces/synthetic-2k.swf.
//
// # Results
//
// Run returns a Result per configuration: every job's life and the cluster's state over time
// (Steps). WriteJobsCSV, WriteTimelineCSV and WriteSummaryJSON write jobs.csv, timeline.csv and
// summary.json; engine/sim/report renders report.html. The same inputs give byte-identical
// outputs: the engine breaks ties by name, the simulator handles an instant's events in a
// fixed order, and every number is formatted the same way.
//
// Check looks at the inputs before a run: a queue or priority class the cluster lacks, an
// invalid configuration or a cluster the store refuses are errors; a job larger than the
// cluster is a warning (it never starts, and the summary lists it, with the reason).
package sim

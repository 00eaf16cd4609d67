// Package api is Sluice's domain model: resources with Volcano's comparison semantics, the
// immutable objects a resource manager streams in (nodes, queues, jobs, tasks, ...), and the
// mutable per-session views the scheduler works on (TaskInfo, JobInfo, NodeInfo, QueueInfo).
//
// The package imports only the standard library. Everything that iterates over maps in a way
// that could change a decision offers a name-sorted variant, so a plan never depends on Go's
// map order.
package api

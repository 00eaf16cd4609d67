// Package usage is Volcano's load-aware usage plugin: it keeps tasks off nodes whose reported
// utilisation is above a threshold and prefers nodes with less load.
//
// A node's load is api.Node.Usage, utilisation in percent per resource ("cpu", "memory") as
// the resource manager reports it. Sluice has no metrics source and takes the report as
// fresh; a node without a report is treated as Volcano treats a node whose metrics are
// missing or stale: it passes the predicate and scores 0.
//
// Registered callbacks (as in Volcano):
//   - Predicate: a node whose reported cpu usage exceeds thresholds.cpu, or memory usage
//     exceeds thresholds.mem, is UnschedulableAndUnresolvable. Only the reported load counts.
//   - NodeOrder: score = ((1-cpu)·cpu.weight + (1-mem)·memory.weight) / (cpu.weight +
//     memory.weight) · 100 · usage.weight, where cpu and mem are composite utilisations in
//     [0, 1]: the reported load plus a "shadow" estimate of tasks the report cannot see yet,
//     over the node's capacity.
//   - Allocate/Deallocate events add and remove shadow estimates.
//
// Shadow estimates. When the session opens, every task on a node that is Allocated, Binding or
// Bound, or Running and started less than the metrics interval ago (or with no start time), is
// a shadow task; so is every task allocated or pipelined during the session. A task's estimate
// per dimension is request·estimator.request_ratio (capped at the request; Sluice has no
// limits, so the burst share is always 0), or estimator.be_cpu / be_mem for a task that
// requests nothing, times estimator.risk_factor when the node's composite load (weighted as
// the score) is at least estimator.risk_threshold. Deallocation removes exactly what was added.
// Nodes and tasks are visited in name order so the estimates are reproducible.
//
// Arguments (Volcano's names and defaults): usage.weight (5), cpu.weight (1), memory.weight
// (1), thresholds: {cpu: 80, mem: 80} in [0, 100] (memory is accepted for mem), estimator:
// {request_ratio: 0.7, burst_ratio: 0, risk_threshold: 0.6 (all in [0, 1]), risk_factor: 1.2
// (at least 1), be_cpu: 250m, be_mem: 200Mi (be_memory is accepted too)}. The metrics
// interval is the configuration's metrics.interval (a duration), 30s by default.
package usage

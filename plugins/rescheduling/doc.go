// Package rescheduling is Volcano's rescheduling plugin: every interval it chooses running
// tasks to evict so that the next cycles place them better. The shuffle action offers the
// running tasks and evicts what the plugin chooses.
//
// The one strategy, lowNodeUtilization, uses each node's recent utilisation (api.Node.Usage,
// percent of cpu and memory; a missing figure counts as 0). A node is under-used when it is
// schedulable and every usage is below its threshold, over-used when some usage is above its
// target threshold. When there are both kinds (and not every node is under-used), the room the
// under-used nodes have up to their target thresholds is summed (milli-cpu and bytes); then,
// from the busiest over-used node (cpu + memory percent) down, tasks are taken in eviction
// order (lower priority first, best-effort first, the most recently started first, then by
// name), each lowering its node's usage and the room, while the node is still at or above a
// target threshold and no room dimension is exactly zero (as in Volcano, a negative room does
// not stop it). Only offered tasks are chosen.
//
// Registered callbacks:
//   - VictimTasks: the tasks the strategies choose (each once); registered only in the sessions
//     where the strategies are due.
//
// Arguments (Volcano's): interval (a Go duration, default 5m; the strategies run once more
// than that has passed since they last ran), metricsPeriod (accepted and ignored), strategies
// (a list of {name, params}; default lowNodeUtilization). lowNodeUtilization's params are
// thresholds and targetThresholds, mappings of cpu and memory to percent (default 100).
//
// The interval needs a memory across cycles. Volcano keeps the last run time in a package
// variable, starting from the scheduler's start; Sluice keeps no per-plugin state across
// sessions, so the plugin asks the session for it (LastRun/SetLastRun, see runLog) and, while
// the session offers none, runs in every session. Other differences from Volcano: nodes, tasks
// and ties are ordered by name; Kubernetes' Burstable and Guaranteed classes are one class
// (Sluice tasks have requests, no limits); the tasks' start time stands for the pods' creation
// time; an unknown strategy name is a configuration error.
package rescheduling

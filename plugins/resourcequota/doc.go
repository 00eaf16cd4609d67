// Package resourcequota is Volcano's resourcequota plugin: a job is not enqueued when its
// minResources would take its namespace over a quota.
//
// Registered callback (as in Volcano):
//   - JobEnqueueable. A job without minResources is permitted. Otherwise, for each quota of
//     the job's namespace (ssn.Quotas), only the dimensions that both the quota and the job's
//     minResources name are checked: used + pending + minResources must stay at or below the
//     quota's hard amount. Used is what the namespace's tasks on nodes request (Running,
//     Bound, Binding, Allocated, and Releasing ones, which still hold their node); pending is
//     the minResources of the namespace's jobs this plugin permitted earlier in the cycle. A
//     rejection records the reason as the job's explanation; a permit adds the job's whole
//     minResources to pending.
//
// A quota's hard amount names its dimensions by being set: cpu and memory when positive (an
// explicit 0 cannot be told from "not limited" in api.Resource), pods when positive, and any
// scalar resource present in the quota, even at 0. Volcano compares quantities exactly; here
// amounts are compared in milli-units (bytes for memory) with a tolerance of 10^-6.
//
// The plugin takes no arguments and, like Volcano, keeps no accounting of allocations within
// the cycle: tasks placed by allocate are counted from the next cycle on, when they run.
package resourcequota

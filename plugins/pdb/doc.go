// Package pdb is Volcano's pdb plugin: evictions never take a task whose disruption budget is
// spent. Volcano reads Kubernetes PodDisruptionBudgets; Sluice reads the session's disruption
// budgets (ssn.Budgets): a namespace, a label selector over task labels, and minAvailable or
// maxUnavailable as an integer or a percentage.
//
// A budget covers the tasks of its namespace whose labels carry every selector label (an empty
// selector covers nothing). It allows, as Kubernetes' disruption controller computes it,
// healthy - desired disruptions, never fewer than zero, where healthy counts the covered tasks
// that are Running, and desired is minAvailable, or expected - maxUnavailable with expected the
// covered tasks that have not finished (percentages of expected round up).
//
// Registered callbacks, all the same filter (as in Volcano):
//   - Preemptable, Reclaimable: keep, in the given order, each candidate whose eviction
//     overdraws no budget covering it; each candidate counts against every budget covering it,
//     kept or not. Always decides (Permit).
//   - VictimTasks: the same filter over the tasks offered (shuffle).
//
// Differences from Volcano, both so that evictions never break a budget:
//   - Volcano starts every call from the budgets' status as the API server last computed it,
//     so successive calls in one cycle may together overdraw a budget. Here the allowance is
//     computed at each call from the tasks' current statuses: a task evicted earlier in the
//     session is Releasing, no longer healthy, and uses up its budget.
//   - Volcano's filter skips a task without labels instead of keeping it (in Kubernetes every
//     Volcano pod has labels, so this never shows). Here such a task is covered by no budget
//     and kept.
//
// The plugin takes no arguments.
package pdb

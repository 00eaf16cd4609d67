// Package drf is Volcano's dominant resource fairness plugin: a job's share is the largest, over
// the cluster's resources, of what the job holds divided by the cluster total, and jobs with a
// smaller share go first.
//
// Registered callbacks (as in Volcano's flat mode):
//   - JobOrder: smaller dominant share first.
//   - Preemptable: a candidate is a victim when the preemptor's job share, with the preemptor
//     added, is below (or within 1e-6 of) the candidate's job share with the candidate and the
//     victims of its job chosen before it removed. Always decides (Permit).
//   - Event handlers: allocate and deallocate update the job's share at once.
//
// Not implemented: hierarchical DRF (enableHierarchy), which in Volcano adds a queue order and
// a reclaimable callback over the queues' hierarchy annotations. With enableHierarchy set the
// plugin logs a warning and behaves as in flat mode. Namespace order, obsolete in Volcano, is not
// implemented either.
package drf

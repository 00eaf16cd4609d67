// Package drf is Volcano's dominant resource fairness plugin: a job's share is the largest, over
// the cluster's resources, of what the job holds divided by the cluster total, and jobs with a
// smaller share go first.
//
// Registered callbacks (as in Volcano):
//   - JobOrder: smaller dominant share first.
//   - Preemptable: a candidate is a victim when the preemptor's job share, with the preemptor
//     added, is below (or within 1e-6 of) the candidate's job share with the candidate and the
//     victims of its job chosen before it removed. Always decides (Permit).
//   - Event handlers: allocate and deallocate update the job's share at once.
//
// With enableHierarchy (hierarchical DRF) every job also hangs in a tree under its queue's
// path: the queue's ancestors below the root, then the queue, from the parent chain (Volcano's
// volcano.sh/hierarchy annotation as its BuildEffectiveQueueHierarchy derives it), each queue
// weighted by its weight (volcano.sh/hierarchy-weights). An inner node's allocation sums its
// children's, each child that holds something and is not saturated first scaled to the
// smallest dominant share among them; a job is saturated when it holds all it asks for of some
// resource or holds a resource no longer in demand (the jobs together hold all the cluster
// has), and an inner node when all its children are. Two more callbacks are registered:
//   - QueueOrder: walking down both queues' paths, the first level where the nodes differ
//     decides: a demanding node before a saturated one, then the smaller share divided by
//     weight. Queues that never differ (an ancestor and its descendant) tie.
//   - Reclaimable: with the reclaimer added to its job, a candidate is a victim when, with the
//     candidate taken off its job, the reclaimer's queue goes strictly first. Each candidate is
//     judged alone. Always decides (Permit).
//
// If the hierarchy cannot be built (a parent missing from the session, a cycle) the plugin
// logs a warning and registers nothing, as in Volcano. Namespace order, obsolete in Volcano, is
// not implemented.
package drf

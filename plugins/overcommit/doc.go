// Package overcommit is Volcano's overcommit plugin: it admits (enqueues) jobs while the sum of
// their minResources fits in the cluster's idle resources scaled by an overcommit factor, so
// that the cluster keeps a bounded backlog of pending tasks.
//
// idle = total x factor - used, per dimension; the factor is the argument
// "overcommit-factor" (default 1.2), or "overcommit-factor.<resource>" for one resource, e.g.
// "overcommit-factor.cpu: 1.5". A factor below 1 is an error (Volcano falls back to 1.2).
//
// Registered callbacks (as in Volcano):
//   - JobEnqueueable: Permit a job without minResources; otherwise Permit when inqueue plus its
//     minResources fits in idle in every dimension the minResources ask for, else Reject. inqueue
//     starts as the minResources of the Inqueue jobs and what Running jobs' minResources still
//     reserve beyond what their tasks hold.
//   - JobEnqueued: the enqueued job's minResources join inqueue.
package overcommit

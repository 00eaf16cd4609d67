// Package proportion is Volcano's proportion plugin: queues share the cluster by weight, each up
// to what it requests and its capability, and never below its guarantee.
//
// When a session opens, each queue that has jobs gets
//   - realCapability: the cluster total less every queue's guarantee (never below zero), plus
//     its own guarantee, capped per dimension by its capability (a capability without cpu or
//     memory leaves that dimension unlimited; a scalar it does not name stays unlimited);
//   - allocated (tasks holding resources) and request (those plus pending tasks);
//   - deserved, by water-filling: the remaining cluster is split by weight among the queues not
//     yet satisfied; each share is capped by realCapability and by request and raised to the
//     guarantee; a queue is satisfied once its request fits in its deserved amount or its
//     deserved amount stops changing; the rounds end when nothing remains, nothing changed, or
//     every queue is satisfied.
//
// Registered callbacks (as in Volcano):
//   - QueueOrder: higher queue priority first, then the smaller share (allocated over deserved,
//     the largest over deserved's dimensions).
//   - Reclaimable: a candidate is a victim while its queue, less the victims already chosen
//     from it, holds more than it deserves in some dimension, and holds at least the
//     reclaimer's request in every dimension. Always decides (Permit).
//   - Overused: deserved <= allocated in every dimension. The reason is recorded on the queue
//     with ssn.SetQueueReason, naming the first dimension.
//   - Allocatable: the queue is open and allocated plus the task's request stays within
//     deserved in every dimension the task asks for.
//   - Preemptive: the same check without the open test (may the queue reclaim for the task).
//   - JobEnqueueable: Reject when the queue is not open; Permit a job without minResources;
//     otherwise Permit when minResources + allocated + inqueue - elastic fits in realCapability
//     in every dimension minResources asks for, and then count minResources as inqueue.
//   - Event handlers: allocate and deallocate update the queue's allocated amount and share.
//
// When the session closes the plugin publishes, for every queue it knows, allocated, deserved,
// share and overuse (ssn.SetQueueFigures).
package proportion

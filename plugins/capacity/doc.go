// Package capacity is Volcano's capacity plugin: each queue states the amount it deserves
// (deserved), may always keep (guarantee) and may never exceed (capability), dimension by
// dimension, instead of sharing the cluster by weight as proportion does. A queue may grow past
// its deserved amount up to its capability while the cluster has room, and reclaim gives back
// what queues hold beyond their deserved amount.
//
// Two modes, as in Volcano. Without enableHierarchy only queues that have jobs are known; a
// queue may use the cluster less every queue's guarantee, plus its own guarantee, capped by its
// capability (its "real capability"), and its deserved amount is capped by that and raised to
// its guarantee. With enableHierarchy every queue is known and hangs under its parent (a queue
// without one under "root", which the plugin makes when the snapshot has no queue of that
// name, and whose real capability is the cluster total); jobs may only be in leaf queues; a job counts in its queue and every ancestor; a
// child's real capability is its parent's less all its siblings' guarantees, plus its own
// guarantee, capped by its capability, whose unset cpu, memory and scalars it inherits from the
// parent. A broken tree (a cycle, an unknown parent, a job in an inner queue) makes the plugin
// refuse everything, as Volcano does.
//
// A queue without a deserved amount is best-effort: its share is 1 whatever it holds, so it
// comes after every queue below its deserved amount, and its tasks can always be reclaimed
// (down to its guarantee).
//
// Registered callbacks:
//   - QueueOrder: higher queue priority first, then the smaller share (allocated over
//     deserved, the largest over deserved's dimensions), a queue with deserved before a
//     best-effort one on equal shares. With hierarchy leaves go before inner queues and two
//     leaves compare the shares of their ancestors just below the deepest one they share.
//   - VictimQueueOrder (hierarchy only): victims from the queue closest in the tree to the
//     reclaimer's first.
//   - Reclaimable: in victim order, a candidate is a victim when it shares a dimension with the
//     reclaimer's request, its queue keeps its guarantee without it, and it either asks for
//     nothing its queue deserves or its queue, less the victims already chosen, holds more than
//     it deserves in a dimension the candidate uses (plus ancestor checks with
//     ancestorReclaimLevel). Always decides (Permit), or Reject when the tree is broken.
//   - UnifiedEvictable (gang-aware eviction): preemption may take every candidate; reclaim
//     takes, in the order offered (the action's bundle order), each candidate whose queue, less
//     the victims already taken from it, keeps its guarantee without it and either deserves
//     none of what it asks for or holds more than it deserves in a dimension it uses and the
//     queue deserves. No intersection with the evictor's request and no ancestor checks, as in
//     Volcano. Always decides (Permit), or Reject when the tree is broken.
//   - Preemptive: the queue is open, can take the request within its real capability, and
//     after taking it holds at most its deserved amount in some dimension in play (or, with
//     ancestorReclaimLevel, an ancestor does).
//   - Allocatable: the queue is open and a leaf, and it and every ancestor can take the
//     request within their real capability in every dimension it asks for. A refusal sets the
//     queue's reason ("queue q1 capacity insufficient: cpu 32 > capability 30").
//   - JobEnqueueable: Reject a job of a closed or inner queue; Permit one without
//     minResources; Permit one that keeps its queue within its deserved amount (raised to its
//     guarantee: allocated + inqueue - elastic + minResources at most deserved in cpu, memory
//     and the scalars deserved names), whatever the cluster holds, since reclaim can win that
//     back; otherwise Permit when minResources + allocated + inqueue - elastic fits in the real
//     capability of the queue and every ancestor.
//   - JobEnqueued: count the job's minResources as inqueue in its queue and ancestors.
//   - Event handlers: allocations and deallocations update the queue's (and ancestors')
//     allocated amount and the queue's share.
//
// Volcano's capacity plugin registers no Overused callback (a queue may run past its deserved
// amount) and neither does this one. Not carried over: DRA quotas, queue admission gates and the
// simulate* callbacks (Sluice's actions do not use them).
//
// Arguments: ancestorReclaimLevel (non-negative integer, default 0); Volcano's DRA switches
// are accepted and ignored.
//
// When the session closes the plugin publishes, for every queue, allocated, deserved, share
// and overuse (share above 1).
package capacity

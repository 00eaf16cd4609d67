// Package nodegroup is Volcano's nodegroup plugin: queues choose, or avoid, groups of nodes.
// A node's group is its label volcano.sh/nodegroup-name; a queue names groups in its
// nodeGroupAffinity and nodeGroupAntiAffinity, each with a required and a preferred list.
//
// Registered callbacks (as in Volcano):
//   - Predicate. A node without the group label fits only when the plugin is not strict and
//     the task's queue has no node-group affinity at all. A labelled node never fits a queue
//     without affinity. Otherwise the node fits when its group is required or preferred by
//     the affinity, unless the anti-affinity requires otherwise; a group that the
//     anti-affinity only prefers to avoid still fits (soft). Every rejection is
//     UnschedulableAndUnresolvable.
//   - NodeOrder. On a labelled node: +100 when the group is required, +50 when it is
//     preferred (with enablePreferredOrder, 50·(n-i)/n for the i-th of n preferred groups),
//     and exactly -1 when the anti-affinity prefers to avoid it. Unlabelled nodes and queues
//     without affinity score 0.
//   - Allocate/Deallocate events keep per queue and group what the queue's tasks hold, for
//     the per-group resource limits below.
//
// Arguments:
//   - strict (bool, default true): see the predicate.
//   - enablePreferredOrder (bool, default false): score preferred groups by list order.
//
// With enableHierarchy: true on the plugin's entry, a queue without affinity inherits the
// affinity of its nearest ancestor that has one (a queue without a parent is a child of the
// queue named root).
//
// A queue may cap what its tasks take from each group with the annotation
// volcano.sh/nodegroup-resource-limits, a JSON object from group name to resource list, e.g.
// {"gpu-pool": {"cpu": "32", "nvidia.com/gpu": "8"}}. Only the resources listed are capped.
// A node of a capped group stops fitting once the queue's allocated resources there plus the
// task's request would exceed the cap; an annotation that does not parse makes every node
// unfit for the queue's tasks.
package nodegroup

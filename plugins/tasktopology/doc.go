// Package tasktopology is Volcano's task-topology plugin: the roles of a job that talk to each
// other are placed together, and roles that compete are kept apart, by grouping a job's tasks
// into buckets meant to share a node.
//
// A job asks for it with annotations; roles are TaskInfo.Role (Volcano's task spec name):
//
//	volcano.sh/task-topology-affinity:      "ps,worker;chief"  # ps with worker; chief with chief
//	volcano.sh/task-topology-anti-affinity: "ps;worker,evaluator"
//	volcano.sh/task-topology-task-order:    "ps,worker"        # ps before worker in a bucket
//
// Groups are separated by ';' and roles by ','; nothing is trimmed. A group of one role is
// self (anti-)affinity, a larger group is pairwise inter (anti-)affinity. An annotation naming a
// role the job does not have, or naming a role twice in a group, disables the plugin for the
// job, as in Volcano.
//
// When the session opens, each job with pending tasks and at least one annotation gets buckets.
// Only tasks whose role appears in an (anti-)affinity group are bucketed. Tasks already on a
// node form one bucket per node; the pending ones are taken by role priority (task order
// first, then self-anti-affinity > inter-affinity > self-affinity > inter-anti-affinity, then
// name) and each joins the bucket whose roles it likes most (+1 per affine task, -1 per
// anti-affine one), the lighter bucket on a tie, or a new bucket when the best is negative.
//
// Registered callbacks (as in Volcano):
//   - TaskOrder: bucketed tasks before others; within a job, tasks of larger buckets (more
//     pending tasks) first, then older buckets; within a bucket, by role priority.
//   - NodeOrder: for a bucketed task, the bucket's tasks already on the node, minus the
//     node's tasks of roles anti-affine to the task, plus the bucket's pending tasks, minus one
//     per other pending task that must be left out for the rest of the bucket to fit the
//     node's idle plus releasing resources (taken in task name order; Volcano takes them in
//     map order). The result times task-topology.weight (default 1) times 100 over the job's
//     largest bucket size. A node that cannot hold the task itself scores 0.
//   - Allocate event: the task joins its bucket's node count and the node's role count.
//     Like Volcano, the plugin registers no deallocate handler: placements that a statement
//     discards are still counted for the rest of the cycle.
package tasktopology

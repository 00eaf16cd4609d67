// Package nodeorder is Volcano's nodeorder plugin: Kubernetes' scoring plugins, each giving a
// node 0..100 for a task with Kubernetes' integer arithmetic, times its weight, summed.
//
// Per node (NodeOrderFn): least allocated (cpu and memory, weights 50/50), most allocated
// (cpu and memory, 1/1), balanced allocation (cpu, memory and nvidia.com/gpu) and the
// preferred node affinity (the sum of the weights of matching terms, not normalised, as in
// Volcano); image locality scores 0 (Sluice knows no images).
//
// Over the candidate nodes (BatchNodeOrderFn): preferred task affinity and anti-affinity
// (normalised to 0..100 between the lowest and highest raw score), taint toleration (the
// number of PreferNoSchedule taints the task does not tolerate, normalised and reversed), and
// topology spread for ScheduleAnyway constraints; selector spread, whose services and
// replica sets Sluice does not have, gives every node 100 unless the task has spread
// constraints.
//
// Requested amounts are those of the tasks in Volcano's Kubernetes node view: every task on
// the node (pipelined and releasing ones included) except those evicted in this session, plus
// the task being scored; for least and most allocated a task that requests no cpu counts
// 100m and one that requests no memory 200Mi, as Kubernetes counts them.
package nodeorder

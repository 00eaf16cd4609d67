// Package priority is Volcano's priority plugin: jobs and tasks are ordered by priority (higher
// first), a preemptor may only evict tasks of lower priority, and a job starves while some of
// its tasks are neither placed nor pipelined.
//
// Registered callbacks (as in Volcano):
//   - TaskOrder: higher task priority first.
//   - JobOrder: higher job priority first.
//   - Preemptable: across jobs, victims are the tasks whose job has a lower priority than the
//     preemptor's job; within one job, the tasks with a lower task priority than the preemptor.
//     It always decides (Permit), even with no victim.
//   - UnifiedEvictable (gang-aware eviction): when preempting, victims are the candidates whose
//     job has a lower priority than the evicting job (tasks of the job itself never); when
//     reclaiming, every candidate. It always decides (Permit).
//   - JobStarving: ready plus pipelined tasks are fewer than all the job's tasks.
//
// Like Volcano, the plugin registers no reclaimable callback and lets gang-aware reclaim take
// any candidate: reclaim across queues is not a matter of priority.
package priority

// Package gang is Volcano's gang plugin: a job runs only when at least minAvailable of its
// tasks (and each role's own minimum) can be placed together.
//
// Registered callbacks (as in Volcano):
//   - JobValid: every role keeps enough live tasks for its minimum (reason
//     NotEnoughPodsOfTask), and the job keeps at least minAvailable valid tasks (reason
//     NotEnoughTasks).
//   - Preemptable and Reclaimable: a candidate is a victim only while its job keeps more ready
//     tasks than minAvailable, counting the victims already chosen. Always decides (Permit).
//   - UnifiedEvictable (gang-aware eviction): every candidate is a victim (Permit); the
//     actions' victim bundles already keep or break gangs as a whole.
//   - JobOrder: jobs that are not ready go before ready ones.
//   - JobReady: every role's minimum and minAvailable are met by placed tasks.
//   - JobPipelined: Permit when they are met counting pipelined tasks, else Reject.
//   - JobStarving: placed plus pipelined tasks are fewer than minAvailable.
//
// When the session closes, every job that is enqueued, neither ready nor pipelined and still
// has pending tasks gets the job-level reason "gang: P of minAvailable M placeable" unless
// another plugin gave it one already.
package gang

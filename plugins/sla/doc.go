// Package sla is Volcano's sla plugin: a job may state how long it is willing to wait (its
// service level); once that time has passed since the job was created it goes first, is
// enqueued whatever the other enqueue votes say, and may be pipelined so that the cluster
// reserves room for it.
//
// A job's waiting time is its annotation volcano.sh/sla-waiting-time, else its annotation
// sla-waiting-time, else the plugin argument sla-waiting-time; a Go duration such as "1h30m".
// An annotation that is not a positive duration is ignored. Waiting is measured from the job's
// creation time to the session's clock (ssn.Now).
//
// Registered callbacks:
//   - JobOrder: jobs with a waiting time before jobs without; among them the earlier deadline
//     (creation time + waiting time) first.
//   - JobEnqueueable, JobPipelined: Permit a job that has waited at least its waiting time;
//     Abstain otherwise.
//
// Arguments: sla-waiting-time, a positive duration (Volcano logs and ignores a malformed or
// non-positive value; Sluice rejects the configuration).
package sla

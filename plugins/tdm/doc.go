// Package tdm is Volcano's tdm (time-division multiplexing) plugin: some nodes belong to a
// revocable zone, lent to preemptable work only during the zone's daily window; when the
// window closes, that work is evicted from them, a few tasks at a time.
//
// A node's zone is its label volcano.sh/revocable-zone. A task may use revocable zones when its
// annotation volcano.sh/revocable-zone is "*" or, without that annotation, when its annotation
// volcano.sh/preemptable is "true" (Volcano's task.RevocableZone). A task is preemptable by its
// annotation volcano.sh/preemptable, else its label, else its Preemptable field (default true,
// as Volcano's pods without the annotation); a job is preemptable by the same annotation or
// label on the job, else not.
//
// Arguments:
//   - tdm.revocable-zone.<zone> (string "H:MM-H:MM"): the zone's window. As in Volcano, the
//     window checked at a time t runs from its start on t's day to its end on the same day, or
//     on the next day when the end is not after the start ("0:00-0:00" is always active), both
//     ends included, to the second. A window across midnight such as "22:00-6:00" is thus only
//     active from 22:00 to midnight: before 6:00 the window checked starts at 22:00 that day.
//     Any key containing the prefix counts, the zone being the key without it (Volcano's rule).
//   - tdm.evict.period (duration, default 1m): the least time between two searches for
//     victims.
//
// A malformed window or period, or a window that is not a string, rejects the configuration
// (Volcano treats such a zone as never active, ignores a bad period, and panics on a value that
// is not a string). Other arguments are ignored: Volcano has no argument bounding evictions,
// which come from each job's budget (below).
//
// The clock is the session's (ssn.Now) and windows are read in its time zone: UTC when the
// caller gives the cycle's time (the scenario runner does), the server's local zone when the
// server keeps the clock (as Volcano reads the scheduler's local time).
//
// Registered callbacks (as in Volcano):
//   - Predicate. A node outside revocable zones fits every task. A node of a zone that is not
//     configured or is outside its window fits no task; one of an active zone fits only the
//     tasks that may use revocable zones. Rejections are UnschedulableAndUnresolvable.
//   - NodeOrder. 100 on a node of an active zone for a task that may use revocable zones, 0
//     otherwise; an error (score 0) on a node of an inactive or unknown zone. A class key (may
//     the task use revocable zones) lets allocate reuse both answers across tasks.
//   - Preemptable. A preemptor that is preemptable or may use revocable zones evicts nothing
//     (Reject). Otherwise the victims are the running preemptable candidates on nodes outside
//     revocable zones, per job the first ones up to the job's budget (Permit).
//   - VictimTasks. At most once per tdm.evict.period (remembered per cluster across cycles), for
//     every configured zone outside its window, the running preemptable tasks on its nodes, per
//     zone and job up to the job's budget.
//   - JobOrder. Jobs that are not preemptable first.
//   - JobPipelined. Permit when the job's pipelined and ready tasks reach minAvailable, else
//     Reject.
//   - JobStarving. A job that is not preemptable and has pending tasks.
//
// A job's budget is read from its annotations volcano.sh/jdb-min-available (wins) or
// volcano.sh/jdb-max-unavailable, an integer or a percentage of the job's tasks rounded up:
// with max-unavailable, that number less the tasks neither running nor finished (at least 0);
// with min-available, the running tasks above it, or 1 when fewer run; without a budget, 1.
//
// Volcano visits zones, nodes, tasks and jobs in map order, so which tasks of a job are evicted
// is random there; Sluice visits zones and nodes by name, a node's tasks by name, and keeps the
// candidates' order for preemption.
package tdm

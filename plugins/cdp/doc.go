// Package cdp is Volcano's cdp (cooldown protection) plugin: a task that has just started
// cannot be evicted again at once, so elastic jobs do not flap between running and preempted.
//
// A task sets its cooldown with the label or annotation volcano.sh/cooldown-time (the label
// wins), a Go duration such as "600s"; a value that does not parse disables it. A running task
// is protected while StartedAt + cooldown is after the session's clock (ssn.Now), i.e. it
// becomes a possible victim once StartedAt + cooldown <= ssn.Now. Tasks that are not running,
// or have no start time (Volcano: no PodScheduled condition), are not protected.
//
// Registered callbacks:
//   - Preemptable, Reclaimable: keep the candidates that are not protected. Always decides
//     (Permit).
//
// Volcano measures the cooldown from the time the pod was scheduled and compares it with the
// wall clock; Sluice uses the task's start time and the session's clock, so a plan is
// reproducible. The plugin takes no arguments.
package cdp

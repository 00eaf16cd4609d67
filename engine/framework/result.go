package framework

import (
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// The plan's content types are the api package's, so that the store can keep plans; these
// names keep the framework's callers short.
type (
	// DecisionKind is the kind of a plan decision.
	DecisionKind = api.DecisionKind
	// Decision is one entry of a plan.
	Decision = api.Decision
	// Explanation says why a job is still pending.
	Explanation = api.Explanation
	// JobOutcome is a job's state at the end of the cycle.
	JobOutcome = api.JobOutcome
	// ActionTiming is how long one action ran.
	ActionTiming = api.ActionTiming
)

// Decision kinds.
const (
	DecisionBind     = api.DecisionBind
	DecisionPipeline = api.DecisionPipeline
	DecisionEvict    = api.DecisionEvict
)

// QueueOutcome is a queue's figures at the end of the cycle.
type QueueOutcome struct {
	Queue string
	QueueFigures
}

// Result is what a cycle decided.
type Result struct {
	// Decisions lists binds and evictions in commit order, then pipelines by task name.
	Decisions []Decision
	// Jobs holds every job's outcome in UID order. Results of a cluster's cycles on kept
	// views may share the slice (an idle cycle's outcomes are the last cycle's): read-only.
	Jobs    []JobOutcome
	Queues  []QueueOutcome
	Timings []ActionTiming
	// WakeAt is the earliest time after the cycle's clock at which a time-based plugin may
	// decide differently on the same cluster and configuration (Session.WakeUp); zero when no
	// plugin names one. Continuous mode runs its next cycle then, unless a change comes first.
	WakeAt time.Time
}

// Close ends the session: plugins close, and the decisions, job outcomes and queue figures
// are gathered.
func (s *Session) Close() *Result {
	s.release()
	for _, p := range s.plugins {
		p.OnSessionClose(s)
	}
	r := &Result{Timings: s.timings}
	if at, ok := s.WakeUp(); ok {
		r.WakeAt = at
	}
	// The committed decisions become the plan's, gathered once at their exact length.
	r.Decisions = s.committed.take(0)
	// Pipelined and allocated tasks are the active jobs' or come from statements: the
	// visited jobs have them all.
	visited := s.visitedJobs()
	for _, j := range visited {
		if j.WaitingTaskNum() == 0 && j.AllocatedTaskNum() == 0 {
			continue // no pipelined or allocated task: no decision to find
		}
		for _, t := range j.SortedTasks() {
			if t.Status == api.Pipelined || (t.Status == api.Allocated && !s.undispatched[t.UID]) {
				r.Decisions = append(r.Decisions, Decision{Kind: DecisionPipeline, Task: t.UID, Job: j.UID, Node: t.NodeName})
			}
		}
	}
	r.Jobs = s.outcomes()
	for _, q := range s.SortedQueues() {
		f, ok := s.queueFigures[q.Name]
		if !ok {
			f = QueueFigures{Allocated: s.queueAllocated(q.Name), Deserved: api.EmptyResource()}
		}
		r.Queues = append(r.Queues, QueueOutcome{Queue: q.Name, QueueFigures: f})
	}
	s.releaseViews()
	return r
}

// Abandon ends a session whose result is not wanted (its cycle failed or was interrupted):
// plugins close, and nothing is gathered.
func (s *Session) Abandon() {
	s.release()
	for _, p := range s.plugins {
		p.OnSessionClose(s)
	}
	s.releaseViews()
}

func (s *Session) queueAllocated(queue string) *api.Resource {
	out := api.EmptyResource()
	for _, j := range s.Jobs {
		if j.Queue == queue {
			out.Add(j.Allocated)
		}
	}
	return out
}

// phaseAfter is Volcano's end-of-cycle job phase: Running once placed (or finished) tasks
// reach minAvailable; otherwise Inqueue stays Inqueue and anything else becomes Pending.
func phaseAfter(j *api.JobInfo) api.JobPhase {
	switch {
	case j.Phase == api.JobCompleted:
		return api.JobCompleted
	case j.ReadyTaskNum() >= j.MinAvailable:
		return api.JobRunning
	case j.Phase == api.JobInqueue:
		return api.JobInqueue
	}
	return api.JobPending
}

// previousPhase is the job's phase as the snapshot has it: its spec's, which the view took
// when it was built (initialPhase records it for views without a spec).
func (s *Session) previousPhase(j *api.JobInfo) api.JobPhase {
	if j.Spec != nil {
		return j.Spec.Phase
	}
	return s.initialPhase[j.UID]
}

func (s *Session) outcome(j *api.JobInfo) JobOutcome {
	o := JobOutcome{
		Job:           j.UID,
		PreviousPhase: s.previousPhase(j),
		Phase:         phaseAfter(j),
		Ready:         j.ReadyTaskNum(),
		Pending:       j.PendingTaskNum(),
		MinAvailable:  j.MinAvailable,
	}
	if o.Pending == 0 && j.WaitingTaskNum() == 0 && !s.hasUndispatched(j) {
		return o
	}
	o.Explanation = s.explain(j)
	return o
}

// hasUndispatched reports whether a statement left some of the job's tasks allocated without
// a decision.
func (s *Session) hasUndispatched(j *api.JobInfo) bool {
	if len(s.undispatched) == 0 {
		return false
	}
	for _, t := range j.TasksIn(api.Allocated) {
		if s.undispatched[t.UID] {
			return true
		}
	}
	return false
}

// explain builds a pending job's explanation from its job-level reason, its tasks' fit
// errors and its queue's reason.
func (s *Session) explain(j *api.JobInfo) *Explanation {
	e := &Explanation{GangMin: j.MinAvailable, GangPlaceable: j.ReadyTaskNum() + j.WaitingTaskNum(), QueueReason: s.queueReasons[j.Queue]}
	var fe *api.FitErrors
	for _, t := range j.SortedTasks() {
		if f := j.NodesFitErrors[t.UID]; f != nil {
			fe = f
			break
		}
	}
	var parts []string
	if j.JobFitErrors != "" {
		parts = append(parts, j.JobFitErrors)
	}
	if fe != nil {
		e.NodesTotal = fe.Total
		e.Reasons = fe.Histogram()
		parts = append(parts, fe.Error())
	}
	if e.QueueReason != "" {
		parts = append(parts, e.QueueReason)
	}
	if len(parts) == 0 {
		switch {
		case j.WaitingTaskNum() > 0:
			parts = append(parts, fmt.Sprintf("%d task(s) pipelined, waiting for releasing resources", j.WaitingTaskNum()))
		case j.IsPending():
			parts = append(parts, "job is pending: not enqueued yet")
		default:
			parts = append(parts, "not scheduled in this cycle")
		}
	}
	e.Summary = joinUnique(parts)
	return e
}

func joinUnique(parts []string) string {
	seen := map[string]bool{}
	out := ""
	for _, p := range parts {
		if seen[p] {
			continue
		}
		seen[p] = true
		if out != "" {
			out += "; "
		}
		out += p
	}
	return out
}

package api

import "time"

// DecisionKind is the kind of a plan decision.
type DecisionKind int

// Decision kinds.
const (
	DecisionBind DecisionKind = iota + 1
	DecisionPipeline
	DecisionEvict
)

// String names the kind.
func (k DecisionKind) String() string {
	switch k {
	case DecisionBind:
		return "bind"
	case DecisionPipeline:
		return "pipeline"
	case DecisionEvict:
		return "evict"
	}
	return "invalid"
}

// Decision is one entry of a plan.
type Decision struct {
	Kind DecisionKind
	// Task and Job are namespace/name UIDs.
	Task, Job, Node string
	DeviceIDs       []string
	// Action, ForTask and Reason explain an eviction.
	Action, ForTask, Reason string
}

// Explanation says why a job is still pending.
type Explanation struct {
	Summary    string
	NodesTotal int
	Reasons    []ReasonCount
	// GangPlaceable and GangMin describe the gang (placeable tasks vs minAvailable).
	GangPlaceable, GangMin int32
	QueueReason            string
}

// JobOutcome is a job's state at the end of a cycle.
type JobOutcome struct {
	Job           string
	PreviousPhase JobPhase
	Phase         JobPhase
	Ready         int32
	Pending       int32
	MinAvailable  int32
	// Explanation is set for jobs that still have pending tasks.
	Explanation *Explanation
}

// ActionTiming is how long one action of a cycle ran.
type ActionTiming struct {
	Action   string
	Duration time.Duration
}

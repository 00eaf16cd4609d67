package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// PlanState is where a plan is in its life; the store keeps it.
type PlanState = state.PlanState

// Plan states.
const (
	PlanProposed  = state.PlanProposed
	PlanCommitted = state.PlanCommitted
	PlanDiscarded = state.PlanDiscarded
	PlanExpired   = state.PlanExpired
	PlanDryRun    = state.PlanDryRun
)

// Plan is one cycle's decisions for a cluster, as the engine hands it out: a copy, which
// the caller owns.
type Plan struct {
	ID           string
	Cluster      string
	BaseRevision uint64
	// ScheduledAt is the clock the cycle ran with.
	ScheduledAt time.Time
	// CreatedAt and ExpiresAt use the server's wall clock.
	CreatedAt time.Time
	ExpiresAt time.Time
	Duration  time.Duration
	State     PlanState
	// Result holds the decisions, job outcomes and timings: always for the plan a cycle
	// returns, and for a stored plan while it is proposed (a finished plan drops them).
	Result *framework.Result
	// CommittedRevision is the store revision the commit produced (0 before).
	CommittedRevision uint64
	// Commit is what an auto-commit applied and rejected (nil otherwise).
	Commit *CommitResult
	// Rejections holds, for a committed plan, why each decision of Result was rejected
	// ("" when it applied, and for pipelines).
	Rejections []string
	// Counts are the plan's figures (kept when its decisions are no longer).
	Counts PlanCounts
	// DecisionsDropped is set when the store no longer holds the plan's decisions.
	DecisionsDropped bool
	// Hypothetical, for a what-if dry run, says which decisions and job outcomes concern
	// the hypothetical objects; nil otherwise.
	Hypothetical *HypotheticalMarks
	// KeptViews is set when the cycle opened on the views earlier cycles kept
	// (framework.Views) rather than building them from the snapshot.
	KeptViews bool
}

// PlanCounts are a plan's figures.
type PlanCounts struct {
	Binds, Pipelines, Evicts, Jobs int
	// Applied and Rejected count a committed plan's binds and evictions.
	Applied, Rejected int
}

// countsOf counts a cycle's decisions and job outcomes.
func countsOf(r *framework.Result) PlanCounts {
	c := PlanCounts{Jobs: len(r.Jobs)}
	for _, d := range r.Decisions {
		switch d.Kind {
		case framework.DecisionBind:
			c.Binds++
		case framework.DecisionPipeline:
			c.Pipelines++
		case framework.DecisionEvict:
			c.Evicts++
		}
	}
	return c
}

// planOf converts a stored plan.
func planOf(cluster string, p *state.Plan, now time.Time) *Plan {
	out := &Plan{
		ID: p.ID, Cluster: cluster, BaseRevision: p.BaseRevision, ScheduledAt: p.ScheduledAt,
		CreatedAt: p.CreatedAt, ExpiresAt: p.ExpiresAt, Duration: p.Duration, State: p.StateAt(now),
		CommittedRevision: p.CommittedRevision, Rejections: p.Rejections,
		DecisionsDropped: p.DecisionsDropped || (p.State == PlanProposed && p.StateAt(now) != PlanProposed),
		Counts: PlanCounts{Binds: p.CountBinds, Pipelines: p.CountPipelines, Evicts: p.CountEvicts,
			Jobs: p.CountJobs, Applied: p.Applied, Rejected: p.Rejected},
	}
	if !out.DecisionsDropped {
		out.Result = &framework.Result{Decisions: p.Decisions, Jobs: p.Jobs, Timings: p.Timings}
	}
	return out
}

// RejectedDecision is a decision a commit refused, with the conflict.
type RejectedDecision struct {
	Decision framework.Decision
	Reason   string
}

// CommitResult says what a commit applied and refused.
type CommitResult struct {
	Revision uint64
	Applied  []framework.Decision
	Rejected []RejectedDecision
	// Plan is the committed plan, with its decisions and their outcomes (Rejections).
	Plan *Plan
	// Repeated is set when the plan was committed before: nothing was written this time.
	Repeated bool
}

// commitResultOf pairs a commit's outcome with the plan's decisions: binds and evictions are
// applied or rejected; pipelines are never written.
func commitResultOf(decisions []framework.Decision, out *state.CommitOutcome) *CommitResult {
	res := &CommitResult{Revision: out.Revision}
	for i, d := range decisions {
		if d.Kind != framework.DecisionBind && d.Kind != framework.DecisionEvict {
			continue
		}
		if reason := out.Rejected[i]; reason != "" {
			res.Rejected = append(res.Rejected, RejectedDecision{Decision: d, Reason: reason})
			continue
		}
		res.Applied = append(res.Applied, d)
	}
	return res
}

// GetPlan returns a plan by id: a stored one, or a recent dry run's (kept in memory for a
// plan TTL, so that its decisions can be paged through). A cluster that does not exist is a
// *state.ClusterNotFoundError.
func (e *Engine) GetPlan(cluster, id string) (*Plan, error) {
	snap := e.store.Snapshot(cluster)
	if !snap.Exists() {
		return nil, &state.ClusterNotFoundError{Cluster: cluster}
	}
	if isDryRunID(id) {
		if p := e.dryRuns.get(cluster, id, e.clock()); p != nil {
			return p, nil
		}
	}
	p, ok := snap.Plan(id)
	if !ok {
		return nil, planError(&state.PlanNotFoundError{Cluster: cluster, ID: id})
	}
	return planOf(cluster, p, e.clock()), nil
}

// DiscardPlan drops a proposed plan. Discarding a plan that is already discarded or expired
// succeeds; a committed plan cannot be discarded, and a plan the store does not hold (one
// dropped long after it finished) is not found. A cluster that does not exist is a
// *state.ClusterNotFoundError.
func (e *Engine) DiscardPlan(cluster, id string) error {
	if isDryRunID(id) {
		if !e.store.Snapshot(cluster).Exists() {
			return &state.ClusterNotFoundError{Cluster: cluster}
		}
		return nil // never stored, never committable: discarded already
	}
	_, err := e.store.ApplyPlan(cluster, &state.PlanOp{
		Action: state.PlanDiscard, ID: id, Now: e.clock(), Retention: e.retention, RequireCluster: true,
	})
	if err != nil {
		return planError(err)
	}
	e.log.Debug("plan discarded", "cluster", cluster, "plan", id)
	return nil
}

// CommitPlan commits a proposed plan: in one store transaction (with a replicated store, one
// log entry, applied alike on every member) it checks that the plan is still proposed, writes
// its decisions (a bind makes its task Bound to the node with its devices, an eviction makes
// its task Releasing, job phase changes are recorded) and marks it committed. A decision that
// conflicts with a change made since the plan's revision (task or node changed or gone, room
// taken) is rejected by name; the rest apply.
//
// Committing a committed plan again changes nothing and returns the stored outcome, so that a
// caller whose response was lost may retry. Nothing is written when ctx has ended. A cluster
// that does not exist is a *state.ClusterNotFoundError.
func (e *Engine) CommitPlan(ctx context.Context, cluster, id string) (*CommitResult, error) {
	if isDryRunID(id) {
		return nil, &PlanError{Cluster: cluster, ID: id, State: PlanDryRun,
			err: fmt.Errorf("plan %q is a dry run: dry runs are never stored and cannot be committed", id)}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res, err := e.store.ApplyPlan(cluster, &state.PlanOp{
		Action: state.PlanCommitByID, ID: id, Now: e.clock(), Retention: e.retention, RequireCluster: true,
	})
	var pe *PlanError
	if err = planError(err); errors.As(err, &pe) && pe.State == PlanCommitted {
		return e.committedResult(cluster, id)
	}
	if err != nil {
		return nil, err
	}
	out := commitResultOf(res.Decisions, res.Commit)
	out.Plan = planOf(cluster, res.Plan, e.clock())
	e.log.Debug("plan committed", "cluster", cluster, "plan", id, "applied", len(out.Applied),
		"rejected", len(out.Rejected), "revision", out.Revision)
	return out, nil
}

// committedResult rebuilds a committed plan's commit outcome from its record.
func (e *Engine) committedResult(cluster, id string) (*CommitResult, error) {
	p, err := e.GetPlan(cluster, id)
	if err != nil {
		return nil, err
	}
	out := &CommitResult{Revision: p.CommittedRevision}
	if p.Result != nil && len(p.Rejections) == len(p.Result.Decisions) {
		out = commitResultOf(p.Result.Decisions, &state.CommitOutcome{Revision: p.CommittedRevision, Rejected: p.Rejections})
	}
	out.Plan, out.Repeated = p, true
	return out, nil
}

// PlanError is the engine's error for a plan that cannot be found or cannot make the
// transition asked for. It matches ErrNotFound or ErrFailedPrecondition (errors.Is).
type PlanError struct {
	Cluster, ID string
	// State is the plan's state (0 when it was not found).
	State PlanState
	err   error
}

// Error implements error.
func (e *PlanError) Error() string { return e.err.Error() }

// Unwrap returns the store's error.
func (e *PlanError) Unwrap() error { return e.err }

// Is matches ErrNotFound for a missing plan and ErrFailedPrecondition for a plan in the
// wrong state.
func (e *PlanError) Is(target error) bool {
	if e.State == 0 {
		return target == ErrNotFound
	}
	return target == ErrFailedPrecondition
}

// NewPlanError returns a *PlanError for a plan in a state (0: not found), wrapping err.
func NewPlanError(cluster, id string, st PlanState, err error) *PlanError {
	return &PlanError{Cluster: cluster, ID: id, State: st, err: err}
}

// planError turns the store's plan errors into *PlanError; other errors pass unchanged.
func planError(err error) error {
	var nf *state.PlanNotFoundError
	var se *state.PlanStateError
	switch {
	case errors.As(err, &nf):
		return &PlanError{Cluster: nf.Cluster, ID: nf.ID, err: err}
	case errors.As(err, &se):
		return &PlanError{ID: se.ID, State: se.State, err: err}
	}
	return err
}

// dryRunMark is what a dry run's id has before its sequence number.
const dryRunMark = "-dry"

// isDryRunID reports whether id is one newPlanID made for a dry run.
func isDryRunID(id string) bool {
	i := strings.LastIndex(id, dryRunMark)
	if i < 0 || i+len(dryRunMark) == len(id) {
		return false
	}
	for _, c := range id[i+len(dryRunMark):] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// newPlanID names a plan: cluster, base revision and sequence number. Dry runs, which are
// never stored, are marked so that their ids never name a stored plan.
func newPlanID(cluster string, rev, seq uint64, dry bool) string {
	if dry {
		return fmt.Sprintf("%s-r%d%s%d", cluster, rev, dryRunMark, seq)
	}
	return fmt.Sprintf("%s-r%d-%d", cluster, rev, seq)
}

// ExpiredPlans returns, for every cluster that proposed a plan, how many of its plans expired
// before anyone committed or discarded them.
func (e *Engine) ExpiredPlans() map[string]uint64 { return e.store.ExpiredPlans(e.clock()) }

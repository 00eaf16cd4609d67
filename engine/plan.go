package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// PlanState is where a plan is in its life.
type PlanState int

// Plan states.
const (
	PlanProposed PlanState = iota + 1
	PlanCommitted
	PlanDiscarded
	PlanExpired
	PlanDryRun
)

// String names the state.
func (s PlanState) String() string {
	switch s {
	case PlanProposed:
		return "proposed"
	case PlanCommitted:
		return "committed"
	case PlanDiscarded:
		return "discarded"
	case PlanExpired:
		return "expired"
	case PlanDryRun:
		return "dry-run"
	}
	return "invalid"
}

// Plan is one cycle's decisions for a cluster.
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
	Result    *framework.Result
	// CommittedRevision is the store revision the commit produced (0 before).
	CommittedRevision uint64
}

// copy returns a copy the caller may read without the engine's lock (the result is
// immutable once the cycle closed). The caller holds e.mu.
func (p *Plan) copy() *Plan {
	c := *p
	return &c
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
}

// expireLocked marks proposed plans past their deadline as expired, lets finished plans drop
// their decisions (only their state is asked for afterwards), and forgets finished plans
// older than two deadlines. The caller holds e.mu.
func (e *Engine) expireLocked(rec *clusterRecord, now time.Time) {
	for id, p := range rec.plans {
		if p.State == PlanProposed && now.After(p.ExpiresAt) {
			p.State = PlanExpired
		}
		if p.State != PlanProposed {
			p.Result = nil
			if now.Sub(p.CreatedAt) > 2*e.ttl {
				delete(rec.plans, id)
			}
		}
	}
}

// GetPlan returns a plan by id.
func (e *Engine) GetPlan(cluster, id string) (*Plan, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.clusters[cluster]
	if !ok {
		return nil, fmt.Errorf("%w: plan %q in cluster %q", ErrNotFound, id, cluster)
	}
	e.expireLocked(rec, e.clock())
	p, ok := rec.plans[id]
	if !ok {
		return nil, fmt.Errorf("%w: plan %q in cluster %q", ErrNotFound, id, cluster)
	}
	return p.copy(), nil
}

// takeProposed moves a proposed plan to the given state and returns it.
func (e *Engine) takeProposed(cluster, id string, to PlanState) (*Plan, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.clusters[cluster]
	if !ok {
		return nil, fmt.Errorf("%w: plan %q in cluster %q", ErrNotFound, id, cluster)
	}
	e.expireLocked(rec, e.clock())
	p, ok := rec.plans[id]
	if !ok {
		return nil, fmt.Errorf("%w: plan %q in cluster %q", ErrNotFound, id, cluster)
	}
	if p.State != PlanProposed {
		return nil, fmt.Errorf("%w: plan %q is %s", ErrFailedPrecondition, id, p.State)
	}
	p.State = to
	return p, nil
}

// DiscardPlan drops a proposed plan. Discarding a plan that is already discarded, expired or
// a dry run succeeds; a committed plan cannot be discarded.
func (e *Engine) DiscardPlan(cluster, id string) error {
	_, err := e.takeProposed(cluster, id, PlanDiscarded)
	if err == nil {
		return nil
	}
	if !errors.Is(err, ErrFailedPrecondition) {
		return err
	}
	cur, gerr := e.GetPlan(cluster, id)
	if gerr == nil && cur.State != PlanCommitted {
		return nil
	}
	return err
}

// CommitPlan writes a proposed plan into the store: a bind makes its task Binding on the
// node with its devices, an eviction makes its task Releasing, and job phase changes are
// recorded. A decision that conflicts with a change made since the plan's revision (task or
// node changed or gone, room taken) is rejected by name; the rest apply, in one transaction
// (state.Store.CommitPlan, which a replicated store puts in its log: the conflict checks run
// when it applies, alike on every replica).
func (e *Engine) CommitPlan(cluster, id string) (*CommitResult, error) {
	p, err := e.takeProposed(cluster, id, PlanCommitted)
	if err != nil {
		return nil, err
	}
	pc := &state.PlanCommit{BaseRevision: p.BaseRevision}
	var decisions []framework.Decision
	for _, d := range p.Result.Decisions {
		var kind state.DecisionKind
		switch d.Kind {
		case framework.DecisionBind:
			kind = state.Bind
		case framework.DecisionEvict:
			kind = state.Evict
		default:
			continue
		}
		pc.Decisions = append(pc.Decisions, state.PlanDecision{Kind: kind, Task: d.Task, Node: d.Node, DeviceIDs: d.DeviceIDs})
		decisions = append(decisions, d)
	}
	for _, o := range p.Result.Jobs {
		if o.Phase != o.PreviousPhase {
			pc.Phases = append(pc.Phases, state.PhaseChange{Job: o.Job, Phase: o.Phase})
		}
	}
	out, err := e.store.CommitPlan(cluster, pc)
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		p.State = PlanProposed
		return nil, fmt.Errorf("commit plan %s: %w", id, err)
	}
	res := &CommitResult{Revision: out.Revision}
	for i, d := range decisions {
		if reason := out.Rejected[i]; reason != "" {
			res.Rejected = append(res.Rejected, RejectedDecision{Decision: d, Reason: reason})
			continue
		}
		res.Applied = append(res.Applied, d)
	}
	p.CommittedRevision = out.Revision
	e.log.Info("plan committed", "cluster", cluster, "plan", id, "applied", len(res.Applied), "rejected", len(res.Rejected), "revision", out.Revision)
	return res, nil
}

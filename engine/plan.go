package engine

import (
	"errors"
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
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
	base              *state.Snapshot
}

// copy returns a copy the caller may read without the engine's lock (the result is
// immutable once the cycle closed). The caller holds e.mu.
func (p *Plan) copy() *Plan {
	c := *p
	c.base = nil
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

// expireLocked marks proposed plans past their deadline as expired and forgets finished
// plans older than ten deadlines. The caller holds e.mu.
func (e *Engine) expireLocked(rec *clusterRecord, now time.Time) {
	for id, p := range rec.plans {
		if p.State == PlanProposed && now.After(p.ExpiresAt) {
			p.State = PlanExpired
			p.base = nil
		}
		if p.State != PlanProposed && now.Sub(p.CreatedAt) > 10*e.ttl {
			delete(rec.plans, id)
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
	p, err := e.takeProposed(cluster, id, PlanDiscarded)
	if err == nil {
		e.mu.Lock()
		p.base = nil
		e.mu.Unlock()
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
// node changed or gone, room taken) is rejected by name; the rest apply, in one transaction.
func (e *Engine) CommitPlan(cluster, id string) (*CommitResult, error) {
	p, err := e.takeProposed(cluster, id, PlanCommitted)
	if err != nil {
		return nil, err
	}
	res := &CommitResult{}
	rev, err := e.store.Update(cluster, func(tx *state.Txn) error {
		res.Applied, res.Rejected = nil, nil
		for _, d := range p.Result.Decisions {
			if d.Kind == framework.DecisionPipeline {
				continue
			}
			reason, err := applyDecision(tx, p.base, d)
			if err != nil {
				return err
			}
			if reason != "" {
				res.Rejected = append(res.Rejected, RejectedDecision{Decision: d, Reason: reason})
				continue
			}
			res.Applied = append(res.Applied, d)
		}
		for _, o := range p.Result.Jobs {
			if err := applyPhase(tx, p.base, o); err != nil {
				return err
			}
		}
		return nil
	})
	e.mu.Lock()
	defer e.mu.Unlock()
	if err != nil {
		p.State = PlanProposed
		return nil, fmt.Errorf("commit plan %s: %w", id, err)
	}
	p.CommittedRevision = rev
	p.base = nil
	res.Revision = rev
	e.log.Info("plan committed", "cluster", cluster, "plan", id, "applied", len(res.Applied), "rejected", len(res.Rejected), "revision", rev)
	return res, nil
}

// applyDecision applies one bind or evict inside the commit transaction; it returns a
// conflict reason (decision rejected) or an error (commit aborted).
func applyDecision(tx *state.Txn, base *state.Snapshot, d framework.Decision) (string, error) {
	cur, ok := tx.Task(d.Task)
	if !ok {
		return fmt.Sprintf("task %s no longer exists", d.Task), nil
	}
	if old, ok := base.Task(d.Task); !ok || old != cur {
		return fmt.Sprintf("task %s changed since the plan's revision", d.Task), nil
	}
	node, ok := tx.Node(d.Node)
	if !ok {
		return fmt.Sprintf("node %s no longer exists", d.Node), nil
	}
	next := *cur
	switch d.Kind {
	case framework.DecisionBind:
		if cur.Status != api.Pending {
			return fmt.Sprintf("task %s is %s, not Pending", d.Task, cur.Status), nil
		}
		if node.Unschedulable {
			return fmt.Sprintf("node %s is unschedulable", d.Node), nil
		}
		if short := roomShortfall(tx, node, &cur.Resources); short != "" {
			return fmt.Sprintf("node %s has no room for task %s: insufficient %s", d.Node, d.Task, short), nil
		}
		next.Status = api.Binding
		next.Node = d.Node
		next.DeviceIDs = append([]string(nil), d.DeviceIDs...)
	case framework.DecisionEvict:
		if cur.Node != d.Node || !api.AllocatedStatus(cur.Status) {
			return fmt.Sprintf("task %s is no longer running on node %s", d.Task, d.Node), nil
		}
		next.Status = api.Releasing
	default:
		return "", nil
	}
	if err := tx.Upsert(state.Change{Task: &next}); err != nil {
		return "", fmt.Errorf("apply %s of %s: %w", d.Kind, d.Task, err)
	}
	return "", nil
}

// roomShortfall names the resources the node lacks for req, given its current tasks.
func roomShortfall(tx *state.Txn, node *api.Node, req *api.Resource) string {
	free := node.Allocatable.Clone()
	n := 0
	for _, t := range tx.TasksOnNode(node.Name) {
		if api.OccupiesNode(t.Status) {
			free.Sub(&t.Resources)
			n++
		}
	}
	if node.Allocatable.MaxTaskNum > 0 && n+1 > node.Allocatable.MaxTaskNum {
		return "pods"
	}
	short := free.Insufficient(req)
	if len(short) == 0 {
		return ""
	}
	out := short[0]
	for _, s := range short[1:] {
		out += ", " + s
	}
	return out
}

// applyPhase records a job's new phase if the job is unchanged since the plan's revision.
func applyPhase(tx *state.Txn, base *state.Snapshot, o framework.JobOutcome) error {
	if o.Phase == o.PreviousPhase {
		return nil
	}
	cur, ok := tx.Job(o.Job)
	if !ok {
		return nil
	}
	if old, ok := base.Job(o.Job); !ok || old != cur {
		return nil
	}
	next := *cur
	next.Phase = o.Phase
	if err := tx.Upsert(state.Change{Job: &next}); err != nil {
		return fmt.Errorf("record phase of job %s: %w", o.Job, err)
	}
	return nil
}

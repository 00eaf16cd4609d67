package state

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// PlanState is where a stored plan is in its life: proposed, then committed, discarded or
// expired. A proposed plan whose deadline passed reads as expired (Plan.StateAt) before any
// write records it.
type PlanState int

// Plan states. PlanDryRun is never stored: it marks the plans of dry runs.
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

// Finished reports whether the state is terminal.
func (s PlanState) Finished() bool {
	return s == PlanCommitted || s == PlanDiscarded || s == PlanExpired
}

// Plan is a stored plan: one cycle's decisions for a cluster and where they are in their life.
// Like every stored object it is immutable: a state change stores a new Plan. A committed plan
// keeps its decisions and their outcomes (Rejections) as the record of what it did, until the
// retention rule's decision budget drops them (DecisionsDropped); a discarded or expired plan
// keeps only its figures.
type Plan struct {
	ID string
	// Seq orders the cluster's plans; IDs are made from it, so it never repeats.
	Seq          uint64
	BaseRevision uint64
	State        PlanState
	// ScheduledAt is the clock the cycle ran with; the other times are the leader's wall
	// clock.
	ScheduledAt time.Time
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// FinishedAt is when the plan was committed, discarded or expired.
	FinishedAt time.Time
	// Duration is how long the cycle ran.
	Duration  time.Duration
	Decisions []api.Decision
	Jobs      []api.JobOutcome
	Timings   []api.ActionTiming
	// CommittedRevision is the cluster's revision after the commit (0 before it).
	CommittedRevision uint64
	// Applied and Rejected count a commit's bind and evict decisions.
	Applied, Rejected int
	// Rejections holds, once the plan is committed, the reason each decision was rejected
	// ("" when it applied, and for pipelines), aligned with Decisions.
	Rejections []string
	// DecisionsDropped is set when a finished plan no longer holds its decisions, job
	// outcomes and timings (Count* keep their numbers).
	DecisionsDropped bool
	// CountBinds, CountPipelines, CountEvicts and CountJobs count the plan's decisions by
	// kind and its job outcomes, kept when the decisions are dropped.
	CountBinds, CountPipelines, CountEvicts, CountJobs int
}

// withCounts returns p with its Count* fields set from its decisions and jobs.
func (p *Plan) withCounts() *Plan {
	c := *p
	c.CountBinds, c.CountPipelines, c.CountEvicts = 0, 0, 0
	for _, d := range p.Decisions {
		switch d.Kind {
		case api.DecisionBind:
			c.CountBinds++
		case api.DecisionPipeline:
			c.CountPipelines++
		case api.DecisionEvict:
			c.CountEvicts++
		}
	}
	c.CountJobs = len(p.Jobs)
	return &c
}

// StateAt returns the plan's state at now: a proposed plan past its deadline is expired.
func (p *Plan) StateAt(now time.Time) PlanState {
	if p.State == PlanProposed && now.After(p.ExpiresAt) {
		return PlanExpired
	}
	return p.State
}

// finished returns a copy of p in a terminal state; only a committed plan keeps its decisions.
func (p *Plan) finished(state PlanState, at time.Time) *Plan {
	c := *p
	c.State, c.FinishedAt = state, at
	if state != PlanCommitted {
		c.dropDecisions()
	}
	return &c
}

// dropDecisions forgets the plan's decisions, outcomes and timings (its counts stay).
func (c *Plan) dropDecisions() {
	c.Decisions, c.Jobs, c.Timings, c.Rejections = nil, nil, nil, nil
	c.DecisionsDropped = true
}

// PlanRetention bounds the plans a cluster keeps. The leader puts its retention in every
// plan op, so that every replica drops the same plans.
type PlanRetention struct {
	// MaxProposed is how many proposed plans a cluster may hold; a new proposal beyond it
	// expires the oldest. 0 means DefaultMaxProposedPlans.
	MaxProposed int
	// MaxFinished is how many finished plans a cluster keeps (the newest). 0 means
	// DefaultMaxFinishedPlans.
	MaxFinished int
	// MaxAge is how long a finished plan is kept after it finished. 0 means
	// DefaultFinishedPlanAge.
	MaxAge time.Duration
	// MaxKeptDecisions bounds the decisions the cluster's committed plans keep as their
	// record: beyond it the oldest drop theirs (keeping their figures). 0 means
	// DefaultMaxKeptDecisions.
	MaxKeptDecisions int
}

// Default plan retention.
const (
	DefaultMaxProposedPlans = 64
	DefaultMaxFinishedPlans = 256
	DefaultFinishedPlanAge  = 10 * time.Minute
	DefaultMaxKeptDecisions = 200000
)

func (r PlanRetention) withDefaults() PlanRetention {
	if r.MaxProposed <= 0 {
		r.MaxProposed = DefaultMaxProposedPlans
	}
	if r.MaxFinished <= 0 {
		r.MaxFinished = DefaultMaxFinishedPlans
	}
	if r.MaxAge <= 0 {
		r.MaxAge = DefaultFinishedPlanAge
	}
	if r.MaxKeptDecisions <= 0 {
		r.MaxKeptDecisions = DefaultMaxKeptDecisions
	}
	return r
}

// PlanAction is what a PlanOp does.
type PlanAction int

// Plan actions.
const (
	// PlanPropose stores a new proposed plan.
	PlanPropose PlanAction = iota + 1
	// PlanCommitByID commits a proposed plan by id: its decisions are checked against the state
	// and those that still hold are written, in the transaction that marks it committed.
	PlanCommitByID
	// PlanDiscard discards a proposed plan by id.
	PlanDiscard
	// PlanAutoCommit stores a new plan and commits it at once.
	PlanAutoCommit
)

// PlanOp is one step of a plan's life, applied in one transaction (and, with a Replicator,
// one entry of the log). Everything it depends on is in the op or the store: Now is the
// leader's clock, so every replica expires and drops the same plans.
type PlanOp struct {
	Action PlanAction
	// Plan is the new plan of PlanPropose and PlanAutoCommit.
	Plan *Plan
	// ID names the plan of PlanCommitByID and PlanDiscard.
	ID        string
	Now       time.Time
	Retention PlanRetention
	// RequireCluster makes the op fail with a *ClusterNotFoundError, and store nothing, when
	// the cluster does not exist (no batch created it, or it was deleted) when it applies.
	// Ops logged before it existed decode without it and apply as they did.
	RequireCluster bool
}

// PlanResult is what a PlanOp did.
type PlanResult struct {
	// Plan is the plan as the op left it.
	Plan *Plan
	// Commit is the outcome of a commit: Rejected is aligned with the decisions of the plan
	// as it was proposed (pipelines are never rejected).
	Commit *CommitOutcome
	// Decisions are the committed plan's decisions (a finished plan no longer holds them).
	Decisions []api.Decision
}

// ErrPlanNotFound is matched (errors.Is) by the error for a plan the store does not hold.
var ErrPlanNotFound = errors.New("plan not found")

// PlanNotFoundError says that the cluster holds no plan with this id (never proposed, a dry
// run, or dropped by the retention rule).
type PlanNotFoundError struct {
	Cluster, ID string
}

// Error implements error.
func (e *PlanNotFoundError) Error() string {
	return fmt.Sprintf("plan %q not found in cluster %q (dry runs are never stored; finished plans are dropped after a while)", e.ID, e.Cluster)
}

// Is makes errors.Is(err, ErrPlanNotFound) true.
func (e *PlanNotFoundError) Is(target error) bool { return target == ErrPlanNotFound }

// ErrPlanState is matched (errors.Is) by every *PlanStateError.
var ErrPlanState = errors.New("plan is not in a state that allows this")

// PlanStateError says that a plan cannot be committed or discarded in its state.
type PlanStateError struct {
	ID    string
	State PlanState
	// Action is what was asked.
	Action PlanAction
}

// Error implements error.
func (e *PlanStateError) Error() string {
	verb := "committed"
	if e.Action == PlanDiscard {
		verb = "discarded"
	}
	return fmt.Sprintf("plan %q is %s and cannot be %s", e.ID, e.State, verb)
}

// Is makes errors.Is(err, ErrPlanState) true.
func (e *PlanStateError) Is(target error) bool { return target == ErrPlanState }

// SchedulerConfig is a cluster's own scheduler configuration: Volcano scheduler-conf text,
// checked by the engine before it is stored.
type SchedulerConfig struct {
	Text string
	// Version counts the configurations set on the cluster (1 for the first).
	Version   uint64
	UpdatedAt time.Time
}

// Etag returns the configuration's etag (see ConfigEtag).
func (c *SchedulerConfig) Etag() string { return ConfigEtag(c.Version, c.Text) }

// ConfigEtag returns the etag of a configuration: its version (0 for a server's default,
// which is not stored) and a digest of its text. The version changes with every write, even
// of the same text; the digest keeps an etag from before a DeleteCluster, whose versions start
// again from 1, from matching a later configuration with other text.
func ConfigEtag(version uint64, text string) string {
	sum := sha256.Sum256([]byte(text))
	return strconv.FormatUint(version, 10) + "-" + hex.EncodeToString(sum[:8])
}

// ConfigOp sets a cluster's scheduler configuration.
type ConfigOp struct {
	Text string
	Now  time.Time
	// IfEtag, when not empty, makes the op conditional: it applies only if the etag of the
	// configuration in effect is IfEtag (the cluster's own configuration's, or DefaultEtag
	// when it has none); otherwise it fails with a *ConfigEtagError and changes nothing. The
	// check runs when the op applies, in its transaction, so no other write comes between.
	IfEtag string
	// DefaultEtag is the etag of the leader's default configuration when the op was made.
	DefaultEtag string
	// RequireCluster makes the op fail with a *ClusterNotFoundError, and store nothing, when
	// the cluster does not exist when it applies (see PlanOp.RequireCluster).
	RequireCluster bool
}

// ErrConfigEtagMismatch is matched (errors.Is) by every *ConfigEtagError.
var ErrConfigEtagMismatch = errors.New("scheduler configuration changed since the etag")

// ConfigEtagError says that a conditional ConfigOp found another configuration in effect.
type ConfigEtagError struct {
	Cluster string
	// Want is the op's IfEtag; Have is the etag of the configuration in effect.
	Want, Have string
}

// Error implements error.
func (e *ConfigEtagError) Error() string {
	return fmt.Sprintf("the scheduler configuration of cluster %q changed: its etag is %q, not %q; read it again and retry",
		e.Cluster, e.Have, e.Want)
}

// Is makes errors.Is(err, ErrConfigEtagMismatch) true.
func (e *ConfigEtagError) Is(target error) bool { return target == ErrConfigEtagMismatch }

// checkEtag returns a *ConfigEtagError when a conditional op does not match the configuration
// in effect (cur, or the default when cur is nil).
func (op *ConfigOp) checkEtag(cluster string, cur *SchedulerConfig) error {
	if op.IfEtag == "" {
		return nil
	}
	have := op.DefaultEtag
	if cur != nil {
		have = cur.Etag()
	}
	if have != op.IfEtag {
		return &ConfigEtagError{Cluster: cluster, Want: op.IfEtag, Have: have}
	}
	return nil
}

// planCounter is a cluster's highest plan sequence number, kept after its plans are dropped
// so that ids never repeat.
type planCounter struct {
	Seq uint64
	// Expired counts the plans that expired before a commit or discard.
	Expired uint64
}

// Keys of the single rows of the configs and plan counters tables.
const (
	configKey  = "config"
	counterKey = "plans"
)

// Plan returns the stored plan with that id.
func (v *View) Plan(id string) (*Plan, bool) { return one[Plan](v, tablePlans, id) }

// Plans returns the cluster's stored plans, by id.
func (v *View) Plans() []*Plan { return all[Plan](v, tablePlans) }

// Config returns the cluster's own scheduler configuration, if one was set.
func (v *View) Config() (*SchedulerConfig, bool) {
	return one[SchedulerConfig](v, tableConfigs, configKey)
}

// PlanSeq returns the highest plan sequence number the cluster has used.
func (v *View) PlanSeq() uint64 { return v.counter().Seq }

// counter returns a copy of the cluster's plan counter (zero when it has none).
func (v *View) counter() planCounter {
	c, ok := one[planCounter](v, tablePlanCounters, counterKey)
	if !ok {
		return planCounter{}
	}
	return *c
}

// ExpiredPlans returns, for every cluster that proposed a plan, how many of its plans expired
// before a commit or discard as of now: those the store recorded, and proposed plans past
// their deadline that no write recorded yet.
func (s *Store) ExpiredPlans(now time.Time) map[string]uint64 {
	txn := s.load().Txn(false)
	it, err := txn.Get(tablePlanCounters, indexID)
	if err != nil {
		panic(fmt.Sprintf("state: listing plan counters: %v", err))
	}
	out := map[string]uint64{}
	for o := it.Next(); o != nil; o = it.Next() {
		r := o.(*row[planCounter])
		n := r.obj.Expired
		v := View{txn: txn, cluster: r.cluster}
		for _, p := range v.Plans() {
			if p.State == PlanProposed && p.StateAt(now) == PlanExpired {
				n++
			}
		}
		out[r.cluster] = n
	}
	return out
}

// ApplyPlan applies one step of a plan's life in one transaction: a proposal, a commit, a
// discard or an auto-commit, then the retention rule (expire proposed plans past their
// deadline or beyond MaxProposed; drop finished plans beyond MaxFinished or older than
// MaxAge). A commit's decisions change the cluster's revision as Store.CommitPlan's do;
// plans alone never do. Errors: *PlanNotFoundError, *PlanStateError, a *ValidationError for
// a malformed op. With a Replicator the op goes through the log.
func (s *Store) ApplyPlan(cluster string, op *PlanOp) (*PlanResult, error) {
	if err := checkPlanOp(op); err != nil {
		return nil, err
	}
	if s.repl == nil {
		return s.applyPlan(cluster, op)
	}
	// What the leader's state already refuses, or already holds, never reaches the log; the
	// checks run again when the op applies.
	if res, err := s.precheckPlan(cluster, op); res != nil || err != nil {
		return res, err
	}
	res, err := s.replicate(cluster, &Op{Cluster: cluster, Plan: op})
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return res.Plan, nil
}

// precheckPlan checks a plan op against the current state without writing: it returns the
// op's error when the state refuses it, the op's result when it would change nothing (a
// discard of a finished plan), or neither when the op must go through the log.
func (s *Store) precheckPlan(cluster string, op *PlanOp) (*PlanResult, error) {
	if err := checkCluster(cluster); err != nil {
		return nil, err
	}
	v := s.Snapshot(cluster)
	if op.RequireCluster && !v.Exists() {
		return nil, &ClusterNotFoundError{Cluster: cluster}
	}
	switch op.Action {
	case PlanPropose, PlanAutoCommit:
		if _, ok := v.Plan(op.Plan.ID); ok {
			return nil, &ValidationError{Index: -1, Field: "plan.id", Msg: fmt.Sprintf("plan %q already exists", op.Plan.ID)}
		}
	case PlanCommitByID, PlanDiscard:
		p, ok := v.Plan(op.ID)
		if !ok {
			return nil, &PlanNotFoundError{Cluster: cluster, ID: op.ID}
		}
		switch st := p.StateAt(op.Now); {
		case st == PlanProposed:
		case op.Action == PlanDiscard && st != PlanCommitted:
			return &PlanResult{Plan: p}, nil
		default:
			return nil, &PlanStateError{ID: op.ID, State: st, Action: op.Action}
		}
	}
	return nil, nil
}

// checkPlanOp refuses a malformed op before it can reach a log.
func checkPlanOp(op *PlanOp) error {
	bad := func(field, msg string) error { return &ValidationError{Index: -1, Field: field, Msg: msg} }
	switch op.Action {
	case PlanPropose, PlanAutoCommit:
		switch {
		case op.Plan == nil:
			return bad("plan", "a new plan is required")
		case op.Plan.ID == "":
			return bad("plan.id", "must not be empty")
		case op.Plan.Seq == 0:
			return bad("plan.seq", "must be positive")
		}
	case PlanCommitByID, PlanDiscard:
		if op.ID == "" {
			return bad("id", "must not be empty")
		}
	default:
		return bad("action", fmt.Sprintf("unknown plan action %d", op.Action))
	}
	return nil
}

// SetConfig stores a cluster's scheduler configuration (text the engine checked). It does not
// change the cluster's revision. A conditional op (IfEtag) that does not match fails with a
// *ConfigEtagError. With a Replicator the op goes through the log; one that the current
// state already refuses never reaches it.
func (s *Store) SetConfig(cluster string, op *ConfigOp) (*SchedulerConfig, error) {
	if s.repl == nil {
		return s.setConfig(cluster, op)
	}
	if err := checkCluster(cluster); err != nil {
		return nil, err
	}
	snap := s.Snapshot(cluster)
	if op.RequireCluster && !snap.Exists() {
		return nil, &ClusterNotFoundError{Cluster: cluster}
	}
	cur, _ := snap.Config()
	if err := op.checkEtag(cluster, cur); err != nil {
		return nil, err
	}
	res, err := s.replicate(cluster, &Op{Cluster: cluster, Config: op})
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return res.Config, nil
}

func (s *Store) setConfig(cluster string, op *ConfigOp) (*SchedulerConfig, error) {
	var out *SchedulerConfig
	_, err := s.metaWrite(cluster, func(tx *Txn) error {
		if op.RequireCluster && !tx.Exists() {
			return &ClusterNotFoundError{Cluster: cluster}
		}
		cur, _ := tx.Config()
		if err := op.checkEtag(cluster, cur); err != nil {
			return err
		}
		out = &SchedulerConfig{Text: op.Text, Version: 1, UpdatedAt: op.Now}
		if cur != nil {
			out.Version = cur.Version + 1
		}
		return tx.putMeta(tableConfigs, configKey, out)
	})
	return out, err
}

// metaWrite runs fn in one write transaction that is committed whenever fn succeeds. The
// cluster's revision advances only when fn changed cluster objects (through Txn.Upsert);
// rows of plans and configurations, written with putMeta, leave it alone.
func (s *Store) metaWrite(cluster string, fn func(tx *Txn) error) (uint64, error) {
	if err := checkCluster(cluster); err != nil {
		return s.Revision(cluster), err
	}
	w, rev, objects := s.newWriter(cluster, true)
	txn := w.txn
	defer txn.Abort()
	tx := &Txn{View: View{txn: txn, cluster: cluster, rev: rev}, w: w}
	err := fn(tx)
	tx.w = nil
	if err == nil {
		err = tx.broken
	}
	if err != nil {
		return rev, err
	}
	if tx.changed {
		rev++
		if err := txn.Insert(tableClusters, w.newRevisionRow(clusterRowOf(txn, cluster), rev, objects+w.objects)); err != nil {
			return rev - 1, fmt.Errorf("state: advancing the revision of cluster %q: %w", cluster, err)
		}
	}
	txn.Commit()
	return rev, nil
}

// putMeta inserts or replaces a plan, configuration or counter row. Its modify revision is
// the cluster's revision before the transaction.
func putMeta[T any](tx *Txn, table, key string, obj *T) error {
	r := newRow(tx.cluster, key, obj, "", "")
	r.rev = tx.rev
	if err := tx.txn.Insert(table, r); err != nil {
		return fmt.Errorf("state: writing %s %q: %w", table, key, err)
	}
	return nil
}

func (tx *Txn) putMeta(table, key string, obj any) error {
	switch o := obj.(type) {
	case *Plan:
		return putMeta(tx, table, key, o)
	case *SchedulerConfig:
		return putMeta(tx, table, key, o)
	case *planCounter:
		return putMeta(tx, table, key, o)
	}
	return fmt.Errorf("state: no meta table holds %T", obj)
}

// dropPlan deletes a plan row.
func (tx *Txn) dropPlan(p *Plan) error {
	if _, err := tx.txn.DeleteAll(tablePlans, indexID, tx.cluster, p.ID); err != nil {
		return fmt.Errorf("state: dropping plan %q: %w", p.ID, err)
	}
	return nil
}

func (s *Store) applyPlan(cluster string, op *PlanOp) (*PlanResult, error) {
	res := &PlanResult{}
	_, err := s.metaWrite(cluster, func(tx *Txn) error {
		if op.RequireCluster && !tx.Exists() {
			return &ClusterNotFoundError{Cluster: cluster}
		}
		var err error
		switch op.Action {
		case PlanPropose:
			res.Plan, err = tx.proposePlan(op.Plan)
		case PlanAutoCommit:
			if res.Plan, err = tx.proposePlan(op.Plan); err == nil {
				err = tx.commitStoredPlan(res.Plan, op.Now, res)
			}
		case PlanCommitByID:
			var p *Plan
			if p, err = tx.proposed(op.ID, op.Now, op.Action); err == nil {
				err = tx.commitStoredPlan(p, op.Now, res)
			}
		case PlanDiscard:
			res.Plan, err = tx.discardPlan(op.ID, op.Now)
		}
		if err != nil {
			return err
		}
		return tx.retainPlans(op.Now, op.Retention.withDefaults())
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// proposePlan stores a new proposed plan and raises the cluster's plan counter.
func (tx *Txn) proposePlan(p *Plan) (*Plan, error) {
	if _, ok := tx.Plan(p.ID); ok {
		return nil, &ValidationError{Index: -1, Field: "plan.id", Msg: fmt.Sprintf("plan %q already exists", p.ID)}
	}
	c := *p.withCounts()
	c.State = PlanProposed
	c.Rejections, c.DecisionsDropped = nil, false
	if err := tx.putMeta(tablePlans, c.ID, &c); err != nil {
		return nil, err
	}
	if cur := tx.counter(); c.Seq > cur.Seq {
		cur.Seq = c.Seq
		if err := tx.putMeta(tablePlanCounters, counterKey, &cur); err != nil {
			return nil, err
		}
	}
	return &c, nil
}

// proposed returns a plan that may still be committed or discarded at now.
func (tx *Txn) proposed(id string, now time.Time, action PlanAction) (*Plan, error) {
	p, ok := tx.Plan(id)
	if !ok {
		return nil, &PlanNotFoundError{Cluster: tx.cluster, ID: id}
	}
	if st := p.StateAt(now); st != PlanProposed {
		return nil, &PlanStateError{ID: id, State: st, Action: action}
	}
	return p, nil
}

// commitStoredPlan writes a proposed plan's binds, evictions and job phases as
// Store.CommitPlan does, and marks the plan committed in the same transaction.
func (tx *Txn) commitStoredPlan(p *Plan, now time.Time, res *PlanResult) error {
	out := &CommitOutcome{Rejected: make([]string, len(p.Decisions))}
	applied, rejected := 0, 0
	for i, d := range p.Decisions {
		var kind DecisionKind
		switch d.Kind {
		case api.DecisionBind:
			kind = Bind
		case api.DecisionEvict:
			kind = Evict
		default:
			continue
		}
		reason, err := tx.applyDecision(p.BaseRevision, PlanDecision{Kind: kind, Task: d.Task, Node: d.Node, DeviceIDs: d.DeviceIDs})
		if err != nil {
			return err
		}
		out.Rejected[i] = reason
		if reason == "" {
			applied++
		} else {
			rejected++
		}
	}
	for _, o := range p.Jobs {
		if o.Phase != o.PreviousPhase {
			if err := tx.applyPhase(p.BaseRevision, PhaseChange{Job: o.Job, Phase: o.Phase}); err != nil {
				return err
			}
		}
	}
	out.Revision = tx.rev
	if tx.changed {
		out.Revision = tx.rev + 1
	}
	done := p.finished(PlanCommitted, now)
	done.Applied, done.Rejected = applied, rejected
	done.Rejections = out.Rejected
	done.CommittedRevision = out.Revision
	if err := tx.putMeta(tablePlans, done.ID, done); err != nil {
		return err
	}
	res.Plan, res.Commit, res.Decisions = done, out, p.Decisions
	return nil
}

// discardPlan discards a proposed plan. Discarding one already discarded or expired does
// nothing and succeeds; a committed plan cannot be discarded.
func (tx *Txn) discardPlan(id string, now time.Time) (*Plan, error) {
	p, ok := tx.Plan(id)
	if !ok {
		return nil, &PlanNotFoundError{Cluster: tx.cluster, ID: id}
	}
	switch st := p.StateAt(now); st {
	case PlanCommitted:
		return nil, &PlanStateError{ID: id, State: st, Action: PlanDiscard}
	case PlanProposed:
		done := p.finished(PlanDiscarded, now)
		return done, tx.putMeta(tablePlans, id, done)
	}
	return p, nil
}

// retainPlans applies the retention rule to the cluster's plans at now.
func (tx *Txn) retainPlans(now time.Time, r PlanRetention) error {
	plans := tx.Plans()
	var proposed, finished []*Plan
	var expired uint64
	for _, p := range plans {
		if p.State == PlanProposed && now.After(p.ExpiresAt) {
			done := p.finished(PlanExpired, p.ExpiresAt)
			if err := tx.putMeta(tablePlans, p.ID, done); err != nil {
				return err
			}
			p = done
			expired++
		}
		if p.State == PlanProposed {
			proposed = append(proposed, p)
		} else {
			finished = append(finished, p)
		}
	}
	bySeq := func(a, b *Plan) int { return cmp.Compare(a.Seq, b.Seq) }
	slices.SortFunc(proposed, bySeq)
	for len(proposed) > r.MaxProposed {
		done := proposed[0].finished(PlanExpired, now)
		if err := tx.putMeta(tablePlans, done.ID, done); err != nil {
			return err
		}
		finished = append(finished, done)
		proposed = proposed[1:]
		expired++
	}
	if expired > 0 {
		c := tx.counter()
		c.Expired += expired
		if err := tx.putMeta(tablePlanCounters, counterKey, &c); err != nil {
			return err
		}
	}
	// Newest finished first; ties by sequence, so that every replica drops the same.
	slices.SortFunc(finished, func(a, b *Plan) int {
		if c := b.FinishedAt.Compare(a.FinishedAt); c != 0 {
			return c
		}
		return bySeq(b, a)
	})
	kept := 0
	for i, p := range finished {
		if i >= r.MaxFinished || now.Sub(p.FinishedAt) > r.MaxAge {
			if err := tx.dropPlan(p); err != nil {
				return err
			}
			continue
		}
		if p.DecisionsDropped || len(p.Decisions) == 0 {
			continue
		}
		// Newest first: the oldest records go first when the budget runs out.
		if kept+len(p.Decisions) > r.MaxKeptDecisions {
			c := *p
			c.dropDecisions()
			if err := tx.putMeta(tablePlans, c.ID, &c); err != nil {
				return err
			}
			continue
		}
		kept += len(p.Decisions)
	}
	return nil
}

package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// Errors the service layer maps to gRPC codes.
var (
	// ErrNotFound: the plan, job or queue does not exist.
	ErrNotFound = errors.New("not found")
	// ErrFailedPrecondition: the plan cannot be committed or discarded in its state.
	ErrFailedPrecondition = errors.New("failed precondition")
	// ErrInvalidConfig: a scheduler configuration was refused (see ConfigError).
	ErrInvalidConfig = errors.New("invalid scheduler configuration")
)

// Mode says what happens to a plan after the cycle.
type Mode int

// Modes.
const (
	// Propose keeps the plan until CommitPlan or DiscardPlan, or until it expires.
	Propose Mode = iota + 1
	// AutoCommit commits the plan at once.
	AutoCommit
	// DryRun never applies the plan.
	DryRun
)

// Options configure an Engine.
type Options struct {
	// Registry holds the actions and plugins; required.
	Registry *framework.Registry
	// DefaultConfig is used for clusters without a configuration of their own; nil means
	// conf.Default().
	DefaultConfig *conf.Config
	// PlanTTL is how long a proposed plan may wait for a commit (default 60s).
	PlanTTL time.Duration
	// Retention bounds the plans each cluster keeps (zero fields take the store's defaults).
	Retention state.PlanRetention
	// Clock gives the server's wall clock (default time.Now).
	Clock func() time.Time
	// Logger receives structured logs (default discards).
	Logger *slog.Logger
	// Observer, if set, is told the timings of every cycle's plugin opens and actions.
	Observer framework.Observer
	// FromScratch makes every cycle build its session from the snapshot, as the reference
	// the kept views (framework.Views) are tested against; by default a cluster's cycles
	// patch the views its previous cycles left.
	FromScratch bool
}

// Engine runs cycles and owns plans and scheduler configurations, which it keeps in the
// store (and so, with a replicated store, in the log). It is safe for concurrent use.
type Engine struct {
	store     *state.Store
	reg       *framework.Registry
	ttl       time.Duration
	retention state.PlanRetention
	clock     func() time.Time
	log       *slog.Logger
	observer  framework.Observer
	// fromScratch is Options.FromScratch.
	fromScratch bool

	mu sync.Mutex
	// defaults is the configuration of clusters without their own, defaultsEtag its etag;
	// defaultsGen counts its changes (SetDefaultConfig).
	defaults     *conf.Config
	defaultsEtag string
	defaultsGen  uint64
	// parsed caches each cluster's stored configuration, parsed.
	parsed map[string]parsedConfig
	// clusters holds a record per cluster that had a cycle whose plan may be committed on
	// this member; a cluster's record goes when the cluster does (DeleteCluster, prune).
	clusters map[string]*clusterRecord
	// seqFloor is at least every plan sequence number this member used for a cluster it
	// forgot since, so that a cluster written again never gets a plan id it had before.
	seqFloor uint64
	// dryRunSeq numbers dry runs, across clusters.
	dryRunSeq uint64
	dryRuns   dryRunCache
}

// parsedConfig is a stored configuration and its parse. The stored row is immutable and every
// write stores a new one, so the row itself tells whether the cache is current (versions do
// not: they start again after a cluster is deleted).
type parsedConfig struct {
	stored *state.SchedulerConfig
	cfg    *conf.Config
}

// clusterRecord keeps what the engine remembers of a cluster between cycles on this member.
// It is derived and advisory (explanations, queue figures, the plugins' memory); plans and
// configurations are in the store.
type clusterRecord struct {
	memory *framework.Memory
	// outcomes are the job outcomes of the cluster's latest cycle that was not a dry run,
	// sorted by job key (its Result.Jobs, shared and never changed: ExplainJob searches
	// them), and outcomesPlan is that cycle's plan id. Jobs gone from the store have none.
	outcomes     []framework.JobOutcome
	outcomesPlan string
	queues       map[string]framework.QueueOutcome
	// queueList holds queues' outcomes in the cycle's order (by queue name).
	queueList []framework.QueueOutcome
	queuesRev uint64
	// seq is the last plan sequence number this member used for the cluster.
	seq uint64
	// views are the session views the cluster's cycles keep between them.
	views framework.Views
}

// New returns an engine over the store.
func New(store *state.Store, opts Options) (*Engine, error) {
	if opts.Registry == nil {
		return nil, errors.New("engine: a registry is required")
	}
	e := &Engine{
		store:       store,
		reg:         opts.Registry,
		defaults:    opts.DefaultConfig,
		ttl:         opts.PlanTTL,
		retention:   opts.Retention,
		clock:       opts.Clock,
		log:         opts.Logger,
		observer:    opts.Observer,
		parsed:      map[string]parsedConfig{},
		fromScratch: opts.FromScratch,
		clusters:    map[string]*clusterRecord{},
	}
	if e.defaults == nil {
		e.defaults = conf.Default()
	}
	if err := e.reg.Validate(e.defaults); err != nil {
		return nil, fmt.Errorf("engine: default configuration: %w", err)
	}
	e.defaultsEtag = defaultEtag(e.defaults)
	if e.ttl <= 0 {
		e.ttl = 60 * time.Second
	}
	if e.clock == nil {
		e.clock = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e, nil
}

// ConfigError is a scheduler configuration the engine refuses. It matches ErrInvalidConfig.
type ConfigError struct {
	// Path locates the problem in the configuration, e.g. "tiers[1].plugins[2]" ("" for the
	// document as a whole); Line is its 1-based line in the text, 0 if unknown.
	Path string
	Line int
	Msg  string
}

// Error implements error.
func (e *ConfigError) Error() string {
	return ErrInvalidConfig.Error() + ": " + e.Detail()
}

// Detail is the problem without the error's prefix: "path: msg (line N)".
func (e *ConfigError) Detail() string {
	return (&conf.Error{Path: e.Path, Line: e.Line, Msg: e.Msg}).Error()
}

// Is makes errors.Is(err, ErrInvalidConfig) true.
func (e *ConfigError) Is(target error) bool { return target == ErrInvalidConfig }

// configError wraps a parse or validation error as a *ConfigError: one *conf.Error keeps its
// path; several (conf.Validate joins them) become one message.
func configError(err error) error {
	if ce, ok := err.(*conf.Error); ok {
		return &ConfigError{Path: ce.Path, Line: ce.Line, Msg: ce.Msg}
	}
	return &ConfigError{Msg: err.Error()}
}

// ParseConfig parses and validates a scheduler configuration against the registry. Its error
// is a *ConfigError.
func (e *Engine) ParseConfig(text []byte) (*conf.Config, error) {
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, configError(err)
	}
	if err := e.reg.Validate(cfg); err != nil {
		return nil, configError(err)
	}
	return cfg, nil
}

// SetDefaultConfig makes cfg (already checked with ParseConfig) the configuration of every
// cluster without its own, from the next cycle on. Setting the configuration in force again
// changes nothing. It reports whether the default changed.
func (e *Engine) SetDefaultConfig(cfg *conf.Config) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if cfg.Raw() != nil && bytes.Equal(cfg.Raw(), e.defaults.Raw()) {
		return false
	}
	e.defaults, e.defaultsEtag = cfg, defaultEtag(cfg)
	e.defaultsGen++
	return true
}

// ConfigText returns a configuration's text: as it was given, or rendered when it was built
// in code.
func ConfigText(cfg *conf.Config) (string, error) {
	if raw := cfg.Raw(); raw != nil {
		return string(raw), nil
	}
	raw, err := cfg.Marshal()
	return string(raw), err
}

// defaultEtag returns the etag of a default configuration (version 0: it is not stored).
func defaultEtag(cfg *conf.Config) string {
	text, err := ConfigText(cfg)
	if err != nil {
		// Not renderable (only a configuration built in code with bad names): its fields
		// stand for its text.
		text = fmt.Sprintf("%#v", *cfg)
	}
	return state.ConfigEtag(0, text)
}

// DefaultConfigEtag returns the etag of the default configuration, which clusters without
// their own use.
func (e *Engine) DefaultConfigEtag() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.defaultsEtag
}

// Config returns the cluster's configuration: its own, as stored, else the default.
func (e *Engine) Config(cluster string) (*conf.Config, error) {
	cfg, _, err := e.ConfigWithEtag(cluster)
	return cfg, err
}

// ConfigWithEtag returns the cluster's configuration, as Config does, and its etag (the
// stored configuration's, or the default's), read together. A cluster that does not exist is
// a *state.ClusterNotFoundError.
func (e *Engine) ConfigWithEtag(cluster string) (*conf.Config, string, error) {
	snap := e.store.Snapshot(cluster)
	if !snap.Exists() {
		return nil, "", &state.ClusterNotFoundError{Cluster: cluster}
	}
	sc, ok := snap.Config()
	e.mu.Lock()
	defer e.mu.Unlock()
	if !ok {
		return e.defaults, e.defaultsEtag, nil
	}
	if p, ok := e.parsed[cluster]; ok && p.stored == sc {
		return p.cfg, sc.Etag(), nil
	}
	cfg, err := conf.Parse([]byte(sc.Text))
	if err == nil {
		err = e.reg.Validate(cfg)
	}
	if err != nil {
		// Only a configuration that this build's registry refuses (stored by another
		// version) gets here.
		return nil, "", fmt.Errorf("cluster %q: stored scheduler configuration version %d: %w", cluster, sc.Version, configError(err))
	}
	e.parsed[cluster] = parsedConfig{stored: sc, cfg: cfg}
	return cfg, sc.Etag(), nil
}

// ConfigVersion changes whenever the configuration of a cluster's cycles may have changed:
// its own was set, or, for a cluster without one, the default changed.
func (e *Engine) ConfigVersion(cluster string) uint64 {
	sc, ok := e.store.Snapshot(cluster).Config()
	e.mu.Lock()
	defer e.mu.Unlock()
	if ok {
		return sc.Version<<32 | e.defaultsGen&(1<<32-1)
	}
	return e.defaultsGen
}

// SetConfig validates a configuration and stores it as the cluster's own (with a replicated
// store, through the log); from then on the default no longer applies to the cluster. On
// error (a *ConfigError, or the store's) nothing changes.
func (e *Engine) SetConfig(cluster string, text []byte) (*conf.Config, error) {
	cfg, _, err := e.UpdateConfig(cluster, text, "")
	return cfg, err
}

// UpdateConfig is SetConfig with a precondition: with ifEtag set, the configuration is stored
// only if the etag of the one in effect (ConfigWithEtag) is ifEtag, checked in the store's
// write (so, with a replicated store, when the op applies); otherwise it fails with a
// *state.ConfigEtagError (errors.Is state.ErrConfigEtagMismatch) and nothing changes. A
// cluster that does not exist (checked in the same write) is a *state.ClusterNotFoundError:
// a configuration never creates a cluster. It returns the new configuration and its etag.
func (e *Engine) UpdateConfig(cluster string, text []byte, ifEtag string) (*conf.Config, string, error) {
	cfg, err := e.ParseConfig(text)
	if err != nil {
		return nil, "", err
	}
	sc, err := e.store.SetConfig(cluster, &state.ConfigOp{
		Text: string(text), Now: e.clock(), IfEtag: ifEtag, DefaultEtag: e.DefaultConfigEtag(),
		RequireCluster: true,
	})
	if err != nil {
		return nil, "", err
	}
	e.mu.Lock()
	e.parsed[cluster] = parsedConfig{stored: sc, cfg: cfg}
	e.mu.Unlock()
	e.log.Info("scheduler configuration updated", "cluster", cluster, "version", sc.Version, "actions", cfg.Actions)
	return cfg, sc.Etag(), nil
}

// DeleteCluster deletes everything of a cluster from the store (with a replicated store,
// through the log; see state.Store.DeleteCluster) and forgets what the engine remembers of it:
// its parsed configuration, the explanations and queue figures of its last cycles, its
// plugins' memory. Only the sequence of plan numbers this member used is kept, so that the
// plan ids it gives the cluster's next plans do not repeat older ones. It returns the cluster
// as it was, or an error matching state.ErrClusterNotFound when the store holds nothing for
// it. The caller keeps cycles of the cluster from running meanwhile.
func (e *Engine) DeleteCluster(cluster string) (*state.ClusterInfo, error) {
	info, err := e.store.DeleteCluster(cluster)
	if err != nil {
		return nil, err
	}
	e.forget(cluster)
	e.dryRuns.forget(cluster)
	e.log.Info("cluster deleted", "cluster", cluster, "revision", info.Revision)
	return info, nil
}

// forget drops what the engine remembers of a cluster; its plan sequence raises seqFloor.
func (e *Engine) forget(cluster string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgetLocked(cluster)
}

func (e *Engine) forgetLocked(cluster string) {
	delete(e.parsed, cluster)
	if rec, ok := e.clusters[cluster]; ok {
		e.seqFloor = max(e.seqFloor, rec.seq)
		delete(e.clusters, cluster)
	}
}

// prune forgets the clusters the store no longer holds: deleted through another member of a
// replicated store, whose DeleteCluster this engine did not see.
func (e *Engine) prune() {
	e.mu.Lock()
	var names []string
	for c := range e.clusters {
		names = append(names, c)
	}
	for c := range e.parsed {
		names = append(names, c)
	}
	e.mu.Unlock()
	for _, c := range names {
		if !e.store.Snapshot(c).Exists() {
			e.forget(c)
		}
	}
}

// Clusters returns how many clusters the engine keeps a record of (for tests of what a
// cluster leaves behind).
func (e *Engine) Clusters() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.clusters) + len(e.parsed)
}

func (e *Engine) record(cluster string) *clusterRecord {
	r, ok := e.clusters[cluster]
	if !ok {
		r = &clusterRecord{
			memory: framework.NewMemory(),
			queues: map[string]framework.QueueOutcome{},
			seq:    e.seqFloor,
		}
		e.clusters[cluster] = r
	}
	return r
}

// ScheduleRequest asks for one cycle.
type ScheduleRequest struct {
	Mode Mode
	// Now is the cycle's clock; zero means the engine's clock.
	Now time.Time
	// Config overrides the cluster's configuration (dry runs only); nil means none.
	Config *conf.Config
	// Observer, if set, is told this cycle's timings (besides Options.Observer).
	Observer framework.Observer
	// Pacer, if set, may pause the cycle at its checkpoints (framework.Pacer), so that the
	// caller can give the machine to other work meanwhile.
	Pacer *framework.Pacer
	// Hypothetical, for a dry run, is a batch of changes the cycle sees on top of the
	// cluster's state and that is never stored (see state.Store.Hypothetical); the plan
	// marks what concerns its objects (Plan.Hypothetical). nil means none.
	Hypothetical *state.Batch
}

// Schedule runs one cycle on the cluster's current snapshot and returns its plan. A proposed
// plan is stored (with a replicated store, through the log) before Schedule returns; an
// auto-commit stores and commits it in one step and returns what the commit applied and
// rejected in Plan.Commit; a dry run stores nothing and leaves nothing behind: no record of
// the cluster, no explanation, no plugin memory (only its plan, in the bounded cache GetPlan
// reads). A cluster that does not exist is a *state.ClusterNotFoundError, and nothing is
// kept of it. When ctx ends during the cycle, the cycle stops at the next job (or node
// check), nothing is stored, and Schedule returns ctx's error.
func (e *Engine) Schedule(ctx context.Context, cluster string, req ScheduleRequest) (*Plan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if req.Mode == 0 {
		req.Mode = Propose
	}
	if req.Config != nil && req.Mode != DryRun {
		return nil, &ConfigError{Msg: "a configuration override is allowed only for a dry run"}
	}
	if req.Hypothetical != nil && req.Mode != DryRun {
		return nil, ErrHypotheticalNotDryRun
	}
	snap := e.store.Snapshot(cluster)
	if !snap.Exists() {
		return nil, &state.ClusterNotFoundError{Cluster: cluster}
	}
	cfg := req.Config
	if cfg == nil {
		var err error
		if cfg, err = e.Config(cluster); err != nil {
			return nil, err
		}
	}
	now := req.Now
	if now.IsZero() {
		now = e.clock()
	}
	if req.Hypothetical != nil {
		// The what-if's changes on top of the cluster as it is now (never stored).
		var err error
		if snap, err = e.snapshot(cluster, req.Hypothetical); err != nil {
			return nil, err
		}
	}
	fsnap := toFrameworkSnapshot(cluster, snap)

	var rec *clusterRecord
	var seq uint64
	var memory *framework.Memory
	var views *framework.Views
	e.mu.Lock()
	if req.Mode == DryRun {
		// A dry run leaves no trace: it plays on a copy of the plugins' memory, and its id
		// comes from a counter of its own. It uses the kept views of a cluster that has them
		// (and leaves them as it found them), but creates none.
		e.dryRunSeq++
		seq = e.dryRunSeq
		if r, ok := e.clusters[cluster]; ok {
			memory = r.memory
			views = &r.views
		}
	} else {
		rec = e.record(cluster)
		rec.seq = max(rec.seq, snap.PlanSeq()) + 1
		seq, memory, views = rec.seq, rec.memory, &rec.views
	}
	e.mu.Unlock()
	if e.fromScratch || req.Hypothetical != nil {
		views = nil
	}
	id := newPlanID(cluster, fsnap.Revision, seq, req.Mode == DryRun)
	if memory == nil {
		memory = framework.NewMemory()
	} else if req.Mode == DryRun {
		memory = memory.Clone()
	}

	start := time.Now()
	ssn, err := framework.OpenSession(fsnap, cfg, e.reg, framework.Options{Now: now, Logger: e.log, UID: id,
		Observer: joinObservers(e.observer, req.Observer), Memory: memory, Context: ctx, Pacer: req.Pacer,
		Views: views})
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("open session: %w", err)
	}
	if err = ssn.RunActions(e.reg); err != nil {
		ssn.Abandon()
		if cerr := ctx.Err(); cerr != nil {
			return nil, cerr
		}
		return nil, fmt.Errorf("run actions: %w", err)
	}
	kept := ssn.FromKeptViews()
	res := ssn.Close()
	elapsed := time.Since(start)

	wall := e.clock()
	plan := &Plan{
		ID:           id,
		Cluster:      cluster,
		BaseRevision: fsnap.Revision,
		ScheduledAt:  now,
		CreatedAt:    wall,
		ExpiresAt:    wall.Add(e.ttl),
		Result:       res,
		Duration:     elapsed,
		State:        PlanProposed,
		KeptViews:    kept,
	}
	plan.Counts = countsOf(res)
	plan.Hypothetical = markHypothetical(res, req.Hypothetical)
	switch req.Mode {
	case DryRun:
		plan.State = PlanDryRun
		e.dryRuns.add(plan)
	case Propose, AutoCommit:
		if err := e.store.CheckWritable(); err != nil {
			return nil, err
		}
		op := &state.PlanOp{Action: state.PlanPropose, Now: wall, Retention: e.retention, RequireCluster: true, Plan: &state.Plan{
			ID: id, Seq: seq, BaseRevision: plan.BaseRevision, State: PlanProposed,
			ScheduledAt: now, CreatedAt: wall, ExpiresAt: plan.ExpiresAt, Duration: elapsed,
			Decisions: res.Decisions, Jobs: res.Jobs, Timings: res.Timings,
		}}
		if req.Mode == AutoCommit {
			op.Action = state.PlanAutoCommit
		}
		if err := ctx.Err(); err != nil {
			return nil, err // cancelled: nothing is stored
		}
		stored, err := e.store.ApplyPlan(cluster, op)
		if err != nil {
			return nil, planError(err)
		}
		if req.Mode == AutoCommit {
			plan.State = PlanCommitted
			plan.Commit = commitResultOf(res.Decisions, stored.Commit)
			plan.CommittedRevision = stored.Plan.CommittedRevision
			plan.Rejections = stored.Commit.Rejected
			plan.Counts.Applied, plan.Counts.Rejected = stored.Plan.Applied, stored.Plan.Rejected
			plan.Commit.Plan = plan
		}
	}

	if rec != nil {
		e.mu.Lock()
		// The latest cycle's outcome of every job it saw; jobs gone from the store are
		// forgotten. A dry run's (and so a what-if's) are not kept. The outcomes are kept
		// as the cycle listed them, by job key, rather than indexed anew every cycle.
		rec.outcomes, rec.outcomesPlan = sortedOutcomes(res.Jobs), id
		rec.queues = make(map[string]framework.QueueOutcome, len(res.Queues))
		for _, q := range res.Queues {
			rec.queues[q.Queue] = q
		}
		rec.queueList = res.Queues
		rec.queuesRev = fsnap.Revision
		e.mu.Unlock()
	}
	e.log.Debug("cycle done", "cluster", cluster, "plan", id, "revision", fsnap.Revision,
		"decisions", len(res.Decisions), "duration", elapsed)
	return plan, nil
}

// joinObservers returns an observer that tells a and b, either of which may be nil.
func joinObservers(a, b framework.Observer) framework.Observer {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return observerPair{a, b}
}

type observerPair [2]framework.Observer

func (p observerPair) PluginOpened(name string, start time.Time, d time.Duration) {
	p[0].PluginOpened(name, start, d)
	p[1].PluginOpened(name, start, d)
}

func (p observerPair) ActionDone(name string, start time.Time, d time.Duration) {
	p[0].ActionDone(name, start, d)
	p[1].ActionDone(name, start, d)
}

// ExplainJob returns the job's outcome in the latest cycle that saw it, and that cycle's plan.
// Dry runs explain in their plans only: they change what ExplainJob answers for nobody.
func (e *Engine) ExplainJob(cluster, job string) (framework.JobOutcome, string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.clusters[cluster]
	if !ok {
		return framework.JobOutcome{}, "", fmt.Errorf("%w: no cycle has run for cluster %q", ErrNotFound, cluster)
	}
	i, ok := slices.BinarySearchFunc(rec.outcomes, job, func(o framework.JobOutcome, key string) int {
		return strings.Compare(o.Job, key)
	})
	if !ok {
		return framework.JobOutcome{}, "", fmt.Errorf("%w: job %q was in no cycle yet", ErrNotFound, job)
	}
	return rec.outcomes[i], rec.outcomesPlan, nil
}

// sortedOutcomes returns a cycle's job outcomes sorted by job key: the list itself, which a
// session gives in that order, or a sorted copy of a list that is not (so that ExplainJob's
// search holds whatever the session did).
func sortedOutcomes(jobs []framework.JobOutcome) []framework.JobOutcome {
	byJob := func(a, b framework.JobOutcome) int { return strings.Compare(a.Job, b.Job) }
	if slices.IsSortedFunc(jobs, byJob) {
		return jobs
	}
	out := slices.Clone(jobs)
	slices.SortStableFunc(out, byJob)
	return out
}

// QueueFigures returns a queue's figures as of the last (non dry-run) cycle and the revision
// that cycle saw.
func (e *Engine) QueueFigures(cluster, queue string) (framework.QueueFigures, uint64, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.clusters[cluster]
	if !ok {
		return framework.QueueFigures{}, 0, false
	}
	q, ok := rec.queues[queue]
	return q.QueueFigures, rec.queuesRev, ok
}

// QueueOutcomes returns, for every cluster that had a cycle that was not a dry run on this
// member, its queues' figures as of its last such cycle, by queue name. A cluster the store no
// longer holds (deleted through another member of a replicated store, whose engine did not
// see the delete) is left out, and forgotten. The figures are shared: callers must not
// modify them.
func (e *Engine) QueueOutcomes() map[string][]framework.QueueOutcome {
	e.prune()
	e.mu.Lock()
	lists := make(map[string][]framework.QueueOutcome, len(e.clusters))
	for c, rec := range e.clusters {
		if rec.queueList != nil {
			lists[c] = rec.queueList
		}
	}
	e.mu.Unlock()
	for c := range lists {
		if e.store.Revision(c) == 0 {
			delete(lists, c)
		}
	}
	return lists
}

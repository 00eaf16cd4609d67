package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	// ErrInvalidConfig: a scheduler configuration was refused.
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
	// Clock gives the server's wall clock (default time.Now).
	Clock func() time.Time
	// Logger receives structured logs (default discards).
	Logger *slog.Logger
	// Observer, if set, is told the timings of every cycle's plugin opens and actions.
	Observer framework.Observer
}

// Engine runs cycles and keeps plans. It is safe for concurrent use.
type Engine struct {
	store    *state.Store
	reg      *framework.Registry
	defaults *conf.Config
	ttl      time.Duration
	clock    func() time.Time
	log      *slog.Logger
	observer framework.Observer

	mu       sync.Mutex
	configs  map[string]*conf.Config
	clusters map[string]*clusterRecord
	seq      uint64
}

// clusterRecord keeps what the engine remembers of a cluster between cycles.
type clusterRecord struct {
	memory       *framework.Memory
	plans        map[string]*Plan
	explanations map[string]jobExplanation
	queues       map[string]framework.QueueOutcome
	queuesRev    uint64
}

type jobExplanation struct {
	planID  string
	outcome framework.JobOutcome
}

// New returns an engine over the store.
func New(store *state.Store, opts Options) (*Engine, error) {
	if opts.Registry == nil {
		return nil, errors.New("engine: a registry is required")
	}
	e := &Engine{
		store:    store,
		reg:      opts.Registry,
		defaults: opts.DefaultConfig,
		ttl:      opts.PlanTTL,
		clock:    opts.Clock,
		log:      opts.Logger,
		observer: opts.Observer,
		configs:  map[string]*conf.Config{},
		clusters: map[string]*clusterRecord{},
	}
	if e.defaults == nil {
		e.defaults = conf.Default()
	}
	if err := e.reg.Validate(e.defaults); err != nil {
		return nil, fmt.Errorf("engine: default configuration: %w", err)
	}
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

// ParseConfig parses and validates a scheduler configuration against the registry.
func (e *Engine) ParseConfig(text []byte) (*conf.Config, error) {
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	if err := e.reg.Validate(cfg); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidConfig, err)
	}
	return cfg, nil
}

// Config returns the cluster's configuration (the default when it has none).
func (e *Engine) Config(cluster string) *conf.Config {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.configs[cluster]; ok {
		return c
	}
	return e.defaults
}

// SetConfig validates and installs a configuration for a cluster; on error nothing changes.
func (e *Engine) SetConfig(cluster string, text []byte) (*conf.Config, error) {
	cfg, err := e.ParseConfig(text)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.configs[cluster] = cfg
	e.mu.Unlock()
	e.log.Info("scheduler configuration updated", "cluster", cluster, "actions", cfg.Actions)
	return cfg, nil
}

func (e *Engine) record(cluster string) *clusterRecord {
	r, ok := e.clusters[cluster]
	if !ok {
		r = &clusterRecord{
			memory:       framework.NewMemory(),
			plans:        map[string]*Plan{},
			explanations: map[string]jobExplanation{},
			queues:       map[string]framework.QueueOutcome{},
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
}

// Schedule runs one cycle on the cluster's current snapshot and returns its plan.
func (e *Engine) Schedule(ctx context.Context, cluster string, req ScheduleRequest) (*Plan, error) {
	if req.Mode == 0 {
		req.Mode = Propose
	}
	if req.Config != nil && req.Mode != DryRun {
		return nil, fmt.Errorf("%w: a configuration override is allowed only for a dry run", ErrInvalidConfig)
	}
	cfg := req.Config
	if cfg == nil {
		cfg = e.Config(cluster)
	}
	now := req.Now
	if now.IsZero() {
		now = e.clock()
	}
	snap := e.store.Snapshot(cluster)
	fsnap := toFrameworkSnapshot(cluster, snap)

	e.mu.Lock()
	e.seq++
	id := fmt.Sprintf("%s-r%d-%d", cluster, fsnap.Revision, e.seq)
	memory := e.record(cluster).memory
	e.mu.Unlock()
	if req.Mode == DryRun {
		memory = memory.Clone() // a dry run leaves no trace
	}

	start := time.Now()
	ssn, err := framework.OpenSession(fsnap, cfg, e.reg, framework.Options{Now: now, Logger: e.log, UID: id,
		Observer: joinObservers(e.observer, req.Observer), Memory: memory})
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	if err := ssn.RunActions(e.reg); err != nil {
		return nil, fmt.Errorf("run actions: %w", err)
	}
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
	}
	if req.Mode == DryRun {
		plan.State = PlanDryRun
	}
	e.mu.Lock()
	rec := e.record(cluster)
	e.expireLocked(rec, wall)
	// The latest cycle's outcome of every job it saw; jobs gone from the store are forgotten.
	rec.explanations = make(map[string]jobExplanation, len(res.Jobs))
	for _, o := range res.Jobs {
		rec.explanations[o.Job] = jobExplanation{planID: id, outcome: o}
	}
	if req.Mode != DryRun {
		rec.queues = map[string]framework.QueueOutcome{}
		for _, q := range res.Queues {
			rec.queues[q.Queue] = q
		}
		rec.queuesRev = fsnap.Revision
	}
	if req.Mode == DryRun {
		// A dry run is kept without its decisions (a dry-run loop would otherwise hold every
		// plan it made), just so that committing it says what it is.
		stub := plan.copy()
		stub.Result = nil
		rec.plans[id] = stub
	} else {
		rec.plans[id] = plan
	}
	e.mu.Unlock()
	e.log.Info("cycle done", "cluster", cluster, "plan", id, "revision", fsnap.Revision,
		"decisions", len(res.Decisions), "duration", elapsed)

	if req.Mode == AutoCommit {
		if _, err := e.CommitPlan(cluster, id); err != nil {
			return nil, fmt.Errorf("auto-commit: %w", err)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cp := plan.copy()
	cp.Result = res // the caller gets the decisions even once the plan is finished
	return cp, nil
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
func (e *Engine) ExplainJob(cluster, job string) (framework.JobOutcome, string, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rec, ok := e.clusters[cluster]
	if !ok {
		return framework.JobOutcome{}, "", fmt.Errorf("%w: no cycle has run for cluster %q", ErrNotFound, cluster)
	}
	ex, ok := rec.explanations[job]
	if !ok {
		return framework.JobOutcome{}, "", fmt.Errorf("%w: job %q was in no cycle yet", ErrNotFound, job)
	}
	return ex.outcome, ex.planID, nil
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

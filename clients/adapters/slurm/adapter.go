package slurm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Config configures an Adapter.
type Config struct {
	// Mapping says how Slurm objects become Sluice objects; its EvictMode also says how
	// evictions are carried out.
	Mapping Options
	// Commands names the Slurm programs.
	Commands Commands
	// Period between cycles. 0 means 5 seconds.
	Period time.Duration
	// CycleTimeout bounds one cycle. 0 means 2 minutes.
	CycleTimeout time.Duration
	// MaxBackoff caps the wait after failed cycles (doubling from Period, or from one
	// second when Period is shorter). 0 means 30 seconds.
	MaxBackoff time.Duration
	// SchedulerConfig, when set, is the Volcano scheduler configuration the adapter gives
	// its cluster on first contact and again after every resync (a restarted Sluice
	// without persistent state has forgotten it).
	SchedulerConfig string
	// DryRun asks Sluice for dry-run plans and carries nothing out.
	DryRun bool
	// DispatchTimeout: a job this adapter released that Slurm has not started after this
	// long (a node Slurm will not give it, a limit Sluice does not know) is held again, so
	// that Sluice places it anew. 0 means 5 minutes; negative waits forever. Jobs released
	// by anyone else (or by an earlier run of the adapter) are never held.
	DispatchTimeout time.Duration
	// Logger receives every action; nil logs nothing.
	Logger *slog.Logger
	// OnCycle, when set, is called after every cycle, successful or not.
	OnCycle func(*CycleReport)
}

// CycleReport is what one cycle did.
type CycleReport struct {
	// Err is why the cycle failed; nil for a cycle that ran to the end.
	Err error
	// Deltas sent (not counting a replace_all), and whether a full resync was sent.
	Deltas   int
	Resynced bool
	// Jobs, Tasks and Nodes synced.
	Jobs, Tasks, Nodes int
	// Plan is the cycle's plan (nil when the cycle failed before scheduling).
	Plan *sluicev1.Plan
	// Applied and Rejected count the decisions of the commit.
	Applied, Rejected int
	// Actions carried out in Slurm.
	Actions []Action
}

// Adapter runs the Slurm ↔ Sluice loop.
type Adapter struct {
	cfg    Config
	reader *Reader
	exec   *Executor
	sluice Sluice
	log    *slog.Logger

	last          *ClusterState
	configPending bool
	// released: when this adapter released each job that Slurm has not started yet.
	released map[int64]time.Time
}

// New returns an adapter that reads and drives Slurm through runner and talks to Sluice
// through sl.
func New(cfg Config, runner Runner, sl Sluice) (*Adapter, error) {
	if err := cfg.Mapping.Validate(); err != nil {
		return nil, err
	}
	if runner == nil || sl == nil {
		return nil, errors.New("slurm: a runner and a Sluice are required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Adapter{
		cfg:      cfg,
		reader:   &Reader{Runner: runner, Commands: cfg.Commands},
		exec:     &Executor{Runner: runner, Commands: cfg.Commands, EvictMode: cfg.Mapping.EvictMode, Logger: log},
		sluice:   sl,
		log:      log,
		released: map[int64]time.Time{},
	}, nil
}

func (a *Adapter) period() time.Duration {
	if a.cfg.Period <= 0 {
		return 5 * time.Second
	}
	return a.cfg.Period
}

// backoff is the wait after the given number of consecutive failed cycles.
func (a *Adapter) backoff(failures int) time.Duration {
	maxWait := a.cfg.MaxBackoff
	if maxWait <= 0 {
		maxWait = 30 * time.Second
	}
	d := max(a.period(), time.Second)
	for i := 1; i < failures && d < maxWait; i++ {
		d *= 2
	}
	return min(d, maxWait)
}

// Run runs cycles until ctx ends, one per period, backing off after failures. It returns
// ctx's error.
func (a *Adapter) Run(ctx context.Context) error {
	failures := 0
	a.log.Info("slurm adapter: running", "period", a.period(), "queue_by", orDefault(string(a.cfg.Mapping.QueueBy), string(QueueByPartition)),
		"evict", orDefault(string(a.cfg.Mapping.EvictMode), string(EvictRequeue)), "dry_run", a.cfg.DryRun)
	for {
		rep := a.Cycle(ctx)
		wait := a.period()
		if rep.Err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			failures++
			wait = a.backoff(failures)
			a.log.Warn("slurm adapter: cycle failed; retrying", "err", rep.Err, "failures", failures, "retry_in", wait)
		} else if failures > 0 {
			a.log.Info("slurm adapter: recovered", "after_failures", failures)
			failures = 0
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// Cycle runs one cycle: read Slurm, sync Sluice, schedule, commit, carry out.
func (a *Adapter) Cycle(ctx context.Context) *CycleReport {
	timeout := a.cfg.CycleTimeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rep := &CycleReport{}
	rep.Err = a.cycle(ctx, rep)
	if a.cfg.OnCycle != nil {
		a.cfg.OnCycle(rep)
	}
	return rep
}

func (a *Adapter) cycle(ctx context.Context, rep *CycleReport) error {
	snap, err := a.reader.Read(ctx)
	if err != nil {
		return fmt.Errorf("slurm: %w", err)
	}
	st, err := Map(snap, a.cfg.Mapping)
	if err != nil {
		return fmt.Errorf("slurm: map: %w", err)
	}
	rep.Jobs, rep.Tasks, rep.Nodes = len(st.Jobs), len(st.Tasks), len(st.Nodes)
	if !a.cfg.DryRun {
		rep.Actions = append(rep.Actions, a.holdStuck(ctx, st, snap.Now)...)
	}

	deltas := st.Diff(a.last)
	resynced, err := a.sluice.Sync(ctx, deltas, st.Deltas)
	if err != nil {
		return fmt.Errorf("sluice: sync: %w", err)
	}
	rep.Resynced = resynced
	if resynced {
		a.log.Info("sluice: sent the whole cluster (replace_all)", "nodes", len(st.Nodes), "queues", len(st.Queues),
			"jobs", len(st.Jobs), "tasks", len(st.Tasks), "skipped", skippedSummary(st.Skipped))
		a.configPending = a.cfg.SchedulerConfig != ""
	} else {
		rep.Deltas = len(deltas)
		if len(deltas) > 0 {
			a.log.Info("sluice: synced changes", "deltas", len(deltas), "jobs", len(st.Jobs), "tasks", len(st.Tasks))
		}
	}
	a.last = st

	if a.configPending {
		if err := a.sluice.SetSchedulerConfig(ctx, a.cfg.SchedulerConfig); err != nil {
			return fmt.Errorf("sluice: set scheduler configuration: %w", err)
		}
		a.configPending = false
		a.log.Info("sluice: scheduler configuration set")
	}

	plan, err := a.sluice.Schedule(ctx, a.cfg.DryRun)
	if err != nil {
		return fmt.Errorf("sluice: schedule: %w", err)
	}
	rep.Plan = plan
	if a.cfg.DryRun {
		for _, d := range plan.GetDecisions() {
			a.log.Info("sluice: dry-run decision", "decision", describe(d))
		}
		return nil
	}
	actionable := 0
	for _, d := range plan.GetDecisions() {
		if d.GetPipeline() != nil {
			// A reservation for this cycle only: nothing to carry out.
			a.log.Debug("sluice: decision", "plan", plan.GetId(), "decision", describe(d))
			continue
		}
		actionable++
		a.log.Info("sluice: decision", "plan", plan.GetId(), "decision", describe(d))
	}
	if actionable == 0 {
		if err := a.sluice.Discard(ctx, plan.GetId()); err != nil {
			a.log.Debug("sluice: discard a plan without binds or evictions", "plan", plan.GetId(), "err", err)
		}
		return nil
	}
	resp, err := a.sluice.Commit(ctx, plan.GetId())
	if err != nil {
		return fmt.Errorf("sluice: commit plan %s: %w", plan.GetId(), err)
	}
	rep.Applied, rep.Rejected = len(resp.GetApplied()), len(resp.GetRejected())
	for _, r := range resp.GetRejected() {
		a.log.Warn("sluice: decision rejected at commit", "plan", plan.GetId(), "decision", describe(r.GetDecision()), "reason", r.GetReason())
	}
	a.log.Info("sluice: plan committed", "plan", plan.GetId(), "applied", rep.Applied, "rejected", rep.Rejected, "revision", resp.GetRevision())
	st.applyDecisions(resp.GetApplied())
	actions := a.exec.Execute(ctx, st, resp.GetApplied())
	for _, act := range actions {
		if act.Kind == ActionStart && act.Err == nil {
			a.released[act.JobID] = snap.Now
		}
	}
	rep.Actions = append(rep.Actions, actions...)
	return nil
}

// holdStuck holds again the jobs this adapter released that Slurm has not started within
// DispatchTimeout, and forgets the released jobs that are no longer waiting to start.
func (a *Adapter) holdStuck(ctx context.Context, st *ClusterState, now time.Time) []Action {
	timeout := a.cfg.DispatchTimeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	waiting := map[int64]string{}
	for name, sj := range st.SlurmJobs {
		if sj.Kind == KindDispatched {
			waiting[sj.ID] = name
		}
	}
	var ids []int64
	for id := range a.released {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var actions []Action
	for _, id := range ids {
		name, ok := waiting[id]
		if !ok {
			delete(a.released, id)
			continue
		}
		if since := now.Sub(a.released[id]); timeout > 0 && since >= timeout {
			actions = append(actions, a.exec.Hold(ctx, name, st.SlurmJobs[name], fmt.Sprintf("released %s ago and not started", since.Round(time.Second))))
			delete(a.released, id)
		}
	}
	return actions
}

// describe is a one-line description of a decision, for logs.
func describe(d *sluicev1.Decision) string {
	switch k := d.GetKind().(type) {
	case *sluicev1.Decision_Bind:
		return fmt.Sprintf("bind %s to %s", sluice.FullName(k.Bind.GetTask()), k.Bind.GetNode())
	case *sluicev1.Decision_Pipeline:
		return fmt.Sprintf("pipeline %s on %s", sluice.FullName(k.Pipeline.GetTask()), k.Pipeline.GetNode())
	case *sluicev1.Decision_Evict:
		s := fmt.Sprintf("evict %s from %s (%s)", sluice.FullName(k.Evict.GetTask()), k.Evict.GetNode(), k.Evict.GetAction())
		if f := sluice.FullName(k.Evict.GetForTask()); f != "" {
			s += " for " + f
		}
		return s
	}
	return "unknown decision"
}

func skippedSummary(m map[string]int) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%d %s", m[k], k))
	}
	return strings.Join(parts, "; ")
}

package framework

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync/atomic"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// Snapshot is the cluster state a session opens on: the immutable objects of one cluster at
// one revision. The engine fills it from the state store.
type Snapshot struct {
	Cluster         string
	Revision        uint64
	Nodes           []*api.Node
	Queues          []*api.Queue
	Jobs            []*api.Job
	Tasks           []*api.Task
	PriorityClasses []*api.PriorityClass
	Quotas          []*api.NamespaceQuota
	Budgets         []*api.DisruptionBudget
	HyperNodes      []*api.HyperNode
	// TasksOfJob and TasksOnNode, when set, list the snapshot's tasks of a job (by key) and
	// on a node, sorted by key; sessions need them to open on kept views (Options.Views).
	TasksOfJob  func(job string) []*api.Task
	TasksOnNode func(node string) []*api.Task
	// Mark, when not nil, identifies the stored objects the snapshot holds: snapshots with
	// equal marks hold the same objects (the same pointers), so that kept views already
	// patched to one need no comparison with the other. It must be comparable.
	Mark any
	// Load, when set, fills Nodes, Jobs and Tasks, which stay empty until a session needs
	// them: a session on kept views already patched to the snapshot's mark never lists them.
	Load func(*Snapshot)
	// ChangesSince, when set, returns the nodes, jobs and tasks written or deleted since the
	// snapshot with the given mark (false when it cannot tell): kept views patched to that
	// mark then work out Nodes, Jobs and Tasks from their own lists and the changes instead
	// of listing them (Load).
	ChangesSince func(mark any) (api.ObjectChanges, bool)
}

// objects makes sure Nodes, Jobs and Tasks are filled (see Load).
func (snap *Snapshot) objects() {
	if snap.Load != nil {
		load := snap.Load
		snap.Load = nil
		load(snap)
	}
}

// Options tune a session.
type Options struct {
	// Now is the cycle's wall clock.
	Now time.Time
	// Logger receives structured logs; nil discards them.
	Logger *slog.Logger
	// UID names the session (the plan id); empty picks one from the revision.
	UID string
	// Observer, if set, is told how long each plugin's OnSessionOpen and each action took.
	Observer Observer
	// Memory is the cluster's memory across cycles; nil gives the session a fresh one.
	Memory *Memory
	// Context, when it ends, interrupts the cycle: see Session.Interrupted.
	Context context.Context
	// Pacer, if set, may pause the cycle at its checkpoints: see Pacer.
	Pacer *Pacer
	// Views, if set, are the cluster's views kept between cycles: the session opens on them
	// when it can (see Views) and builds its own from the snapshot otherwise.
	Views *Views
}

// Pacer lets the caller of a cycle share the machine with other work without cancelling
// the cycle: after Request, or once the time RequestAfter named has come, the session calls
// the pacer's pause function at its next checkpoint, from the goroutine that reaches it, and
// the cycle goes on when the function returns. Checkpoints are where actions check
// Session.Interrupted (each job and task of their loops) and a few places of the session's
// own open (between plugins, every few hundred objects). A pause leaves the session as it
// was: the plan is the same as without pauses.
//
// A checkpoint reads the clock itself rather than waiting for a timer to call Request: a
// timer's function needs a processor of its own, and while the cycle and other goroutines
// hold every processor it would fire only when the Go scheduler preempts one of them (up to
// 10 ms late), which is when the cycle most needs to step aside.
type Pacer struct {
	requested atomic.Bool
	// due is when a pause is due, in nanoseconds since origin; 0 when none is.
	due    atomic.Int64
	origin time.Time
	pause  func()
}

// NewPacer returns a pacer that calls pause at the checkpoint after each Request. pause
// should return once the cycle may go on, and at once when the cycle's context ended.
func NewPacer(pause func()) *Pacer { return &Pacer{pause: pause, origin: time.Now()} }

// Request asks the cycle to call the pause function at its next checkpoint; requests made
// before that checkpoint make one pause. It is safe for concurrent use.
func (p *Pacer) Request() { p.requested.Store(true) }

// RequestAfter asks the cycle to call the pause function at its first checkpoint once d has
// passed, replacing an earlier RequestAfter; a d of 0 or less cancels it. It is safe for
// concurrent use.
func (p *Pacer) RequestAfter(d time.Duration) {
	if d <= 0 {
		p.due.Store(0)
		return
	}
	p.due.Store(max(int64(time.Since(p.origin)+d), 1))
}

// checkpoint pauses if a pause was requested or is due. Only one of concurrent callers
// pauses.
func (p *Pacer) checkpoint() {
	if p == nil {
		return
	}
	if p.requested.Load() && p.requested.CompareAndSwap(true, false) {
		p.pause()
		return
	}
	if d := p.due.Load(); d != 0 && int64(time.Since(p.origin)) >= d && p.due.CompareAndSwap(d, 0) {
		p.pause()
	}
}

// Observer is the session's observability hook: it is told, from the goroutine running the
// cycle and in order, when each plugin's OnSessionOpen and each action started and how long
// it took. It must be quick and must not touch the session. The engine never imports a
// telemetry library; the service turns these calls into spans and metrics.
type Observer interface {
	// PluginOpened reports one plugin's OnSessionOpen (plugins open in tier order).
	PluginOpened(name string, start time.Time, d time.Duration)
	// ActionDone reports one action's Execute.
	ActionDone(name string, start time.Time, d time.Duration)
}

// QueueFigures are a queue's derived amounts as a queue plugin (proportion, capacity) sees
// them at the end of the cycle.
type QueueFigures struct {
	Allocated *api.Resource
	Deserved  *api.Resource
	// Share is the queue's dominant share of its deserved amount.
	Share    float64
	Overused bool
}

// Session is one scheduling cycle's mutable view of a snapshot. Actions and plugins read and
// change it only through its fields' methods and Statements; it is not safe for concurrent
// use except where a method says so.
type Session struct {
	UID      string
	Cluster  string
	Revision uint64
	Now      time.Time
	Config   *conf.Config
	Tiers    []conf.Tier
	Log      *slog.Logger

	Jobs     map[string]*api.JobInfo
	Nodes    map[string]*api.NodeInfo
	NodeList []*api.NodeInfo
	Queues   map[string]*api.QueueInfo

	PriorityClasses map[string]int32
	Quotas          []*api.NamespaceQuota
	Budgets         []*api.DisruptionBudget
	HyperNodes      []*api.HyperNode
	// Topology is the hypernode tree built from HyperNodes.
	Topology *HyperNodeTree
	// TotalResource is the sum of every node's allocatable.
	TotalResource *api.Resource

	plugins []Plugin
	cb      callbacks
	// event is the one Event that fireAllocate and fireDeallocate hand their handlers.
	event Event

	initialPhase map[string]api.JobPhase
	committed    decisionLog
	// spareOps is an emptied statement's operation buffer, for the next statement.
	spareOps     []operation
	queueReasons map[string]string
	queueFigures map[string]QueueFigures
	timings      []ActionTiming
	observer     Observer
	// class is TaskClass's plan, worked out at its first call.
	class classPlan
	// sortedJobs is SortedJobs's order, worked out at its first call.
	sortedJobs []*api.JobInfo
	// shared holds Shared's values by key.
	shared map[string]any
	memory *Memory
	// nodeIndex maps a node name to its position in NodeList; nodeChanges logs, in order, the
	// position of every node a statement changed.
	nodeIndex   map[string]int32
	nodeChanges []int32

	// ctx is the caller's context; interrupted is set once it ends (cheaper to read than
	// ctx.Err, which predicates ask for every node).
	ctx         context.Context
	interrupted atomic.Bool
	stopWatch   func() bool
	// pacer may pause the cycle at checkpoints (nil: never).
	pacer *Pacer

	// copies holds the node copies of the tasks statements place; taskViews the task views
	// of a session that builds its own (neither outlives the session's views).
	copies, taskViews api.TaskInfoArena
	// indexes keeps the status index maps statements empty, for the next ones they need.
	indexes api.IndexPool

	// undispatched holds the tasks a statement left allocated without a decision.
	undispatched map[string]bool
	// views, when set, are the kept views the session opened on, released when it ends.
	views *Views
	// kept holds the plugins' kept states handed out (KeptState), by key.
	kept map[string]handedState
	// touched logs, on kept views, the jobs statements changed (consecutive repeats once);
	// walkedAll is set once SortedJobs handed out every job. visited holds the positions (in
	// the sorted jobs) of the jobs the session may have changed, once visitedKnown.
	touched      []*api.JobInfo
	walkedAll    bool
	visited      []int32
	visitedKnown bool
}

// openViews returns the views the session opens on: kept views patched to the snapshot when
// views are given, the snapshot can list tasks by job and node, every plugin keeps views
// (ReusableViews) and no other session uses them; a fresh build otherwise.
func (s *Session) openViews(snap *Snapshot, plugins []Plugin, views *Views) (*viewSet, error) {
	if views != nil && snap.TasksOfJob != nil && snap.TasksOnNode != nil && allReusable(plugins) && views.acquire() {
		if err := views.refresh(s, snap); err != nil {
			views.release(nil, nil, true)
			if cerr := s.Err(); cerr != nil {
				return nil, cerr
			}
			// An inconsistency (the views were reset): the fresh build below reports it.
		} else {
			s.views = views
			return views.set, nil
		}
	}
	set, err := s.buildViews(snap, &s.taskViews)
	if err == nil {
		// Room for every pending task's decision and its two node changes (allocated,
		// then bound), so that neither list grows step by step.
		s.committed.expect(set.pending)
		s.nodeChanges = make([]int32, 0, 2*set.pending)
	}
	return set, err
}

// allReusable reports whether every plugin keeps views (ReusableViews).
func allReusable(plugins []Plugin) bool {
	for _, p := range plugins {
		if _, ok := p.(ReusableViews); !ok {
			return false
		}
	}
	return true
}

// releaseViews hands the kept views back, once, marking what the session changed: the
// jobs it visited when Close worked them out (see visitedJobs), else every job.
func (s *Session) releaseViews() {
	if s.views != nil {
		s.views.release(s.nodeChanges, s.visited, !s.visitedKnown)
		s.views = nil
	}
}

// SkipsIdleJobs reports whether actions and plugins may leave out of their walks the jobs
// the walk provably cannot change (a job with no pending task of the kind an action places,
// say), so that a steady cycle costs what is pending. Sessions on kept views skip; the
// from-scratch path, the reference of the differential test, walks every job.
func (s *Session) SkipsIdleJobs() bool { return s.views != nil }

// FromKeptViews reports whether the session opened on views kept between cycles (Views)
// rather than building its own.
func (s *Session) FromKeptViews() bool { return s.views != nil }

// openCheckpointEvery is how many nodes, jobs or tasks OpenSession converts between two
// checkpoints of its pacer.
const openCheckpointEvery = 256

// OpenSession builds a session on a snapshot: session views of every object, the configured
// plugins (built from reg, opened in tier order), and their callbacks grouped by tier.
func OpenSession(snap *Snapshot, cfg *conf.Config, reg *Registry, opts Options) (_ *Session, err error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	uid := opts.UID
	if uid == "" {
		uid = fmt.Sprintf("%s-%d", snap.Cluster, snap.Revision)
	}
	s := &Session{
		UID:          uid,
		Cluster:      snap.Cluster,
		Revision:     snap.Revision,
		Now:          opts.Now,
		Config:       cfg,
		Tiers:        cfg.Tiers,
		Log:          log,
		Queues:       make(map[string]*api.QueueInfo, len(snap.Queues)),
		Quotas:       snap.Quotas,
		Budgets:      snap.Budgets,
		HyperNodes:   snap.HyperNodes,
		cb:           newCallbacks(),
		queueReasons: map[string]string{},
		queueFigures: map[string]QueueFigures{},
		observer:     opts.Observer,
		pacer:        opts.Pacer,
	}
	s.watchContext(opts.Context)
	defer func() {
		if err != nil {
			s.release()
			s.releaseViews()
		}
	}()
	s.memory = opts.Memory
	if s.memory == nil {
		s.memory = NewMemory()
	}
	plugins := make([]Plugin, 0, 16)
	var names []string
	for ti, tier := range cfg.Tiers {
		for pi, opt := range tier.Plugins {
			b, ok := reg.plugins[opt.Name]
			if !ok {
				return nil, fmt.Errorf("tiers[%d].plugins[%d]: unknown plugin %q", ti, pi, opt.Name)
			}
			p, err := b(opt.Arguments)
			if err != nil {
				return nil, fmt.Errorf("tiers[%d].plugins[%d] (%s): %w", ti, pi, opt.Name, err)
			}
			plugins = append(plugins, p)
			names = append(names, opt.Name)
		}
	}
	set, err := s.openViews(snap, plugins, opts.Views)
	if err != nil {
		return nil, err
	}
	s.PriorityClasses = set.classes
	s.Nodes, s.NodeList, s.nodeIndex = set.nodes, set.nodeList, set.nodeIndex
	s.TotalResource = set.total.Clone()
	s.Jobs, s.initialPhase = set.jobs, set.initialPhase
	s.sortedJobs = set.jobList
	for _, q := range snap.Queues {
		s.Queues[q.Name] = api.NewQueueInfo(q)
	}
	s.Topology = buildHyperNodeTree(snap.HyperNodes, s.Nodes)
	if len(snap.HyperNodes) > 0 {
		for _, j := range s.Jobs {
			j.AllocatedHyperNode = s.Topology.JobHyperNode(j)
		}
	} else if s.views != nil && s.views.activity.hyperNodes {
		// Kept views may hold the values a cycle with hypernodes set (only such a cycle sets
		// any); a fresh build has none.
		for _, j := range set.jobList {
			j.AllocatedHyperNode = ""
		}
	}
	if s.views != nil {
		s.views.activity.hyperNodes = len(snap.HyperNodes) > 0
	}
	for i, p := range plugins {
		if err := s.Err(); err != nil {
			return nil, err
		}
		s.plugins = append(s.plugins, p)
		s.pacer.checkpoint()
		start := time.Now()
		p.OnSessionOpen(s)
		if s.observer != nil {
			s.observer.PluginOpened(names[i], start, time.Since(start))
		}
	}
	s.cb.build(cfg.Tiers)
	s.confirmKept()
	return s, nil
}

// RunActions runs the configured actions in order, timing each.
func (s *Session) RunActions(reg *Registry) error {
	actions, err := reg.buildActions(s.Config)
	if err != nil {
		return err
	}
	for _, a := range actions {
		s.pacer.checkpoint()
		if err := s.Err(); err != nil {
			return err
		}
		start := time.Now()
		a.Execute(s)
		d := time.Since(start)
		s.timings = append(s.timings, ActionTiming{Action: a.Name(), Duration: d})
		if s.observer != nil {
			s.observer.ActionDone(a.Name(), start, d)
		}
	}
	return s.Err()
}

// watchContext makes the session interruptible by ctx (nil: never).
func (s *Session) watchContext(ctx context.Context) {
	if ctx == nil {
		ctx = context.Background()
	}
	s.ctx = ctx
	if ctx.Err() != nil {
		s.interrupted.Store(true) // AfterFunc would tell only later, from another goroutine
		return
	}
	s.stopWatch = context.AfterFunc(ctx, func() { s.interrupted.Store(true) })
}

// release stops watching the context.
func (s *Session) release() {
	if s.stopWatch != nil {
		s.stopWatch()
	}
}

// Interrupted reports whether the cycle's context ended: actions stop their loops over jobs
// and tasks when it is set, and predicates fail every node, so that a cancelled cycle ends
// within moments. It is also the cycle's checkpoint: a pause its Pacer asked for happens
// here. It is safe for concurrent use.
func (s *Session) Interrupted() bool {
	s.pacer.checkpoint()
	return s.interrupted.Load()
}

// Err returns the context's error once the cycle was interrupted, else nil.
func (s *Session) Err() error {
	if !s.interrupted.Load() {
		return nil
	}
	return s.ctx.Err()
}

// SortedJobs returns the session's jobs sorted by UID, in a slice of the caller's. (The jobs of
// a session never change, so the order is worked out once.) A walk that only has work for
// jobs with something pending uses ActiveJobs: on kept views, once SortedJobs handed out every
// job, the session looks at every job when it closes.
func (s *Session) SortedJobs() []*api.JobInfo {
	s.walkedAll = true
	return slices.Clone(s.jobList())
}

// jobList returns the session's jobs sorted by UID, in the session's own slice.
func (s *Session) jobList() []*api.JobInfo {
	if s.sortedJobs == nil || len(s.sortedJobs) != len(s.Jobs) {
		s.sortedJobs = make([]*api.JobInfo, 0, len(s.Jobs))
		for _, j := range s.Jobs {
			s.sortedJobs = append(s.sortedJobs, j)
		}
		sort.Slice(s.sortedJobs, func(i, j int) bool { return s.sortedJobs[i].UID < s.sortedJobs[j].UID })
	}
	return s.sortedJobs
}

// SortedQueues returns the session's queues sorted by name.
func (s *Session) SortedQueues() []*api.QueueInfo {
	out := make([]*api.QueueInfo, 0, len(s.Queues))
	for _, q := range s.Queues {
		out = append(out, q)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// HierarchyEnabled is Volcano's ssn.HierarchyEnabled: whether the plugin's first entry in the
// tiers sets enableHierarchy (off when the plugin is not configured).
func (s *Session) HierarchyEnabled(plugin string) bool {
	for _, tier := range s.Tiers {
		for _, opt := range tier.Plugins {
			if opt.Name == plugin {
				return opt.Enabled(conf.FlagHierarchy)
			}
		}
	}
	return false
}

// Shared returns the session's value for key, built by build at the first call: what several
// plugins derive alike from the session (a view of task placement, say) is built once per
// cycle. Keys are the building package's path and a name. Not safe for concurrent use.
func (s *Session) Shared(key string, build func() any) any {
	if v, ok := s.shared[key]; ok {
		return v
	}
	v := build()
	if s.shared == nil {
		s.shared = map[string]any{}
	}
	s.shared[key] = v
	return v
}

// owns reports whether n is the session's own view of its node (not a copy).
func (s *Session) owns(n *api.NodeInfo) bool {
	i := n.Position()
	return i >= 0 && int(i) < len(s.NodeList) && s.NodeList[i] == n
}

// noteNodeChange logs that a statement changed the node.
func (s *Session) noteNodeChange(n *api.NodeInfo) {
	if s.owns(n) {
		s.nodeChanges = append(s.nodeChanges, n.Position())
	} else if i, ok := s.nodeIndex[n.Name]; ok {
		s.nodeChanges = append(s.nodeChanges, i)
	}
}

// NodeChanges returns the log of nodes (positions in NodeList) that statements changed, oldest
// first. A reader remembers how much it has seen and reads on from there; the log only grows.
func (s *Session) NodeChanges() []int32 { return s.nodeChanges }

// SetQueueReason records why a queue cannot take more work this cycle (e.g. overused); the
// plan's explanations of its jobs quote it.
func (s *Session) SetQueueReason(queue, reason string) { s.queueReasons[queue] = reason }

// QueueReason returns the recorded reason for a queue.
func (s *Session) QueueReason(queue string) string { return s.queueReasons[queue] }

// SetQueueFigures records a queue's derived figures for the API.
func (s *Session) SetQueueFigures(queue string, f QueueFigures) { s.queueFigures[queue] = f }

// Plugins returns the session's plugins in configuration order.
func (s *Session) Plugins() []Plugin { return s.plugins }

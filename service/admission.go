package service

import (
	"context"
	"fmt"
	"math"
	"runtime"
	rtmetrics "runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/keylock"
)

// Fair admission of cycles.
//
// One cluster's heavy cycles must not take the server from the others. These rules share the
// machine between clusters:
//
//  1. Slots. At most Options.MaxConcurrentCycles cycles run at once (by default GOMAXPROCS,
//     one per core). A cycle that finds every slot taken waits; the next free slot goes to
//     the waiting cycle of the cluster with the least recent usage (ties: first come).
//  2. Usage. A cluster's usage is what its work cost the server lately: the run time of its
//     cycles plus the time of its other calls (reads, commits, batches), decaying with a
//     half-life of usageHalfLife. Heavy clusters have a high usage, so a cluster that does
//     little is served first.
//  3. Giving way. A running cycle reaches a checkpoint every quantum (Options.CycleQuantum).
//     There it pauses, giving up its slot and the CPU, while a cluster whose usage is less
//     than half its own ("lighter") has calls in progress or cycles waiting. A pause lasts
//     at most maxPause at a time, so a busy neighbour slows a heavy cycle down but never
//     stops it. "Lighter" is a strict order, so no two cycles wait for each other.
//  4. Sharing. While a lighter cluster has had calls in the last recentWindow, the cycle
//     runs at most Options.CycleShare of the time (by default half): at each checkpoint it
//     sleeps in proportion to what it ran since the last one. A busy process is served
//     later by the operating system (on a shared machine, or under a CPU limit) and the
//     Go scheduler preempts only every 10 ms, so a lighter cluster's calls wait less when
//     the heavy cycle leaves the process some idle time while they come in. Otherwise it
//     only steps aside when goroutines wait for a processor (yieldIfBusy).
//
//  5. Priority. A dry run admitted while a lighter cluster is active, of a cluster whose
//     cycles usually last a quantum or more, runs, with Options.BackgroundDryRuns, on a
//     thread of its own at the operating system's idle
//     priority (internal/lowprio; Linux SCHED_IDLE): the kernel then gives a core to any
//     other thread that wakes up, at once, where a busy thread of equal priority would keep
//     it until its time slice or the next tick ends (4 ms at HZ=250). Cycles whose plans may
//     be committed keep the normal priority.
//
// Cycles shorter than a quantum never reach a checkpoint: small clusters are not slowed by
// each other.
//
// A call waiting for its cluster's earlier cycles or for a slot keeps its deadline: when the
// time left would not fit the cluster's usual cycle, it fails at once with RESOURCE_EXHAUSTED
// (reason RATE_LIMITED, ErrorInfo metadata limit=cycle_wait) and a RetryInfo, rather than
// running into DEADLINE_EXCEEDED. A cluster with more than Options.MaxQueuedCycles cycle
// calls queued (waiting or running) refuses more the same way (limit=cycle_queue): a flood
// of dry runs on one cluster is refused before it piles up.

// Admission defaults.
const (
	// DefaultCycleQuantum is how long a cycle runs between two checkpoints.
	DefaultCycleQuantum = 2 * time.Millisecond
	// DefaultMaxQueuedCycles is how many cycle calls (Schedule, WatchPlans cycles) one
	// cluster may have waiting or running at once.
	DefaultMaxQueuedCycles = 16
	// usageHalfLife is how fast a cluster's usage decays.
	usageHalfLife = 10 * time.Second
	// minCycleMargin is the least time a waiting cycle call keeps of its deadline for its
	// cycle and its answer.
	minCycleMargin = 20 * time.Millisecond
	// DefaultCycleShare is the share of the time a heavy cluster's cycle runs while a lighter
	// cluster is active.
	DefaultCycleShare = 0.5
	// recentWindow is how long after its last call a cluster counts as active.
	recentWindow = time.Second
	// yieldSleep is how long a cycle steps aside at a checkpoint when goroutines wait for a
	// processor.
	yieldSleep = 50 * time.Microsecond
	// maxPause bounds one pause of a cycle.
	maxPause = 100 * time.Millisecond
	// tenantIdle is how long a cluster without calls keeps its admission record once its
	// usage decayed to nothing.
	tenantIdle = 10 * time.Minute
)

// MetadataLimit is the ErrorInfo metadata key that names the admission limit a
// RESOURCE_EXHAUSTED cycle call hit: cycle_queue or cycle_wait.
const MetadataLimit = "limit"

// Admission limits, the values of MetadataLimit.
const (
	limitCycleQueue = "cycle_queue"
	limitCycleWait  = "cycle_wait"
)

// admission shares cycle slots and CPU between clusters (see above). A nil *admission
// admits everything at once and never pauses a cycle.
type admission struct {
	slots     int
	quantum   time.Duration
	maxQueued int
	share     float64
	now       func() time.Time
	wait      metric.Float64Histogram
	// exists tells the clusters that have state (nil: every name): work on other names is
	// not recorded, so that calls naming clusters that do not exist leave no record and no
	// metric series behind.
	exists func(cluster string) bool

	mu      sync.Mutex
	running int
	waiters []*slotWaiter
	seq     uint64
	tenants map[string]*tenant
	// busy holds the tenants with calls in progress or cycles waiting for a slot.
	busy map[*tenant]struct{}
	// changed is closed, and replaced, whenever a call ends or a waiter leaves: paused cycles
	// look again whether they may go on.
	changed   chan struct{}
	lastSweep time.Time
}

// tenant is one cluster's admission record.
type tenant struct {
	name string
	// usage is the decayed cost of the cluster's work in seconds, as of at.
	usage float64
	at    time.Time
	// active counts calls in progress; waiting, cycles waiting for a slot; queued, cycle
	// calls waiting or running.
	active, waiting, queued int
	// cycle is a moving average of the cluster's cycle run time, in seconds.
	cycle float64
	// background counts the dry runs run at the idle priority (rule 5).
	background atomic.Int64
	// Counters for the metrics.
	pauses   int64
	paused   float64
	rejected map[string]int64
	used     time.Time
	// lastBusy is when the cluster last had a call in progress.
	lastBusy time.Time
}

// slotWaiter is a cycle waiting for a slot.
type slotWaiter struct {
	t     *tenant
	seq   uint64
	ready chan struct{}
	// granted is set, under the lock, when the waiter got a slot.
	granted bool
}

// newAdmission returns the admission of the options (see Options): nil when slots is
// negative. now is the clock (nil: time.Now).
func newAdmission(slots int, quantum time.Duration, maxQueued int, share float64, now func() time.Time) *admission {
	if slots < 0 {
		return nil
	}
	if slots == 0 {
		slots = runtime.GOMAXPROCS(0)
	}
	if quantum <= 0 {
		quantum = DefaultCycleQuantum
	}
	if maxQueued <= 0 {
		maxQueued = DefaultMaxQueuedCycles
	}
	if share <= 0 {
		share = DefaultCycleShare
	}
	if now == nil {
		now = time.Now
	}
	return &admission{slots: slots, quantum: quantum, maxQueued: maxQueued, share: min(share, 1), now: now,
		tenants: map[string]*tenant{}, busy: map[*tenant]struct{}{}, changed: make(chan struct{})}
}

// tenantLocked returns a cluster's record, creating it.
func (a *admission) tenantLocked(cluster string, now time.Time) *tenant {
	if now.Sub(a.lastSweep) > time.Minute {
		a.sweepLocked(now)
	}
	t, ok := a.tenants[cluster]
	if !ok {
		t = &tenant{name: cluster, at: now, rejected: map[string]int64{}}
		a.tenants[cluster] = t
	}
	t.used = now
	return t
}

// sweepLocked forgets the clusters that have been idle for tenantIdle.
func (a *admission) sweepLocked(now time.Time) {
	a.lastSweep = now
	for name, t := range a.tenants {
		if t.active == 0 && t.queued == 0 && now.Sub(t.used) > tenantIdle {
			delete(a.tenants, name)
		}
	}
}

// forget drops a deleted cluster's record (its metric series go with it). Calls still in
// progress keep their own pointer to it.
func (a *admission) forget(cluster string) {
	if a == nil {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.tenants, cluster)
}

// usageAt decays a tenant's usage to now and returns it.
func (t *tenant) usageAt(now time.Time) float64 {
	if d := now.Sub(t.at); d > 0 {
		t.usage *= math.Exp2(-d.Seconds() / usageHalfLife.Seconds())
		t.at = now
	}
	return t.usage
}

// charge adds the cost of some work to a tenant's usage.
func (t *tenant) charge(now time.Time, d time.Duration) {
	t.usageAt(now)
	t.usage += d.Seconds()
}

// lighter reports whether usage u is light enough, against v, for its cluster's work to
// pause a cycle of v's.
func lighter(u, v float64) bool { return u < v/2 }

// notifyLocked wakes the paused cycles, so that they look again.
func (a *admission) notifyLocked() {
	close(a.changed)
	a.changed = make(chan struct{})
}

// markLocked keeps a tenant in the busy set while it has calls or waiting cycles.
func (a *admission) markLocked(t *tenant) {
	if t.active > 0 || t.waiting > 0 {
		a.busy[t] = struct{}{}
		return
	}
	delete(a.busy, t)
}

// call records a call of a cluster in progress until the returned function is called; with
// charge, the call's time is added to the cluster's usage (cycles charge their own run time).
func (a *admission) call(cluster string, charge bool) func() {
	if a == nil || cluster == "" || (a.exists != nil && !a.exists(cluster)) {
		return func() {}
	}
	a.mu.Lock()
	start := a.now()
	t := a.tenantLocked(cluster, start)
	t.active++
	t.lastBusy = start
	a.markLocked(t)
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		now := a.now()
		t.lastBusy = now
		if charge {
			t.charge(now, now.Sub(start))
		}
		t.active--
		a.markLocked(t)
		a.notifyLocked()
	}
}

// mustGiveWay reports whether a cycle of t, whose current run began at since, must pause for
// another cluster's work: a cluster lighter than t has calls in progress or cycles waiting.
func (a *admission) mustGiveWay(t *tenant, now, since time.Time) bool {
	mine := t.usageAt(now) + now.Sub(since).Seconds()
	for u := range a.busy {
		if u != t && lighter(u.usageAt(now), mine) {
			return true
		}
	}
	return false
}

// mustShare reports whether a cycle of t must leave the processor part of the time: a cluster
// lighter than t had calls in the last recentWindow.
func (a *admission) mustShare(t *tenant, now time.Time) bool {
	return a.share < 1 && a.lighterActive(t, now)
}

// lighterActive reports whether a cluster lighter than t had calls in the last recentWindow.
func (a *admission) lighterActive(t *tenant, now time.Time) bool {
	mine := t.usageAt(now)
	for _, u := range a.tenants {
		if u != t && now.Sub(u.lastBusy) < recentWindow && lighter(u.usageAt(now), mine) {
			return true
		}
	}
	return false
}

// grantLocked hands free slots to the waiters with the least usage (first come among equals).
func (a *admission) grantLocked(now time.Time) {
	for a.running < a.slots && len(a.waiters) > 0 {
		best := 0
		for i, w := range a.waiters[1:] {
			bu, wu := a.waiters[best].t.usageAt(now), w.t.usageAt(now)
			if wu < bu || (wu == bu && w.seq < a.waiters[best].seq) {
				best = i + 1
			}
		}
		w := a.waiters[best]
		a.waiters = slices.Delete(a.waiters, best, best+1)
		w.t.waiting--
		a.markLocked(w.t)
		w.granted = true
		a.running++
		close(w.ready)
	}
}

// acquireSlot waits for a slot until ctx ends; it returns ctx's error then.
func (a *admission) acquireSlot(ctx context.Context, t *tenant) error {
	a.mu.Lock()
	now := a.now()
	if a.running < a.slots && len(a.waiters) == 0 {
		a.running++
		a.mu.Unlock()
		return nil
	}
	a.seq++
	w := &slotWaiter{t: t, seq: a.seq, ready: make(chan struct{})}
	a.waiters = append(a.waiters, w)
	t.waiting++
	a.markLocked(t)
	a.grantLocked(now)
	a.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if w.granted {
		// The slot came as the context ended: pass it on.
		a.running--
		a.grantLocked(a.now())
		return ctx.Err()
	}
	if i := slices.Index(a.waiters, w); i >= 0 {
		a.waiters = slices.Delete(a.waiters, i, i+1)
		t.waiting--
		a.markLocked(t)
	}
	a.notifyLocked()
	return ctx.Err()
}

// releaseSlot gives a slot back.
func (a *admission) releaseSlot() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.running--
	a.grantLocked(a.now())
}

// cycleTicket is an admitted cycle: it holds a slot and its cluster's cycle lock, and paces
// the cycle (Pacer) until done.
type cycleTicket struct {
	a      *admission
	t      *tenant
	ctx    context.Context
	pacer  *framework.Pacer
	unlock func()
	// since is when the cycle's current run began (its start, or its last pause's end); ran
	// sums its runs before that.
	since time.Time
	ran   time.Duration
	// lastCheck is when the cycle last left a checkpoint.
	lastCheck time.Time
	// runnable reads the number of runnable goroutines (yieldIfBusy).
	runnable [1]rtmetrics.Sample
	// slot is whether the cycle holds a slot (not while paused, nor after its context ended
	// during a pause).
	slot bool
	// background is whether a lighter cluster was active when the cycle was admitted: a dry
	// run then runs at the operating system's idle priority (Options.BackgroundDryRuns).
	background bool
}

// admitCycle admits a cycle of a cluster: it takes the cluster's lock in locks (the cycle lock
// of the cycles whose plans may be committed, or the dry-run lock: cycles under one lock never
// overlap) and a slot, in that order, within the call's deadline (see the package comment
// above). A cycle of a cluster without state only takes the lock. The ticket's pacer goes to
// the engine; done must be called when the
// cycle ends.
func (s *Server) admitCycle(ctx context.Context, cluster string, locks *keylock.Map) (*cycleTicket, error) {
	a := s.admission
	if a == nil || (a.exists != nil && !a.exists(cluster)) {
		unlock, err := locks.LockContext(ctx, cluster)
		if err != nil {
			return nil, err
		}
		return &cycleTicket{unlock: unlock}, nil
	}
	start := a.now()
	a.mu.Lock()
	t := a.tenantLocked(cluster, start)
	if t.queued >= a.maxQueued {
		err := a.refuseLocked(t, limitCycleQueue, fmt.Sprintf(
			"cluster %q already has %d cycle calls waiting or running (the server's limit per cluster)", cluster, t.queued))
		a.mu.Unlock()
		return nil, err
	}
	t.queued++
	expected := time.Duration(t.cycle * float64(time.Second))
	a.mu.Unlock()
	admitted := false
	defer func() {
		if !admitted {
			a.mu.Lock()
			t.queued--
			a.mu.Unlock()
		}
	}()

	// Give up when what is left of the deadline would not fit the cluster's usual cycle (and
	// the answer's way back: at least minCycleMargin).
	wctx := ctx
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		wctx, cancel = context.WithDeadline(ctx, dl.Add(-max(expected, minCycleMargin)))
		defer cancel()
	}
	refused := func(what string) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.refuseLocked(t, limitCycleWait, fmt.Sprintf(
			"cluster %q: waited %v for %s; the rest of the call's deadline would not fit a cycle (about %v)",
			cluster, a.now().Sub(start).Round(time.Millisecond), what, expected.Round(time.Millisecond)))
	}
	unlock, err := locks.LockContext(wctx, cluster)
	if err != nil {
		return nil, refused("the cluster's earlier cycles")
	}
	if err := a.acquireSlot(wctx, t); err != nil {
		unlock()
		return nil, refused(fmt.Sprintf("one of the server's %d cycle slots", a.slots))
	}
	admitted = true
	a.mu.Lock()
	now := a.now()
	// Only cycles that usually last a quantum or more: a thread of its own costs tens of
	// microseconds, and shorter cycles never reach a checkpoint either.
	background := t.cycle >= a.quantum.Seconds() && a.lighterActive(t, now)
	a.mu.Unlock()
	a.wait.Record(ctx, now.Sub(start).Seconds(), metric.WithAttributes(attribute.String("cluster", cluster)))
	ct := &cycleTicket{a: a, t: t, ctx: ctx, unlock: unlock, since: now, slot: true, lastCheck: now, background: background}
	ct.runnable[0].Name = "/sched/goroutines/runnable:goroutines"
	ct.pacer = framework.NewPacer(ct.checkpoint)
	ct.pacer.RequestAfter(a.quantum)
	return ct, nil
}

// refuseLocked counts and builds a refusal: RESOURCE_EXHAUSTED, RATE_LIMITED with the limit in
// the metadata, and a RetryInfo of the time the cluster's queued cycles should take.
func (a *admission) refuseLocked(t *tenant, limit, msg string) error {
	t.rejected[limit]++
	retry := time.Duration(float64(max(t.queued, 1)) * t.cycle * float64(time.Second))
	retry = min(max(retry, 100*time.Millisecond), 30*time.Second).Round(time.Millisecond)
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("%s; retry in %v", msg, retry))
	if d, err := st.WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonRateLimited, Domain: ErrorDomain, Metadata: map[string]string{MetadataLimit: limit}},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(retry)},
	); err == nil {
		st = d
	}
	return st.Err()
}

// checkpoint is the cycle's pacer: the engine calls it at a checkpoint after the quantum's
// quantum passed. It gives way to lighter clusters' work (pausing the cycle), shares
// the time with lighter clusters that are active, or only yields the processor.
func (ct *cycleTicket) checkpoint() {
	a := ct.a
	a.mu.Lock()
	now := a.now()
	if !a.mustGiveWay(ct.t, now, ct.since) {
		share := a.mustShare(ct.t, now)
		a.mu.Unlock()
		if share {
			ct.sleep(min(time.Duration(float64(now.Sub(ct.lastCheck))*(1-a.share)/a.share), maxPause))
		} else {
			ct.yieldIfBusy()
		}
		ct.lastCheck = time.Now()
		ct.pacer.RequestAfter(a.quantum)
		return
	}
	ct.ran += now.Sub(ct.since)
	ct.t.charge(now, now.Sub(ct.since))
	a.running--
	ct.slot = false
	a.grantLocked(now)
	a.mu.Unlock()

	ct.pause(now)
	// When the context ends meanwhile, the cycle stops at its next check, without a slot.
	ct.slot = a.acquireSlot(ct.ctx, ct.t) == nil
	a.mu.Lock()
	ct.since = a.now()
	ct.lastCheck = ct.since
	ct.t.pauses++
	ct.t.paused += ct.since.Sub(now).Seconds()
	a.mu.Unlock()
	ct.pacer.RequestAfter(a.quantum)
}

// sleep steps the cycle aside for d (or until its context ends), keeping its slot, and counts
// the time as paused. The time asleep is not charged to the cluster's usage.
func (ct *cycleTicket) sleep(d time.Duration) {
	if d <= 0 {
		return
	}
	start := time.Now()
	t := time.NewTimer(d)
	select {
	case <-t.C:
	case <-ct.ctx.Done():
		t.Stop()
	}
	slept := time.Since(start)
	a := ct.a
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	ct.ran += now.Add(-slept).Sub(ct.since)
	ct.t.charge(now, now.Add(-slept).Sub(ct.since))
	ct.since = now
	ct.t.paused += slept.Seconds()
}

// yieldIfBusy lets goroutines that wait for a processor run: when the scheduler has any
// runnable, the cycle sleeps for yieldSleep, so that its processor takes them. (Gosched
// would put the cycle on the global run queue, which a processor serves before it steals
// from another processor's queue: a call's goroutine queued behind the GC or another long
// goroutine would still wait for the 10 ms preemption.)
func (ct *cycleTicket) yieldIfBusy() {
	rtmetrics.Read(ct.runnable[:])
	if v := ct.runnable[0].Value; v.Kind() == rtmetrics.KindUint64 && v.Uint64() > 0 {
		time.Sleep(yieldSleep)
	}
}

// pause waits, without a slot, until no lighter cluster's work is in progress, for at most
// maxPause, or until the cycle's context ends.
func (ct *cycleTicket) pause(start time.Time) {
	a := ct.a
	limit := time.NewTimer(maxPause)
	defer limit.Stop()
	for {
		a.mu.Lock()
		now := a.now()
		if !a.mustGiveWay(ct.t, now, now) {
			a.mu.Unlock()
			return
		}
		changed := a.changed
		a.mu.Unlock()
		select {
		case <-changed:
		case <-limit.C:
			return
		case <-ct.ctx.Done():
			return
		}
	}
}

// done ends the cycle: it charges its run time, records it in the cluster's average, and
// releases the slot and the cluster's cycle lock.
func (ct *cycleTicket) done() {
	defer ct.unlock()
	a := ct.a
	if a == nil {
		return
	}
	ct.pacer.RequestAfter(0)
	a.mu.Lock()
	now := a.now()
	run := ct.ran + now.Sub(ct.since)
	ct.t.charge(now, now.Sub(ct.since))
	if ct.t.cycle == 0 {
		ct.t.cycle = run.Seconds()
	} else {
		ct.t.cycle = 0.7*ct.t.cycle + 0.3*run.Seconds()
	}
	ct.t.queued--
	if ct.slot {
		a.running--
		a.grantLocked(now)
	}
	a.mu.Unlock()
}

// activity returns every cluster's refused cycle calls and cycle pauses since it was first
// seen, for the log summary.
func (a *admission) activity() map[string]clusterActivity {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make(map[string]clusterActivity, len(a.tenants))
	for name, t := range a.tenants {
		out[name] = clusterActivity{CycleRefusals: t.rejected[limitCycleQueue] + t.rejected[limitCycleWait], CyclePauses: t.pauses}
	}
	return out
}

// admitUnary records every call that names a cluster as that cluster's work in progress
// (Schedule's cycles charge their own run time). It runs after authentication and rate
// limits, so that refused calls count for nothing.
func (a *admission) admitUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	cluster, _ := clusterOf(req)
	done := a.call(cluster, info.FullMethod != sluicev1.SchedulerService_Schedule_FullMethodName)
	defer done()
	return next(ctx, req)
}

// admitStream records each Sync message, from its receipt until the handler sends its
// answer (a welcome, an ack or a rejection), as its cluster's work in progress. WatchPlans's
// work is its cycles.
func (a *admission) admitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if info.FullMethod != sluicev1.ClusterStateService_Sync_FullMethodName {
		return next(srv, ss)
	}
	w := &admittedStream{ServerStream: ss, a: a}
	defer w.endAll()
	return next(srv, w)
}

// admittedStream marks a Sync stream's cluster busy while the handler works on the messages
// it received (the handler reads ahead, so several may be pending).
type admittedStream struct {
	grpc.ServerStream
	a *admission

	mu      sync.Mutex
	cluster string
	pending []func()
}

func (s *admittedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := clusterOf(m); ok {
		s.cluster = c
	}
	s.pending = append(s.pending, s.a.call(s.cluster, true))
	return nil
}

func (s *admittedStream) SendMsg(m any) error {
	err := s.ServerStream.SendMsg(m)
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) > 0 {
		s.pending[0]()
		s.pending = s.pending[1:]
	}
	return err
}

// endAll ends what is still pending when the stream ends.
func (s *admittedStream) endAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, done := range s.pending {
		done()
	}
	s.pending = nil
}

// instrument creates the admission's instruments on mp: the wait histogram, and gauges and
// counters observed from the tenants.
func (a *admission) instrument(mp metric.MeterProvider) error {
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	meter := mp.Meter(instrumentationName)
	var errs []error
	var err error
	a.wait, err = meter.Float64Histogram("cycle.admission.wait", metric.WithUnit("s"),
		metric.WithDescription("Time a cycle waited for its cluster's earlier cycles and a cycle slot, by cluster."),
		metric.WithExplicitBucketBoundaries(latencyBuckets...))
	errs = append(errs, err)
	slots, err := meter.Int64ObservableGauge("cycle.slots", metric.WithUnit("{cycle}"),
		metric.WithDescription("Cycles the server runs at once at most (--max-concurrent-cycles)."))
	errs = append(errs, err)
	running, err := meter.Int64ObservableGauge("cycles.running", metric.WithUnit("{cycle}"),
		metric.WithDescription("Cycles holding a slot now."))
	errs = append(errs, err)
	waiting, err := meter.Int64ObservableGauge("cycles.queued", metric.WithUnit("{cycle}"),
		metric.WithDescription("Cycle calls of a cluster waiting or running, by cluster."))
	errs = append(errs, err)
	usage, err := meter.Float64ObservableGauge("cluster.usage", metric.WithUnit("s"),
		metric.WithDescription("A cluster's recent usage of the server (cycle run time and call time, decaying with a 10 s half-life), by cluster: the lower, the sooner its cycles get a slot."))
	errs = append(errs, err)
	pauses, err := meter.Int64ObservableCounter("cycle.pauses", metric.WithUnit("{pause}"),
		metric.WithDescription("Times a cluster's cycles paused to give way to a lighter cluster's work, by cluster."))
	errs = append(errs, err)
	paused, err := meter.Float64ObservableCounter("cycle.paused", metric.WithUnit("s"),
		metric.WithDescription("Time a cluster's cycles spent paused or sleeping for lighter clusters' work, by cluster."))
	errs = append(errs, err)
	background, err := meter.Int64ObservableCounter("cycle.background_dry_runs", metric.WithUnit("{cycle}"),
		metric.WithDescription("Dry runs run at the operating system's idle priority because a lighter cluster was active (--background-dry-runs), by cluster."))
	errs = append(errs, err)
	refused, err := meter.Int64ObservableCounter("cycle.admission.refusals", metric.WithUnit("{call}"),
		metric.WithDescription("Cycle calls refused with RESOURCE_EXHAUSTED, by cluster and limit (cycle_queue, cycle_wait)."))
	errs = append(errs, err)
	for _, err := range errs {
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		a.mu.Lock()
		defer a.mu.Unlock()
		now := a.now()
		o.ObserveInt64(slots, int64(a.slots))
		o.ObserveInt64(running, int64(a.running))
		for name, t := range a.tenants {
			if a.exists != nil && !a.exists(name) {
				continue
			}
			cl := attribute.String("cluster", name)
			o.ObserveInt64(waiting, int64(t.queued), metric.WithAttributes(cl))
			o.ObserveFloat64(usage, t.usageAt(now), metric.WithAttributes(cl))
			o.ObserveInt64(pauses, t.pauses, metric.WithAttributes(cl))
			o.ObserveFloat64(paused, t.paused, metric.WithAttributes(cl))
			o.ObserveInt64(background, t.background.Load(), metric.WithAttributes(cl))
			for _, limit := range []string{limitCycleQueue, limitCycleWait} {
				o.ObserveInt64(refused, t.rejected[limit], metric.WithAttributes(cl, attribute.String("limit", limit)))
			}
		}
		return nil
	}, slots, running, waiting, usage, pauses, paused, background, refused)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}

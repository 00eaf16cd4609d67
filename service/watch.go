package service

import (
	"context"
	"fmt"
	"sync"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/sluice-sched/sluice/engine"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// WatchPlans timing.
const (
	// DefaultSchedulePeriod is Volcano's default schedule period. WatchPlans no longer runs
	// cycles on a period (it is idle-free): the constant and the period options remain for
	// compatibility.
	DefaultSchedulePeriod = time.Second
	// DefaultWatchPeriod is DefaultSchedulePeriod under its older name.
	DefaultWatchPeriod = DefaultSchedulePeriod
	// MinWatchPeriod was the shortest period WatchPlans accepted; periods are now ignored.
	MinWatchPeriod = 100 * time.Millisecond
	// DefaultWatchDebounce is the shortest time between the starts of two cycles of a watch
	// that changes trigger: a change that comes sooner waits, with the others of that time,
	// for one cycle at the end of it.
	DefaultWatchDebounce = 100 * time.Millisecond
	// retryWait is how soon a watch looks again at a proposed plan that had not expired yet at
	// its expiry time.
	retryWait = 10 * time.Millisecond
	// takeoverWait bounds how long a takeover waits for the replaced stream to end.
	takeoverWait = 5 * time.Second
	// DefaultMaxDryRunWatches is how many dry-run WatchPlans streams a cluster may have at
	// once when Options.MaxDryRunWatches does not say.
	DefaultMaxDryRunWatches = 8
)

// Reasons of WatchPlans failures.
const (
	// ReasonWatchExists: the cluster already has a WatchPlans subscriber (set takeover).
	ReasonWatchExists = "WATCH_EXISTS"
	// ReasonTakenOver: another subscriber took the cluster's watch over.
	ReasonTakenOver = "TAKEN_OVER"
)

// watchSub is a cluster's WatchPlans subscriber.
type watchSub struct {
	cluster string
	// dryRun: the subscriber only reads (dry runs), and is one of the cluster's readers.
	dryRun bool
	// abort is closed when another subscriber takes over or the cluster is deleted, after
	// reason is set to the error the stream ends with; exited is closed when the handler
	// returns.
	abort, exited chan struct{}
	abortOnce     sync.Once
	reason        error
}

// end aborts the subscriber with reason (the first reason given wins).
func (sub *watchSub) end(reason error) {
	sub.abortOnce.Do(func() {
		sub.reason = reason
		close(sub.abort)
	})
}

// ended returns the reason the subscriber was aborted with, or nil.
func (sub *watchSub) ended() error {
	select {
	case <-sub.abort:
		return sub.reason
	default:
		return nil
	}
}

// watchRegistry holds the subscribers of each cluster: at most one whose plans may be
// committed (propose or auto-commit: a writer's), and up to a limit of dry-run ones
// (readers'), which never meet the writer's: a dry-run watch neither blocks, nor takes over,
// nor ends a writer's watch.
type watchRegistry struct {
	mu         sync.Mutex
	subs       map[string]*watchSub
	readers    map[string]map[*watchSub]struct{}
	maxReaders int
}

func newWatchRegistry(maxReaders int) *watchRegistry {
	return &watchRegistry{subs: map[string]*watchSub{}, readers: map[string]map[*watchSub]struct{}{}, maxReaders: maxReaders}
}

// registerReader makes a new dry-run subscriber for a cluster, unless the cluster has as many
// as it may (RESOURCE_EXHAUSTED, LIMIT_EXCEEDED).
func (r *watchRegistry) registerReader(cluster string) (*watchSub, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.readers[cluster]); n >= r.maxReaders {
		return nil, limitExceeded(LimitDryRunWatches, r.maxReaders, "mode", fmt.Sprintf(
			"cluster %q has %d dry-run WatchPlans streams, the most it may have (%s %d); end one, or use Schedule with SCHEDULE_MODE_DRY_RUN",
			cluster, n, LimitDryRunWatches, r.maxReaders))
	}
	sub := &watchSub{cluster: cluster, dryRun: true, abort: make(chan struct{}), exited: make(chan struct{})}
	if r.readers[cluster] == nil {
		r.readers[cluster] = map[*watchSub]struct{}{}
	}
	r.readers[cluster][sub] = struct{}{}
	return sub, nil
}

// register makes a new subscriber whose plans may be committed for a cluster. When the
// cluster has one, it fails with ALREADY_EXISTS, or with takeover aborts it and returns it as
// old. Only a writer of the cluster gets here (WatchPlans in a mode other than dry run needs
// one), so only a writer can take a writer's watch over.
func (r *watchRegistry) register(cluster string, takeover bool) (sub, old *watchSub, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.subs[cluster]; ok {
		if !takeover {
			return nil, nil, withInfo(codes.AlreadyExists, ReasonWatchExists, fmt.Sprintf(
				"cluster %q already has a WatchPlans subscriber; set takeover to replace it", cluster))
		}
		old = cur
		old.end(withInfo(codes.Aborted, ReasonTakenOver, fmt.Sprintf(
			"another WatchPlans subscriber took cluster %q over", cluster)))
	}
	sub = &watchSub{cluster: cluster, abort: make(chan struct{}), exited: make(chan struct{})}
	r.subs[cluster] = sub
	return sub, old, nil
}

// end aborts every subscriber of a cluster, with reason.
func (r *watchRegistry) end(cluster string, reason error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sub, ok := r.subs[cluster]; ok {
		sub.end(reason)
	}
	for sub := range r.readers[cluster] {
		sub.end(reason)
	}
}

// unregister removes a subscriber that is still the cluster's.
func (r *watchRegistry) unregister(sub *watchSub) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sub.dryRun {
		delete(r.readers[sub.cluster], sub)
		if len(r.readers[sub.cluster]) == 0 {
			delete(r.readers, sub.cluster)
		}
	} else if r.subs[sub.cluster] == sub {
		delete(r.subs, sub.cluster)
	}
	close(sub.exited)
}

// WatchPlans runs a cycle at once, then again only when there is a reason: the cluster's
// state or configuration changed, or the time a time-based plugin named in the last plan
// (Result.WakeAt: an SLA waiting time running out, a revocable zone's window, a cooldown, a
// periodic strategy) has come. It never runs one just because time passed: the request's
// period is accepted and ignored. A change is acted on at once unless a cycle started less than
// the debounce (Options.WatchDebounce) ago; then the changes that come meanwhile make one cycle
// when the debounce is over. A proposed plan is the subscriber's to commit or discard: the next
// cycle waits until it has done so or the plan expired, and runs then if a reason came
// meanwhile. One subscriber that proposes or commits per cluster: another fails with
// ALREADY_EXISTS unless it sets takeover, which ends the current one with ABORTED and discards
// its proposed plan. Dry-run subscribers (a read-only token's) are apart: a cluster may have up
// to Options.MaxDryRunWatches of them, and they never block, take over or end the one that
// proposes (takeover is refused with a dry run). A cluster that does not exist is NOT_FOUND.
// The stream ends when the client goes away, with NOT_FOUND (CLUSTER_NOT_FOUND) when the
// cluster is deleted, or with UNAVAILABLE when the server shuts down (after the cycle in
// progress).
func (sc *scheduler) WatchPlans(req *sluicev1.WatchPlansRequest, stream sluicev1.SchedulerService_WatchPlansServer) error {
	s := sc.s
	ctx := stream.Context()
	fe := s.checks()
	s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkEnum(&fe, "mode", int32(req.GetMode()), sluicev1.ScheduleMode_name)
	checkDuration(&fe, "period", req.GetPeriod())
	pg := readPlanPage(&fe, req.GetPageSize(), "", "")
	if req.GetRead() != nil && req.GetMode() != sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		fe.add("read", "only allowed with SCHEDULE_MODE_DRY_RUN")
	}
	if req.GetTakeover() && req.GetMode() == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		fe.add("takeover", "not allowed with SCHEDULE_MODE_DRY_RUN: dry-run watches never replace another watch (a cluster may have several)")
	}
	if err := checkReadOptions(req.GetRead()); err != nil {
		return toStatus(err)
	}
	if err := fe.err(); err != nil {
		return toStatus(err)
	}
	cluster, mode := req.GetCluster(), req.GetMode()
	if _, err := s.existing(cluster); err != nil {
		return toStatus(err)
	}
	var sub, old *watchSub
	var err error
	if mode == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		sub, err = s.watches.registerReader(cluster)
	} else {
		sub, old, err = s.watches.register(cluster, req.GetTakeover())
	}
	if err != nil {
		return err
	}
	defer s.watches.unregister(sub)
	if old != nil {
		s.log.InfoContext(ctx, "WatchPlans subscriber taken over", "cluster", cluster)
		t := time.NewTimer(takeoverWait)
		select {
		case <-old.exited:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
	changes, unsubscribe := s.changes.subscribe(cluster)
	defer unsubscribe()

	w := &watch{s: s, sub: sub, stream: stream, ctx: ctx, cluster: cluster, mode: mode, page: pg, read: req.GetRead(), poke: true}
	// One timer serves every reason to look again: the first cycle, the end of a debounce, a
	// wake-up time, the expiry of the proposed plan the watch waits for.
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return toStatus(ctx.Err())
		case <-s.done:
			return shuttingDown
		case <-sub.abort:
			w.discardPending()
			return sub.reason
		case <-changes:
			w.poke = true
			timer.Reset(w.nextLook())
		case <-timer.C:
			if err := w.look(); err != nil {
				return err
			}
			timer.Reset(w.nextLook())
		}
	}
}

// watch is the state of one WatchPlans stream.
type watch struct {
	s       *Server
	sub     *watchSub
	stream  sluicev1.SchedulerService_WatchPlansServer
	ctx     context.Context
	cluster string
	mode    sluicev1.ScheduleMode

	cycles uint64
	// seen and cfg are the revision and configuration version the last cycle saw.
	seen, cfg uint64
	// started is when the last cycle started (the debounce counts from it).
	started time.Time
	// wakeAt is the wake-up time the last plan named (zero: none).
	wakeAt time.Time
	// poke is set when a change was signalled (or before the first cycle) and not looked at.
	poke bool
	// pending is the last plan while it may still be proposed; expires is its expiry.
	pending string
	expires time.Time
	// page is the size of each message's page of the plan.
	page planPage
	// read are a dry-run watch's read options.
	read *sluicev1.ReadOptions
}

// changed reports whether the cluster's state or configuration moved since the last cycle.
func (w *watch) changed() bool {
	return w.cycles == 0 || w.s.store.Revision(w.cluster) != w.seen || w.s.engine.ConfigVersion(w.cluster) != w.cfg
}

// woken reports whether the wake-up time of the last plan has come.
func (w *watch) woken(now time.Time) bool { return !w.wakeAt.IsZero() && !now.Before(w.wakeAt) }

// nextLook is how long until the watch should look again: at once, or at the end of the
// debounce, after a change; while a proposed plan waits for the subscriber, at its expiry
// (its commit or discard comes as a change); otherwise at the wake-up time. A long time when
// there is none of these.
func (w *watch) nextLook() time.Duration {
	now := w.s.clock()
	next := time.Duration(1<<63 - 1)
	if w.poke {
		next = max(0, w.started.Add(w.s.watchDebounce).Sub(now))
	}
	switch {
	case w.pending != "":
		// Not sooner than retryWait, in case the plan is still proposed at its expiry.
		next = min(next, max(retryWait, w.expires.Sub(now)))
	case !w.wakeAt.IsZero():
		next = min(next, max(0, w.wakeAt.Sub(now)))
	}
	return next
}

// look runs a cycle when there is a reason for one (a change, a wake-up time that came, or
// the first cycle) and the subscriber has no plan left to settle.
func (w *watch) look() error {
	now := w.s.clock()
	if w.poke && now.Before(w.started.Add(w.s.watchDebounce)) {
		return nil // the debounce is not over: nextLook says when it is
	}
	w.poke = false
	if w.waiting() {
		return nil
	}
	if !w.changed() && !w.woken(now) {
		return nil
	}
	return w.cycle()
}

// waiting reports whether the last plan is still proposed: the subscriber has not committed
// or discarded it, and it has not expired.
func (w *watch) waiting() bool {
	if w.pending == "" {
		return false
	}
	p, err := w.s.engine.GetPlan(w.cluster, w.pending)
	if err == nil && p.State == engine.PlanProposed {
		return true
	}
	w.pending, w.expires = "", time.Time{}
	return false
}

// cycle runs one cycle, unless the subscriber still has a plan to settle, and sends its plan.
func (w *watch) cycle() error {
	select {
	case <-w.s.done:
		return shuttingDown
	default:
	}
	if w.waiting() {
		return nil
	}
	cfg := w.s.engine.ConfigVersion(w.cluster)
	w.started = w.s.clock()
	p, err := w.s.schedule(w.ctx, w.cluster, w.mode, time.Time{}, "", w.read, w.sub, nil)
	if err != nil {
		if w.sub.ended() != nil {
			w.discardPending()
		}
		return toStatus(err)
	}
	w.cycles++
	w.seen, w.cfg = max(p.BaseRevision, p.CommittedRevision), cfg
	w.wakeAt = p.Result.WakeAt
	if p.State == engine.PlanProposed {
		w.pending, w.expires = p.ID, p.ExpiresAt
	}
	w.s.log.DebugContext(w.ctx, "WatchPlans cycle", "cluster", w.cluster, "plan", p.ID,
		"revision", p.BaseRevision, "decisions", len(p.Result.Decisions), "wake_at", w.wakeAt)
	out := &sluicev1.WatchPlansResponse{}
	out.Plan, out.NextPageToken = planToProto(p, w.page)
	if p.Commit != nil {
		out.Commit = commitToProto(p.Commit, w.page)
	}
	return w.stream.Send(out)
}

// discardPending discards the last plan if it is still proposed, so that a subscriber that
// was taken over cannot commit it.
func (w *watch) discardPending() {
	if w.pending == "" {
		return
	}
	if err := w.s.engine.DiscardPlan(w.cluster, w.pending); err != nil {
		w.s.log.Debug("discarding the pending plan of a watch that was taken over", "cluster", w.cluster, "plan", w.pending, "error", err.Error())
	}
	w.pending = ""
}

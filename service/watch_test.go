package service

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// watcher reads a WatchPlans stream in the background.
type watcher struct {
	t     *testing.T
	plans chan *sluicev1.Plan
	errc  chan error
}

func (h *harness) watch(ctx context.Context, req *sluicev1.WatchPlansRequest) *watcher {
	h.t.Helper()
	s, err := h.sc.WatchPlans(ctx, req)
	if err != nil {
		h.t.Fatal(err)
	}
	w := &watcher{t: h.t, plans: make(chan *sluicev1.Plan, 100), errc: make(chan error, 1)}
	go func() {
		for {
			m, err := s.Recv()
			if err != nil {
				w.errc <- err
				return
			}
			w.plans <- m.GetPlan()
		}
	}()
	return w
}

// next returns the next plan, failing after a while.
func (w *watcher) next() *sluicev1.Plan {
	w.t.Helper()
	select {
	case p := <-w.plans:
		return p
	case err := <-w.errc:
		w.t.Fatalf("watch ended: %v", err)
	case <-time.After(10 * time.Second):
		w.t.Fatal("no plan within 10s")
	}
	return nil
}

// none checks that no plan comes for d.
func (w *watcher) none(d time.Duration) {
	w.t.Helper()
	select {
	case p := <-w.plans:
		w.t.Fatalf("unexpected plan %s (revision %d, %d decisions)", p.GetId(), p.GetBaseRevision(), len(p.GetDecisions()))
	case err := <-w.errc:
		w.t.Fatalf("watch ended: %v", err)
	case <-time.After(d):
	}
}

// end waits for the stream's error.
func (w *watcher) end() error {
	w.t.Helper()
	for {
		select {
		case <-w.plans:
		case err := <-w.errc:
			return err
		case <-time.After(10 * time.Second):
			w.t.Fatal("the watch did not end")
			return nil
		}
	}
}

func binds(p *sluicev1.Plan) []string {
	var out []string
	for _, d := range p.GetDecisions() {
		if b := d.GetBind(); b != nil {
			out = append(out, refName(b.GetTask()))
		}
	}
	return out
}

func TestWatchPlansSubscriberCommitsAsStateChanges(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Period: durationpb.New(time.Hour)})

	p := w.next()
	if p.GetState() != sluicev1.PlanState_PLAN_STATE_PROPOSED || strings.Join(binds(p), " ") != "default/a-0 default/a-1" {
		t.Fatalf("first plan: %v", p)
	}
	// While the plan waits for the subscriber, changes do not make new plans.
	h.apply("c1", node("n3", cpu("8")))
	w.none(300 * time.Millisecond)
	// Committing it lets the next cycle run: it sees the new node and places b.
	if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetId()}); err != nil {
		t.Fatal(err)
	}
	p = w.next()
	if strings.Join(binds(p), " ") != "default/b-0" {
		t.Fatalf("plan after the commit: %v", p)
	}
	c, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetId()})
	if err != nil || len(c.GetApplied()) != 1 {
		t.Fatalf("commit: %v, %v", c, err)
	}
	// A new job triggers a cycle within the debounce.
	start := time.Now()
	rev := h.apply("c1", job("d", "", 1), task("d-0", "d", cpu("1")))
	p = w.next()
	if p.GetBaseRevision() != rev || strings.Join(binds(p), " ") != "default/d-0" {
		t.Fatalf("plan after the change: %v", p)
	}
	if el := time.Since(start); el > 5*time.Second {
		t.Fatalf("the change took %v to make a plan", el)
	}
	// Discarding it ends the wait, but nothing changed since: no new cycle.
	if _, err := h.sc.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: "c1", PlanId: p.GetId()}); err != nil {
		t.Fatal(err)
	}
	w.none(300 * time.Millisecond)
	// A change now makes one at once.
	rev = h.apply("c1", job("e", "", 1), task("e-0", "e", cpu("1")))
	if p = w.next(); p.GetBaseRevision() != rev {
		t.Fatalf("plan after the discard and a change: %v", p)
	}
}

func TestWatchPlansDebouncesChanges(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.WatchDebounce = 300 * time.Millisecond }})
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("64")))
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		Period: durationpb.New(time.Hour)})
	w.next()
	var last uint64
	for i := range 5 {
		name := string(rune('a' + i))
		last = h.apply("c1", job(name, "", 1), task(name+"-0", name, cpu("1")))
	}
	// Normally one cycle sees all five; on a loaded machine the changes may straddle two.
	plans := 0
	for {
		p := w.next()
		plans++
		if p.GetBaseRevision() == last {
			if len(binds(p)) != 5 {
				t.Fatalf("the last plan does not place the 5 new tasks: %v", p)
			}
			break
		}
	}
	if plans > 2 {
		t.Fatalf("5 quick changes made %d cycles", plans)
	}
	w.none(500 * time.Millisecond)
}

// TestWatchPlansIdleFree: however short the server's schedule period, an unchanged cluster gets
// no cycle after the first.
func TestWatchPlansIdleFree(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.SchedulePeriod = MinWatchPeriod }})
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	w.next()
	w.none(700 * time.Millisecond)
}

// wakePlugin names a wake-up time wake after the cycle's clock, in its first cycles.
type wakePlugin struct {
	wake   time.Duration
	cycles *atomic.Int32
	max    int32
}

func (wakePlugin) Name() string { return "fakewake" }
func (p wakePlugin) OnSessionOpen(ssn *framework.Session) {
	n := p.cycles.Add(1)
	ssn.AddWakeUpFn("fakewake", func() (time.Time, bool) { return ssn.Now.Add(p.wake), n <= p.max })
}
func (wakePlugin) OnSessionClose(*framework.Session) {}

// TestWatchPlansWakesWhenAPluginAsks: with nothing changing, a watch runs a cycle at each
// wake-up time a plugin names, and none once it names no more.
func TestWatchPlansWakesWhenAPluginAsks(t *testing.T) {
	var cycles atomic.Int32
	reg := testRegistry()
	reg.RegisterPlugin("fakewake", func(conf.Arguments) (framework.Plugin, error) {
		return wakePlugin{wake: 200 * time.Millisecond, cycles: &cycles, max: 2}, nil
	})
	h := newHarnessWith(t, setup{reg: reg, config: "actions: \"fakealloc\"\ntiers:\n- plugins:\n  - name: fakewake\n"})
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	first := w.next()
	start := time.Now()
	for i := 0; i < 2; i++ {
		p := w.next()
		if p.GetBaseRevision() != first.GetBaseRevision() {
			t.Fatalf("wake-up cycle %d saw revision %d, want %d", i, p.GetBaseRevision(), first.GetBaseRevision())
		}
	}
	if el := time.Since(start); el < 300*time.Millisecond {
		t.Errorf("two wake-up cycles 200ms apart came within %v", el)
	}
	w.none(600 * time.Millisecond)
	if n := cycles.Load(); n != 3 {
		t.Errorf("%d cycles, want 3 (the first and two wake-ups)", n)
	}
}

// TestWatchPlansActsOnAChangeAtOnce: a change after a quiet time makes a cycle without waiting
// for the debounce, which only spaces cycles that follow each other closely.
func TestWatchPlansActsOnAChangeAtOnce(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.WatchDebounce = 2 * time.Second }})
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("64")))
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	w.next()
	time.Sleep(2100 * time.Millisecond)
	start := time.Now()
	rev := h.apply("c1", job("a", "", 1), task("a-0", "a", cpu("1")))
	p := w.next()
	if el := time.Since(start); p.GetBaseRevision() != rev || el > time.Second {
		t.Fatalf("plan of revision %d after %v, want revision %d well within the 2s debounce", p.GetBaseRevision(), el, rev)
	}
}

func TestWatchPlansTakeover(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w1 := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Period: durationpb.New(time.Hour)})
	p1 := w1.next()

	_, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1"})
	if err == nil {
		s, _ := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1"})
		_, err = s.Recv()
	}
	st := wantCode(t, err, codes.AlreadyExists)
	if !strings.Contains(st.Message(), "takeover") {
		t.Errorf("message %q does not say what to do", st.Message())
	}
	// Other clusters are independent.
	smallCluster(h, "c2")
	h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c2"}).next()

	w2 := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Period: durationpb.New(time.Hour), Takeover: true})
	err = w1.end()
	if status.Code(err) != codes.Aborted {
		t.Fatalf("the replaced watch ended with %v, want ABORTED", err)
	}
	// The new subscriber gets the decisions again; the old one's plan is fenced off.
	p2 := w2.next()
	if strings.Join(binds(p2), " ") != "default/a-0 default/a-1" {
		t.Fatalf("new subscriber's plan: %v", p2)
	}
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p1.GetId()})
	wantCode(t, err, codes.FailedPrecondition)
	if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p2.GetId()}); err != nil {
		t.Fatal(err)
	}
	// Once a subscriber is gone, the next one needs no takeover.
	h.apply("c3")
	cctx, cancel := context.WithCancel(ctx)
	w3 := h.watch(cctx, &sluicev1.WatchPlansRequest{Cluster: "c3", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	w3.next()
	cancel()
	w3.end()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c3", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
		if err == nil {
			_, err = s.Recv()
		}
		if err == nil {
			break
		}
		if status.Code(err) != codes.AlreadyExists || time.Now().After(deadline) {
			t.Fatalf("watch after the previous one left: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// gate is an action that blocks until released and records how many cycles of each cluster
// run at once.
type gate struct {
	mu       sync.Mutex
	running  map[string]int
	overlap  atomic.Bool
	entered  chan string
	release  chan struct{}
	blocking atomic.Bool
	// dryOnly makes only dry runs block.
	dryOnly atomic.Bool
}

func newGate() *gate {
	return &gate{running: map[string]int{}, entered: make(chan string, 100), release: make(chan struct{})}
}

func (g *gate) Name() string { return "gate" }

func (g *gate) Execute(ssn *framework.Session) {
	g.mu.Lock()
	g.running[ssn.Cluster]++
	if g.running[ssn.Cluster] > 1 {
		g.overlap.Store(true)
	}
	g.mu.Unlock()
	select {
	case g.entered <- ssn.Cluster:
	default:
	}
	if g.blocking.Load() && (!g.dryOnly.Load() || strings.Contains(ssn.UID, "-dry")) {
		<-g.release
	} else {
		time.Sleep(5 * time.Millisecond)
	}
	g.mu.Lock()
	g.running[ssn.Cluster]--
	g.mu.Unlock()
}

func gateSetup(g *gate, opts func(*Options)) setup {
	reg := testRegistry()
	reg.RegisterAction("gate", func(conf.Arguments) (framework.Action, error) { return g, nil })
	return setup{reg: reg, config: "actions: \"gate, fakealloc\"\ntiers:\n- plugins:\n  - name: fakenoop\n", opts: opts}
}

// TestCyclesOfAClusterNeverOverlap: dry runs of a cluster, unary or watched, run one at a
// time (cycles that may be committed do too: TestPlansUnderConcurrency).
func TestCyclesOfAClusterNeverOverlap(t *testing.T) {
	g := newGate()
	h := newHarnessWith(t, gateSetup(g, func(o *Options) { o.SchedulePeriod = MinWatchPeriod }))
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	w.next()
	if g.overlap.Load() {
		t.Fatal("two cycles of one cluster ran at once")
	}
}

func TestShutdownFinishesTheCycleInProgress(t *testing.T) {
	g := newGate()
	g.blocking.Store(true)
	h := newHarnessWith(t, gateSetup(g, nil))
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	<-g.entered
	h.srv.Shutdown()
	// The cycle in progress is not cut short: once it finishes its plan is committed and sent,
	// then the stream ends.
	close(g.release)
	p := w.next()
	if p.GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED || len(binds(p)) != 2 {
		t.Fatalf("plan of the cycle in progress: %v", p)
	}
	err := w.end()
	st := wantCode(t, err, codes.Unavailable)
	if st.Message() != "server shutting down" {
		t.Fatalf("message %q", st.Message())
	}
}

func TestWatchCyclesOnConfigChange(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	smallCluster(h, "c1")
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		Period: durationpb.New(time.Hour)})
	if p := w.next(); len(p.GetStats().GetActions()) != 1 {
		t.Fatalf("first plan: %v", p)
	}
	if _, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1",
		Config: "actions: \"fakealloc, otheraction\"\ntiers:\n- plugins:\n  - name: fakenoop\n"}); err != nil {
		t.Fatal(err)
	}
	if p := w.next(); len(p.GetStats().GetActions()) != 2 {
		t.Fatalf("plan after the configuration changed: %v", p)
	}
}

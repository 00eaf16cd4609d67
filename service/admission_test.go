package service

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/lowprio"
)

// admissionServer returns a server with only what admitCycle needs: the cycle locks and an
// admission of the given slots and queue bound.
func admissionServer(t *testing.T, slots, maxQueued int) *Server {
	t.Helper()
	a := newAdmission(slots, time.Millisecond, maxQueued, 0, nil)
	if err := a.instrument(nil); err != nil {
		t.Fatal(err)
	}
	return &Server{admission: a}
}

// charge gives a cluster some usage.
func (a *admission) chargeFor(cluster string, d time.Duration) {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	a.tenantLocked(cluster, now).charge(now, d)
}

// waitFor polls cond until it holds, or fails the test after 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func (a *admission) waiting() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.waiters)
}

func (a *admission) runningNow() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.running
}

// TestSlotsGoToTheLightestCluster: with every slot taken, the next free slot goes to the
// waiting cluster with the least usage, even when a heavier one has waited longer.
func TestSlotsGoToTheLightestCluster(t *testing.T) {
	s := admissionServer(t, 1, 0)
	a := s.admission
	a.chargeFor("heavy", 10*time.Second)
	a.chargeFor("light", 10*time.Millisecond)
	ctx := ctxT(t)
	holder, err := s.admitCycle(ctx, "holder", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	admit := func(cluster string) {
		defer wg.Done()
		ct, err := s.admitCycle(ctx, cluster, &s.cycles)
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		order = append(order, cluster)
		mu.Unlock()
		ct.done()
	}
	wg.Add(2)
	go admit("heavy")
	waitFor(t, "heavy to wait", func() bool { return a.waiting() == 1 })
	go admit("light")
	waitFor(t, "light to wait", func() bool { return a.waiting() == 2 })
	holder.done()
	wg.Wait()
	if strings.Join(order, ",") != "light,heavy" {
		t.Fatalf("slots went to %v, want light first", order)
	}
	if n := a.runningNow(); n != 0 {
		t.Fatalf("%d slots still taken after every cycle ended", n)
	}
}

// wantRefusal checks a RESOURCE_EXHAUSTED refusal of admission: reason RATE_LIMITED, the
// limit in the metadata, and a RetryInfo.
func wantRefusal(t *testing.T, err error, limit string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != codes.ResourceExhausted {
		t.Fatalf("got %v, want RESOURCE_EXHAUSTED", err)
	}
	var info *errdetails.ErrorInfo
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.ErrorInfo:
			info = d
		case *errdetails.RetryInfo:
			retry = d
		}
	}
	if info == nil || info.GetReason() != ReasonRateLimited || info.GetMetadata()[MetadataLimit] != limit {
		t.Fatalf("ErrorInfo %v, want reason %s and %s=%s", info, ReasonRateLimited, MetadataLimit, limit)
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Fatalf("RetryInfo %v, want a positive delay", retry)
	}
}

// TestAdmissionKeepsTheDeadline: a cycle that cannot get a slot gives up while the rest of
// its deadline would still hold the cluster's usual cycle, and says why.
func TestAdmissionKeepsTheDeadline(t *testing.T) {
	s := admissionServer(t, 1, 0)
	a := s.admission
	holder, err := s.admitCycle(ctxT(t), "holder", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.done()
	a.mu.Lock()
	a.tenantLocked("c", a.now()).cycle = 0.2 // the cluster's cycles take 200ms
	a.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = s.admitCycle(ctx, "c", &s.cycles)
	took := time.Since(start)
	wantRefusal(t, err, limitCycleWait)
	if !strings.Contains(status.Convert(err).Message(), "cycle slots") {
		t.Errorf("the message %q does not say what the call waited for", status.Convert(err).Message())
	}
	if took > 400*time.Millisecond || took < 200*time.Millisecond {
		t.Fatalf("gave up after %v; want about 300ms (the 500ms deadline less the 200ms cycle)", took)
	}
	if ctx.Err() != nil {
		t.Fatal("the refusal came after the deadline")
	}
	// Without a deadline the call waits as long as its context lasts; cancelled, it says so.
	cctx, ccancel := context.WithCancel(context.Background())
	go func() { time.Sleep(20 * time.Millisecond); ccancel() }()
	if _, err := s.admitCycle(cctx, "c", &s.cycles); err != context.Canceled {
		t.Fatalf("cancelled wait: %v", err)
	}
	if n := a.waiting(); n != 0 {
		t.Fatalf("%d waiters left behind", n)
	}
}

// TestTheClustersEarlierCyclesCountAgainstTheDeadline: waiting for the cluster's own cycle
// lock is bounded the same way.
func TestTheClustersEarlierCyclesCountAgainstTheDeadline(t *testing.T) {
	s := admissionServer(t, 4, 0)
	first, err := s.admitCycle(ctxT(t), "c", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	defer first.done()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err = s.admitCycle(ctx, "c", &s.cycles)
	wantRefusal(t, err, limitCycleWait)
	if !strings.Contains(status.Convert(err).Message(), "earlier cycles") {
		t.Errorf("message %q", status.Convert(err).Message())
	}
}

// TestQueuedCyclesAreBounded: beyond MaxQueuedCycles cycle calls of one cluster, the next is
// refused at once; other clusters are not affected.
func TestQueuedCyclesAreBounded(t *testing.T) {
	s := admissionServer(t, 4, 2)
	ctx := ctxT(t)
	first, err := s.admitCycle(ctx, "flood", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		_, err := s.admitCycle(wctx, "flood", &s.cycles)
		waited <- err
	}()
	waitFor(t, "the second call to queue", func() bool {
		s.admission.mu.Lock()
		defer s.admission.mu.Unlock()
		return s.admission.tenants["flood"].queued == 2
	})
	start := time.Now()
	_, err = s.admitCycle(ctx, "flood", &s.cycles)
	wantRefusal(t, err, limitCycleQueue)
	if time.Since(start) > time.Second {
		t.Fatal("the refusal waited")
	}
	other, err := s.admitCycle(ctx, "other", &s.cycles)
	if err != nil {
		t.Fatalf("another cluster is refused: %v", err)
	}
	other.done()
	cancel()
	if err := <-waited; err != context.Canceled {
		t.Fatalf("the queued call: %v", err)
	}
	first.done()
	// The queue drained: the cluster is admitted again.
	again, err := s.admitCycle(ctx, "flood", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	again.done()
	s.admission.mu.Lock()
	defer s.admission.mu.Unlock()
	if got := s.admission.tenants["flood"].rejected[limitCycleQueue]; got != 1 {
		t.Fatalf("%d refusals counted, want 1", got)
	}
}

// TestLongCyclesGiveWayToLighterClusters: at a checkpoint, a cycle of a heavy cluster pauses,
// giving up its slot, while a lighter cluster has a call in progress, and goes on when the
// call ends; without lighter work it goes on at once; a cycle never pauses for a heavier
// cluster's calls.
func TestLongCyclesGiveWayToLighterClusters(t *testing.T) {
	s := admissionServer(t, 1, 0)
	a := s.admission
	a.chargeFor("heavy", 10*time.Second)
	ctx := ctxT(t)
	ct, err := s.admitCycle(ctx, "heavy", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	defer ct.done()

	// Nothing lighter in progress: the checkpoint returns at once, keeping the slot.
	ct.checkpoint()
	if a.runningNow() != 1 || ct.t.pauses != 0 {
		t.Fatalf("running %d, pauses %d after a checkpoint with nothing to give way to", a.runningNow(), ct.t.pauses)
	}
	// A heavier cluster's call does not pause it.
	a.chargeFor("heavier", time.Minute)
	end := a.call("heavier", true)
	ct.checkpoint()
	end()
	if ct.t.pauses != 0 {
		t.Fatal("the cycle paused for a heavier cluster")
	}

	end = a.call("light", true)
	resumed := make(chan struct{})
	go func() {
		ct.checkpoint()
		close(resumed)
	}()
	waitFor(t, "the cycle to give up its slot", func() bool { return a.runningNow() == 0 })
	// The slot is free for the light cluster's cycle meanwhile.
	light, err := s.admitCycle(ctx, "light", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-resumed:
		t.Fatal("the cycle went on while the lighter cluster was busy")
	case <-time.After(20 * time.Millisecond):
	}
	light.done()
	end()
	select {
	case <-resumed:
	case <-time.After(5 * time.Second):
		t.Fatal("the cycle did not go on after the lighter cluster's work ended")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if ct.t.pauses != 1 || ct.t.paused <= 0 || a.running != 1 {
		t.Fatalf("pauses %d, paused %gs, running %d; want 1 pause, some time, the slot back", ct.t.pauses, ct.t.paused, a.running)
	}
}

// TestPausesAreBounded: a lighter cluster that stays busy slows a heavy cycle down but never
// stops it: each pause ends after maxPause.
func TestPausesAreBounded(t *testing.T) {
	s := admissionServer(t, 2, 0)
	a := s.admission
	a.chargeFor("heavy", 10*time.Second)
	ct, err := s.admitCycle(ctxT(t), "heavy", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	defer ct.done()
	end := a.call("light", true)
	defer end()
	start := time.Now()
	ct.checkpoint()
	if took := time.Since(start); took < maxPause || took > maxPause+2*time.Second {
		t.Fatalf("the pause took %v, want about %v", took, maxPause)
	}
}

// TestHeavyCyclesShareTheTime: while a lighter cluster has been active within recentWindow,
// a heavy cycle sleeps at each checkpoint as long as it ran since the last one (the default
// share is half), keeping its slot; not with a share of 1, nor once the lighter cluster has
// been quiet for the window.
func TestHeavyCyclesShareTheTime(t *testing.T) {
	s := admissionServer(t, 2, 0)
	a := s.admission
	a.chargeFor("heavy", 10*time.Second)
	ct, err := s.admitCycle(ctxT(t), "heavy", &s.cycles)
	if err != nil {
		t.Fatal(err)
	}
	defer ct.done()
	a.call("light", true)() // a call that just ended
	ran := 40 * time.Millisecond
	check := func() time.Duration {
		ct.lastCheck = time.Now().Add(-ran)
		start := time.Now()
		ct.checkpoint()
		return time.Since(start)
	}
	if took := check(); took < ran || took > ran+2*time.Second {
		t.Fatalf("the checkpoint took %v after %v of running, want about as long", took, ran)
	}
	a.mu.Lock()
	paused, running := ct.t.paused, a.running
	a.mu.Unlock()
	if paused < ran.Seconds() || running != 1 {
		t.Fatalf("paused %gs, running %d: want the sleep counted and the slot kept", paused, running)
	}
	a.share = 1
	if took := check(); took > ran/2 {
		t.Fatalf("with a share of 1 the checkpoint took %v", took)
	}
	a.share = DefaultCycleShare
	a.mu.Lock()
	a.tenants["light"].lastBusy = a.now().Add(-recentWindow)
	a.mu.Unlock()
	if took := check(); took > ran/2 {
		t.Fatalf("with the lighter cluster quiet for %v the checkpoint took %v", recentWindow, took)
	}
}

// TestUnknownClustersLeaveNoRecord: calls and cycles naming a cluster without state are
// served, but leave no admission record (and so no metric series) and no counts for the log
// summary.
func TestUnknownClustersLeaveNoRecord(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	smallCluster(h, "real")
	for _, c := range []string{"ghost-1", "ghost-2"} {
		_, _ = h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: c})
		_, _ = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: c, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	}
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "real", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
		t.Fatal(err)
	}
	m := h.srv.metrics
	m.mu.Lock()
	for _, c := range []string{"ghost-1", "ghost-2"} {
		if _, ok := m.perCluster[c]; ok {
			t.Errorf("the dry runs on %s left counts behind", c)
		}
	}
	m.mu.Unlock()
	a := h.srv.admission
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.tenants["real"]; !ok || len(a.tenants) != 1 {
		var names []string
		for n := range a.tenants {
			names = append(names, n)
		}
		t.Fatalf("admission records %v, want only the real cluster's", names)
	}
}

// TestUsageDecays: a cluster's usage halves every usageHalfLife.
func TestUsageDecays(t *testing.T) {
	clock := &fakeClock{now: time.Unix(1000, 0)}
	a := newAdmission(1, 0, 0, 0, clock.Now)
	a.chargeFor("c", 8*time.Second)
	clock.Add(2 * usageHalfLife)
	a.mu.Lock()
	defer a.mu.Unlock()
	if got := a.tenants["c"].usageAt(clock.Now()); got < 1.99 || got > 2.01 {
		t.Fatalf("usage %g after two half-lives of 8s, want 2", got)
	}
}

// slowAction runs until its session is interrupted or release is closed, reaching a
// checkpoint (Interrupted) every 100µs.
type slowAction struct{ release chan struct{} }

func (slowAction) Name() string { return "slow" }

func (a slowAction) Execute(ssn *framework.Session) {
	for !ssn.Interrupted() {
		select {
		case <-a.release:
			return
		case <-time.After(100 * time.Microsecond):
		}
	}
}

// TestScheduleRefusedWithRetryInfo: through the API, a Schedule that cannot start its cycle
// within its deadline (its cluster's earlier cycle runs on) fails with RESOURCE_EXHAUSTED and
// RetryInfo before the deadline, and a cluster's calls beyond its queue bound are refused.
func TestScheduleRefusedWithRetryInfo(t *testing.T) {
	release := make(chan struct{})
	reg := testRegistry()
	reg.RegisterAction("slow", func(conf.Arguments) (framework.Action, error) { return slowAction{release: release}, nil })
	h := newHarnessWith(t, setup{reg: reg, config: "actions: \"slow\"\ntiers:\n- plugins:\n  - name: fakenoop\n",
		opts: func(o *Options) { o.MaxQueuedCycles = 2 }})
	smallCluster(h, "c1")
	ctx := ctxT(t)
	running := make(chan error, 1)
	go func() {
		_, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
		running <- err
	}()
	waitFor(t, "the first cycle to run", func() bool { return h.srv.admission.runningNow() == 1 })

	dctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	_, err := h.sc.Schedule(dctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	wantRefusal(t, err, limitCycleWait)
	if dctx.Err() != nil {
		t.Fatal("the refusal came only at the deadline")
	}

	// One waits (two queued with the running one); the third is refused at once.
	waiting := make(chan error, 1)
	go func() {
		_, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
		waiting <- err
	}()
	waitFor(t, "the second call to queue", func() bool {
		a := h.srv.admission
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.tenants["c1"].queued == 2
	})
	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	wantRefusal(t, err, limitCycleQueue)
	close(release)
	for _, ch := range []chan error{running, waiting} {
		if err := <-ch; err != nil {
			t.Fatal(err)
		}
	}
	_ = engine.DryRun
}

// probeAction records whether the cycle ran at the operating system's idle priority.
type probeAction struct{ idle *atomic.Bool }

func (probeAction) Name() string { return "probe" }

func (a probeAction) Execute(*framework.Session) {
	idle, _ := lowprio.Idle()
	a.idle.Store(idle)
}

// TestDryRunsOfHeavyClustersRunInTheBackground: with BackgroundDryRuns, a dry run of a
// cluster heavier than one active lately runs at the idle priority (on Linux); its cycles
// whose plans may be committed, the lighter cluster's dry runs and every dry run without the
// option keep the normal priority.
func TestDryRunsOfHeavyClustersRunInTheBackground(t *testing.T) {
	for _, on := range []bool{true, false} {
		// Elsewhere than on Linux the thread keeps its priority (lowprio has no idle class
		// there), but the dry run is still counted as sent to the background.
		wantIdle := on && runtime.GOOS == "linux"
		var idle atomic.Bool
		mp, handler, err := NewPrometheusMetrics()
		if err != nil {
			t.Fatal(err)
		}
		defer mp.Shutdown(t.Context())
		reg := testRegistry()
		reg.RegisterAction("probe", func(conf.Arguments) (framework.Action, error) { return probeAction{idle: &idle}, nil })
		h := newHarnessWith(t, setup{reg: reg, config: "actions: \"probe\"\ntiers:\n- plugins:\n  - name: fakenoop\n",
			opts: func(o *Options) { o.BackgroundDryRuns = on; o.MeterProvider = mp }})
		smallCluster(h, "heavy")
		smallCluster(h, "light")
		ran := func(cluster string, mode sluicev1.ScheduleMode) bool {
			t.Helper()
			idle.Store(!idle.Load())
			if _, err := h.sc.Schedule(ctxT(t), &sluicev1.ScheduleRequest{Cluster: cluster, Mode: mode}); err != nil {
				t.Fatal(err)
			}
			return idle.Load()
		}
		a := h.srv.admission
		a.chargeFor("heavy", 10*time.Second)
		a.call("light", true)() // the light cluster was active a moment ago
		setCycle := func(cluster string, d time.Duration) {
			a.mu.Lock()
			defer a.mu.Unlock()
			a.tenants[cluster].cycle = d.Seconds()
		}
		// The heavy cluster's first cycle is short: a short dry run keeps its thread.
		if ran("heavy", sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN) {
			t.Fatalf("option %v: a dry run of a cluster whose cycles are short ran idle", on)
		}
		setCycle("heavy", time.Second) // its cycles usually take a second
		if got := ran("heavy", sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN); got != wantIdle {
			t.Fatalf("option %v: the heavy cluster's dry run ran idle: %v, want %v", on, got, wantIdle)
		}
		if ran("heavy", sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE) {
			t.Fatalf("option %v: a proposing cycle ran idle", on)
		}
		setCycle("light", time.Second) // long cycles too, but nothing lighter is active
		if ran("light", sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN) {
			t.Fatalf("option %v: the light cluster's dry run ran idle", on)
		}
		want := int64(0)
		if on {
			want = 1
		}
		fams := scrape(t, handler)
		for cluster, want := range map[string]int64{"heavy": want, "light": 0} {
			n, ok := value(fams, "sluice_cycle_background_dry_runs_total", map[string]string{"cluster": cluster})
			if !ok || int64(n) != want {
				t.Fatalf("option %v: sluice_cycle_background_dry_runs_total{cluster=%q} %v (found %v), want %d", on, cluster, n, ok, want)
			}
		}
	}
}

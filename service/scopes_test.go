package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/types/known/durationpb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// The tests of this file check the rule of scopes by effect with the tokens of testTokens: a
// read-only credential never changes what a writer sees or does, and only a writer of a
// cluster can take a writer's watch over. Each test is a row of the README's table.

var dryRun = sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN

// watchStream opens a WatchPlans stream and returns its first error: of the call, or of its
// first message.
func watchStream(ctx context.Context, h *harness, req *sluicev1.WatchPlansRequest) error {
	s, err := h.sc.WatchPlans(ctx, req)
	if err != nil {
		return err
	}
	_, err = s.Recv()
	return err
}

// TestReadOnlyWatchNeverMeetsTheWriters: the attack of issue 19. A read-only token's dry-run
// watch, held open, neither blocks the writer's watch nor, with takeover, ends it or discards
// its plan: the writer commits what it was sent.
func TestReadOnlyWatchNeverMeetsTheWriters(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	writer, reader := h.withToken("tok-east"), h.withToken("tok-read")
	smallCluster(writer, "east")

	// The reader watches first.
	rw := reader.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: dryRun, Period: durationpb.New(time.Hour)})
	rw.next()
	// The writer's watch opens all the same, and proposes.
	ww := writer.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Period: durationpb.New(time.Hour)})
	p := ww.next()
	if p.GetState() != sluicev1.PlanState_PLAN_STATE_PROPOSED {
		t.Fatalf("the writer's plan: %v", p)
	}
	// A dry-run watch cannot take over: refused, and the writer's stream and plan live on.
	err := watchStream(ctx, reader, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: dryRun, Takeover: true})
	wantViolation(t, err, "takeover", ReasonInvalidField)
	// Nor can a read-only token open a watch that proposes, with or without takeover.
	for _, mode := range []sluicev1.ScheduleMode{sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE, sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT} {
		err := watchStream(ctx, reader, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: mode, Takeover: true})
		wantReason(t, err, codes.PermissionDenied, ReasonPermissionDenied)
	}
	// More readers come and go; the writer never notices.
	for range 3 {
		cctx, cancel := context.WithCancel(ctx)
		w := reader.watch(cctx, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: dryRun})
		w.next()
		cancel()
		w.end()
	}
	ww.none(200 * time.Millisecond)
	c, err := writer.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "east", PlanId: p.GetId()})
	if err != nil || len(c.GetApplied()) != 2 {
		t.Fatalf("the writer's commit after the reader's attempts: %v, %v", c, err)
	}
	// The reader's watch is still there, and sees the commit's effect.
	for {
		if rp := rw.next(); rp.GetBaseRevision() >= c.GetRevision() {
			break
		}
	}
}

// TestOnlyAWriterOfTheClusterTakesOver: a writer of the cluster may take another writer's
// watch over; a writer of another cluster, and a reader, may not.
func TestOnlyAWriterOfTheClusterTakesOver(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	w1, w2 := h.withToken("tok-east"), h.withToken("tok-east2")
	smallCluster(w1, "east")
	first := w1.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Period: durationpb.New(time.Hour)})
	p1 := first.next()

	err := watchStream(ctx, h.withToken("tok-west"), &sluicev1.WatchPlansRequest{Cluster: "east", Takeover: true})
	wantReason(t, err, codes.PermissionDenied, ReasonPermissionDenied)
	err = watchStream(ctx, w2, &sluicev1.WatchPlansRequest{Cluster: "east"})
	wantReason(t, err, codes.AlreadyExists, ReasonWatchExists)
	first.none(100 * time.Millisecond)

	second := w2.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Period: durationpb.New(time.Hour), Takeover: true})
	wantReason(t, first.end(), codes.Aborted, ReasonTakenOver)
	p2 := second.next()
	_, err = w1.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "east", PlanId: p1.GetId()})
	wantReason(t, err, codes.FailedPrecondition, ReasonPlanDiscarded)
	if _, err := w2.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "east", PlanId: p2.GetId()}); err != nil {
		t.Fatal(err)
	}
}

// TestReadOnlyDryRunsChangeNothingAWriterSees: a read-only token's dry runs (with a
// configuration override too) leave ExplainJob, the plans and the cluster as they were.
func TestReadOnlyDryRunsChangeNothingAWriterSees(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	writer, reader := h.withToken("tok-east"), h.withToken("tok-read")
	rev := smallCluster(writer, "east")
	p, err := writer.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "east"})
	if err != nil {
		t.Fatal(err)
	}
	explain := func() string {
		t.Helper()
		e, err := writer.sc.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: "east", Name: "b"})
		if err != nil {
			t.Fatal(err)
		}
		return e.GetPlanId() + " " + e.GetOutcome().GetExplanation().GetSummary()
	}
	before := explain()
	for _, override := range []string{"", "actions: \"otheraction\"\ntiers:\n- plugins:\n  - name: fakenoop\n"} {
		d, err := reader.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "east", Mode: dryRun, ConfigOverride: override})
		if err != nil {
			t.Fatal(err)
		}
		// The reader reads its dry run back, and the writer's plan.
		if _, err := reader.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "east", PlanId: d.GetPlan().GetId()}); err != nil {
			t.Fatalf("GetPlan of the reader's dry run: %v", err)
		}
		if _, err := reader.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "east", PlanId: p.GetPlan().GetId()}); err != nil {
			t.Fatalf("GetPlan of the writer's plan with a read-only token: %v", err)
		}
	}
	if after := explain(); after != before {
		t.Fatalf("ExplainJob before the reader's dry runs %q, after %q", before, after)
	}
	// Discarding or committing a dry run's or the writer's plan is a write.
	for _, id := range []string{p.GetPlan().GetId(), "east-r1-dry1"} {
		_, err = reader.sc.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: "east", PlanId: id})
		wantReason(t, err, codes.PermissionDenied, ReasonPermissionDenied)
		_, err = reader.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "east", PlanId: id})
		wantReason(t, err, codes.PermissionDenied, ReasonPermissionDenied)
	}
	if h.store.Revision("east") != rev {
		t.Fatal("the reader's calls changed the cluster")
	}
	if _, err := writer.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "east", PlanId: p.GetPlan().GetId()}); err != nil {
		t.Fatalf("the writer's commit: %v", err)
	}
}

// TestReadOnlyDryRunsNeverHoldUpAWriter: while a reader's dry run is stuck in its cycle, the
// writer's cycles run.
func TestReadOnlyDryRunsNeverHoldUpAWriter(t *testing.T) {
	g := newGate()
	g.blocking.Store(true)
	g.dryOnly.Store(true)
	h := newHarnessWith(t, gateSetup(g, authSetup(t, false, nil).opts))
	ctx := ctxT(t)
	writer, reader := h.withToken("tok-east"), h.withToken("tok-read")
	smallCluster(writer, "east")
	done := make(chan error, 1)
	go func() {
		_, err := reader.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "east", Mode: dryRun})
		done <- err
	}()
	<-g.entered
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	p, err := writer.sc.Schedule(wctx, &sluicev1.ScheduleRequest{Cluster: "east", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	if err != nil || p.GetPlan().GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED {
		t.Fatalf("the writer's cycle while a dry run is in progress: %v, %v", p, err)
	}
	close(g.release)
	if err := <-done; err != nil {
		t.Fatalf("the dry run: %v", err)
	}
}

// TestDryRunWatchesAreBounded: a cluster has at most Limits.MaxDryRunWatches dry-run
// watches; one more is RESOURCE_EXHAUSTED, and the writer's watch still opens.
func TestDryRunWatchesAreBounded(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, func(o *Options) { o.Limits.MaxDryRunWatches = 2 }))
	ctx := ctxT(t)
	writer, reader := h.withToken("tok-east"), h.withToken("tok-read")
	smallCluster(writer, "east")
	for range 2 {
		reader.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: dryRun, Period: durationpb.New(time.Hour)}).next()
	}
	err := watchStream(ctx, reader, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: dryRun})
	st := wantReason(t, err, codes.ResourceExhausted, ReasonLimitExceeded)
	if !strings.Contains(st.Message(), LimitDryRunWatches) {
		t.Errorf("message %q does not name the limit", st.Message())
	}
	writer.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Period: durationpb.New(time.Hour)}).next()
}

package service

import (
	"testing"

	"google.golang.org/grpc/codes"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func dryRunWith(cluster string, deltas ...*sluicev1.Delta) *sluicev1.ScheduleRequest {
	return &sluicev1.ScheduleRequest{Cluster: cluster, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		Hypothetical: &sluicev1.DeltaBatch{Deltas: deltas}}
}

func TestWhatIfMarksHypotheticalDecisionsAndStoresNothing(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	rev := smallCluster(h, "c1") // a (2 x 1 cpu) fits on n1; b (8 cpu) fits nowhere
	req := dryRunWith("c1", node("x9", cpu("8")), job("w", "", 1), task("w-0", "w", cpu("2")))
	req.PageSize = 2
	resp, err := h.sc.Schedule(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	p := resp.GetPlan()
	// The rest of the decisions, from the dry run kept for paging, keep their marks.
	page, err := h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c1", PlanId: p.GetId(), PageSize: 2, PageToken: resp.GetNextPageToken()})
	if err != nil {
		t.Fatal(err)
	}
	p.Decisions = append(p.Decisions, page.GetPlan().GetDecisions()...)
	p.Jobs = append(p.Jobs, page.GetPlan().GetJobs()...)
	if p.GetBaseRevision() != rev || p.GetState() != sluicev1.PlanState_PLAN_STATE_DRY_RUN {
		t.Fatalf("plan %s at revision %d, want a dry run at %d", p.GetState(), p.GetBaseRevision(), rev)
	}
	// First fit by name: a-0 and a-1 on n1 (real), b-0 on the hypothetical node x9, w-0 on n2.
	want := map[string]struct {
		node string
		hyp  bool
	}{"default/a-0": {"n1", false}, "default/a-1": {"n1", false}, "default/b-0": {"x9", true}, "default/w-0": {"n2", true}}
	for _, d := range p.GetDecisions() {
		b := d.GetBind()
		w, ok := want[refName(b.GetTask())]
		if !ok || b.GetNode() != w.node || d.GetHypothetical() != w.hyp {
			t.Errorf("decision %v (hypothetical %v) not among %v", d, d.GetHypothetical(), want)
		}
		delete(want, refName(b.GetTask()))
	}
	if len(want) != 0 {
		t.Errorf("missing decisions: %v", want)
	}
	for _, o := range p.GetJobs() {
		if got := o.GetHypothetical(); got != (refName(o.GetJob()) == "default/w") {
			t.Errorf("job outcome %s hypothetical %v", refName(o.GetJob()), got)
		}
	}
	if h.store.Revision("c1") != rev {
		t.Fatal("a what-if changed the store's revision")
	}
	snap := h.store.Snapshot("c1")
	if _, ok := snap.Node("x9"); ok {
		t.Fatal("the hypothetical node was stored")
	}
	if _, ok := snap.Job("default/w"); ok {
		t.Fatal("the hypothetical job was stored")
	}
}

func TestWhatIfIsCheckedLikeApplyDeltas(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	smallCluster(h, "c1")
	// A field the conversion refuses, named under hypothetical.
	_, err := h.sc.Schedule(ctx, dryRunWith("c1", task("x-0", "a", cpu("lots"))))
	wantViolation(t, err, `hypothetical.deltas[0].upsert_task.resources["cpu"]`, ReasonInvalidField)
	// A reference the store refuses, mapped as ApplyDeltas maps it.
	_, err = h.sc.Schedule(ctx, dryRunWith("c1", node("n9", cpu("1")), task("x-0", "ghost", cpu("1"))))
	wantViolation(t, err, "hypothetical.deltas[1].upsert_task.job", ReasonInvalidReference)
	_, applyErr := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1",
		Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{node("n9", cpu("1")), task("x-0", "ghost", cpu("1"))}}})
	wantViolation(t, applyErr, "batch.deltas[1].upsert_task.job", ReasonInvalidReference)
	// Only in a dry run, never replace_all.
	req := dryRunWith("c1", node("n9", cpu("1")))
	req.Mode = sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE
	_, err = h.sc.Schedule(ctx, req)
	wantViolation(t, err, "hypothetical", ReasonInvalidField)
	req = dryRunWith("c1", node("n9", cpu("1")))
	req.Hypothetical.ReplaceAll = true
	_, err = h.sc.Schedule(ctx, req)
	wantViolation(t, err, "hypothetical.replace_all", ReasonInvalidField)
	if _, ok := h.store.Snapshot("c1").Node("n9"); ok {
		t.Fatal("a refused what-if left a node behind")
	}
}

func TestWhatIfNeedsOnlyTheDryRunScope(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	smallCluster(h.withToken("tok-east"), "east")
	r := h.withToken("tok-read")
	ctx := ctxT(t)
	if _, err := r.sc.Schedule(ctx, dryRunWith("east", node("n9", cpu("4")))); err != nil {
		t.Fatalf("what-if with a read-only token: %v", err)
	}
	req := dryRunWith("east", node("n9", cpu("4")))
	req.Mode = sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT
	_, err := r.sc.Schedule(ctx, req)
	wantCode(t, err, codes.PermissionDenied)
}

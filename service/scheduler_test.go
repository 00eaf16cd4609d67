package service

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// smallCluster: two nodes of 2 cpus; job a fits (2 tasks of 1 cpu), job b does not (a task of
// 8 cpus).
func smallCluster(h *harness, cluster string) uint64 {
	return h.apply(cluster,
		node("n1", cpu("2")), node("n2", cpu("2")),
		job("a", "", 2), task("a-0", "a", cpu("1")), task("a-1", "a", cpu("1")),
		job("b", "", 1), task("b-0", "b", cpu("8")),
	)
}

func TestScheduleProposeCommitDiscard(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	rev := smallCluster(h, "c1")
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Now: timestamppb.New(now)})
	if err != nil {
		t.Fatal(err)
	}
	p := resp.GetPlan()
	if p.GetState() != sluicev1.PlanState_PLAN_STATE_PROPOSED || p.GetExpiresAt() == nil || p.GetBaseRevision() != rev ||
		p.GetCluster() != "c1" || p.GetId() == "" || !p.GetScheduledAt().AsTime().Equal(now) {
		t.Fatalf("plan header: %v", p)
	}
	var binds []string
	for _, d := range p.GetDecisions() {
		b := d.GetBind()
		if b == nil {
			t.Fatalf("unexpected decision %v", d)
		}
		binds = append(binds, refName(b.GetTask())+"@"+b.GetNode()+" of "+refName(b.GetJob()))
	}
	if strings.Join(binds, ", ") != "default/a-0@n1 of default/a, default/a-1@n1 of default/a" {
		t.Fatalf("binds: %v", binds)
	}
	if len(p.GetStats().GetActions()) != 1 || p.GetStats().GetActions()[0].GetAction() != "fakealloc" || p.GetStats().GetTotal() == nil {
		t.Fatalf("stats: %v", p.GetStats())
	}
	var b *sluicev1.JobOutcome
	for _, o := range p.GetJobs() {
		if proto.Equal(o.GetJob(), &sluicev1.JobRef{Namespace: "default", Name: "b"}) {
			b = o
		}
	}
	if b == nil || b.GetExplanation() == nil {
		t.Fatalf("no explanation for job b in %v", p.GetJobs())
	}
	ex := b.GetExplanation()
	if ex.GetNodesTotal() != 2 || len(ex.GetReasons()) != 1 || ex.GetReasons()[0].GetReason() != "Insufficient cpu" ||
		ex.GetReasons()[0].GetNodes() != 2 || ex.GetGang().GetMinAvailable() != 1 || ex.GetSummary() == "" {
		t.Fatalf("explanation: %v", ex)
	}
	// ExplainJob returns the same outcome.
	exp, err := h.sc.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: "c1", Name: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if exp.GetPlanId() != p.GetId() || exp.GetOutcome().GetExplanation().GetSummary() != ex.GetSummary() ||
		refName(exp.GetOutcome().GetJob()) != "default/b" {
		t.Fatalf("ExplainJob: %v", exp)
	}
	_, err = h.sc.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: "c1", Name: "ghost"})
	wantCode(t, err, codes.NotFound)

	// Commit: both binds apply; the tasks are now on n1.
	cr, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if len(cr.GetApplied()) != 2 || len(cr.GetRejected()) != 0 || cr.GetRevision() <= rev {
		t.Fatalf("commit: %v", cr)
	}
	tk, err := h.cs.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: "c1", Name: "a-0"})
	if err != nil {
		t.Fatal(err)
	}
	if tk.GetTask().GetNode() != "n1" || tk.GetTask().GetStatus() == sluicev1.TaskStatus_TASK_STATUS_PENDING {
		t.Fatalf("task after commit: %v", tk.GetTask())
	}
	// A repeated commit answers what the first did, and changes nothing.
	after := h.store.Revision("c1")
	again, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetId()})
	if err != nil || !proto.Equal(again, cr) || h.store.Revision("c1") != after {
		t.Fatalf("repeated commit: %v (%v), first %v; revision %d, was %d", again, err, cr, h.store.Revision("c1"), after)
	}
	// The plan is a record: every decision carries its outcome.
	gp, err := h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c1", PlanId: p.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if gp.GetPlan().GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED || gp.GetPlan().GetCounts().GetApplied() != 2 {
		t.Fatalf("GetPlan after the commit: %v", gp.GetPlan())
	}
	for _, d := range gp.GetPlan().GetDecisions() {
		if d.GetBind() != nil && d.GetOutcome() != sluicev1.DecisionOutcome_DECISION_OUTCOME_APPLIED {
			t.Fatalf("bind without its outcome: %v", d)
		}
	}
	_, err = h.sc.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: "c1", PlanId: p.GetId()})
	wantReason(t, err, codes.FailedPrecondition, ReasonPlanCommitted)
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: "nope"})
	wantReason(t, err, codes.NotFound, ReasonPlanNotFound)
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1"})
	wantViolation(t, err, "plan_id", ReasonInvalidField)
	// A plan of another cluster is unknown here.
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c2", PlanId: p.GetId()})
	wantCode(t, err, codes.NotFound)

	// Discard twice: both succeed.
	resp, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := h.sc.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: "c1", PlanId: resp.GetPlan().GetId()}); err != nil {
			t.Fatal(err)
		}
	}
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: resp.GetPlan().GetId()})
	wantReason(t, err, codes.FailedPrecondition, ReasonPlanDiscarded)

	// Queue figures come from the last cycle.
	q, err := h.cs.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "c1", Name: "default"})
	if err != nil {
		t.Fatal(err)
	}
	if q.GetQueue().GetStatus().GetAsOfRevision() != cr.GetRevision() || q.GetQueue().GetStatus().GetAllocated()["cpu"] != "2" {
		t.Fatalf("queue status: %v", q.GetQueue().GetStatus())
	}
}

func TestScheduleModes(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	rev := smallCluster(h, "c1")

	dry, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		ConfigOverride: "actions: \"otheraction\"\n"})
	if err != nil {
		t.Fatal(err)
	}
	if dry.GetPlan().GetState() != sluicev1.PlanState_PLAN_STATE_DRY_RUN || len(dry.GetPlan().GetDecisions()) != 0 ||
		dry.GetPlan().GetExpiresAt() != nil {
		t.Fatalf("dry run with otheraction: %v", dry.GetPlan())
	}
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: dry.GetPlan().GetId()})
	wantReason(t, err, codes.FailedPrecondition, ReasonPlanDryRun)

	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE,
		ConfigOverride: testConfig})
	wantViolation(t, err, "config_override", ReasonInvalidField)
	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		ConfigOverride: "actions: \"alocate\"\n"})
	st := wantCode(t, err, codes.InvalidArgument)
	if fields, reason := fieldsOf(st); len(fields) != 1 || fields[0] != "config_override" || reason != ReasonInvalidConfig ||
		!strings.Contains(st.Message(), "alocate") {
		t.Fatalf("bad override: %v %q %q", fields, reason, st.Message())
	}
	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: 12})
	wantViolation(t, err, "mode", ReasonInvalidField)

	auto, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	if err != nil {
		t.Fatal(err)
	}
	ap := auto.GetPlan()
	if ap.GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED || ap.GetCommittedRevision() <= rev || ap.GetExpiresAt() != nil {
		t.Fatalf("auto-commit plan: %v", ap)
	}
	tasks := listTasks(t, h, &sluicev1.ListTasksRequest{Cluster: "c1", Node: "n1"})
	if len(tasks) != 2 {
		t.Fatalf("tasks on n1 after auto-commit: %v", tasks)
	}
}

func TestSchedulerConfig(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1")
	h.apply("c2")
	got, err := h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetConfig() != testConfig {
		t.Fatalf("default config %q", got.GetConfig())
	}
	_, err = h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1",
		Config: "actions: \"fakealloc\"\ntiers:\n- plugins:\n  - name: gnag\n"})
	st := wantCode(t, err, codes.InvalidArgument)
	if fields, reason := fieldsOf(st); len(fields) != 1 || fields[0] != "config" || reason != ReasonInvalidConfig ||
		!strings.Contains(st.Message(), `unknown plugin "gnag"`) {
		t.Fatalf("invalid config: %v %q %q", fields, reason, st.Message())
	}
	_, err = h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1", Config: "  "})
	wantViolation(t, err, "config", ReasonInvalidField)
	_, err = h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1", Config: "actions: [oops"})
	wantViolation(t, err, "config", ReasonInvalidConfig)

	const other = "actions: \"otheraction, fakealloc\"\n"
	up, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1", Config: other})
	if err != nil {
		t.Fatal(err)
	}
	if up.GetConfig() != other {
		t.Fatalf("updated config %q", up.GetConfig())
	}
	for cluster, want := range map[string]string{"c1": other, "c2": testConfig} {
		got, err := h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: cluster})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetConfig() != want {
			t.Errorf("%s: config %q, want %q", cluster, got.GetConfig(), want)
		}
	}
	smallCluster(h, "c1")
	resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(resp.GetPlan().GetStats().GetActions()); n != 2 {
		t.Fatalf("%d actions ran, want 2", n)
	}
}

func TestWatchPlans(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	rev := smallCluster(h, "c1")
	_, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Period: &durationpb.Duration{Seconds: -1}})
	if err == nil {
		s, _ := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Period: &durationpb.Duration{Seconds: -1}})
		_, err = s.Recv()
	}
	wantViolation(t, err, "period", ReasonInvalidField)

	// However short the period, an idle cluster gets one plan and no more (idle-free).
	w := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		Period: durationpb.New(time.Millisecond)})
	if p := w.next(); p.GetState() != sluicev1.PlanState_PLAN_STATE_DRY_RUN || p.GetBaseRevision() != rev {
		t.Fatalf("first plan: %v", p)
	}
	w.none(300 * time.Millisecond)
	// A dry-run watch does not stand in the way of one that commits; a second one that
	// commits is refused, unless it takes over: the first one then ends.
	w1 := h.watch(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Period: durationpb.New(time.Hour)})
	if p := w1.next(); p.GetState() != sluicev1.PlanState_PLAN_STATE_PROPOSED {
		t.Fatalf("a proposing watch beside a dry-run one: %v", p)
	}
	dup, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1"})
	if err == nil {
		_, err = dup.Recv()
	}
	wantReason(t, err, codes.AlreadyExists, ReasonWatchExists)
	// A change triggers a cycle well before a long period ends.
	s2, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT,
		Period: durationpb.New(time.Hour), Takeover: true})
	if err != nil {
		t.Fatal(err)
	}
	wantReason(t, w1.end(), codes.Aborted, ReasonTakenOver)
	first, err := s2.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if first.GetPlan().GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED {
		t.Fatalf("first watched plan: %v", first.GetPlan())
	}
	// The dry-run watch goes on after the takeover: the commit changed the cluster.
	if p := w.next(); p.GetState() != sluicev1.PlanState_PLAN_STATE_DRY_RUN {
		t.Fatalf("the dry-run watch after a takeover: %v", p)
	}
	after := h.apply("c1", task("a-2", "a", cpu("1")))
	m, err := s2.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if m.GetPlan().GetBaseRevision() != after || len(m.GetPlan().GetDecisions()) != 1 {
		t.Fatalf("plan after a change: %v", m.GetPlan())
	}
	// Shutdown ends the watch.
	h.srv.Shutdown()
	for {
		_, err = s2.Recv()
		if err != nil {
			break
		}
	}
	wantCode(t, err, codes.Unavailable)
}

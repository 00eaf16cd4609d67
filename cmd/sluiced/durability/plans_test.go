package durability

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// planConfig is a cluster's own scheduler configuration, distinct from sluiced's default.
const planConfig = `actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
`

// schedulerOn returns a SchedulerService client of one member (no failover of its own).
func schedulerOn(t *testing.T, m *proc) sluicev1.SchedulerServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(m.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sluicev1.NewSchedulerServiceClient(conn)
}

// proposeTwoBinds fills cluster "pf" (one node, a job of two pending tasks), sets the
// cluster's configuration, proposes a plan binding both tasks, then changes task t-1 so that
// a commit must reject its bind. It returns the plan id.
func proposeTwoBinds(t *testing.T, ctx context.Context, c *sluice.Client, sc sluicev1.SchedulerServiceClient) string {
	t.Helper()
	if _, err := c.Apply(ctx, "pf", false, node("n1"), job("j"),
		task("t-0", "j", sluicev1.TaskStatus_TASK_STATUS_PENDING), task("t-1", "j", sluicev1.TaskStatus_TASK_STATUS_PENDING)); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "pf", Config: planConfig}); err != nil {
		t.Fatal(err)
	}
	resp, err := sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "pf", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE})
	if err != nil {
		t.Fatal(err)
	}
	p := resp.GetPlan()
	var binds int
	for _, d := range p.GetDecisions() {
		if d.GetBind() != nil {
			binds++
		}
	}
	if binds != 2 || p.GetState() != sluicev1.PlanState_PLAN_STATE_PROPOSED {
		t.Fatalf("plan %s: state %s, %d binds; want a proposed plan with 2", p.GetId(), p.GetState(), binds)
	}
	changed := sluice.UpsertTask(&sluicev1.Task{Name: "t-1", Job: "j", Status: sluicev1.TaskStatus_TASK_STATUS_PENDING,
		Resources: map[string]string{"cpu": "200m", "memory": "64Mi"}})
	if _, err := c.Apply(ctx, "pf", false, changed); err != nil {
		t.Fatal(err)
	}
	return p.GetId()
}

// checkCommitAfter commits the plan through sc and checks the per-decision conflict checks,
// the cluster's configuration and that a second commit is refused.
func checkCommitAfter(t *testing.T, ctx context.Context, sc sluicev1.SchedulerServiceClient, id, when string) {
	t.Helper()
	cfg, err := sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "pf"})
	if err != nil || cfg.GetConfig() != planConfig {
		t.Fatalf("%s: the cluster's configuration is %q (%v), want the one set before", when, cfg.GetConfig(), err)
	}
	res, err := sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "pf", PlanId: id})
	if err != nil {
		t.Fatalf("%s: commit of plan %s: %v", when, id, err)
	}
	if len(res.GetApplied()) != 1 || res.GetApplied()[0].GetBind().GetTask().GetName() != "t-0" ||
		len(res.GetRejected()) != 1 || res.GetRejected()[0].GetReason() != "task default/t-1 changed since the plan's revision" {
		t.Fatalf("%s: commit applied %v, rejected %v; want t-0 applied and t-1 rejected as changed", when, res.GetApplied(), res.GetRejected())
	}
	// Committed at most once: a second commit answers the first one's outcome.
	again, err := sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "pf", PlanId: id})
	if err != nil || !proto.Equal(again, res) {
		t.Fatalf("%s: second commit: %v (%v), want the first one's answer %v", when, again, err, res)
	}
}

// TestPlansAndConfigsSurviveFailover proposes a plan and sets a cluster's configuration on the
// leader of a 3-member cluster, kills the leader with SIGKILL, and commits the plan by id
// through the new leader: it commits once, with the same per-decision conflict checks, and
// the configuration is the one set before.
func TestPlansAndConfigsSurviveFailover(t *testing.T) {
	need(t)
	members := startCluster(t, 3)
	leader := leaderOf(members, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := proposeTwoBinds(t, ctx, dial(t, leader.grpc), schedulerOn(t, leader))

	killed := leader
	killed.kill9()
	waitFor(t, 10*time.Second, "a new leader", func() bool { return leaderOf(members, killed) != nil })
	leader = leaderOf(members, killed)
	checkCommitAfter(t, ctx, schedulerOn(t, leader), id, "after failover to "+leader.name)
	report(t, "a plan proposed on %s and the cluster's configuration survived its kill -9; %s committed the plan by id", killed.name, leader.name)
}

// TestPlansAndConfigsSurviveRestart does the same with one --data-dir member killed and
// started again.
func TestPlansAndConfigsSurviveRestart(t *testing.T) {
	need(t)
	p := newProc(t, "sluiced", "--data-dir", t.TempDir())
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready", p.ready)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := proposeTwoBinds(t, ctx, dial(t, p.grpc), schedulerOn(t, p))
	p.kill9()
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready again", p.ready)
	checkCommitAfter(t, ctx, schedulerOn(t, p), id, "after a restart")
}

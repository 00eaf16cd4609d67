package engine

import (
	"context"
	"errors"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// noop is a plugin with no callbacks, so the engine can be tested without plugins/.
type noop struct{ name string }

func (n noop) Name() string                      { return n.name }
func (n noop) OnSessionOpen(*framework.Session)  {}
func (n noop) OnSessionClose(*framework.Session) {}

const testConfig = `
actions: "allocate"
tiers:
- plugins:
  - name: noop
`

func newTestEngine(t *testing.T, clock func() time.Time) (*Engine, *state.Store) {
	t.Helper()
	reg := framework.NewRegistry()
	actions.Register(reg)
	reg.RegisterPlugin("noop", func(conf.Arguments) (framework.Plugin, error) { return noop{"noop"}, nil })
	cfg, err := conf.Parse([]byte(testConfig))
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	e, err := New(st, Options{Registry: reg, DefaultConfig: cfg, PlanTTL: time.Minute, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	return e, st
}

// cpu is n cores, n GiB of memory and room for 110 tasks.
func cpu(n float64) api.Resource {
	return *api.NewResource(map[string]float64{"cpu": n, "memory": n * (1 << 30), "pods": 110})
}

func seed(t *testing.T, st *state.Store) {
	t.Helper()
	b := state.Batch{Changes: []state.Change{
		{Node: &api.Node{Name: "n1", Allocatable: cpu(4)}},
		{Queue: &api.Queue{Name: "default", Weight: 1, Reclaimable: true}},
		{Job: &api.Job{Name: "j", Namespace: "ns", Queue: "default", MinAvailable: 2, Phase: api.JobInqueue}},
	}}
	for _, n := range []string{"j-0", "j-1"} {
		r := cpu(2)
		r.MaxTaskNum = 0
		b.Changes = append(b.Changes, state.Change{Task: &api.Task{Name: n, Namespace: "ns", Job: "j", Role: "j", Resources: r, Status: api.Pending, Preemptable: true}})
	}
	if _, err := st.Apply("c", b); err != nil {
		t.Fatal(err)
	}
}

func TestScheduleCommitWritesBinds(t *testing.T) {
	now := time.Unix(1000, 0)
	e, st := newTestEngine(t, func() time.Time { return now })
	seed(t, st)
	plan, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: Propose})
	if err != nil {
		t.Fatal(err)
	}
	if plan.State != PlanProposed || len(plan.Result.Decisions) != 2 {
		t.Fatalf("plan %s with %d decisions, want proposed with 2 binds", plan.State, len(plan.Result.Decisions))
	}
	res, err := e.CommitPlan(context.Background(), "c", plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 2 || len(res.Rejected) != 0 {
		t.Fatalf("applied %d, rejected %+v", len(res.Applied), res.Rejected)
	}
	snap := st.Snapshot("c")
	for _, k := range []string{"ns/j-0", "ns/j-1"} {
		task, _ := snap.Task(k)
		if task.Status != api.Bound || task.Node != "n1" {
			t.Errorf("%s is %s on %q, want Bound on n1", k, task.Status, task.Node)
		}
	}
	if j, _ := snap.Job("ns/j"); j.Phase != api.JobRunning {
		t.Errorf("job phase %s, want Running", j.Phase)
	}
	// The next cycle must not double-book: nothing is pending any more.
	plan2, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: DryRun})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan2.Result.Decisions) != 0 {
		t.Fatalf("second cycle decided %+v, want nothing", plan2.Result.Decisions)
	}
	again, err := e.CommitPlan(context.Background(), "c", plan.ID)
	if err != nil || !again.Repeated || len(again.Applied) != 2 || again.Revision != res.Revision {
		t.Fatalf("second commit: %+v, %v; want the first one's outcome, repeated", again, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p3, err := e.Schedule(context.Background(), "c", ScheduleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.CommitPlan(ctx, "c", p3.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("commit past the caller's deadline: %v, want context.Canceled", err)
	}
	if got, _ := e.GetPlan("c", p3.ID); got.State != PlanProposed {
		t.Fatalf("a cancelled commit changed the plan to %s", got.State)
	}
	if _, err := e.CommitPlan(context.Background(), "c", plan2.ID); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatalf("commit of a dry run: %v, want ErrFailedPrecondition", err)
	}
	if _, ok := st.Snapshot("c").Plan(plan2.ID); ok {
		t.Fatal("a dry run was stored")
	}
}

func TestCommitRejectsConflicts(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	plan, err := e.Schedule(context.Background(), "c", ScheduleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	// The resource manager changes one task after the plan was made.
	r := cpu(1)
	r.MaxTaskNum = 0
	if _, err := st.Apply("c", state.Batch{Changes: []state.Change{{Task: &api.Task{Name: "j-1", Namespace: "ns", Job: "j", Role: "j", Resources: r, Status: api.Pending}}}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.CommitPlan(context.Background(), "c", plan.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 1 || len(res.Rejected) != 1 || res.Rejected[0].Decision.Task != "ns/j-1" {
		t.Fatalf("applied %+v rejected %+v; want j-0 applied and j-1 rejected", res.Applied, res.Rejected)
	}
	if got := res.Rejected[0].Reason; got != "task ns/j-1 changed since the plan's revision" {
		t.Fatalf("reason %q", got)
	}
}

func TestPlansExpireAndDiscard(t *testing.T) {
	now := time.Unix(1000, 0)
	e, st := newTestEngine(t, func() time.Time { return now })
	seed(t, st)
	p1, _ := e.Schedule(context.Background(), "c", ScheduleRequest{})
	p2, _ := e.Schedule(context.Background(), "c", ScheduleRequest{})
	if err := e.DiscardPlan("c", p2.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.DiscardPlan("c", p2.ID); err != nil {
		t.Fatalf("discarding twice must succeed: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := e.CommitPlan(context.Background(), "c", p1.ID); !errors.Is(err, ErrFailedPrecondition) {
		t.Fatalf("commit after expiry: %v, want ErrFailedPrecondition", err)
	}
	if err := e.DiscardPlan("c", p1.ID); err != nil {
		t.Fatalf("discarding an expired plan must succeed: %v", err)
	}
	if _, err := e.CommitPlan(context.Background(), "c", "nope"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown plan: %v, want ErrNotFound", err)
	}
	if st.Snapshot("c").Revision() != 1 {
		t.Fatal("expired or discarded plans changed the store")
	}
}

func TestScheduleIsDeterministic(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	var first []framework.Decision
	for i := 0; i < 5; i++ {
		p, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: DryRun})
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = p.Result.Decisions
			continue
		}
		for k := range first {
			if first[k].Task != p.Result.Decisions[k].Task || first[k].Node != p.Result.Decisions[k].Node {
				t.Fatalf("run %d differs: %+v vs %+v", i, p.Result.Decisions, first)
			}
		}
	}
}

func TestConfigOverrideOnlyForDryRun(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	cfg := mustConfig(t, e, "c")
	if _, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: Propose, Config: cfg}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("override on a proposal: %v", err)
	}
	if _, err := e.SetConfig("c", []byte("actions: \"alocate\"\ntiers: []\n")); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("unknown action accepted: %v", err)
	}
	if mustConfig(t, e, "c") != cfg {
		t.Fatal("a refused configuration replaced the old one")
	}
}

func mustConfig(t *testing.T, e *Engine, cluster string) *conf.Config {
	t.Helper()
	cfg, err := e.Config(cluster)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// canceller is a plugin that cancels the cycle's context when the session opens.
type canceller struct{ cancel context.CancelFunc }

func (canceller) Name() string                       { return "canceller" }
func (c canceller) OnSessionOpen(*framework.Session) { c.cancel() }
func (canceller) OnSessionClose(*framework.Session)  {}

func TestCancelledCycleStoresNothing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reg := framework.NewRegistry()
	actions.Register(reg)
	reg.RegisterPlugin("canceller", func(conf.Arguments) (framework.Plugin, error) { return canceller{cancel}, nil })
	cfg, err := conf.Parse([]byte("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: canceller\n"))
	if err != nil {
		t.Fatal(err)
	}
	st := state.New()
	e, err := New(st, Options{Registry: reg, DefaultConfig: cfg})
	if err != nil {
		t.Fatal(err)
	}
	seed(t, st)
	for _, mode := range []Mode{Propose, AutoCommit, DryRun} {
		if _, err := e.Schedule(ctx, "c", ScheduleRequest{Mode: mode}); !errors.Is(err, context.Canceled) {
			t.Fatalf("mode %d: %v, want context.Canceled", mode, err)
		}
	}
	if n := len(st.Snapshot("c").Plans()); n != 0 || st.Revision("c") != 1 {
		t.Fatalf("a cancelled cycle stored %d plans, revision %d", n, st.Revision("c"))
	}
	// A live context runs the same cycle to the end.
	e2, st2 := newTestEngine(t, time.Now)
	seed(t, st2)
	p, err := e2.Schedule(context.Background(), "c", ScheduleRequest{Mode: AutoCommit})
	if err != nil || p.Commit == nil || len(p.Commit.Applied) != 2 {
		t.Fatalf("auto-commit: %+v, %v", p, err)
	}
}

func TestSessionInterruptedStopsPlacing(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	reg := framework.NewRegistry()
	actions.Register(reg)
	reg.RegisterPlugin("noop", func(conf.Arguments) (framework.Plugin, error) { return noop{"noop"}, nil })
	cfg, _ := conf.Parse([]byte(testConfig))
	st := state.New()
	seed(t, st)
	ssn, err := framework.OpenSession(toFrameworkSnapshot("c", st.Snapshot("c")), cfg, reg, framework.Options{Context: ctx})
	if err == nil {
		defer ssn.Close()
		if !ssn.Interrupted() {
			t.Fatal("the session of a cancelled context is not interrupted")
		}
		if err := ssn.RunActions(reg); !errors.Is(err, context.Canceled) {
			t.Fatalf("RunActions: %v", err)
		}
		return
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("OpenSession: %v", err)
	}
}

func TestConfigEtags(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	if _, err := st.Apply("d", state.Batch{}); err != nil {
		t.Fatal(err)
	}
	_, def, err := e.ConfigWithEtag("c")
	if err != nil || def == "" || def != e.DefaultConfigEtag() {
		t.Fatalf("default etag %q (engine says %q), %v", def, e.DefaultConfigEtag(), err)
	}
	text := []byte("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: noop\n")
	_, etag, err := e.UpdateConfig("c", text, def)
	if err != nil || etag == def {
		t.Fatalf("update against the default's etag: %q, %v", etag, err)
	}
	if _, got, _ := e.ConfigWithEtag("c"); got != etag {
		t.Fatalf("etag read back %q, want %q", got, etag)
	}
	if _, _, err := e.UpdateConfig("c", text, def); !errors.Is(err, state.ErrConfigEtagMismatch) {
		t.Fatalf("update with the default's etag after an update: %v", err)
	}
	// A new default changes the etag of the clusters that use it, not of the others.
	other, err := conf.Parse([]byte("actions: \"allocate, backfill\"\ntiers:\n- plugins:\n  - name: noop\n"))
	if err != nil {
		t.Fatal(err)
	}
	e.SetDefaultConfig(other)
	if _, got, _ := e.ConfigWithEtag("d"); got == def {
		t.Fatal("the default's etag did not change with the default")
	}
	if _, got, _ := e.ConfigWithEtag("c"); got != etag {
		t.Fatal("a cluster's own etag changed with the default")
	}
	if _, _, err := e.UpdateConfig("d", text, def); !errors.Is(err, state.ErrConfigEtagMismatch) {
		t.Fatalf("update with the old default's etag: %v", err)
	}
}

func TestDeleteClusterForgetsIt(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	if _, err := e.SetConfig("c", []byte(testConfig)); err != nil {
		t.Fatal(err)
	}
	p1, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: Propose})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := e.QueueOutcomes()["c"]; !ok {
		t.Fatal("no queue figures after a cycle")
	}
	info, err := e.DeleteCluster("c")
	if err != nil || info.Plans != 1 || info.Config == nil {
		t.Fatalf("delete: %+v, %v", info, err)
	}
	if _, ok := e.QueueOutcomes()["c"]; ok {
		t.Fatal("queue figures survived the delete")
	}
	if _, _, ok := e.QueueFigures("c", "default"); ok {
		t.Fatal("queue figures survived the delete")
	}
	if _, _, err := e.ExplainJob("c", "ns/j"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("explanation after the delete: %v", err)
	}
	if _, _, err := e.ConfigWithEtag("c"); !errors.Is(err, state.ErrClusterNotFound) {
		t.Fatalf("configuration of the deleted cluster: %v", err)
	}
	if n := e.Clusters(); n != 0 {
		t.Fatalf("the engine keeps %d records after the delete", n)
	}
	if _, err := e.DeleteCluster("c"); !errors.Is(err, state.ErrClusterNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	// Written again, the cluster starts from revision 1 and its plans get new ids.
	seed(t, st)
	p2, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: Propose})
	if err != nil {
		t.Fatal(err)
	}
	if p2.ID == p1.ID {
		t.Fatalf("plan id %s repeats after the delete", p2.ID)
	}
	// A configuration set anew with the same version is not mistaken for the deleted one.
	if _, err := e.SetConfig("c", []byte("actions: \"allocate, backfill\"\ntiers:\n- plugins:\n  - name: noop\n")); err != nil {
		t.Fatal(err)
	}
	if cfg := mustConfig(t, e, "c"); len(cfg.Actions) != 2 {
		t.Fatalf("actions %v after a new configuration", cfg.Actions)
	}
}

func TestQueueOutcomesLeaveOutClustersTheStoreLost(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	if _, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: Propose}); err != nil {
		t.Fatal(err)
	}
	// Deleted behind the engine's back, as another member's delete applies on this one.
	if _, err := st.DeleteCluster("c"); err != nil {
		t.Fatal(err)
	}
	if _, ok := e.QueueOutcomes()["c"]; ok {
		t.Fatal("queue figures of a cluster the store no longer holds")
	}
	if n := e.Clusters(); n != 0 {
		t.Fatalf("the engine keeps %d records of a cluster the store no longer holds", n)
	}
}

// TestUnknownClusterLeavesNothing: no cycle, plan, configuration or record of a cluster no
// batch created.
func TestUnknownClusterLeavesNothing(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	ctx := context.Background()
	for _, m := range []Mode{Propose, AutoCommit, DryRun} {
		if _, err := e.Schedule(ctx, "ghost", ScheduleRequest{Mode: m}); !errors.Is(err, state.ErrClusterNotFound) {
			t.Fatalf("Schedule mode %d of an unknown cluster: %v", m, err)
		}
	}
	if _, err := e.SetConfig("ghost", []byte(testConfig)); !errors.Is(err, state.ErrClusterNotFound) {
		t.Fatalf("SetConfig of an unknown cluster: %v", err)
	}
	if _, _, err := e.ConfigWithEtag("ghost"); !errors.Is(err, state.ErrClusterNotFound) {
		t.Fatalf("ConfigWithEtag of an unknown cluster: %v", err)
	}
	if _, err := e.GetPlan("ghost", "ghost-r0-1"); !errors.Is(err, state.ErrClusterNotFound) {
		t.Fatalf("GetPlan of an unknown cluster: %v", err)
	}
	if _, err := e.CommitPlan(ctx, "ghost", "ghost-r0-1"); !errors.Is(err, state.ErrClusterNotFound) {
		t.Fatalf("CommitPlan of an unknown cluster: %v", err)
	}
	for _, id := range []string{"ghost-r0-1", "ghost-r0-dry1"} {
		if err := e.DiscardPlan("ghost", id); !errors.Is(err, state.ErrClusterNotFound) {
			t.Fatalf("DiscardPlan %s of an unknown cluster: %v", id, err)
		}
	}
	if n := e.Clusters(); n != 0 || len(st.ClusterNames()) != 0 {
		t.Fatalf("an unknown cluster left %d engine records and store clusters %v", n, st.ClusterNames())
	}
}

// TestDryRunsLeaveNoTrace: a dry run creates no record of its cluster and changes neither the
// explanations nor the ids of the plans that may be committed.
func TestDryRunsLeaveNoTrace(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	seed(t, st)
	ctx := context.Background()
	d1, err := e.Schedule(ctx, "c", ScheduleRequest{Mode: DryRun})
	if err != nil {
		t.Fatal(err)
	}
	if n := e.Clusters(); n != 0 {
		t.Fatalf("a dry run left %d engine records", n)
	}
	if _, _, err := e.ExplainJob("c", "ns/j"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("a dry run's explanation shows in ExplainJob: %v", err)
	}
	p, err := e.Schedule(ctx, "c", ScheduleRequest{Mode: Propose})
	if err != nil {
		t.Fatal(err)
	}
	if _, id, err := e.ExplainJob("c", "ns/j"); err != nil || id != p.ID {
		t.Fatalf("ExplainJob after a proposal: %q, %v", id, err)
	}
	d2, err := e.Schedule(ctx, "c", ScheduleRequest{Mode: DryRun})
	if err != nil {
		t.Fatal(err)
	}
	if _, id, _ := e.ExplainJob("c", "ns/j"); id != p.ID {
		t.Fatalf("a dry run replaced the explanation of plan %s with %s's", p.ID, id)
	}
	if d1.ID == d2.ID {
		t.Fatalf("two dry runs share the id %s", d1.ID)
	}
	if got, err := e.GetPlan("c", d2.ID); err != nil || got.ID != d2.ID {
		t.Fatalf("GetPlan of a dry run: %v", err)
	}
}

// TestExplainJobFindsEveryJob: after a cycle every job it saw is explained with its own
// outcome and the cycle's plan, a job it did not see (one stored after it) is not, and the
// next cycle's plan replaces the first's.
func TestExplainJobFindsEveryJob(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	b := state.Batch{Changes: []state.Change{
		{Node: &api.Node{Name: "n1", Allocatable: cpu(4)}},
		{Queue: &api.Queue{Name: "default", Weight: 1, Reclaimable: true}},
	}}
	// Names whose keys sort otherwise than their numbers do ("ns/j10" < "ns/j2").
	var keys []string
	for i := range 25 {
		name := "j" + strconv.Itoa(i)
		keys = append(keys, "ns/"+name)
		b.Changes = append(b.Changes, state.Change{Job: &api.Job{Name: name, Namespace: "ns", Queue: "default", MinAvailable: 1, Phase: api.JobInqueue}})
		r := cpu(float64(1 + i%3))
		b.Changes = append(b.Changes, state.Change{Task: &api.Task{Name: name + "-0", Namespace: "ns", Job: name, Role: name, Resources: r, Status: api.Pending}})
	}
	if _, err := st.Apply("c", b); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := e.Schedule(ctx, "c", ScheduleRequest{Mode: Propose})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]framework.JobOutcome{}
	for _, o := range p.Result.Jobs {
		want[o.Job] = o
	}
	for _, k := range keys {
		got, id, err := e.ExplainJob("c", k)
		if err != nil || id != p.ID {
			t.Fatalf("ExplainJob(%s): plan %q, %v; want %s", k, id, err, p.ID)
		}
		if got.Job != k || !reflect.DeepEqual(got, want[k]) {
			t.Fatalf("ExplainJob(%s) = %+v, want the plan's %+v", k, got, want[k])
		}
	}
	for _, k := range []string{"ns/j", "ns/j25", "ns/j1x", "ms/j1", "nt/j1", ""} {
		if _, _, err := e.ExplainJob("c", k); !errors.Is(err, ErrNotFound) {
			t.Fatalf("ExplainJob(%q) of a job no cycle saw: %v", k, err)
		}
	}
	if err := e.DiscardPlan("c", p.ID); err != nil {
		t.Fatal(err)
	}
	p2, err := e.Schedule(ctx, "c", ScheduleRequest{Mode: Propose})
	if err != nil {
		t.Fatal(err)
	}
	if _, id, err := e.ExplainJob("c", keys[7]); err != nil || id != p2.ID {
		t.Fatalf("ExplainJob after a second cycle: plan %q, %v; want %s", id, err, p2.ID)
	}
}

func TestSortedOutcomes(t *testing.T) {
	in := []framework.JobOutcome{{Job: "ns/b"}, {Job: "ns/a"}, {Job: "ns/c"}}
	got := sortedOutcomes(in)
	if got[0].Job != "ns/a" || got[1].Job != "ns/b" || got[2].Job != "ns/c" {
		t.Fatalf("sortedOutcomes = %v", got)
	}
	if in[0].Job != "ns/b" {
		t.Fatal("sortedOutcomes sorted the cycle's own list")
	}
	sorted := []framework.JobOutcome{{Job: "a/x"}, {Job: "b/x"}}
	if s := sortedOutcomes(sorted); &s[0] != &sorted[0] {
		t.Fatal("a sorted list was copied")
	}
}

package state

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

var t0 = time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC)

// planCluster has node n1 (3.5 CPUs) and a job with pending tasks a and b (1.5 CPUs each) and
// a task r running on n1; it returns the revision.
func planCluster(t *testing.T, s *Store) uint64 {
	t.Helper()
	return mustApply(t, s, "c",
		Change{Node: &api.Node{Name: "n1", Allocatable: api.Resource{MilliCPU: 3500}}},
		queue("q", ""), job("ns", "j", "q"),
		Change{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j", Status: api.Pending, Resources: api.Resource{MilliCPU: 1500}}},
		Change{Task: &api.Task{Namespace: "ns", Name: "b", Job: "j", Status: api.Pending, Resources: api.Resource{MilliCPU: 1500}}},
		Change{Task: &api.Task{Namespace: "ns", Name: "r", Job: "j", Status: api.Running, Node: "n1", Resources: api.Resource{MilliCPU: 1000}}},
	)
}

// newPlan is a proposed plan at base that binds a and b to n1, evicts r and pipelines c.
func newPlan(seq, base uint64, created time.Time) *Plan {
	return &Plan{
		ID: fmt.Sprintf("c-r%d-%d", base, seq), Seq: seq, BaseRevision: base,
		CreatedAt: created, ExpiresAt: created.Add(time.Minute),
		Decisions: []api.Decision{
			{Kind: api.DecisionBind, Task: "ns/a", Job: "ns/j", Node: "n1"},
			{Kind: api.DecisionEvict, Task: "ns/r", Job: "ns/j", Node: "n1", Action: "preempt"},
			{Kind: api.DecisionBind, Task: "ns/b", Job: "ns/j", Node: "n1"},
			{Kind: api.DecisionPipeline, Task: "ns/c", Job: "ns/j", Node: "n1"},
		},
		Jobs: []api.JobOutcome{{Job: "ns/j", PreviousPhase: api.JobInqueue, Phase: api.JobRunning}},
	}
}

func propose(t *testing.T, s *Store, p *Plan, now time.Time) *Plan {
	t.Helper()
	res, err := s.ApplyPlan("c", &PlanOp{Action: PlanPropose, Plan: p, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return res.Plan
}

func TestPlanLifeCycle(t *testing.T) {
	for _, mode := range []string{"plain", "replicated"} {
		t.Run(mode, func(t *testing.T) {
			s := New()
			var l *loopback
			if mode == "replicated" {
				s, l = replicated()
			}
			base := planCluster(t, s)
			p := propose(t, s, newPlan(1, base, t0), t0)
			if p.State != PlanProposed || s.Revision("c") != base {
				t.Fatalf("proposal: state %s, revision %d (want proposed at %d: plans are not cluster state)", p.State, s.Revision("c"), base)
			}
			if got, ok := s.Snapshot("c").Plan(p.ID); !ok || len(got.Decisions) != 4 {
				t.Fatalf("stored plan %+v", got)
			}
			if seq := s.Snapshot("c").PlanSeq(); seq != 1 {
				t.Fatalf("plan sequence %d, want 1", seq)
			}
			// The same id twice is refused.
			if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanPropose, Plan: newPlan(1, base, t0), Now: t0}); err == nil {
				t.Fatal("a second plan with the same id was stored")
			}
			res, err := s.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: p.ID, Now: t0.Add(time.Second)})
			if err != nil {
				t.Fatal(err)
			}
			wantRejected := []string{"", "", "node n1 has no room for task ns/b: insufficient cpu", ""}
			if !reflect.DeepEqual(res.Commit.Rejected, wantRejected) || res.Commit.Revision != base+1 {
				t.Fatalf("commit outcome %+v, want rejections %q at revision %d", res.Commit, wantRejected, base+1)
			}
			if res.Plan.State != PlanCommitted || res.Plan.CommittedRevision != base+1 || res.Plan.Applied != 2 || res.Plan.Rejected != 1 {
				t.Fatalf("committed plan %+v", res.Plan)
			}
			if len(res.Decisions) != 4 {
				t.Fatalf("the commit result lost the plan's decisions: %+v", res.Decisions)
			}
			v := s.Snapshot("c")
			if a, _ := v.Task("ns/a"); a.Status != api.Bound {
				t.Fatalf("task a is %s, want Bound", a.Status)
			}
			if r, _ := v.Task("ns/r"); r.Status != api.Releasing {
				t.Fatalf("task r is %s, want Releasing", r.Status)
			}
			if j, _ := v.Job("ns/j"); j.Phase != api.JobRunning {
				t.Fatalf("job phase %s, want Running", j.Phase)
			}
			stored, _ := v.Plan(p.ID)
			if stored.State != PlanCommitted || len(stored.Decisions) != 4 || !reflect.DeepEqual(stored.Rejections, wantRejected) {
				t.Fatalf("a committed plan keeps its decisions and their outcomes as its record: %+v", stored)
			}
			if stored.CountBinds != 2 || stored.CountEvicts != 1 || stored.CountPipelines != 1 || stored.CountJobs != 1 {
				t.Fatalf("plan counts %+v", stored)
			}
			// At most once.
			_, err = s.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: p.ID, Now: t0.Add(2 * time.Second)})
			var se *PlanStateError
			if !errors.As(err, &se) || se.State != PlanCommitted {
				t.Fatalf("second commit: %v, want a *PlanStateError (committed)", err)
			}
			if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanDiscard, ID: p.ID, Now: t0}); !errors.Is(err, ErrPlanState) {
				t.Fatalf("discard of a committed plan: %v", err)
			}
			if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: "nope", Now: t0}); !errors.Is(err, ErrPlanNotFound) {
				t.Fatalf("commit of an unknown plan: %v", err)
			}
			if s.Revision("c") != base+1 {
				t.Fatalf("refused ops changed the revision to %d", s.Revision("c"))
			}
			if l != nil && l.ops != 3 {
				// The cluster's batch, the proposal and the commit; refused ops never reach
				// the log.
				t.Fatalf("%d ops in the log, want 3", l.ops)
			}
		})
	}
}

func TestPlanDiscardAndExpiry(t *testing.T) {
	s := New()
	base := planCluster(t, s)
	p1 := propose(t, s, newPlan(1, base, t0), t0)
	p2 := propose(t, s, newPlan(2, base, t0), t0)
	if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanDiscard, ID: p2.ID, Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanDiscard, ID: p2.ID, Now: t0}); err != nil {
		t.Fatalf("a second discard must succeed: %v", err)
	}
	if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: p2.ID, Now: t0}); !errors.Is(err, ErrPlanState) {
		t.Fatalf("commit of a discarded plan: %v", err)
	}
	// Past its deadline a plan reads as expired before any write records it, and cannot be
	// committed.
	late := t0.Add(2 * time.Minute)
	got, _ := s.Snapshot("c").Plan(p1.ID)
	if got.State != PlanProposed || got.StateAt(late) != PlanExpired {
		t.Fatalf("plan state %s, at the late clock %s", got.State, got.StateAt(late))
	}
	if n := s.ExpiredPlans(late)["c"]; n != 1 {
		t.Fatalf("%d expired plans counted, want 1", n)
	}
	if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: p1.ID, Now: late}); !errors.Is(err, ErrPlanState) {
		t.Fatalf("commit after the deadline: %v", err)
	}
	// The next plan op records the expiry.
	propose(t, s, newPlan(3, base, late), late)
	got, _ = s.Snapshot("c").Plan(p1.ID)
	if got.State != PlanExpired || got.Decisions != nil || !got.DecisionsDropped || got.CountBinds != 2 || !got.FinishedAt.Equal(p1.ExpiresAt) {
		t.Fatalf("after the next op: %+v", got)
	}
	if n := s.ExpiredPlans(late)["c"]; n != 1 {
		t.Fatalf("%d expired plans counted after recording, want still 1", n)
	}
	if s.Revision("c") != base {
		t.Fatal("discards and expiries changed the cluster's revision")
	}
}

func TestPlanRetention(t *testing.T) {
	s := New()
	base := planCluster(t, s)
	keep := PlanRetention{MaxProposed: 3, MaxFinished: 4, MaxAge: time.Hour}
	now := t0
	var ids []string
	for i := uint64(1); i <= 10; i++ {
		now = now.Add(time.Second)
		p := newPlan(i, base, now)
		p.ExpiresAt = now.Add(10 * time.Hour)
		if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanPropose, Plan: p, Now: now, Retention: keep}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	states := map[PlanState][]string{}
	for _, p := range s.Snapshot("c").Plans() {
		states[p.State] = append(states[p.State], p.ID)
	}
	// The three newest stay proposed; of the seven pushed out, the four newest are kept.
	if want := ids[7:]; !sameSet(states[PlanProposed], want) {
		t.Fatalf("proposed %v, want %v", states[PlanProposed], want)
	}
	if want := ids[3:7]; !sameSet(states[PlanExpired], want) {
		t.Fatalf("expired %v, want %v", states[PlanExpired], want)
	}
	if n := s.ExpiredPlans(now)["c"]; n != 7 {
		t.Fatalf("%d expiries counted, want 7", n)
	}
	// Finished plans older than MaxAge go at the next op.
	later := now.Add(2 * time.Hour)
	if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanDiscard, ID: ids[9], Now: later, Retention: keep}); err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, p := range s.Snapshot("c").Plans() {
		left = append(left, p.ID+" "+p.State.String())
	}
	if want := []string{ids[7] + " proposed", ids[8] + " proposed", ids[9] + " discarded"}; !sameSet(left, want) {
		t.Fatalf("after MaxAge: %q, want %q", left, want)
	}
	if seq := s.Snapshot("c").PlanSeq(); seq != 10 {
		t.Fatalf("the plan sequence went back to %d", seq)
	}
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]bool{}
	for _, x := range a {
		m[x] = true
	}
	for _, x := range b {
		if !m[x] {
			return false
		}
	}
	return true
}

func TestAutoCommitOneStep(t *testing.T) {
	s, l := replicated()
	base := planCluster(t, s)
	res, err := s.ApplyPlan("c", &PlanOp{Action: PlanAutoCommit, Plan: newPlan(1, base, t0), Now: t0})
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan.State != PlanCommitted || res.Commit.Rejected[2] == "" || res.Commit.Rejected[0] != "" {
		t.Fatalf("auto-commit: %+v %+v", res.Plan, res.Commit)
	}
	if l.ops != 2 {
		t.Fatalf("%d ops in the log, want 2 (the batch, then the plan stored and committed at once)", l.ops)
	}
}

func TestConfigStored(t *testing.T) {
	s, _ := replicated()
	if _, ok := s.Snapshot("c").Config(); ok {
		t.Fatal("a fresh cluster has a configuration")
	}
	for i, text := range []string{"actions: \"allocate\"\n", "actions: \"enqueue, allocate\"\n"} {
		sc, err := s.SetConfig("c", &ConfigOp{Text: text, Now: t0})
		if err != nil {
			t.Fatal(err)
		}
		if sc.Version != uint64(i+1) || sc.Text != text {
			t.Fatalf("config %+v", sc)
		}
	}
	if got, _ := s.Snapshot("c").Config(); got.Version != 2 || s.Revision("c") != 0 {
		t.Fatalf("stored %+v at revision %d", got, s.Revision("c"))
	}
	// A replace_all keeps the configuration and the plans: they are not cluster objects.
	mustApply(t, s, "c", node("n1"))
	if _, err := s.Apply("c", Batch{ReplaceAll: true, Changes: []Change{node("n2")}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := s.Snapshot("c").Config(); !ok {
		t.Fatal("replace_all dropped the configuration")
	}
}

func TestDumpRestoreKeepsPlansAndConfigs(t *testing.T) {
	s := New()
	base := planCluster(t, s)
	p := propose(t, s, newPlan(1, base, t0), t0)
	propose(t, s, newPlan(2, base, t0), t0)
	if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanDiscard, ID: "c-r1-2", Now: t0}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConfig("c", &ConfigOp{Text: "actions: \"allocate\"\n", Now: t0}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r := New()
	if err := r.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	v := r.Snapshot("c")
	if got, ok := v.Plan(p.ID); !ok || !reflect.DeepEqual(got, p) {
		t.Fatalf("restored plan %+v, want %+v", got, p)
	}
	if got, ok := v.Plan("c-r1-2"); !ok || got.State != PlanDiscarded {
		t.Fatalf("restored discarded plan %+v", got)
	}
	if sc, ok := v.Config(); !ok || sc.Version != 1 {
		t.Fatalf("restored config %+v", sc)
	}
	if v.PlanSeq() != 2 {
		t.Fatalf("restored plan sequence %d, want 2", v.PlanSeq())
	}
	// The restored plan commits as the original would.
	res, err := r.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: p.ID, Now: t0})
	if err != nil || res.Plan.Applied != 2 {
		t.Fatalf("commit after restore: %+v, %v", res, err)
	}
}

func TestPlanOpEncoding(t *testing.T) {
	ops := []*Op{
		{Cluster: "c", Plan: &PlanOp{Action: PlanPropose, Plan: newPlan(7, 3, t0), Now: t0, Retention: PlanRetention{MaxProposed: 2}}},
		{Cluster: "c", Plan: &PlanOp{Action: PlanCommitByID, ID: "c-r3-7", Now: t0}},
		{Cluster: "c", Config: &ConfigOp{Text: "actions: \"allocate\"\n", Now: t0}},
	}
	for _, op := range ops {
		data, err := MarshalOp(op)
		if err != nil {
			t.Fatal(err)
		}
		got, err := UnmarshalOp(data)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, op) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", got, op)
		}
	}
	bad := &Op{Cluster: "c", Plan: &PlanOp{Action: PlanDiscard, ID: "x"}, Config: &ConfigOp{}}
	if res := New().ApplyOp(bad); res.Err == nil {
		t.Fatal("an op with two parts was applied")
	}
	if _, err := New().ApplyPlan("c", &PlanOp{Action: PlanPropose}); err == nil {
		t.Fatal("a proposal without a plan was accepted")
	}
}

func TestCommittedPlansKeepDecisionsWithinBudget(t *testing.T) {
	s := New()
	keep := PlanRetention{MaxKeptDecisions: 10}
	var ids []string
	for i := uint64(1); i <= 4; i++ {
		base := mustApply(t, s, "c", node(fmt.Sprintf("n%d", i)))
		p := &Plan{ID: fmt.Sprintf("p%d", i), Seq: i, BaseRevision: base, CreatedAt: t0, ExpiresAt: t0.Add(time.Hour)}
		for k := range 4 {
			p.Decisions = append(p.Decisions, api.Decision{Kind: api.DecisionPipeline, Task: fmt.Sprintf("ns/t%d", k), Node: "n1"})
		}
		if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanPropose, Plan: p, Now: t0, Retention: keep}); err != nil {
			t.Fatal(err)
		}
		now := t0.Add(time.Duration(i) * time.Second)
		if _, err := s.ApplyPlan("c", &PlanOp{Action: PlanCommitByID, ID: p.ID, Now: now, Retention: keep}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	// 4 decisions each, 10 kept: the two newest keep theirs, the older drop them.
	v := s.Snapshot("c")
	for i, id := range ids {
		p, _ := v.Plan(id)
		wantKept := i >= 2
		if kept := !p.DecisionsDropped && len(p.Decisions) == 4; kept != wantKept {
			t.Errorf("plan %s keeps its decisions: %v, want %v (%+v)", id, kept, wantKept, p)
		}
		if p.CountPipelines != 4 || p.State != PlanCommitted {
			t.Errorf("plan %s lost its figures: %+v", id, p)
		}
	}
}

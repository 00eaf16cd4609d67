package engine

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
)

func TestHypotheticalDryRun(t *testing.T) {
	e, st := newTestEngine(t, time.Now)
	task := func(name, job string) *api.Task {
		r := cpu(2)
		r.MaxTaskNum = 0
		return &api.Task{Name: name, Namespace: "ns", Job: job, Resources: r, Status: api.Pending}
	}
	job := func(name string) *api.Job {
		return &api.Job{Name: name, Namespace: "ns", Queue: "default", MinAvailable: 1, Phase: api.JobInqueue}
	}
	rev, err := st.Apply("c", state.Batch{Changes: []state.Change{
		{Node: &api.Node{Name: "n1", Allocatable: cpu(4)}},
		{Queue: &api.Queue{Name: "default", Weight: 1}},
		{Job: job("r")}, {Task: task("r-0", "r")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	hyp := &state.Batch{Changes: []state.Change{
		{Job: job("x")}, {Task: task("x-0", "x")}, {Task: task("x-1", "x")},
		{Node: &api.Node{Name: "n2", Allocatable: cpu(2)}},
	}}
	if _, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: Propose, Hypothetical: hyp}); !errors.Is(err, ErrHypotheticalNotDryRun) {
		t.Fatalf("hypothetical changes in a proposed cycle: %v, want ErrHypotheticalNotDryRun", err)
	}
	plan, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: DryRun, Hypothetical: hyp})
	if err != nil {
		t.Fatal(err)
	}
	if plan.BaseRevision != rev {
		t.Errorf("base revision %d, want the store's %d", plan.BaseRevision, rev)
	}
	// Jobs go by name: n1 (4 cpu) takes r-0 and x-0, n2 (hypothetical, 2 cpu) takes x-1.
	want := map[string]struct {
		node string
		hyp  bool
	}{"ns/r-0": {"n1", false}, "ns/x-0": {"n1", true}, "ns/x-1": {"n2", true}}
	if plan.Hypothetical == nil || len(plan.Hypothetical.Decisions) != len(plan.Result.Decisions) {
		t.Fatalf("marks %+v for %d decisions", plan.Hypothetical, len(plan.Result.Decisions))
	}
	for i, d := range plan.Result.Decisions {
		w, ok := want[d.Task]
		if !ok || d.Kind != api.DecisionBind || d.Node != w.node || plan.Hypothetical.Decisions[i] != w.hyp {
			t.Errorf("decision %+v marked %v; want binds %+v", d, plan.Hypothetical.Decisions[i], want)
		}
		delete(want, d.Task)
	}
	if len(want) != 0 {
		t.Errorf("missing decisions for %v", want)
	}
	for i, o := range plan.Result.Jobs {
		if got := plan.Hypothetical.Jobs[i]; got != (o.Job == "ns/x") {
			t.Errorf("job %s marked %v", o.Job, got)
		}
	}
	snap := st.Snapshot("c")
	if snap.Revision() != rev || len(snap.Tasks()) != 1 || len(snap.Nodes()) != 1 {
		t.Errorf("the store changed: revision %d, %d tasks, %d nodes", snap.Revision(), len(snap.Tasks()), len(snap.Nodes()))
	}
	if _, _, err := e.ExplainJob("c", "ns/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("a hypothetical job is explained: %v", err)
	}
	if got, err := e.GetPlan("c", plan.ID); err != nil || got.Hypothetical == nil {
		t.Errorf("GetPlan of the what-if: %+v, %v; want it with its marks", got, err)
	}
	// A plain dry run marks nothing.
	plain, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: DryRun})
	if err != nil || plain.Hypothetical != nil {
		t.Errorf("plain dry run: marks %+v, %v", plain.Hypothetical, err)
	}
	bad := &state.Batch{Changes: []state.Change{{Task: task("x-0", "missing")}}}
	var verr *state.ValidationError
	if _, err := e.Schedule(context.Background(), "c", ScheduleRequest{Mode: DryRun, Hypothetical: bad}); !errors.As(err, &verr) {
		t.Errorf("a hypothetical task of a missing job: %v, want a *state.ValidationError", err)
	}
}

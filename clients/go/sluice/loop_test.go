package sluice_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// runLoop runs a scheduling loop over a cluster holding a node and a gang job of two
// tasks, and returns the first plan it hands to Execute. Execute reports the bound
// tasks as running, so that later cycles have nothing to do.
func runLoop(t *testing.T, opts sluice.LoopOptions) *sluice.PlanResult {
	t.Helper()
	addr, _ := startServer(t)
	c := dial(t, addr)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := c.Apply(ctx, opts.Cluster, true, node("n1", "8"), job("j", 2), task("j-0", "j"), task("j-1", "j")); err != nil {
		t.Fatal(err)
	}
	results := make(chan *sluice.PlanResult, 10)
	opts.Interval = 50 * time.Millisecond
	opts.Execute = func(ctx context.Context, r *sluice.PlanResult) error {
		var running []*sluicev1.Delta
		for _, d := range r.Applied {
			if b := d.GetBind(); b != nil {
				running = append(running, sluice.UpsertTask(&sluicev1.Task{
					Name: b.GetTask().GetName(), Job: b.GetJob().GetName(), Node: b.GetNode(),
					Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Resources: map[string]string{"cpu": "2", "memory": "1Gi"},
				}))
			}
		}
		if _, err := c.Apply(ctx, opts.Cluster, false, running...); err != nil {
			return err
		}
		results <- r
		return nil
	}
	opts.OnError = func(err error) { t.Errorf("loop error: %v", err) }
	done := make(chan error, 1)
	go func() { done <- c.RunSchedulingLoop(ctx, opts) }()
	var first *sluice.PlanResult
	select {
	case first = <-results:
	case <-time.After(20 * time.Second):
		t.Fatal("no plan executed")
	}
	// A few more cycles run and have nothing to carry out.
	time.Sleep(300 * time.Millisecond)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("RunSchedulingLoop returned %v, want context.Canceled", err)
	}
	if extra := len(results); extra != 0 {
		t.Errorf("%d more plans executed after the first", extra)
	}
	return first
}

func checkBinds(t *testing.T, r *sluice.PlanResult) {
	t.Helper()
	if got, want := binds(r.Applied), []string{"default/j-0@n1", "default/j-1@n1"}; !slices.Equal(got, want) {
		t.Fatalf("applied binds %v, want %v", got, want)
	}
	if r.Revision == 0 || len(r.Rejected) != 0 {
		t.Fatalf("revision %d, rejected %v", r.Revision, r.Rejected)
	}
}

func TestSchedulingLoopPeriodic(t *testing.T) {
	r := runLoop(t, sluice.LoopOptions{Cluster: "periodic"})
	checkBinds(t, r)
	// The result holds the committed plan's record, each decision with its outcome.
	if r.Plan.GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED || r.Plan.GetCounts().GetApplied() != 2 {
		t.Errorf("plan state %s, counts %v; want the committed record", r.Plan.GetState(), r.Plan.GetCounts())
	}
	for _, d := range r.Applied {
		if d.GetOutcome() != sluicev1.DecisionOutcome_DECISION_OUTCOME_APPLIED {
			t.Errorf("applied decision without its outcome: %v", d)
		}
	}
}

func TestSchedulingLoopAutoCommit(t *testing.T) {
	r := runLoop(t, sluice.LoopOptions{Cluster: "auto", AutoCommit: true})
	checkBinds(t, r)
	if r.Plan.GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED {
		t.Errorf("plan state %s, want committed", r.Plan.GetState())
	}
}

func TestSchedulingLoopWatch(t *testing.T) {
	checkBinds(t, runLoop(t, sluice.LoopOptions{Cluster: "watch", Watch: true}))
}

func TestSchedulingLoopWatchAutoCommit(t *testing.T) {
	checkBinds(t, runLoop(t, sluice.LoopOptions{Cluster: "watchauto", Watch: true, AutoCommit: true}))
}

func TestSchedulingLoopNeedsExecute(t *testing.T) {
	c := dial(t, "127.0.0.1:1")
	if err := c.RunSchedulingLoop(context.Background(), sluice.LoopOptions{Cluster: "c"}); err == nil {
		t.Error("a loop without Execute ran")
	}
}

func TestSchedulingLoopBadClusterEnds(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := c.RunSchedulingLoop(ctx, sluice.LoopOptions{Cluster: "Not A Cluster!",
		Execute: func(context.Context, *sluice.PlanResult) error { return nil }})
	if status.Code(err) != codes.InvalidArgument {
		t.Fatalf("RunSchedulingLoop: %v, want INVALID_ARGUMENT", err)
	}
}

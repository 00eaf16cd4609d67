package sluice_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// TestLargePlansArriveWhole schedules a plan of more decisions than one page holds: the
// client's Schedule returns every decision, and its loop reads the committed record's
// outcomes for all of them.
func TestLargePlansArriveWhole(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 2500
	one := int32(1)
	deltas := []*sluicev1.Delta{sluice.UpsertNode(&sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "10000", "memory": "10000Gi", "pods": "10000"}})}
	for i := range n {
		name := fmt.Sprintf("j%04d", i)
		deltas = append(deltas, sluice.UpsertJob(&sluicev1.Job{Name: name, MinAvailable: &one}),
			sluice.UpsertTask(&sluicev1.Task{Name: name + "-0", Job: name, Resources: map[string]string{"cpu": "1", "memory": "1Gi"}}))
	}
	if _, err := c.Apply(ctx, "big", false, deltas...); err != nil {
		t.Fatal(err)
	}
	dry, err := c.Schedule(ctx, "big", sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN)
	if err != nil {
		t.Fatal(err)
	}
	if len(dry.GetDecisions()) != n || len(dry.GetJobs()) != n || int(dry.GetCounts().GetBinds()) != n {
		t.Fatalf("dry run: %d decisions, %d jobs, counts %v; want %d", len(dry.GetDecisions()), len(dry.GetJobs()), dry.GetCounts(), n)
	}
	seen := map[string]bool{}
	for _, d := range dry.GetDecisions() {
		seen[sluice.FullName(d.GetBind().GetTask())] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct tasks in the paged decisions, want %d", len(seen), n)
	}
	res, err := c.ScheduleAndCommit(ctx, "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != n || len(res.Rejected) != 0 || len(res.Plan.GetDecisions()) != n {
		t.Fatalf("committed: %d applied, %d rejected, %d decisions in the record", len(res.Applied), len(res.Rejected), len(res.Plan.GetDecisions()))
	}
	again, err := c.Commit(ctx, "big", res.Plan.GetId())
	if err != nil || again.GetRevision() != res.Revision || again.GetPlan().GetCounts().GetApplied() != n {
		t.Fatalf("repeated commit: %v, %v", again.GetPlan().GetCounts(), err)
	}
}

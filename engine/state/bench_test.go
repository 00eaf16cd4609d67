package state

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// ingestBatches builds the batches of BenchmarkIngest: 10,000 nodes in batches of 1,000, then
// 100,000 tasks in batches of 1,000 with their jobs (10 tasks each, so 100 jobs per batch).
// Half the tasks run on a node.
func ingestBatches() (batches []Batch, objects int) {
	const nodes, tasks, perBatch, perJob = 10_000, 100_000, 1_000, 10
	res := api.NewResource(map[string]float64{"cpu": 1, "memory": 1 << 30})
	var b Batch
	b.Changes = append(b.Changes, Change{Queue: &api.Queue{Name: "q", Weight: 1, State: api.QueueOpen}})
	for i := 0; i < nodes; i++ {
		b.Changes = append(b.Changes, Change{Node: &api.Node{
			Name: fmt.Sprintf("node-%05d", i), Allocatable: *api.NewResource(map[string]float64{"cpu": 64, "memory": 256 << 30}),
		}})
		if len(b.Changes) >= perBatch {
			batches, b = append(batches, b), Batch{}
		}
	}
	for i := 0; i < tasks; i++ {
		jobName := fmt.Sprintf("job-%05d", i/perJob)
		if i%perJob == 0 {
			b.Changes = append(b.Changes, Change{Job: &api.Job{
				Namespace: "ns", Name: jobName, Queue: "q", MinAvailable: perJob, Phase: api.JobRunning,
			}})
		}
		t := &api.Task{Namespace: "ns", Name: fmt.Sprintf("task-%06d", i), Job: jobName, Resources: *res, Status: api.Pending}
		if i%2 == 0 {
			t.Status, t.Node = api.Running, fmt.Sprintf("node-%05d", i%nodes)
		}
		b.Changes = append(b.Changes, Change{Task: t})
		if i%perBatch == perBatch-1 {
			batches, b = append(batches, b), Batch{}
		}
	}
	if len(b.Changes) > 0 {
		batches = append(batches, b)
	}
	for _, b := range batches {
		objects += len(b.Changes)
	}
	return batches, objects
}

// BenchmarkIngest streams 10,000 nodes and 100,000 tasks (with 10,000 jobs) into an empty
// store in batches of about 1,000 objects and reports objects/s.
func BenchmarkIngest(b *testing.B) {
	batches, objects := ingestBatches()
	b.ReportAllocs()
	b.ResetTimer()
	var elapsed time.Duration
	for i := 0; i < b.N; i++ {
		s := New()
		start := time.Now()
		for _, batch := range batches {
			if _, err := s.Apply("bench", batch); err != nil {
				b.Fatal(err)
			}
		}
		elapsed += time.Since(start)
	}
	b.ReportMetric(float64(objects)*float64(b.N)/elapsed.Seconds(), "objects/s")
	b.ReportMetric(float64(len(batches)), "batches")
}

// BenchmarkSnapshotList measures reading a full snapshot of the ingested cluster.
func BenchmarkSnapshotList(b *testing.B) {
	batches, _ := ingestBatches()
	s := New()
	for _, batch := range batches {
		if _, err := s.Apply("bench", batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		v := s.Snapshot("bench")
		if len(v.Nodes()) != 10_000 || len(v.Tasks()) != 100_000 || len(v.Jobs()) != 10_000 {
			b.Fatal("wrong counts")
		}
	}
}

// BenchmarkUpdateBind measures plan-commit style transactions: bind 100 pending tasks per
// Update.
func BenchmarkUpdateBind(b *testing.B) {
	batches, _ := ingestBatches()
	s := New()
	for _, batch := range batches {
		if _, err := s.Apply("bench", batch); err != nil {
			b.Fatal(err)
		}
	}
	pending := []*api.Task{}
	for _, t := range s.Snapshot("bench").Tasks() {
		if t.Status == api.Pending {
			pending = append(pending, t)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_, err := s.Update("bench", func(tx *Txn) error {
			for k := 0; k < 100; k++ {
				t := *pending[(i*100+k)%len(pending)]
				t.Status, t.Node = api.Binding, fmt.Sprintf("node-%05d", k)
				if err := tx.Upsert(Change{Task: &t}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "binds/s")
}

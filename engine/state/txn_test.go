package state

import (
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

func TestUpdateCommitsWhatSucceeded(t *testing.T) {
	s := New()
	rev := mustApply(t, s, "c", base()...)
	var errs []error
	got, err := s.Update("c", func(tx *Txn) error {
		if tx.Revision() != rev {
			t.Errorf("tx.Revision() = %d, want %d", tx.Revision(), rev)
		}
		// A plan commit: bind t2 to n2, then a decision for a node that is gone.
		errs = append(errs,
			tx.Upsert(task("ns", "t2", "j1", "n2", api.Binding)),
			tx.Upsert(task("ns", "t3", "j1", "n9", api.Binding)),
			tx.Upsert(job("ns", "j2", "default")),
		)
		// Reads see the transaction's own writes.
		if tk, ok := tx.Task("ns/t2"); !ok || tk.Node != "n2" {
			t.Errorf("tx.Task(ns/t2) = %v, %v", tk, ok)
		}
		if _, ok := tx.Queue("default"); !ok {
			t.Error("tx does not see the default queue it created")
		}
		if got := taskKeys(tx.TasksOnNode("n2")); !slices.Equal(got, []string{"ns/t2"}) {
			t.Errorf("tx.TasksOnNode(n2) = %v", got)
		}
		return nil
	})
	if err != nil || got != rev+1 {
		t.Fatalf("Update = %d, %v; want %d", got, err, rev+1)
	}
	if errs[0] != nil || errs[2] != nil {
		t.Errorf("Upsert errors = %v, want the first and third to succeed", errs)
	}
	wantValidation(t, errs[1], 1, "changes[1].task.node", `node "n9"`)
	v := s.Snapshot("c")
	if tk, _ := v.Task("ns/t2"); tk.Node != "n2" || tk.Status != api.Binding {
		t.Errorf("t2 = %+v", tk)
	}
	if _, ok := v.Task("ns/t3"); ok {
		t.Error("the failed upsert was committed")
	}
	if _, ok := v.Job("ns/j2"); !ok {
		t.Error("j2 missing")
	}
}

func TestUpdateRollsBackFailedCallsAlone(t *testing.T) {
	tests := []struct {
		name string
		call func(tx *Txn) error
		// field of the expected ValidationError
		field string
	}{
		{"replace a task with a dangling node", func(tx *Txn) error {
			return tx.Upsert(runningTask("ns", "t1", "j1", "n9"))
		}, "changes[0].task.node"},
		{"delete a node with tasks", func(tx *Txn) error {
			return tx.Delete(Ref{Kind: KindNode, Name: "n1"})
		}, "changes[0].delete"},
		{"delete a queue with children", func(tx *Txn) error {
			return tx.Delete(Ref{Kind: KindQueue, Name: "q1"})
		}, "changes[0].delete"},
		{"re-parent a queue into a cycle", func(tx *Txn) error {
			return tx.Upsert(queue("q1", "q2"))
		}, "changes[0].queue.parent"},
		{"raise a hypernode to its parent's tier", func(tx *Txn) error {
			return tx.Upsert(hyper("s1", 2))
		}, "changes[0].hyper_node.tier"},
		{"a job in a missing queue", func(tx *Txn) error {
			return tx.Upsert(job("ns", "j1", "q9"))
		}, "changes[0].job.queue"},
		{"a task before its job", func(tx *Txn) error {
			return tx.Upsert(pendingTask("ns", "t9", "j9"))
		}, "changes[0].task.job"},
		{"a delete given to Upsert", func(tx *Txn) error {
			return tx.Upsert(del(KindNode, "", "n1"))
		}, "changes[0].delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			rev := mustApply(t, s, "c", base()...)
			before := dump(&s.Snapshot("c").View)
			got, err := s.Update("c", func(tx *Txn) error {
				wantValidation(t, tt.call(tx), 0, tt.field, "")
				if after := dump(&tx.View); after != before {
					t.Errorf("failed call left changes in the transaction:\n%s\nwant:\n%s", after, before)
				}
				if err := overlayAgrees(tx); err != nil {
					t.Error(err)
				}
				return nil
			})
			if err != nil || got != rev {
				t.Errorf("Update = %d, %v; want %d (no change, no new revision)", got, err, rev)
			}
			if after := dump(&s.Snapshot("c").View); after != before {
				t.Errorf("state changed:\n%s", after)
			}
		})
	}
}

func TestUpdateErrorChangesNothing(t *testing.T) {
	s := New()
	rev := mustApply(t, s, "c", base()...)
	before := dump(&s.Snapshot("c").View)
	boom := errors.New("boom")
	got, err := s.Update("c", func(tx *Txn) error {
		if err := tx.Delete(Ref{Kind: KindJob, Namespace: "ns", Name: "j1"}); err != nil {
			return err
		}
		if err := tx.Upsert(node("n9")); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || got != rev {
		t.Fatalf("Update = %d, %v; want %d, boom", got, err, rev)
	}
	if after := dump(&s.Snapshot("c").View); after != before {
		t.Errorf("state changed:\n%s", after)
	}
	// A Txn kept past its Update refuses to write.
	var kept *Txn
	if _, err := s.Update("c", func(tx *Txn) error { kept = tx; return nil }); err != nil {
		t.Fatal(err)
	}
	if err := kept.Upsert(node("n8")); err == nil {
		t.Error("Upsert on a finished Txn succeeded")
	}
	if s.Revision("c") != rev {
		t.Errorf("revision = %d, want %d", s.Revision("c"), rev)
	}
}

func TestUpdateCascadeAndDefaultQueue(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	rev, err := s.Update("c", func(tx *Txn) error {
		if err := tx.Delete(Ref{Kind: KindJob, Namespace: "ns", Name: "j1"}); err != nil {
			return err
		}
		if n := len(tx.TasksOfJob("ns/j1")); n != 0 {
			t.Errorf("tasks of a deleted job: %d", n)
		}
		// Now n1 has no tasks; it is still in s1, so first take it out.
		if err := tx.Upsert(hyper("s1", 1, "n2")); err != nil {
			return err
		}
		return tx.Delete(Ref{Kind: KindNode, Name: "n1"})
	})
	if err != nil || rev != 2 {
		t.Fatalf("Update = %d, %v", rev, err)
	}
	if got := len(s.Snapshot("c").Tasks()); got != 0 {
		t.Errorf("%d tasks left", got)
	}
}

func TestUpdateBadCluster(t *testing.T) {
	s := New()
	called := false
	_, err := s.Update("", func(*Txn) error { called = true; return nil })
	wantValidation(t, err, -1, "cluster", "empty")
	if called {
		t.Error("fn called for a bad cluster")
	}
}

// TestConcurrentWritersAndReaders is for the race detector: writers to several clusters and
// readers of snapshots at once. Every snapshot must be consistent.
func TestConcurrentWritersAndReaders(t *testing.T) {
	s := New()
	clusters := []string{"a", "b", "c"}
	for _, c := range clusters {
		mustApply(t, s, c, node("n1"), queue("q", ""))
	}
	shared := s.Snapshot("a") // one snapshot read by every reader at once
	var wg sync.WaitGroup
	for _, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				jn := "j" + string(rune('a'+i%26))
				if _, err := s.Apply(c, batch(job("ns", jn, "q"), runningTask("ns", jn+"-t", jn, "n1"))); err != nil {
					t.Error(err)
					return
				}
				if _, err := s.Update(c, func(tx *Txn) error {
					return tx.Delete(Ref{Kind: KindJob, Namespace: "ns", Name: jn})
				}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for r := 0; r < 3; r++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if n := len(shared.Nodes()) + len(shared.Tasks()); n != 1 {
					t.Errorf("shared snapshot changed: %d objects", n)
					return
				}
				for _, c := range clusters {
					v := s.Snapshot(c)
					jobs := map[string]bool{}
					for _, j := range v.Jobs() {
						jobs[j.Key()] = true
					}
					for _, tk := range v.Tasks() {
						if !jobs[tk.JobKey()] {
							t.Errorf("snapshot at %d: task %s without its job", v.Revision(), tk.Key())
							return
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	for _, c := range clusters {
		if got := s.Revision(c); got != 101 {
			t.Errorf("cluster %s revision = %d, want 101", c, got)
		}
	}
}

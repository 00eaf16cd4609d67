package state

import (
	"fmt"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// TestScratchCarriesNothingOver: the bookkeeping a write leaves for the next holds nothing of
// it. The overlay's rows are keyed by table and key alone, so a row left from a write to c1
// would make node n1 exist for a write to c2, and one left from a refused batch would make
// its node exist after all.
func TestScratchCarriesNothingOver(t *testing.T) {
	s := New()
	mustApply(t, s, "c1", node("n1"), queue("q", ""), job("ns", "j", "q"), runningTask("ns", "t", "j", "n1"))
	if s.scratch.Load() == nil {
		t.Fatal("the store kept no scratch after a write")
	}
	mustApply(t, s, "c2", queue("q", ""), job("ns", "j", "q"))
	_, err := s.Apply("c2", batch(runningTask("ns", "t", "j", "n1")))
	wantValidation(t, err, 0, "changes[0].task.node", "does not exist")

	// A refused batch: its node n2 is thrown away with it.
	if _, err := s.Apply("c2", batch(node("n2"), pendingTask("ns", "t2", "missing"))); err == nil {
		t.Fatal("a task of a missing job was accepted")
	}
	_, err = s.Apply("c2", batch(runningTask("ns", "t", "j", "n2")))
	wantValidation(t, err, 0, "changes[0].task.node", "does not exist")
	mustApply(t, s, "c2", node("n1"), runningTask("ns", "t", "j", "n1"))
}

// TestScratchOfHugeBatchesIsDropped: the store does not keep the bookkeeping of a batch
// beyond maxScratch changes (maps never shrink).
func TestScratchOfHugeBatchesIsDropped(t *testing.T) {
	s := New()
	changes := make([]Change, 0, maxScratch+1)
	for i := 0; i <= maxScratch; i++ {
		changes = append(changes, Change{Node: &api.Node{Name: fmt.Sprintf("n%d", i)}})
	}
	mustApply(t, s, "c", changes...)
	if s.scratch.Load() != nil {
		t.Fatalf("the store kept the scratch of a batch of %d changes", len(changes))
	}
	mustApply(t, s, "c", node("small"))
	sc := s.scratch.Load()
	if sc == nil {
		t.Fatal("the store kept no scratch after a small batch")
	}
	// An Update (a plan commit's kind of write) does not use it, and leaves it.
	if _, err := s.Update("c", func(tx *Txn) error { return tx.Upsert(node("other")) }); err != nil {
		t.Fatal(err)
	}
	if got := s.scratch.Load(); got != sc {
		t.Fatalf("an Update left scratch %p, want the one before it (%p)", got, sc)
	}
}

package state

import (
	"fmt"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// overlayAgrees checks that the writer's reads by key (the overlay) give, for every key the
// transaction holds or the overlay names, the row the write transaction itself holds.
func overlayAgrees(tx *Txn) error {
	w := tx.w
	for k := KindNode; k <= KindHyperNode; k++ {
		table := kindTables[k]
		it, err := w.txn.Get(table, indexID+"_prefix", w.cluster)
		if err != nil {
			return err
		}
		for o := it.Next(); o != nil; o = it.Next() {
			r := o.(keyed)
			if got, err := w.get(table, r.rowKey()); err != nil || got != r {
				return fmt.Errorf("overlay reads %s %q as %v (%v), the transaction holds %v", table, r.rowKey(), got, err, r)
			}
		}
	}
	for tk, r := range w.ov.rows {
		held, err := firstByID(w.txn, tk.table, w.cluster, tk.key)
		if err != nil {
			return err
		}
		if (r == nil) != (held == nil) || (r != nil && r != held) {
			return fmt.Errorf("overlay holds %v for %s %q, the transaction %v", r, tk.table, tk.key, held)
		}
	}
	return nil
}

// Taking back a failed call restores the rows it replaced or deleted in the overlay too, so
// that the calls after it check against the state as it was.
func TestOverlayFollowsRollback(t *testing.T) {
	s := New()
	mustApply(t, s, "c", base()...)
	_, err := s.Update("c", func(tx *Txn) error {
		// Deleting n1, which still has tasks, fails and is taken back...
		wantValidation(t, tx.Delete(Ref{Kind: KindNode, Name: "n1"}), 0, "changes[0].delete", "")
		if err := overlayAgrees(tx); err != nil {
			t.Error(err)
		}
		// ... so a task may still be bound to it.
		if err := tx.Upsert(task("ns", "t2", "j1", "n1", api.Binding)); err != nil {
			t.Errorf("binding to n1 after the failed delete: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

package state

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/sluice-sched/sluice/internal/keylock"
)

// Store is the revisioned state of every cluster: a go-memdb database. Writes are serialized
// (memdb allows one writer at a time); reads never block.
//
// With a Replicator (SetReplicator), the store is the state machine of a replicated log:
// Apply and CommitPlan check what they can against the current state, hand the write to the
// Replicator as an Op, and return once the log has it and it was applied here through
// ApplyOp (see replicate.go).
type Store struct {
	// db is swapped whole by Restore; everything else reads it through load.
	db atomic.Pointer[memdb.MemDB]

	repl Replicator
	// locks serialize the replicated writes of each cluster, from their checks to their
	// application, so that a batch checked against the state is applied to that state. A
	// cluster's lock exists only while a write holds or waits for it.
	locks keylock.Map

	// live holds the resyncs this node's writers have open (see TakeLead).
	live liveResyncs
	// id identifies the store (ID); with a Replicator it comes from the log.
	id atomic.Pointer[storeID]
	// logBounds bounds each cluster's change log (LimitChangeLog).
	logBounds atomic.Pointer[logBounds]
	// scratch is the bookkeeping a write leaves for the next (writerScratch). memdb's writer
	// lock serializes writes; taking it with a swap also keeps two writers from ever sharing
	// it.
	scratch atomic.Pointer[writerScratch]
}

// storeID is a store's id and where it came from: drawn by New (local), or read from a
// replicated log or a snapshot.
type storeID struct {
	id    string
	local bool
}

// New returns an empty store. It panics only if the static schema is invalid, which the
// package's tests rule out.
func New() *Store {
	s := &Store{}
	s.db.Store(newDB())
	s.id.Store(&storeID{id: newStoreID(), local: true})
	s.logBounds.Store(&logBounds{revisions: changeLogRevisions, keys: changeLogKeys})
	return s
}

// ID identifies the store: a random id drawn when the store starts from nothing, so that a
// client can tell whether revisions it kept are this store's. A store without a Replicator
// draws one in New, so every process has its own; with one, the id is part of the replicated
// state (an op of the log, and snapshots), the same on every replica and across restarts
// with the same data directory, and "" until the first leader wrote it (see TakeLead).
func (s *Store) ID() string { return s.id.Load().id }

// setID sets the id the log or a snapshot gives.
func (s *Store) setID(id string) { s.id.Store(&storeID{id: id}) }

// newStoreID draws a store id: 128 random bits in hex.
func newStoreID() string {
	return fmt.Sprintf("%016x%016x", randomID(), randomID())
}

// newDB returns an empty database with the store's schema.
//
// It is a memdb snapshot of a new database rather than the database itself: a snapshot is a
// database of its own, written and read alike, whose write transactions do not track the
// radix nodes they replace for memdb's watch channels. Nothing in Sluice watches the store
// through memdb (writers tell readers through the change log and the service's notices), and
// the tracking cost a map insert per replaced node and closing its channel at the commit, or,
// past 8,192 nodes, a walk of the whole index.
func newDB() *memdb.MemDB {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		panic(fmt.Sprintf("state: invalid memdb schema: %v", err))
	}
	return db.Snapshot()
}

// load returns the current database.
func (s *Store) load() *memdb.MemDB { return s.db.Load() }

// Apply applies a batch of changes to a cluster atomically: every change, then the
// referential checks, in one write transaction. On success the cluster's revision advances
// by one (even for an empty batch, so that every accepted batch has a revision of its own)
// and Apply returns the new revision. On error nothing changes and Apply returns the
// unchanged revision with a *ValidationError (or, for an internal failure, another error).
//
// Upserting an existing object replaces it, except for the server-owned fields the upsert
// leaves unset, which keep their stored values (merge.go). Deleting a missing object is a
// no-op; deleting a job deletes its tasks. With ReplaceAll, everything of the cluster is
// deleted first, in the same transaction (the merges still read the objects as they were). The checks run after all changes, so a batch may list objects in any
// order (a task before its job):
//   - a task's job exists; a task naming a node names an existing one; a Running,
//     Releasing, Binding or Bound task names a node;
//   - a job's queue exists, except "default", which is created (weight 1, Open,
//     Reclaimable) when a job names it and it does not exist;
//   - a queue's parent exists (unless "" or "root") and the parent chain does not cycle;
//   - a tier-1 hypernode's members are existing nodes; a higher tier's are existing
//     hypernodes of a lower tier;
//   - a deleted node has no tasks left, a deleted queue no jobs or child queues, and a
//     deleted node or hypernode is no hypernode's member.
//
// With a Replicator, the batch is first checked in a transaction that is thrown away, so that a
// batch the store refuses never reaches the log, then replicated, and applied when the log
// has it; an error of the Replicator (*NotLeaderError, ErrUnavailable) means the batch may
// or may not be applied.
func (s *Store) Apply(cluster string, b Batch) (uint64, error) {
	if s.repl == nil {
		return s.apply(cluster, b, true)
	}
	b.Owned = false // the log takes the batch as it came
	return s.replicateBatch(cluster, b)
}

// apply applies a batch in one write transaction, committed when commit is set and thrown
// away otherwise (a dry run: the checks alone).
func (s *Store) apply(cluster string, b Batch, commit bool) (uint64, error) {
	return s.write(cluster, false, commit, func(w *writer) (bool, error) {
		w.now, w.whole, w.limits = b.Now, b.whole, b.Limits
		w.owned = b.Owned && commit
		if b.ReplaceAll {
			w.prior = s.load().Txn(false)
			if err := w.deleteAll(); err != nil {
				return false, err
			}
		}
		w.reserve(len(b.Changes))
		for i := range b.Changes {
			if err := w.change(i, &b.Changes[i]); err != nil {
				return false, err
			}
		}
		if err := w.check(); err != nil {
			return false, err
		}
		return true, w.checkLimits(b.Limits)
	})
}

// Update runs fn in one write transaction on a cluster, for changes that depend on what the
// state holds (plan commits). Unlike Apply, each Txn.Upsert or Txn.Delete is checked at
// once, against the state so far, and a failed call is taken back alone: fn may go on with
// other changes, and what succeeded is committed when fn returns nil. If fn returns an error,
// nothing changes. The revision advances by one if at least one call succeeded, and Update
// returns the cluster's revision afterwards (unchanged on error or when nothing changed).
// The Txn must not be used after fn returns.
//
// fn is arbitrary code, which a replicated log cannot carry: with a Replicator, Update fails
// with ErrNotReplicable (plan commits go through CommitPlan, which is replicated).
func (s *Store) Update(cluster string, fn func(tx *Txn) error) (uint64, error) {
	if s.repl != nil {
		return s.Revision(cluster), ErrNotReplicable
	}
	return s.update(cluster, fn)
}

func (s *Store) update(cluster string, fn func(tx *Txn) error) (uint64, error) {
	return s.write(cluster, true, true, func(w *writer) (bool, error) {
		tx := &Txn{View: View{txn: w.txn, cluster: cluster}, w: w}
		tx.rev = revision(w.txn, cluster)
		defer func() { tx.w = nil }()
		if err := fn(tx); err != nil {
			return false, err
		}
		if tx.broken != nil {
			return false, tx.broken
		}
		return tx.changed, nil
	})
}

// write runs fn in a write transaction and commits it, advancing the cluster's revision, if
// fn reports a change and no error. Without commit the transaction is always thrown away (a
// dry run), and write returns what the revision would have become.
func (s *Store) write(cluster string, tracking, commit bool, fn func(w *writer) (bool, error)) (uint64, error) {
	if err := checkCluster(cluster); err != nil {
		return s.Revision(cluster), err
	}
	w, rev, objects := s.newWriter(cluster, tracking)
	txn := w.txn
	defer txn.Abort() // a no-op after Commit
	w.scratch = s.scratch.Swap(nil)
	defer func() {
		if sc := w.takeScratch(); sc != nil {
			s.scratch.Store(sc)
		}
	}()
	changed, err := fn(w)
	if err != nil || !changed {
		return rev, err
	}
	if !commit {
		return rev + 1, nil
	}
	if err := txn.Insert(tableClusters, w.newRevisionRow(clusterRowOf(txn, cluster), rev+1, objects+w.objects)); err != nil {
		return rev, fmt.Errorf("state: advancing the revision of cluster %q: %w", cluster, err)
	}
	txn.Commit()
	return rev + 1, nil
}

// newWriter opens a write transaction on the cluster and returns its writer, with the
// cluster's revision and object count before it. The caller commits or aborts w.txn.
func (s *Store) newWriter(cluster string, tracking bool) (w *writer, rev uint64, objects int) {
	db := s.load()
	txn := db.Txn(true)
	rev, objects = clusterCounts(txn, cluster)
	w = &writer{txn: txn, cluster: cluster, rev: rev + 1, base: objects, tracking: tracking, bounds: s.logBounds.Load()}
	// txn holds the writer's lock, so a read transaction taken now sees the root it started on.
	w.ov = newOverlay(db.Txn(false))
	return w, rev, objects
}

// Revision returns a cluster's revision: 0 for a cluster never written.
func (s *Store) Revision(cluster string) uint64 {
	return revision(s.load().Txn(false), cluster)
}

// Clusters returns the names of the clusters that have had a successful write, sorted.
// A cluster stays listed (with its revision) after ReplaceAll empties it.
func (s *Store) Clusters() []string {
	it, err := s.load().Txn(false).Get(tableClusters, indexID)
	if err != nil {
		panic(fmt.Sprintf("state: listing clusters: %v", err))
	}
	var out []string
	for o := it.Next(); o != nil; o = it.Next() {
		out = append(out, o.(*clusterRow).name)
	}
	return out
}

// Snapshot returns a consistent, immutable view of a cluster at its current revision. It is
// cheap (memdb snapshots are free), never blocks writers and never sees later writes.
func (s *Store) Snapshot(cluster string) *Snapshot {
	txn := s.load().Txn(false)
	o, err := txn.First(tableClusters, indexID, cluster)
	if err != nil {
		panic(fmt.Sprintf("state: reading the revision of cluster %q: %v", cluster, err))
	}
	snap := &Snapshot{View: View{txn: txn, cluster: cluster}}
	if o != nil {
		snap.mark.row = o.(*clusterRow)
		snap.rev = snap.mark.row.revision
	}
	return snap
}

// Mark identifies the objects a snapshot of a cluster reads: two snapshots of one cluster
// with equal marks read the same objects (the same pointers). Every write that changes a
// cluster's objects stores a new revision row, and so gives a new mark; so do deleting the
// cluster and Restore. Marks are comparable.
type Mark struct{ row *clusterRow }

// Mark returns the snapshot's mark.
func (s *Snapshot) Mark() Mark { return s.mark }

// clusterRowOf returns the cluster's revision row, nil for a cluster never written.
func clusterRowOf(txn *memdb.Txn, cluster string) *clusterRow {
	o, err := txn.First(tableClusters, indexID, cluster)
	if err != nil {
		panic(fmt.Sprintf("state: reading the revision of cluster %q: %v", cluster, err))
	}
	if o == nil {
		return nil
	}
	return o.(*clusterRow)
}

func revision(txn *memdb.Txn, cluster string) uint64 {
	rev, _ := clusterCounts(txn, cluster)
	return rev
}

// clusterCounts returns a cluster's revision and how many objects it holds (0, 0 for a
// cluster never written).
func clusterCounts(txn *memdb.Txn, cluster string) (revision uint64, objects int) {
	o, err := txn.First(tableClusters, indexID, cluster)
	if err != nil {
		panic(fmt.Sprintf("state: reading the revision of cluster %q: %v", cluster, err))
	}
	if o == nil {
		return 0, 0
	}
	r := o.(*clusterRow)
	return r.revision, r.objects
}

// Objects returns how many objects (of every kind) a cluster holds.
func (s *Store) Objects(cluster string) int {
	_, n := clusterCounts(s.load().Txn(false), cluster)
	return n
}

// checkCluster rejects an empty cluster name or one with a NUL.
func checkCluster(cluster string) error {
	switch {
	case cluster == "":
		return &ValidationError{Index: -1, Field: "cluster", Msg: "must not be empty"}
	case strings.IndexByte(cluster, 0) >= 0:
		return &ValidationError{Index: -1, Field: "cluster", Msg: "must not contain a NUL character"}
	}
	return nil
}

// Txn is a write transaction on one cluster, given to the function passed to Store.Update.
// It reads like a Snapshot (including its own changes so far) and writes with Upsert and
// Delete. A Txn is not safe for concurrent use.
type Txn struct {
	View
	w       *writer
	ops     int
	changed bool
	// broken is set when a failed call could not be taken back; the transaction then aborts.
	broken error
}

// errTxnDone is returned by a Txn used after its Update returned.
var errTxnDone = errors.New("state: transaction used after Update returned")

// Upsert applies one change (usually an upsert; a Change with Delete set deletes), with the
// checks of Store.Apply against the state so far (so create what a change refers to first).
// On error the call has no effect and the error is a *ValidationError whose Index is the
// ordinal of this call in the transaction (failed calls count).
func (tx *Txn) Upsert(c Change) error {
	return tx.do(func(i int) error { return tx.w.change(i, &c) })
}

// Delete deletes one object, with the checks of Store.Apply against the state so far (so
// delete or move dependents first); deleting a job deletes its tasks. On error the call has
// no effect.
func (tx *Txn) Delete(r Ref) error {
	return tx.do(func(i int) error { return tx.w.delete(i, r) })
}

// do runs one call: apply, check, and on failure take back what the call did.
func (tx *Txn) do(apply func(i int) error) error {
	if tx.w == nil {
		return errTxnDone
	}
	if tx.broken != nil {
		return tx.broken
	}
	i := tx.ops
	tx.ops++
	w := tx.w
	w.undo = w.undo[:0]
	err := apply(i)
	if err == nil {
		err = w.check()
	}
	w.pend.reset() // check resets too, but apply may have failed after queueing
	if err != nil {
		if rerr := w.rollback(0); rerr != nil {
			tx.broken = rerr
			return rerr
		}
		return err
	}
	tx.changed = true
	return nil
}

package state

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"
)

// A resync replaces a whole cluster, like a ReplaceAll batch, but arrives in parts: a cluster
// of any size can be sent within a message size limit, and, with a Replicator, becomes many
// log entries of bounded size rather than one entry as large as the cluster.
//
// Design: the parts are staged in the store itself, in the resyncs table (one row per resync
// in progress, holding its parts), and the last part swaps the cluster in one write
// transaction that deletes everything of the cluster, applies every staged change and runs
// the referential checks across all of them. Staging in the store, rather than in the
// writer's memory, is what makes the replicated case work: each part is an op of the log
// that every replica stages alike, a raft snapshot taken halfway carries the staged parts
// (Dump), and the commit op is small. The staged rows are not cluster state: staging leaves
// the cluster's revision and its objects alone, so readers and cycles see the old state until
// the commit. A resync that is abandoned (Abort, or a new leader that finds stages no writer
// of its own holds, see Store.TakeLead) is dropped from every replica.
//
// Each op says how many parts it expects staged before it, so that a replica that lost the
// stage (a leader change aborted it) refuses the rest of the resync instead of committing
// part of a cluster.

// tableResyncs holds one *resyncStage row per resync in progress, keyed by (cluster, id in
// hex). It is not cluster state: writing it does not change the cluster's revision.
const tableResyncs = "resyncs"

// resyncStage is what a resync staged so far: its parts, in order. A new part replaces the row
// with one whose Parts is one longer (see applyResync).
type resyncStage struct {
	ID    uint64
	Parts [][]Change
}

// changes counts the staged changes.
func (st *resyncStage) changes() int {
	n := 0
	for _, p := range st.Parts {
		n += len(p)
	}
	return n
}

// ResyncOp is one step of a resync in the log: stage a part, commit (after staging a last
// part), or abort.
type ResyncOp struct {
	// ID identifies the resync within its cluster; the leader draws it at random.
	ID uint64
	// Part is how many parts the resync has staged before this op; a replica whose stage
	// does not match refuses the op (and drops the stage).
	Part int
	// Changes are the part's upserts.
	Changes []Change
	// Commit swaps the cluster with every staged part and Changes.
	Commit bool
	// Now is a commit's Batch.Now: it fills in the unset times of new objects (merge.go). The
	// writer sets it (the leader's clock), so that every replica fills in the same time.
	Now time.Time
	// Abort drops the stage; Changes is empty.
	Abort bool
	// Limits bound what a commit may make of the cluster, as a batch's do (Batch.Limits);
	// zero fields bound nothing. They travel with the op, so that every replica applies the
	// limits the leader had.
	Limits Limits
}

// ErrResyncLost is the error of a resync step whose earlier parts are gone from the store: it
// was aborted (a leader change drops the stages of the writers it does not have). Nothing
// changed; send the resync again.
var ErrResyncLost = errors.New("state: the resync's staged parts are gone (aborted, or lost to a leader change); send it again")

// Resync is a resync in progress, opened by Store.BeginResync. Add stages parts, Commit swaps
// the cluster, Abort drops what was staged. A Resync is not safe for concurrent use; once
// Commit or Abort returned (or a step failed: a failed step aborts the resync), further calls
// fail.
type Resync struct {
	s       *Store
	cluster string
	id      uint64
	parts   int
	changes int
	limits  Limits
	done    bool
}

// BeginResync opens a resync of a cluster. Nothing is written until the first part.
func (s *Store) BeginResync(cluster string) (*Resync, error) {
	if err := checkCluster(cluster); err != nil {
		return nil, err
	}
	r := &Resync{s: s, cluster: cluster, id: randomID()}
	s.live.add(cluster, r.id)
	return r, nil
}

// errResyncDone is the error of a call on a resync that ended.
var errResyncDone = errors.New("state: the resync already ended")

// SetLimits sets the limits the commit checks the swapped cluster against (see Limits; zero
// fields bound nothing). A commit beyond one fails with a *LimitError, whose Where.Index
// counts the changes of the whole resync, and the cluster is unchanged.
func (r *Resync) SetLimits(l Limits) { r.limits = l }

// Cluster returns the cluster the resync replaces.
func (r *Resync) Cluster() string { return r.cluster }

// Changes returns how many changes the resync staged so far; the changes of the next part
// have indexes from there in a *ValidationError.
func (r *Resync) Changes() int { return r.changes }

// Add stages a part. Its changes get the checks that need nothing but the change (names,
// required fields; deletes are refused); the referential checks run at the commit, across
// the whole resync. A *ValidationError's Index counts the changes of the whole resync. On
// error the resync is aborted and nothing changed. The changes become the store's.
func (r *Resync) Add(changes []Change) error {
	if err := r.add(changes); err != nil {
		r.fail()
		return err
	}
	return nil
}

// Commit stages a last part (which may be empty) and swaps the cluster: in one write
// transaction everything of the cluster is deleted and every staged change applied, with the
// referential checks of Store.Apply across all of them. Like a ReplaceAll batch whose Now is
// now, it keeps the server-owned fields the changes leave unset (merge.go) and fills in the
// times of new objects with now. It returns the cluster's new revision.
// On error (a *ValidationError or a *LimitError whose Index counts the changes of the whole
// resync, or ErrResyncLost) the cluster is unchanged. Either way the stage is dropped.
func (r *Resync) Commit(changes []Change, now time.Time) (uint64, error) {
	if r.done {
		return r.s.Revision(r.cluster), errResyncDone
	}
	if err := r.check(changes); err != nil {
		r.fail()
		return r.s.Revision(r.cluster), err
	}
	r.done = true
	defer r.s.live.remove(r.cluster, r.id)
	res, err := r.s.resyncOp(r.cluster, &ResyncOp{ID: r.id, Part: r.parts, Changes: changes, Commit: true, Now: now, Limits: r.limits})
	if err != nil {
		r.s.abandon(r.cluster, r.id)
		return r.s.Revision(r.cluster), err
	}
	return res.Revision, res.Err
}

// Abort drops what the resync staged; the cluster is unchanged. Aborting an ended resync does
// nothing. With a Replicator the abort is an op of the log; if it cannot be written (this node
// lost the lead), the next leader drops the stage.
func (r *Resync) Abort() error {
	if r.done {
		return nil
	}
	r.done = true
	defer r.s.live.remove(r.cluster, r.id)
	if r.parts == 0 {
		return nil // nothing staged
	}
	_, err := r.s.resyncOp(r.cluster, &ResyncOp{ID: r.id, Part: r.parts, Abort: true})
	return err
}

// add checks and stages one part.
func (r *Resync) add(changes []Change) error {
	if r.done {
		return errResyncDone
	}
	if err := r.check(changes); err != nil {
		return err
	}
	res, err := r.s.resyncOp(r.cluster, &ResyncOp{ID: r.id, Part: r.parts, Changes: changes})
	if err == nil {
		err = res.Err
	}
	if err != nil {
		return err
	}
	r.parts++
	r.changes += len(changes)
	return nil
}

// fail ends the resync after a failed step, dropping what it staged.
func (r *Resync) fail() {
	if !r.done {
		_ = r.Abort()
	}
}

// check runs the checks of changes that need nothing but the change (the referential checks
// they queue are dropped: the commit runs them), with indexes counting from the changes
// staged so far. The writer has no write transaction: the server-owned fields merge, as
// the commit's do, against the state as it is now (prior), so that what depends on them (a
// placed task that leaves its node unset keeps its stored one) is refused alike; the commit
// checks again against the state it replaces.
func (r *Resync) check(changes []Change) error {
	w := &writer{cluster: r.cluster, checkOnly: true, prior: r.s.load().Txn(false)}
	for i := range changes {
		c := &changes[i]
		if c.Delete != nil && c.set() == 1 {
			return invalid(r.changes+i, "delete", "deletes are not allowed in a resync, which replaces the whole cluster")
		}
		if err := w.change(r.changes+i, c); err != nil {
			return err
		}
		w.pend.reset()
	}
	return nil
}

// resyncOp applies a resync op here, or hands it to the Replicator.
func (s *Store) resyncOp(cluster string, op *ResyncOp) (*OpResult, error) {
	if s.repl == nil {
		return s.applyResync(cluster, op), nil
	}
	return s.replicate(cluster, &Op{Cluster: cluster, Resync: op})
}

// abandon drops a stage after a commit that could not be replicated, when this node can still
// write; otherwise the next leader does.
func (s *Store) abandon(cluster string, id uint64) {
	if s.repl == nil || s.repl.CheckLeader() != nil {
		return
	}
	_, _ = s.replicate(cluster, &Op{Cluster: cluster, Resync: &ResyncOp{ID: id, Abort: true, Part: -1}})
}

// applyResync applies a resync op to this node's store; it is deterministic, as ApplyOp is.
// Ops of one store apply one at a time (the log's state machine, or the one Resync that
// owns the id), so the stage read first is still the stage when the op writes.
func (s *Store) applyResync(cluster string, op *ResyncOp) *OpResult {
	rev := s.Revision(cluster)
	stage := s.stage(cluster, op.ID)
	parts := 0
	if stage != nil {
		parts = len(stage.Parts)
	}
	switch {
	case op.Abort:
		if stage != nil {
			s.putStage(cluster, stage, nil)
		}
		return &OpResult{Revision: rev}
	case parts != op.Part:
		if stage != nil {
			s.putStage(cluster, stage, nil)
		}
		return &OpResult{Revision: rev, Err: ErrResyncLost}
	case op.Commit:
		rev, err := s.commitResync(cluster, stage, op)
		if err != nil && stage != nil {
			s.putStage(cluster, stage, nil)
		}
		return &OpResult{Revision: rev, Err: err}
	}
	next := &resyncStage{ID: op.ID}
	if stage != nil {
		// Appending may write past the old row's length into the array it shares, which
		// never changes what the old row (in a snapshot, say) shows: rows of a stage are
		// only ever appended to in their latest version. So staging a part costs what the
		// part does, not what the stage holds.
		next.Parts = stage.Parts
	}
	next.Parts = append(next.Parts, op.Changes)
	s.putStage(cluster, stage, next)
	return &OpResult{Revision: rev}
}

// commitResync swaps the cluster with the staged parts and the commit op's changes, in one
// write transaction that also drops the stage. Server-owned fields merge as in a ReplaceAll
// batch (Store.apply): against the state before the swap, with the op's Now; the op's limits
// are checked as a batch's are.
func (s *Store) commitResync(cluster string, stage *resyncStage, op *ResyncOp) (uint64, error) {
	last := op.Changes
	return s.write(cluster, false, true, func(w *writer) (bool, error) {
		w.now, w.limits = op.Now, op.Limits
		w.prior = s.load().Txn(false)
		if err := w.deleteAll(); err != nil {
			return false, err
		}
		n := len(last)
		if stage != nil {
			n += stage.changes()
		}
		w.reserve(n)
		i := 0
		apply := func(part []Change) error {
			for k := range part {
				if err := w.change(i, &part[k]); err != nil {
					return err
				}
				i++
			}
			return nil
		}
		if stage != nil {
			for _, p := range stage.Parts {
				if err := apply(p); err != nil {
					return false, err
				}
			}
			if err := w.txn.Delete(tableResyncs, stageRow(cluster, stage)); err != nil {
				return false, fmt.Errorf("state: dropping a resync's stage: %w", err)
			}
		}
		if err := apply(last); err != nil {
			return false, err
		}
		if err := w.check(); err != nil {
			return false, err
		}
		return true, w.checkLimits(op.Limits)
	})
}

// stage returns a resync's stage, or nil.
func (s *Store) stage(cluster string, id uint64) *resyncStage {
	o, err := s.load().Txn(false).First(tableResyncs, indexID, cluster, stageKey(id))
	if err != nil {
		panic(fmt.Sprintf("state: reading a resync's stage: %v", err))
	}
	if o == nil {
		return nil
	}
	return o.(*row[resyncStage]).obj
}

// putStage replaces a resync's stage old (nil: none yet) with next (nil: drop it).
func (s *Store) putStage(cluster string, old, next *resyncStage) {
	txn := s.load().Txn(true)
	defer txn.Abort()
	var err error
	if next != nil {
		err = txn.Insert(tableResyncs, stageRow(cluster, next))
	} else if old != nil {
		err = txn.Delete(tableResyncs, stageRow(cluster, old))
	}
	if err != nil {
		// Only a bug (a schema that does not fit the row) gets here.
		panic(fmt.Sprintf("state: writing a resync's stage: %v", err))
	}
	txn.Commit()
}

func stageKey(id uint64) string { return fmt.Sprintf("%016x", id) }

func stageRow(cluster string, st *resyncStage) *row[resyncStage] {
	return newRow(cluster, stageKey(st.ID), st, "", "")
}

// StagedResync describes a resync in progress, for operators and tests.
type StagedResync struct {
	Cluster string
	ID      uint64
	Parts   int
	Changes int
}

// StagedResyncs lists the resyncs in progress, by cluster and id.
func (s *Store) StagedResyncs() []StagedResync {
	it, err := s.load().Txn(false).Get(tableResyncs, indexID)
	if err != nil {
		panic(fmt.Sprintf("state: listing resyncs: %v", err))
	}
	var out []StagedResync
	for o := it.Next(); o != nil; o = it.Next() {
		r := o.(*row[resyncStage])
		out = append(out, StagedResync{Cluster: r.cluster, ID: r.obj.ID, Parts: len(r.obj.Parts), Changes: r.obj.changes()})
	}
	return out
}

// liveResyncs is the set of resyncs a node's writers hold open.
type liveResyncs struct {
	mu  sync.Mutex
	set map[liveKey]struct{}
}

type liveKey struct {
	cluster string
	id      uint64
}

func (l *liveResyncs) add(cluster string, id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = map[liveKey]struct{}{}
	}
	l.set[liveKey{cluster, id}] = struct{}{}
}

func (l *liveResyncs) remove(cluster string, id uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.set, liveKey{cluster, id})
}

func (l *liveResyncs) has(cluster string, id uint64) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.set[liveKey{cluster, id}]
	return ok
}

// randomID draws a random non-zero 64-bit id.
func randomID() uint64 {
	var b [8]byte
	for {
		if _, err := rand.Read(b[:]); err != nil {
			panic(fmt.Sprintf("state: reading random bytes: %v", err))
		}
		if id := binary.BigEndian.Uint64(b[:]); id != 0 {
			return id
		}
	}
}

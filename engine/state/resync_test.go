package state

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
	"time"
)

// oldCluster writes a cluster that a resync then replaces.
func oldCluster(t *testing.T, s *Store) uint64 {
	t.Helper()
	return mustApply(t, s, "c", node("old-n"), queue("old-q", ""), job("ns", "old-j", "old-q"),
		runningTask("ns", "old-t", "old-j", "old-n"))
}

// newClusterParts is a cluster in three parts, whose references cross parts: tasks come
// before their job and node, a hypernode before its members.
func newClusterParts() [][]Change {
	return [][]Change{
		{runningTask("ns", "t1", "j", "n1"), pendingTask("ns", "t2", "j"), hyper("rack", 1, "n1", "n2")},
		{job("ns", "j", "q"), queue("q", "")},
		{node("n1"), node("n2")},
	}
}

// replaceAllDump is what one ReplaceAll batch of the parts gives, to compare with.
func replaceAllDump(t *testing.T, parts [][]Change) string {
	t.Helper()
	s := New()
	oldCluster(t, s)
	var all []Change
	for _, p := range parts {
		all = append(all, p...)
	}
	if _, err := s.Apply("c", Batch{Changes: all, ReplaceAll: true}); err != nil {
		t.Fatal(err)
	}
	return dump(&s.Snapshot("c").View)
}

func TestResyncSwapsTheClusterAtCommit(t *testing.T) {
	s := New()
	rev := oldCluster(t, s)
	before := dump(&s.Snapshot("c").View)
	r, err := s.BeginResync("c")
	if err != nil {
		t.Fatal(err)
	}
	parts := newClusterParts()
	for _, p := range parts[:2] {
		if err := r.Add(p); err != nil {
			t.Fatalf("Add: %v", err)
		}
		if got := dump(&s.Snapshot("c").View); got != before || s.Revision("c") != rev {
			t.Fatalf("a staged part shows before the commit (revision %d):\n%s", s.Revision("c"), got)
		}
	}
	if st := s.StagedResyncs(); len(st) != 1 || st[0].Parts != 2 || st[0].Changes != 5 {
		t.Fatalf("StagedResyncs = %+v, want one resync of 2 parts and 5 changes", st)
	}
	got, err := r.Commit(parts[2], time.Time{})
	if err != nil {
		t.Fatalf("Commit: %v", err)
	}
	if got != rev+1 || s.Revision("c") != rev+1 {
		t.Fatalf("Commit = revision %d (store %d), want %d", got, s.Revision("c"), rev+1)
	}
	if want, have := replaceAllDump(t, parts), dump(&s.Snapshot("c").View); have != want {
		t.Fatalf("after the resync:\n%s\nwant what one replace_all batch gives:\n%s", have, want)
	}
	if st := s.StagedResyncs(); len(st) != 0 {
		t.Fatalf("the stage outlived its commit: %+v", st)
	}
	if _, err := r.Commit(nil, time.Time{}); err == nil {
		t.Fatal("a second Commit was accepted")
	}
}

func TestResyncRefusalsChangeNothing(t *testing.T) {
	tests := []struct {
		name  string
		parts [][]Change // all but the last are added; the last is committed
		index int
		field string
		msg   string
	}{
		{"a dangling reference across parts",
			[][]Change{{node("n1"), queue("q", "")}, {job("ns", "j", "q")}, {pendingTask("ns", "t", "missing")}},
			3, "changes[3].task.job", "does not exist"},
		{"a bad name in a later part",
			[][]Change{{node("n1")}, {node("n2"), node("")}, {}},
			2, "changes[2].node.name", "must not be empty"},
		{"a delete",
			[][]Change{{node("n1")}, {del(KindNode, "", "old-n")}},
			1, "changes[1].delete", "not allowed in a resync"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			rev := oldCluster(t, s)
			before := dump(&s.Snapshot("c").View)
			r, err := s.BeginResync("c")
			if err != nil {
				t.Fatal(err)
			}
			last := len(tt.parts) - 1
			for _, p := range tt.parts[:last] {
				if err = r.Add(p); err != nil {
					break
				}
			}
			if err == nil {
				_, err = r.Commit(tt.parts[last], time.Time{})
			}
			wantValidation(t, err, tt.index, tt.field, tt.msg)
			if got := dump(&s.Snapshot("c").View); got != before || s.Revision("c") != rev {
				t.Fatalf("a refused resync changed the cluster (revision %d):\n%s", s.Revision("c"), got)
			}
			if st := s.StagedResyncs(); len(st) != 0 {
				t.Fatalf("a refused resync left its stage: %+v", st)
			}
			if err := r.Add([]Change{node("x")}); err == nil {
				t.Fatal("a refused resync took another part")
			}
		})
	}
}

func TestResyncAbortKeepsTheOldState(t *testing.T) {
	s := New()
	rev := oldCluster(t, s)
	before := dump(&s.Snapshot("c").View)
	r, _ := s.BeginResync("c")
	if err := r.Add(newClusterParts()[0]); err != nil {
		t.Fatal(err)
	}
	if err := r.Abort(); err != nil {
		t.Fatal(err)
	}
	if got := dump(&s.Snapshot("c").View); got != before || s.Revision("c") != rev {
		t.Fatalf("an aborted resync changed the cluster:\n%s", got)
	}
	if st := s.StagedResyncs(); len(st) != 0 {
		t.Fatalf("an aborted resync left its stage: %+v", st)
	}
	if _, err := r.Commit(nil, time.Time{}); err == nil {
		t.Fatal("an aborted resync committed")
	}
}

// fanout is a replicated log of a leader and a follower: every op is encoded, then applied
// to both, as raft would. sizes records each op's encoded size.
type fanout struct {
	leader, follower *Store
	sizes            []int
	err              error
}

func (f *fanout) CheckLeader() error { return f.err }

func (f *fanout) Replicate(op *Op) (*OpResult, error) {
	data, err := MarshalOp(op)
	if err != nil {
		return nil, err
	}
	f.sizes = append(f.sizes, len(data))
	for _, s := range []*Store{f.follower, f.leader} {
		cp, err := UnmarshalOp(data)
		if err != nil {
			return nil, err
		}
		if s == f.leader {
			return s.ApplyOp(cp), nil
		}
		s.ApplyOp(cp)
	}
	return nil, errors.New("unreachable")
}

func replicatedPair(t *testing.T) (*Store, *Store, *fanout) {
	t.Helper()
	leader, follower := New(), New()
	f := &fanout{leader: leader, follower: follower}
	leader.SetReplicator(f)
	follower.SetReplicator(&fanout{err: &NotLeaderError{LeaderID: "leader"}})
	if err := leader.TakeLead(); err != nil {
		t.Fatal(err)
	}
	return leader, follower, f
}

// bigParts is a cluster of n tasks (and their job, queue and nodes) in parts of size each.
func bigParts(n, size int) [][]Change {
	all := []Change{queue("q", ""), job("ns", "j", "q")}
	for i := 0; i < n/10; i++ {
		all = append(all, node(fmt.Sprintf("n%04d", i)))
	}
	for i := 0; i < n; i++ {
		all = append(all, runningTask("ns", fmt.Sprintf("t%06d", i), "j", fmt.Sprintf("n%04d", i/10)))
	}
	var parts [][]Change
	for len(all) > size {
		parts = append(parts, all[:size])
		all = all[size:]
	}
	return append(parts, all)
}

// TestReplicatedResyncIsOneOpPerPart resyncs through a log: each part is an op of bounded
// size, the follower ends with the leader's state, and no op is as large as the cluster.
func TestReplicatedResyncIsOneOpPerPart(t *testing.T) {
	leader, follower, f := replicatedPair(t)
	oldCluster(t, leader)
	ops := len(f.sizes)
	parts := bigParts(5000, 1000)
	r, err := leader.BeginResync("c")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts[:len(parts)-1] {
		if err := r.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	if got := follower.StagedResyncs(); len(got) != 1 || got[0].Parts != len(parts)-1 {
		t.Fatalf("the follower stages %+v, want %d parts", got, len(parts)-1)
	}
	rev, err := r.Commit(parts[len(parts)-1], time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.sizes) - ops; n != len(parts) {
		t.Fatalf("the resync took %d ops, want one per part (%d)", n, len(parts))
	}
	total, largest := 0, 0
	for _, n := range f.sizes[ops:] {
		total += n
		largest = max(largest, n)
	}
	if largest*3 > total {
		t.Fatalf("the largest op is %d bytes of %d: parts should bound it", largest, total)
	}
	if follower.Revision("c") != rev || dump(&follower.Snapshot("c").View) != dump(&leader.Snapshot("c").View) {
		t.Fatal("the follower's cluster differs from the leader's after the resync")
	}
	if len(follower.Snapshot("c").Tasks()) != 5000 || len(follower.StagedResyncs()) != 0 {
		t.Fatalf("the follower has %d tasks and stages %+v", len(follower.Snapshot("c").Tasks()), follower.StagedResyncs())
	}
}

// TestResyncSurvivesASnapshotHalfway restores a dump taken between two parts on a new
// replica, which then applies the rest of the log and ends like the leader.
func TestResyncSurvivesASnapshotHalfway(t *testing.T) {
	leader, follower, _ := replicatedPair(t)
	oldCluster(t, leader)
	parts := newClusterParts()
	r, _ := leader.BeginResync("c")
	if err := r.Add(parts[0]); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := follower.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	restored := New()
	if err := restored.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	if got := restored.StagedResyncs(); len(got) != 1 || got[0].Parts != 1 {
		t.Fatalf("the restored replica stages %+v, want the first part", got)
	}
	if restored.ID() != leader.ID() || leader.ID() == "" {
		t.Fatalf("the restored store's id is %q, want the leader's %q", restored.ID(), leader.ID())
	}
	// The rest of the log: the second part and the commit.
	rest := []*ResyncOp{
		{ID: r.id, Part: 1, Changes: parts[1]},
		{ID: r.id, Part: 2, Changes: parts[2], Commit: true},
	}
	for _, op := range rest {
		if res := restored.ApplyOp(&Op{Cluster: "c", Resync: op}); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	if want, got := replaceAllDump(t, parts), dump(&restored.Snapshot("c").View); got != want {
		t.Fatalf("the restored replica after the resync:\n%s\nwant:\n%s", got, want)
	}
}

// TestNewLeaderAbortsOrphanResyncs: a resync staged under a leader that lost the lead is
// dropped by the next one, and its writer's next step fails with ErrResyncLost rather than
// committing part of a cluster.
func TestNewLeaderAbortsOrphanResyncs(t *testing.T) {
	old, next, _ := replicatedPair(t)
	rev := oldCluster(t, old)
	r, _ := old.BeginResync("c")
	parts := newClusterParts()
	if err := r.Add(parts[0]); err != nil {
		t.Fatal(err)
	}
	// next becomes the leader; old follows it.
	g := &fanout{leader: next, follower: old}
	next.SetReplicator(g)
	next.setID(old.ID()) // SetReplicator clears it; the log had given it
	if err := next.TakeLead(); err != nil {
		t.Fatal(err)
	}
	if a, b := next.StagedResyncs(), old.StagedResyncs(); len(a)+len(b) != 0 {
		t.Fatalf("the orphan resync survived the new leader: %+v / %+v", a, b)
	}
	// The old writer's commit reaches the log after all (it leads again, say).
	res := next.ApplyOp(&Op{Cluster: "c", Resync: &ResyncOp{ID: r.id, Part: 1, Changes: parts[2], Commit: true}})
	if !errors.Is(res.Err, ErrResyncLost) {
		t.Fatalf("the commit of a lost resync = %v, want ErrResyncLost", res.Err)
	}
	if next.Revision("c") != rev || len(next.Snapshot("c").Tasks()) != 1 {
		t.Fatal("a lost resync changed the cluster")
	}
}

func TestStoreID(t *testing.T) {
	a, b := New(), New()
	if a.ID() == "" || a.ID() == b.ID() {
		t.Fatalf("two new stores have ids %q and %q, want different non-empty ids", a.ID(), b.ID())
	}
	leader, follower, f := replicatedPair(t)
	if leader.ID() == "" || follower.ID() != leader.ID() {
		t.Fatalf("replicated ids: leader %q, follower %q", leader.ID(), follower.ID())
	}
	// A later leader keeps the id the log gave.
	ops := len(f.sizes)
	id := leader.ID()
	if err := leader.TakeLead(); err != nil {
		t.Fatal(err)
	}
	if leader.ID() != id || len(f.sizes) != ops {
		t.Fatalf("TakeLead on a store with an id changed it to %q (%d ops)", leader.ID(), len(f.sizes)-ops)
	}
	// An id op never replaces an id.
	leader.ApplyOp(&Op{StoreID: "other"})
	if leader.ID() != id {
		t.Fatalf("a second id op changed the id to %q", leader.ID())
	}
	var buf bytes.Buffer
	if _, err := leader.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	restored := New()
	if err := restored.Restore(&buf); err != nil || restored.ID() != id {
		t.Fatalf("Restore: %v, id %q, want %q", err, restored.ID(), id)
	}
}

// TestResyncOpsRoundTrip encodes and decodes every kind of resync op.
func TestResyncOpsRoundTrip(t *testing.T) {
	ops := []*Op{
		{Cluster: "c", Resync: &ResyncOp{ID: 7, Part: 2, Changes: []Change{node("n"), pendingTask("ns", "t", "j")}}},
		{Cluster: "c", Resync: &ResyncOp{ID: 7, Part: 3, Commit: true, Limits: Limits{MaxObjects: 9, MaxTasksPerJob: 4}}},
		{Cluster: "c", Resync: &ResyncOp{ID: 7, Part: -1, Abort: true}},
		{StoreID: "abc"},
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
		if got.StoreID != op.StoreID || (op.Resync == nil) != (got.Resync == nil) || got.Batch != nil {
			t.Fatalf("round trip of %+v gave %+v", op, got)
		}
		if r := op.Resync; r != nil {
			g := got.Resync
			if g.ID != r.ID || g.Part != r.Part || g.Commit != r.Commit || g.Abort != r.Abort || g.Limits != r.Limits || len(g.Changes) != len(r.Changes) {
				t.Fatalf("round trip of %+v gave %+v", r, g)
			}
			for i := range r.Changes {
				if g.Changes[i].kind() != r.Changes[i].kind() {
					t.Fatalf("change %d: kind %v, want %v", i, g.Changes[i].kind(), r.Changes[i].kind())
				}
			}
		}
	}
}

// FuzzResync replaces a cluster with random changes in random parts, through a replicated
// store, and with one ReplaceAll batch on a plain one: both accept or refuse alike (the same
// error), end in the same state, and a refused resync changes nothing and leaves no stage.
func FuzzResync(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		plain := New()
		leader, _, _ := replicatedPair(t)
		for _, s := range []*Store{plain, leader} {
			if _, err := s.Apply("c", batch(node("old"), queue("q0", ""), job("ns", "j0", "q0"))); err != nil {
				t.Fatal(err)
			}
		}
		before := dump(&leader.Snapshot("c").View)
		var parts [][]Change
		var all []Change
		for _, b := range (&fuzzInput{data: data}).batches() {
			var part []Change
			for _, c := range b.Changes {
				if c.Delete == nil {
					part = append(part, c)
				}
			}
			parts = append(parts, part)
			all = append(all, part...)
		}
		if len(parts) == 0 {
			parts = [][]Change{nil}
		}
		wantRev, wantErr := plain.Apply("c", Batch{Changes: all, ReplaceAll: true})
		r, err := leader.BeginResync("c")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts[:len(parts)-1] {
			if err = r.Add(p); err != nil {
				break
			}
		}
		rev := leader.Revision("c")
		if err == nil {
			rev, err = r.Commit(parts[len(parts)-1], time.Time{})
		}
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || rev != wantRev {
			t.Fatalf("resync gave %d, %v; one ReplaceAll batch %d, %v", rev, err, wantRev, wantErr)
		}
		got := dump(&leader.Snapshot("c").View)
		if want := dump(&plain.Snapshot("c").View); got != want {
			t.Fatalf("after the resync:\n%s\nafter the batch:\n%s", got, want)
		}
		if err != nil && got != before {
			t.Fatalf("a refused resync changed the state:\n%s", got)
		}
		if st := leader.StagedResyncs(); len(st) != 0 {
			t.Fatalf("stages left: %+v", st)
		}
	})
}

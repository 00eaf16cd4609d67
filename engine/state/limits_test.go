package state

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

// wantObjects checks that the store's running count of a cluster's objects is what counting
// its rows gives.
func wantObjects(t *testing.T, s *Store, cluster string, want int) {
	t.Helper()
	info, _ := s.Snapshot(cluster).Info()
	counted := 0
	for _, n := range info.Objects {
		counted += n
	}
	if got := s.Objects(cluster); got != want || counted != want {
		t.Fatalf("cluster %q: Objects() = %d, rows counted = %d, want %d", cluster, got, counted, want)
	}
}

func TestObjectCountFollowsEveryWrite(t *testing.T) {
	for _, mode := range []string{"memory", "replicated"} {
		t.Run(mode, func(t *testing.T) {
			s := New()
			if mode == "replicated" {
				s, _ = replicated()
			}
			wantObjects(t, s, "c", 0)
			// A job naming "default" creates that queue too.
			mustApply(t, s, "c", node("n1"), node("n2"), job("ns", "j", "default"), pendingTask("ns", "t1", "j"), pendingTask("ns", "t2", "j"))
			wantObjects(t, s, "c", 6)
			// Upserts of existing objects add nothing; deletes remove; a job takes its tasks.
			mustApply(t, s, "c", node("n1"), pendingTask("ns", "t1", "j"), del(KindNode, "", "n2"))
			wantObjects(t, s, "c", 5)
			mustApply(t, s, "c", del(KindJob, "ns", "j"))
			wantObjects(t, s, "c", 2)
			// A refused batch changes nothing.
			if _, err := s.Apply("c", batch(node("n3"), pendingTask("ns", "t9", "nope"))); err == nil {
				t.Fatal("a dangling task was accepted")
			}
			wantObjects(t, s, "c", 2)
			// replace_all makes the count the batch's.
			if _, err := s.Apply("c", Batch{ReplaceAll: true, Changes: []Change{node("a"), node("b"), node("c")}}); err != nil {
				t.Fatal(err)
			}
			wantObjects(t, s, "c", 3)
			// Clusters count apart, and a deleted cluster counts nothing.
			mustApply(t, s, "d", node("x"))
			wantObjects(t, s, "d", 1)
			if _, err := s.DeleteCluster("c"); err != nil {
				t.Fatal(err)
			}
			wantObjects(t, s, "c", 0)
			wantObjects(t, s, "d", 1)
		})
	}
}

func TestObjectCountSurvivesTxnRollbackAndRestore(t *testing.T) {
	s := New()
	mustApply(t, s, "c", node("n1"), job("ns", "j", "default"))
	_, err := s.Update("c", func(tx *Txn) error {
		if err := tx.Upsert(node("n2")); err != nil {
			return err
		}
		// Refused: taken back alone, and the count with it.
		if err := tx.Upsert(pendingTask("ns", "t", "missing")); err == nil {
			return errors.New("a dangling task was accepted")
		}
		return tx.Delete(Ref{Kind: KindNode, Name: "n1"})
	})
	if err != nil {
		t.Fatal(err)
	}
	wantObjects(t, s, "c", 3) // n2, j, default
	var buf bytes.Buffer
	if _, err := s.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	r := New()
	if err := r.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	wantObjects(t, r, "c", 3)
}

func wantLimit(t *testing.T, err error, limit, field string) {
	t.Helper()
	var le *LimitError
	if !errors.As(err, &le) || !errors.Is(err, ErrLimitExceeded) {
		t.Fatalf("error = %v (%T), want a *LimitError", err, err)
	}
	if le.Limit != limit || le.Where.Field != field {
		t.Fatalf("limit %q at %q (%s), want %q at %q", le.Limit, le.Where.Field, le.Where.Msg, limit, field)
	}
}

func TestLimitOnObjectsPerCluster(t *testing.T) {
	for _, mode := range []string{"memory", "replicated"} {
		t.Run(mode, func(t *testing.T) {
			s, l := New(), (*loopback)(nil)
			if mode == "replicated" {
				s, l = replicated()
			}
			lim := Limits{MaxObjects: 3}
			if _, err := s.Apply("c", Batch{Limits: lim, Changes: []Change{node("n1"), node("n2"), node("n3")}}); err != nil {
				t.Fatalf("up to the limit: %v", err)
			}
			ops := 0
			if l != nil {
				ops = l.ops
			}
			rev := s.Revision("c")
			_, err := s.Apply("c", Batch{Limits: lim, Changes: []Change{node("n4")}})
			wantLimit(t, err, LimitObjectsPerCluster, "changes")
			if s.Revision("c") != rev || (l != nil && l.ops != ops) {
				t.Fatal("a batch over the limit was applied, or reached the log")
			}
			// Replacing and deleting within the limit is fine, growing back to it too.
			if _, err := s.Apply("c", Batch{Limits: lim, Changes: []Change{node("n1"), del(KindNode, "", "n3"), node("n4")}}); err != nil {
				t.Fatalf("a batch that keeps the count: %v", err)
			}
			// With a lower limit, a batch that does not grow the cluster still applies.
			if _, err := s.Apply("c", Batch{Limits: Limits{MaxObjects: 1}, Changes: []Change{del(KindNode, "", "n4")}}); err != nil {
				t.Fatalf("a shrinking batch over a lowered limit: %v", err)
			}
			// A replace_all is measured by what it leaves.
			_, err = s.Apply("c", Batch{Limits: lim, ReplaceAll: true, Changes: []Change{node("a"), node("b"), node("c"), node("d")}})
			wantLimit(t, err, LimitObjectsPerCluster, "changes")
		})
	}
}

func TestLimitOnTasksPerJob(t *testing.T) {
	s, _ := replicated()
	lim := Limits{MaxTasksPerJob: 2}
	mustApply(t, s, "c", job("ns", "a", "default"), job("ns", "b", "default"))
	if _, err := s.Apply("c", Batch{Limits: lim, Changes: []Change{pendingTask("ns", "a1", "a"), pendingTask("ns", "a2", "a"), pendingTask("ns", "b1", "b")}}); err != nil {
		t.Fatal(err)
	}
	// Updating a job's tasks never counts against it.
	if _, err := s.Apply("c", Batch{Limits: lim, Changes: []Change{pendingTask("ns", "a1", "a"), pendingTask("ns", "a2", "a")}}); err != nil {
		t.Fatalf("updates of existing tasks: %v", err)
	}
	// The change that first grew the job over the limit is named.
	_, err := s.Apply("c", Batch{Limits: lim, Changes: []Change{pendingTask("ns", "b2", "b"), pendingTask("ns", "a3", "a")}})
	wantLimit(t, err, LimitTasksPerJob, "changes[1].task.job")
	// Moving a task into a full job counts too.
	_, err = s.Apply("c", Batch{Limits: lim, Changes: []Change{pendingTask("ns", "b1", "a")}})
	wantLimit(t, err, LimitTasksPerJob, "changes[0].task.job")
	// Without limits (older log entries), nothing is bounded.
	mustApply(t, s, "c", pendingTask("ns", "a3", "a"))
}

func TestLimitsTravelInTheLog(t *testing.T) {
	b := Batch{Limits: Limits{MaxObjects: 7, MaxTasksPerJob: 3}, Changes: []Change{node("n1")}}
	data, err := MarshalOp(&Op{Cluster: "c", Batch: &b})
	if err != nil {
		t.Fatal(err)
	}
	op, err := UnmarshalOp(data)
	if err != nil {
		t.Fatal(err)
	}
	if op.Batch.Limits != b.Limits {
		t.Fatalf("limits after the log: %+v, want %+v", op.Batch.Limits, b.Limits)
	}
}

func TestRequireCluster(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, mode := range []string{"memory", "replicated"} {
		t.Run(mode, func(t *testing.T) {
			s, l := New(), (*loopback)(nil)
			if mode == "replicated" {
				s, l = replicated()
			}
			ops := func() int {
				if l == nil {
					return 0
				}
				return l.ops
			}
			before := ops()
			if _, err := s.SetConfig("ghost", &ConfigOp{Text: "x", Now: now, RequireCluster: true}); !errors.Is(err, ErrClusterNotFound) {
				t.Fatalf("config of an unknown cluster = %v", err)
			}
			p := &Plan{ID: "ghost-r0-1", Seq: 1, State: PlanProposed, CreatedAt: now, ExpiresAt: now.Add(time.Minute)}
			if _, err := s.ApplyPlan("ghost", &PlanOp{Action: PlanPropose, Plan: p, Now: now, RequireCluster: true}); !errors.Is(err, ErrClusterNotFound) {
				t.Fatalf("plan of an unknown cluster = %v", err)
			}
			if ops() != before || s.Snapshot("ghost").Exists() || len(s.ClusterNames()) != 0 {
				t.Fatalf("a refused op left something: %d ops, names %v", ops()-before, s.ClusterNames())
			}
			// Checked when the op applies too (a delete may come first in the log).
			if res := s.ApplyOp(&Op{Cluster: "ghost", Config: &ConfigOp{Text: "x", Now: now, RequireCluster: true}}); !errors.Is(res.Err, ErrClusterNotFound) {
				t.Fatalf("applied config op = %+v", res)
			}
			mustApply(t, s, "real", node("n1"))
			if _, err := s.SetConfig("real", &ConfigOp{Text: "x", Now: now, RequireCluster: true}); err != nil {
				t.Fatal(err)
			}
			p.ID = "real-r1-1"
			if _, err := s.ApplyPlan("real", &PlanOp{Action: PlanPropose, Plan: p, Now: now, RequireCluster: true}); err != nil {
				t.Fatal(err)
			}
			// Without RequireCluster (ops logged before it), a config still creates a cluster.
			if _, err := s.SetConfig("legacy", &ConfigOp{Text: "x", Now: now}); err != nil || !s.Snapshot("legacy").Exists() {
				t.Fatalf("legacy config op: %v", err)
			}
		})
	}
}

func TestExistsIsInfo(t *testing.T) {
	s := New()
	mustApply(t, s, "a", node("n"))
	if _, err := s.SetConfig("b", &ConfigOp{Text: "x", Now: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"a", "b", "c", "a1"} {
		_, info := s.Snapshot(c).Info()
		if got := s.Snapshot(c).Exists(); got != info {
			t.Errorf("%s: Exists() = %v, Info says %v", c, got, info)
		}
	}
	if !s.Snapshot("a").Exists() || s.Snapshot("c").Exists() {
		t.Fatal("Exists is wrong")
	}
}

// A chunked resync is held to the limits at its commit, like a replace_all batch, on every
// replica (the limits travel with the commit op); a refused commit leaves the old cluster and
// no stage, and staged parts never count as the cluster's objects.
func TestResyncLimits(t *testing.T) {
	for _, mode := range []string{"memory", "replicated"} {
		t.Run(mode, func(t *testing.T) {
			s := New()
			if mode == "replicated" {
				s, _ = replicated()
			}
			rev := mustApply(t, s, "c", node("old"))
			resync := func(lim Limits, parts ...[]Change) error {
				t.Helper()
				r, err := s.BeginResync("c")
				if err != nil {
					t.Fatal(err)
				}
				r.SetLimits(lim)
				for _, p := range parts[:len(parts)-1] {
					if err := r.Add(p); err != nil {
						t.Fatalf("Add: %v", err)
					}
				}
				wantObjects(t, s, "c", 1)
				_, err = r.Commit(parts[len(parts)-1], time.Unix(1, 0))
				return err
			}
			err := resync(Limits{MaxObjects: 3}, []Change{node("a"), node("b")}, []Change{node("c"), node("d")})
			wantLimit(t, err, LimitObjectsPerCluster, "changes")
			err = resync(Limits{MaxTasksPerJob: 1},
				[]Change{job("ns", "j", "default"), pendingTask("ns", "t1", "j")}, []Change{pendingTask("ns", "t2", "j")})
			wantLimit(t, err, LimitTasksPerJob, "changes[1].task.job") // the first change that grew the job, across parts
			if s.Revision("c") != rev || len(s.StagedResyncs()) != 0 {
				t.Fatalf("a refused resync changed the cluster (revision %d) or left a stage %+v", s.Revision("c"), s.StagedResyncs())
			}
			wantObjects(t, s, "c", 1)
			if err := resync(Limits{MaxObjects: 3}, []Change{node("a"), node("b")}, []Change{node("c")}); err != nil {
				t.Fatalf("a resync up to the limit: %v", err)
			}
			wantObjects(t, s, "c", 3)
		})
	}
}

// A dump taken while a resync is staged restores the cluster's object count without the
// staged parts.
func TestObjectCountRestoredBesideAStage(t *testing.T) {
	s := New()
	mustApply(t, s, "c", node("n1"), node("n2"))
	r, err := s.BeginResync("c")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add([]Change{node("a"), node("b"), node("c")}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := s.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	restored := New()
	if err := restored.Restore(&buf); err != nil {
		t.Fatal(err)
	}
	if len(restored.StagedResyncs()) != 1 {
		t.Fatalf("stages after restore: %+v", restored.StagedResyncs())
	}
	wantObjects(t, restored, "c", 2)
}

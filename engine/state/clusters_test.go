package state

import (
	"errors"
	"reflect"
	"slices"
	"testing"
)

func TestClusterInfoAndNames(t *testing.T) {
	s := New()
	if _, ok := s.Snapshot("c").Info(); ok {
		t.Fatal("a cluster never written exists")
	}
	// A configuration alone makes a cluster exist, at revision 0.
	if _, err := s.SetConfig("cfg-only", &ConfigOp{Text: "actions: \"allocate\"\n", Now: t0}); err != nil {
		t.Fatal(err)
	}
	base := planCluster(t, s)
	propose(t, s, newPlan(1, base, t0), t0)
	// A rejected first batch creates nothing.
	if _, err := s.Apply("rejected", batch(pendingTask("ns", "t", "missing"))); err == nil {
		t.Fatal("a dangling task was accepted")
	}
	if got, want := s.ClusterNames(), []string{"c", "cfg-only"}; !slices.Equal(got, want) {
		t.Fatalf("ClusterNames() = %v, want %v", got, want)
	}
	info, ok := s.Snapshot("cfg-only").Info()
	if !ok || info.Revision != 0 || info.Config == nil || info.Config.Version != 1 || info.Plans != 0 {
		t.Fatalf("cfg-only: %+v, %v", info, ok)
	}
	info, ok = s.Snapshot("c").Info()
	if !ok || info.Revision != base || info.Config != nil || info.Plans != 1 {
		t.Fatalf("c: %+v, %v", info, ok)
	}
	want := [KindHyperNode + 1]int{KindNode: 1, KindQueue: 1, KindJob: 1, KindTask: 3}
	if info.Objects != want {
		t.Fatalf("c objects %v, want %v", info.Objects, want)
	}
}

// deletable is a cluster "c" with objects, plans and a configuration, beside clusters whose
// names share its prefix.
func deletable(t *testing.T, s *Store) {
	t.Helper()
	base := planCluster(t, s)
	propose(t, s, newPlan(1, base, t0), t0)
	if _, err := s.SetConfig("c", &ConfigOp{Text: "actions: \"allocate\"\n", Now: t0}); err != nil {
		t.Fatal(err)
	}
	mustApply(t, s, "c2", node("n1"), queue("q", ""))
	if _, err := s.SetConfig("c-x", &ConfigOp{Text: "actions: \"allocate\"\n", Now: t0}); err != nil {
		t.Fatal(err)
	}
}

// checkDeleted checks that nothing of "c" is left and that its neighbours are intact.
func checkDeleted(t *testing.T, s *Store) {
	t.Helper()
	v := s.Snapshot("c")
	if _, ok := v.Info(); ok {
		t.Fatal("the deleted cluster still exists")
	}
	if v.Revision() != 0 || len(v.Nodes()) != 0 || len(v.Tasks()) != 0 || len(v.Plans()) != 0 || v.PlanSeq() != 0 {
		t.Fatalf("left over: revision %d, %d nodes, %d tasks, %d plans, plan seq %d",
			v.Revision(), len(v.Nodes()), len(v.Tasks()), len(v.Plans()), v.PlanSeq())
	}
	if _, ok := v.Config(); ok {
		t.Fatal("the deleted cluster's configuration is left")
	}
	if got, want := s.ClusterNames(), []string{"c-x", "c2"}; !slices.Equal(got, want) {
		t.Fatalf("ClusterNames() = %v, want %v", got, want)
	}
	if len(s.Snapshot("c2").Nodes()) != 1 || s.Revision("c2") != 1 {
		t.Fatal("the delete touched another cluster")
	}
	if _, ok := s.Snapshot("c-x").Config(); !ok {
		t.Fatal("the delete touched another cluster's configuration")
	}
	if _, ok := s.ExpiredPlans(t0)["c"]; ok {
		t.Fatal("the deleted cluster still reports plan expiries")
	}
}

func TestDeleteCluster(t *testing.T) {
	s := New()
	deletable(t, s)
	info, err := s.DeleteCluster("c")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "c" || info.Revision != 1 || info.Objects[KindTask] != 3 || info.Plans != 1 || info.Config == nil {
		t.Fatalf("deleted %+v", info)
	}
	checkDeleted(t, s)
	if _, err := s.DeleteCluster("c"); !errors.Is(err, ErrClusterNotFound) {
		t.Fatalf("second delete = %v, want ErrClusterNotFound", err)
	}
	if _, err := s.DeleteCluster(""); err == nil {
		t.Fatal("an empty cluster name was accepted")
	}
	// The cluster starts again from revision 1, with none of its old objects.
	if rev := mustApply(t, s, "c", node("n9")); rev != 1 {
		t.Fatalf("revision after the delete = %d, want 1", rev)
	}
	if _, ok := s.Snapshot("c").Node("n1"); ok {
		t.Fatal("an old node came back")
	}
}

func TestReplicatedDeleteCluster(t *testing.T) {
	s, l := replicated()
	deletable(t, s)
	ops := l.ops
	if _, err := s.DeleteCluster("nope"); !errors.Is(err, ErrClusterNotFound) || l.ops != ops {
		t.Fatalf("delete of an unknown cluster = %v, %d ops in the log (want none)", err, l.ops-ops)
	}
	if _, err := s.DeleteCluster("c"); err != nil || l.ops != ops+1 {
		t.Fatalf("delete = %v, %d ops in the log, want 1", err, l.ops-ops)
	}
	checkDeleted(t, s)
	// A delete that reaches the log after the cluster is gone is refused alike everywhere.
	if res := s.ApplyOp(&Op{Cluster: "c", DeleteCluster: true}); !errors.Is(res.Err, ErrClusterNotFound) {
		t.Fatalf("late delete = %+v", res)
	}
	l.err = &NotLeaderError{LeaderID: "n2"}
	if _, err := s.DeleteCluster("c2"); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("delete on a follower = %v", err)
	}
	op := &Op{Cluster: "c", DeleteCluster: true}
	data, err := MarshalOp(op)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalOp(data)
	if err != nil || !reflect.DeepEqual(got, op) {
		t.Fatalf("round trip: %+v, %v", got, err)
	}
	if res := New().ApplyOp(&Op{Cluster: "c", DeleteCluster: true, Config: &ConfigOp{}}); res.Err == nil {
		t.Fatal("an op with two parts was applied")
	}
}

func TestConfigEtag(t *testing.T) {
	const a, b = "actions: \"allocate\"\n", "actions: \"enqueue, allocate\"\n"
	def := ConfigEtag(0, "default text")
	for _, replicate := range []bool{false, true} {
		s := New()
		var l *loopback
		if replicate {
			s, l = replicated()
		}
		// Against the default: the op's DefaultEtag stands for it.
		if _, err := s.SetConfig("c", &ConfigOp{Text: a, IfEtag: ConfigEtag(0, "older default"), DefaultEtag: def}); !errors.Is(err, ErrConfigEtagMismatch) {
			t.Fatalf("stale default etag: %v", err)
		}
		sc, err := s.SetConfig("c", &ConfigOp{Text: a, IfEtag: def, DefaultEtag: def})
		if err != nil {
			t.Fatal(err)
		}
		first := sc.Etag()
		if first == def || first != ConfigEtag(1, a) {
			t.Fatalf("etag %q", first)
		}
		// The same text again is a new version, with a new etag.
		sc, err = s.SetConfig("c", &ConfigOp{Text: a, IfEtag: first})
		if err != nil || sc.Etag() == first {
			t.Fatalf("second write: %+v, %v", sc, err)
		}
		var ee *ConfigEtagError
		_, err = s.SetConfig("c", &ConfigOp{Text: b, IfEtag: first, DefaultEtag: def})
		if !errors.As(err, &ee) || ee.Have != sc.Etag() || ee.Want != first {
			t.Fatalf("stale etag: %v", err)
		}
		if got, _ := s.Snapshot("c").Config(); got.Version != 2 || got.Text != a {
			t.Fatalf("a refused op changed the configuration: %+v", got)
		}
		// An empty etag updates unconditionally.
		if _, err := s.SetConfig("c", &ConfigOp{Text: b}); err != nil {
			t.Fatal(err)
		}
		if replicate {
			// Stale etags never reached the log; the check also runs when an op applies, so
			// one that was current when it was sent but no longer is when it applies fails.
			if l.ops != 3 {
				t.Fatalf("%d ops in the log, want 3", l.ops)
			}
			res := s.ApplyOp(&Op{Cluster: "c", Config: &ConfigOp{Text: a, IfEtag: sc.Etag()}})
			if !errors.Is(res.Err, ErrConfigEtagMismatch) {
				t.Fatalf("apply of a stale op: %+v", res)
			}
		}
	}
	// Versions start again after a delete; the digest keeps an old etag from matching.
	s := New()
	old, _ := s.SetConfig("c", &ConfigOp{Text: a})
	if _, err := s.DeleteCluster("c"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConfig("c", &ConfigOp{Text: b}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetConfig("c", &ConfigOp{Text: a, IfEtag: old.Etag()}); !errors.Is(err, ErrConfigEtagMismatch) {
		t.Fatalf("an etag from before the delete matched: %v", err)
	}
}

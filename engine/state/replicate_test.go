package state

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// loopback is a Replicator whose log is the wire encoding alone: it encodes each op, decodes
// it and applies the copy, as a one-node raft log does. ops counts the ops it carried.
type loopback struct {
	s   *Store
	ops int
	err error
}

func (l *loopback) CheckLeader() error { return l.err }

func (l *loopback) Replicate(op *Op) (*OpResult, error) {
	data, err := MarshalOp(op)
	if err != nil {
		return nil, err
	}
	cp, err := UnmarshalOp(data)
	if err != nil {
		return nil, err
	}
	l.ops++
	return l.s.ApplyOp(cp), nil
}

func replicated() (*Store, *loopback) {
	s := New()
	l := &loopback{s: s}
	s.SetReplicator(l)
	return s, l
}

func TestReplicatedApplyChecksBeforeTheLog(t *testing.T) {
	s, l := replicated()
	mustApply(t, s, "c", node("n1"), queue("q", ""), job("ns", "j", "q"), pendingTask("ns", "t", "j"))
	if l.ops != 1 {
		t.Fatalf("%d ops in the log, want 1", l.ops)
	}
	_, err := s.Apply("c", batch(node("n2"), pendingTask("ns", "u", "missing")))
	wantValidation(t, err, 1, "changes[1].task.job", "does not exist")
	if _, err := s.Apply("", batch(node("n2"))); err == nil {
		t.Fatal("an empty cluster name was accepted")
	}
	if l.ops != 1 {
		t.Fatalf("refused batches reached the log: %d ops", l.ops)
	}
	if _, ok := s.Snapshot("c").Node("n2"); ok || s.Revision("c") != 1 {
		t.Fatal("a refused batch changed the store")
	}
	if _, err := s.Update("c", func(*Txn) error { return nil }); !errors.Is(err, ErrNotReplicable) {
		t.Fatalf("Update = %v, want ErrNotReplicable", err)
	}
	l.err = &NotLeaderError{LeaderID: "n2", Leader: "127.0.0.1:1"}
	if _, err := s.Apply("c", batch(node("n3"))); !errors.Is(err, ErrNotLeader) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("Apply on a follower = %v", err)
	}
	if _, err := s.CommitPlan("c", &PlanCommit{}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("CommitPlan on a follower = %v", err)
	}
	if err := s.CheckWritable(); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("CheckWritable = %v", err)
	}
	if l.ops != 1 {
		t.Fatalf("a follower's writes reached the log: %d ops", l.ops)
	}
}

// TestCommitPlanAlike commits the same plan on a plain and a replicated store.
func TestCommitPlanAlike(t *testing.T) {
	setup := func(s *Store) uint64 {
		n := Change{Node: &api.Node{Name: "n1", Allocatable: api.Resource{MilliCPU: 2000}, Devices: []api.Device{{ID: "g0", Type: "gpu"}}}}
		mustApply(t, s, "c", n, node("n2"), queue("q", ""), job("ns", "j", "q"),
			Change{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j", Status: api.Pending, Resources: api.Resource{MilliCPU: 1500}}},
			Change{Task: &api.Task{Namespace: "ns", Name: "b", Job: "j", Status: api.Pending, Resources: api.Resource{MilliCPU: 1500}}},
			pendingTask("ns", "c", "j"), runningTask("ns", "r", "j", "n2"), pendingTask("ns", "d", "j"))
		base := s.Revision("c")
		mustApply(t, s, "c", pendingTask("ns", "d", "j")) // changed since the base
		return base
	}
	plain := New()
	repl, l := replicated()
	base := setup(plain)
	setup(repl)
	pc := &PlanCommit{BaseRevision: base, Decisions: []PlanDecision{
		{Kind: Bind, Task: "ns/a", Node: "n1", DeviceIDs: []string{"g0"}},
		{Kind: Bind, Task: "ns/b", Node: "n1"},
		{Kind: Bind, Task: "ns/c", Node: "nx"},
		{Kind: Bind, Task: "ns/d", Node: "n2"},
		{Kind: Evict, Task: "ns/r", Node: "n2"},
		{Kind: Evict, Task: "ns/gone", Node: "n2"},
	}, Phases: []PhaseChange{{Job: "ns/j", Phase: api.JobRunning}}}
	want := []string{
		"",
		"node n1 has no room for task ns/b: insufficient cpu",
		"node nx no longer exists",
		"task ns/d changed since the plan's revision",
		"",
		"task ns/gone no longer exists",
	}
	for _, s := range []*Store{plain, repl} {
		out, err := s.CommitPlan("c", pc)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(out.Rejected, want) || out.Revision != base+2 {
			t.Fatalf("outcome %+v, want rejections %q at revision %d", out, want, base+2)
		}
		v := s.Snapshot("c")
		if a, _ := v.Task("ns/a"); a.Status != api.Bound || a.Node != "n1" || !reflect.DeepEqual(a.DeviceIDs, []string{"g0"}) {
			t.Fatalf("task a = %+v", a)
		}
		if r, _ := v.Task("ns/r"); r.Status != api.Releasing {
			t.Fatalf("task r = %+v", r)
		}
		if j, _ := v.Job("ns/j"); j.Phase != api.JobRunning {
			t.Fatalf("job = %+v", j)
		}
	}
	if dump(&plain.Snapshot("c").View) != dump(&repl.Snapshot("c").View) {
		t.Fatal("the plain and the replicated store differ")
	}
	if l.ops != 3 {
		t.Fatalf("%d ops in the log, want 3", l.ops)
	}
}

func TestOpEncoding(t *testing.T) {
	created := time.Date(2026, 5, 6, 7, 8, 9, 10, time.UTC)
	op := &Op{Cluster: "c", Batch: &Batch{ReplaceAll: true, Changes: []Change{
		{Node: &api.Node{Name: "n", Allocatable: api.Resource{MilliCPU: 1, Memory: 2, Scalars: map[string]float64{"g": 3}, MaxTaskNum: 4},
			Taints: []api.Taint{{Key: "k", Effect: "NoSchedule"}}, Devices: []api.Device{{ID: "d", Memory: 1.5}},
			NumaTopology: numaTopology()}},
		{Job: &api.Job{Namespace: "ns", Name: "j", Queue: "q", CreatedAt: created, NetworkTopology: &api.NetworkTopology{}}},
		{Task: &api.Task{Namespace: "ns", Name: "t", Job: "j", Guaranteed: true, Affinity: &api.Affinity{NodeRequired: []api.NodeSelectorTerm{{}}}}},
		{Delete: &Ref{Kind: KindTask, Namespace: "ns", Name: "old"}},
	}}}
	data, err := MarshalOp(op)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalOp(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, op) {
		t.Fatalf("round trip:\n%+v\nwant:\n%+v", got.Batch.Changes, op.Batch.Changes)
	}
	for _, bad := range [][]byte{nil, {0}, {opFormat}, {opFormat, 1, 2, 3}} {
		if _, err := UnmarshalOp(bad); err == nil {
			t.Errorf("UnmarshalOp(%v) accepted", bad)
		}
	}
}

func TestDumpRestore(t *testing.T) {
	s := New()
	mustApply(t, s, "a", node("n1"), node("n2"), queue("q", ""), queue("q2", "q"), job("ns", "j", "q"),
		runningTask("ns", "t1", "j", "n1"), pendingTask("ns", "t2", "j"), hyper("h1", 1, "n1", "n2"), hyper("h2", 2, "h1"),
		Change{PriorityClass: &api.PriorityClass{Name: "hi", Value: 9}},
		Change{Quota: &api.NamespaceQuota{Namespace: "ns"}},
		Change{Budget: &api.DisruptionBudget{Namespace: "ns", Name: "b", MinAvailable: "50%"}})
	mustApply(t, s, "a", pendingTask("ns", "t3", "j"))
	mustApply(t, s, "b", node("x"), Change{Node: &api.Node{Name: "numa", NumaTopology: numaTopology()}},
		Change{Job: &api.Job{Namespace: "ns", Name: "g", Queue: "default"}},
		Change{Task: &api.Task{Namespace: "ns", Name: "g", Job: "g", Status: api.Running, Node: "numa", Guaranteed: true}})
	var buf bytes.Buffer
	if _, err := s.Dump().WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	old := s.Snapshot("a")
	r := New()
	mustApply(t, r, "gone", node("z"))
	if err := r.Restore(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"a", "b"} {
		if got, want := dump(&r.Snapshot(c).View), dump(&s.Snapshot(c).View); got != want {
			t.Fatalf("cluster %s restored:\n%s\nwant:\n%s", c, got, want)
		}
		if r.Revision(c) != s.Revision(c) {
			t.Fatalf("cluster %s at revision %d, want %d", c, r.Revision(c), s.Revision(c))
		}
	}
	if got := r.Clusters(); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("clusters after restore: %v", got)
	}
	// Fields the name-only dump does not show come back too: NUMA topology and guaranteed.
	if n, _ := r.Snapshot("b").Node("numa"); n == nil || !reflect.DeepEqual(n.NumaTopology, numaTopology()) {
		t.Fatalf("restored NUMA topology: %+v", n)
	}
	if g, _ := r.Snapshot("b").Task("ns/g"); g == nil || !g.Guaranteed {
		t.Fatalf("restored guaranteed task: %+v", g)
	}
	// Modify revisions survive: t1 is unchanged since revision 1, t3 is not.
	out, err := r.CommitPlan("a", &PlanCommit{BaseRevision: 1, Decisions: []PlanDecision{
		{Kind: Evict, Task: "ns/t1", Node: "n1"}, {Kind: Bind, Task: "ns/t3", Node: "n2"},
	}})
	if err != nil || out.Rejected[0] != "" || !strings.Contains(out.Rejected[1], "changed since") {
		t.Fatalf("commit after restore: %+v, %v", out, err)
	}
	// The restored indexes work: deleting a node still in a hypernode is refused.
	_, err = r.Apply("a", batch(del(KindNode, "", "n2")))
	wantValidation(t, err, 0, "changes[0].delete", "")
	if len(old.Nodes()) != 2 {
		t.Fatal("a snapshot taken before Restore changed")
	}
	// A truncated dump is refused and leaves the store alone.
	before := dump(&r.Snapshot("a").View)
	if err := r.Restore(bytes.NewReader(buf.Bytes()[:buf.Len()/2])); err == nil {
		t.Fatal("a truncated dump was restored")
	}
	if dump(&r.Snapshot("a").View) != before {
		t.Fatal("a failed restore changed the store")
	}
}

func TestCommitPlanDeviceConflicts(t *testing.T) {
	gpu := func(id string) api.Device { return api.Device{ID: id, Type: "gpu", Memory: 80, Cores: 100} }
	s, _ := replicated()
	whole := []api.DeviceRequest{{Type: "gpu", Count: 1}}
	share := func(mem float64) []api.DeviceRequest { return []api.DeviceRequest{{Type: "gpu", Memory: mem}} }
	pending := func(name string, req []api.DeviceRequest) Change {
		return Change{Task: &api.Task{Namespace: "ns", Name: name, Job: "j", Status: api.Pending, Devices: req}}
	}
	mustApply(t, s, "c", Change{Node: &api.Node{Name: "n", Devices: []api.Device{gpu("g0"), gpu("g1"), gpu("g2")}}},
		queue("q", ""), job("ns", "j", "q"),
		Change{Task: &api.Task{Namespace: "ns", Name: "w", Job: "j", Status: api.Running, Node: "n", Devices: whole, DeviceIDs: []string{"g0"}}},
		Change{Task: &api.Task{Namespace: "ns", Name: "s", Job: "j", Status: api.Running, Node: "n", Devices: share(50), DeviceIDs: []string{"g1"}}},
		pending("a", whole), pending("b", share(40)), pending("c", share(20)), pending("d", whole), pending("e", whole))
	out, err := s.CommitPlan("c", &PlanCommit{BaseRevision: s.Revision("c"), Decisions: []PlanDecision{
		{Kind: Bind, Task: "ns/a", Node: "n", DeviceIDs: []string{"g0"}},
		{Kind: Bind, Task: "ns/b", Node: "n", DeviceIDs: []string{"g1"}},
		{Kind: Bind, Task: "ns/c", Node: "n", DeviceIDs: []string{"g1"}},
		{Kind: Bind, Task: "ns/d", Node: "n", DeviceIDs: []string{"g1"}},
		{Kind: Bind, Task: "ns/e", Node: "n", DeviceIDs: []string{"g9"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"device g0 on node n is held whole by task ns/w",
		"device g1 on node n has no room for task ns/b: insufficient memory",
		"",
		"device g1 on node n is held by task ns/c",
		"device g9 no longer exists on node n",
	}
	if !reflect.DeepEqual(out.Rejected, want) {
		t.Fatalf("rejections:\n%q\nwant:\n%q", out.Rejected, want)
	}
}

// numaTopology is a two-cell topology with every field set, for encoding round trips.
func numaTopology() *api.NumaTopology {
	return &api.NumaTopology{
		TopologyManagerPolicy: api.TopologyPolicySingleNumaNode, CPUManagerPolicy: api.CPUManagerPolicyStatic,
		ReservedMilliCPU: 1500,
		Cells: []api.NumaCell{
			{ID: 0, CPUs: []api.NumaCPU{{ID: 0, Socket: 0, Core: 0, Holder: "system"}, {ID: 1, Socket: 0, Core: 0}}},
			{ID: 1, CPUs: []api.NumaCPU{{ID: 2, Socket: 1, Core: 1, Holder: "ns/g"}, {ID: 3, Socket: 1, Core: 1}}},
		},
	}
}

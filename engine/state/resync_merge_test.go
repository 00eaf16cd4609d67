package state

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// serverFieldsReport is what a resource manager resends of the cluster committed() built:
// its nodes, queue, job and task, leaving every server-owned field unset but the task's
// Running status (it reports the task running, without its node or device ids).
func serverFieldsReport() [][]Change {
	gpus := []api.Device{{ID: "g0", Type: "gpu"}, {ID: "g1", Type: "gpu"}}
	return [][]Change{
		{{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j", Status: api.Running,
			Devices: []api.DeviceRequest{{Type: "gpu", Count: 1}}}}, job("ns", "j", "q")},
		{queue("q", "")},
		{{Node: &api.Node{Name: "n1", Devices: gpus}}},
	}
}

// serverFields describes the server-owned fields of committed()'s job and task.
func serverFields(t *testing.T, s *Store) string {
	t.Helper()
	v := s.Snapshot("c")
	j, ok1 := v.Job("ns/j")
	a, ok2 := v.Task("ns/a")
	if !ok1 || !ok2 {
		t.Fatalf("job or task missing:\n%s", dump(&v.View))
	}
	return fmt.Sprintf("job %s created %v | task %s on %q with %v started %v",
		j.Phase, j.CreatedAt, a.Status, a.Node, a.DeviceIDs, a.StartedAt)
}

// TestResyncKeepsServerOwnedFields: a resync in parts keeps a running job's phase and a bound
// task's node and device ids, and fills in new times with the commit's Now, as one replace_all
// batch does; through a log too, where the follower ends alike.
func TestResyncKeepsServerOwnedFields(t *testing.T) {
	parts := serverFieldsReport()
	plain := New()
	committed(t, plain)
	var all []Change
	for _, p := range parts {
		all = append(all, p...)
	}
	if _, err := plain.Apply("c", Batch{ReplaceAll: true, Now: at2, Changes: all}); err != nil {
		t.Fatal(err)
	}
	want := serverFields(t, plain)
	j, _ := plain.Snapshot("c").Job("ns/j")
	a, _ := plain.Snapshot("c").Task("ns/a")
	if j.Phase != api.JobRunning || !j.CreatedAt.Equal(at0) || a.Node != "n1" ||
		!reflect.DeepEqual(a.DeviceIDs, []string{"g0"}) || !a.StartedAt.Equal(at2) {
		t.Fatalf("replace_all itself lost server-owned fields: %s", want)
	}

	leader, follower, _ := replicatedPair(t)
	for _, tc := range []struct {
		name string
		s    *Store
	}{{"in memory", New()}, {"replicated", leader}} {
		committed(t, tc.s)
		r, err := tc.s.BeginResync("c")
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts[:len(parts)-1] {
			if err := r.Add(p); err != nil {
				t.Fatalf("%s: Add: %v", tc.name, err)
			}
		}
		if _, err := r.Commit(parts[len(parts)-1], at2); err != nil {
			t.Fatalf("%s: Commit: %v", tc.name, err)
		}
		if got := serverFields(t, tc.s); got != want {
			t.Errorf("%s: after the resync %s\nafter replace_all %s", tc.name, got, want)
		}
		if got, wantDump := dump(&tc.s.Snapshot("c").View), dump(&plain.Snapshot("c").View); got != wantDump {
			t.Errorf("%s: after the resync:\n%s\nafter replace_all:\n%s", tc.name, got, wantDump)
		}
	}
	if got := serverFields(t, follower); got != want {
		t.Errorf("follower: after the resync %s\nafter replace_all %s", got, want)
	}
}

// TestResyncPartsMergeWithoutATransaction: a part is checked without a write transaction,
// yet its jobs and tasks merge as at the commit: a running task that leaves its node unset
// is taken when the stored task is placed, and refused, at its index in the whole resync,
// when it is not.
func TestResyncPartsMergeWithoutATransaction(t *testing.T) {
	s := New()
	r, err := s.BeginResync("c") // a cluster never written: nothing stored to merge with
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Add([]Change{job("ns", "j", "q"), pendingTask("ns", "p", "j")}); err != nil {
		t.Fatalf("Add on an empty cluster: %v", err)
	}
	if err := r.Abort(); err != nil {
		t.Fatal(err)
	}

	committed(t, s)
	r, _ = s.BeginResync("c")
	parts := serverFieldsReport()
	if err := r.Add(parts[0]); err != nil {
		t.Fatalf("Add of a running task that keeps its stored node: %v", err)
	}
	err = r.Add([]Change{queue("q", ""), task("ns", "b", "j", "", api.Running)})
	wantValidation(t, err, 3, "changes[3].task.node", "must name its node")
	if st := s.StagedResyncs(); len(st) != 0 {
		t.Fatalf("a refused part left stages: %+v", st)
	}
}

// TestDeleteClusterDropsStagedResyncs: deleting a cluster drops the stages of its resyncs in
// progress, on every replica, and leaves other clusters' alone; the resync's next step fails
// with ErrResyncLost and nothing of it is applied.
func TestDeleteClusterDropsStagedResyncs(t *testing.T) {
	leader, follower, _ := replicatedPair(t)
	for _, tc := range []struct {
		name string
		s    *Store
	}{{"in memory", New()}, {"replicated", leader}} {
		oldCluster(t, tc.s)
		mustApply(t, tc.s, "other", node("x"))
		r, _ := tc.s.BeginResync("c")
		other, _ := tc.s.BeginResync("other")
		parts := newClusterParts()
		if err := r.Add(parts[0]); err != nil {
			t.Fatal(err)
		}
		if err := other.Add([]Change{node("y")}); err != nil {
			t.Fatal(err)
		}
		if _, err := tc.s.DeleteCluster("c"); err != nil {
			t.Fatalf("%s: DeleteCluster: %v", tc.name, err)
		}
		if st := tc.s.StagedResyncs(); len(st) != 1 || st[0].Cluster != "other" {
			t.Fatalf("%s: stages after the delete: %+v, want only other's", tc.name, st)
		}
		if tc.s == leader {
			if st := follower.StagedResyncs(); len(st) != 1 || st[0].Cluster != "other" {
				t.Fatalf("follower: stages after the delete: %+v, want only other's", st)
			}
		}
		if _, err := r.Commit(parts[1], at1); !errors.Is(err, ErrResyncLost) {
			t.Fatalf("%s: Commit after the delete = %v, want ErrResyncLost", tc.name, err)
		}
		if _, ok := tc.s.Snapshot("c").Info(); ok {
			t.Fatalf("%s: the deleted cluster exists again:\n%s", tc.name, dump(&tc.s.Snapshot("c").View))
		}
		if _, err := other.Commit(nil, at1); err != nil {
			t.Fatalf("%s: the other cluster's resync: %v", tc.name, err)
		}
		if got := dump(&tc.s.Snapshot("other").View); got != "node y\n" {
			t.Fatalf("%s: other after its resync:\n%s", tc.name, got)
		}
	}
}

// TestResyncOpCarriesNow: a resync op's Now travels through the log encoding.
func TestResyncOpCarriesNow(t *testing.T) {
	data, err := MarshalOp(&Op{Cluster: "c", Resync: &ResyncOp{ID: 7, Part: 2, Commit: true, Now: at1,
		Changes: []Change{node("n")}}})
	if err != nil {
		t.Fatal(err)
	}
	op, err := UnmarshalOp(data)
	if err != nil {
		t.Fatal(err)
	}
	r := op.Resync
	if r == nil || r.ID != 7 || r.Part != 2 || !r.Commit || !r.Now.Equal(at1) || len(r.Changes) != 1 {
		t.Fatalf("decoded %+v", op)
	}
}

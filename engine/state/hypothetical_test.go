package state

import (
	"errors"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

func TestHypotheticalLeavesTheStoreAlone(t *testing.T) {
	s := New()
	n1 := &api.Node{Name: "n1", Allocatable: *api.NewResource(map[string]float64{"cpu": 4})}
	rev, err := s.Apply("c", Batch{Changes: []Change{{Node: n1}, {Queue: &api.Queue{Name: "q", Weight: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	job := &api.Job{Name: "j", Namespace: "ns", Queue: "q", MinAvailable: 1}
	task := &api.Task{Name: "j-0", Namespace: "ns", Job: "j"}
	snap, err := s.Hypothetical("c", Batch{Changes: []Change{
		{Job: job}, {Task: task}, {Node: &api.Node{Name: "n2"}}, {Delete: &Ref{Kind: KindNode, Name: "n1"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if snap.Revision() != rev {
		t.Errorf("hypothetical view at revision %d, want the store's %d", snap.Revision(), rev)
	}
	if _, ok := snap.Task("ns/j-0"); !ok {
		t.Error("the view lacks the hypothetical task")
	}
	if _, ok := snap.Node("n1"); ok {
		t.Error("the view still has the removed node n1")
	}
	if got, ok := snap.Task("ns/j-0"); ok && got.Status != api.Pending {
		t.Errorf("hypothetical task status %v, want Pending (merged as a new task)", got.Status)
	}
	real := s.Snapshot("c")
	if real.Revision() != rev || len(real.Jobs()) != 0 || len(real.Tasks()) != 0 {
		t.Errorf("store changed: revision %d (want %d), %d jobs, %d tasks", real.Revision(), rev, len(real.Jobs()), len(real.Tasks()))
	}
	if _, ok := real.Node("n1"); !ok {
		t.Error("the store lost n1")
	}
	if _, ok := real.Node("n2"); ok {
		t.Error("the store gained the hypothetical n2")
	}
	// The store still takes writes, and the view does not see them.
	if _, err := s.Apply("c", Batch{Changes: []Change{{Node: &api.Node{Name: "n3"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Node("n3"); ok {
		t.Error("the hypothetical view sees a later write")
	}
}

func TestHypotheticalChecksLikeApply(t *testing.T) {
	s := New()
	if _, err := s.Apply("c", Batch{Changes: []Change{{Queue: &api.Queue{Name: "q", Weight: 1}}}}); err != nil {
		t.Fatal(err)
	}
	bad := Batch{Changes: []Change{
		{Queue: &api.Queue{Name: "q2", Weight: 1}},
		{Task: &api.Task{Name: "t", Namespace: "ns", Job: "missing"}},
	}}
	_, want := s.apply("c", bad, false)
	_, got := s.Hypothetical("c", bad)
	var gv, wv *ValidationError
	if !errors.As(got, &gv) || !errors.As(want, &wv) {
		t.Fatalf("Hypothetical: %v; Apply: %v; want *ValidationError from both", got, want)
	}
	if gv.Field != wv.Field || gv.Msg != wv.Msg {
		t.Errorf("Hypothetical refused %s: %s; Apply refuses %s: %s", gv.Field, gv.Msg, wv.Field, wv.Msg)
	}
	if _, err := s.Hypothetical("c", Batch{ReplaceAll: true}); err == nil {
		t.Error("a replace_all hypothetical batch was accepted")
	}
	if _, ok := s.Snapshot("c").Queue("q2"); ok {
		t.Error("a refused hypothetical batch left q2 in the store")
	}
}

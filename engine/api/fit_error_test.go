package api

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestFitErrorsSummary(t *testing.T) {
	fe := NewFitErrors()
	fe.Total = 5
	fe.SetNodeError("a", NewFitError("a", Unschedulable, "insufficient cpu"))
	fe.SetNodeError("b", NewFitError("b", Unschedulable, "insufficient cpu", "insufficient memory"))
	fe.SetNodeError("c", NewFitError("", UnschedulableAndUnresolvable, "node selector mismatch"))
	fe.SetNodeError("d", errors.New("plain"))
	if want := "1/5 nodes fit: 2 insufficient cpu, 1 insufficient memory, 1 node selector mismatch, 1 plain"; fe.Error() != want {
		t.Errorf("Error() = %q, want %q", fe.Error(), want)
	}
	if fe.Failed() != 4 || !fe.AnyRuledOut() || !fe.RuledOut("c") || fe.RuledOut("a") || fe.RuledOut("e") {
		t.Errorf("failed %d, ruled out a %v c %v e %v", fe.Failed(), fe.RuledOut("a"), fe.RuledOut("c"), fe.RuledOut("e"))
	}
	empty := NewFitErrors()
	empty.Total = 3
	empty.SetError("pre-predicate says no")
	if want := "0/3 nodes fit: pre-predicate says no"; empty.Error() != want || empty.AnyRuledOut() {
		t.Errorf("Error() = %q, want %q", empty.Error(), want)
	}
}

// TestFitTallyMatchesSetNodeError changes random nodes' failures in a tally and requires each
// snapshot to report what a FitErrors built node by node from the current failures reports,
// and to keep reporting it after the tally changed on.
func TestFitTallyMatchesSetNodeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	reasons := []string{"insufficient cpu", "insufficient memory", "taint", "selector"}
	current := map[string]*FitError{}
	var tally FitTally
	type kept struct {
		snap *FitErrors
		want string
		out  map[string]bool
	}
	var snaps []kept
	describe := func(fe *FitErrors) (string, map[string]bool) {
		out := map[string]bool{}
		for i := 0; i < 8; i++ {
			n := fmt.Sprintf("n%d", i)
			out[n] = fe.RuledOut(n)
		}
		return fmt.Sprintf("%s|%d|%v", fe.Error(), fe.Failed(), fe.Histogram()), out
	}
	for step := 0; step < 2000; step++ {
		node := fmt.Sprintf("n%d", rng.IntN(8))
		tally.Remove(current[node])
		delete(current, node)
		if rng.IntN(3) > 0 {
			code := Unschedulable
			if rng.IntN(4) == 0 {
				code = UnschedulableAndUnresolvable
			}
			var rs []string
			for _, r := range reasons {
				if rng.IntN(2) == 0 {
					rs = append(rs, r)
				}
			}
			current[node] = NewFitError(node, code, rs...)
			tally.Add(current[node])
		}
		ref := NewFitErrors()
		ref.Total = 8
		for n, fe := range current {
			ref.SetNodeError(n, fe)
		}
		wantText, wantOut := describe(ref)
		snap := tally.Snapshot(8)
		if gotText, gotOut := describe(snap); gotText != wantText || !reflect.DeepEqual(gotOut, wantOut) {
			t.Fatalf("step %d: snapshot %s %v, node by node %s %v", step, gotText, gotOut, wantText, wantOut)
		}
		if step%100 == 0 {
			snaps = append(snaps, kept{snap, wantText, wantOut})
		}
	}
	for i, k := range snaps {
		if gotText, gotOut := describe(k.snap); gotText != k.want || !reflect.DeepEqual(gotOut, k.out) {
			t.Errorf("snapshot %d changed after the tally moved on: %s, was %s", i, gotText, k.want)
		}
	}
}

// TestFitTallySnapshotIsCopiedOnWrite: recording on a snapshot changes neither the tally nor
// other snapshots.
func TestFitTallySnapshotIsCopiedOnWrite(t *testing.T) {
	var tally FitTally
	tally.Add(NewFitError("a", UnschedulableAndUnresolvable, "taint"))
	s1, s2 := tally.Snapshot(3), tally.Snapshot(3)
	s1.SetNodeError("b", NewFitError("b", UnschedulableAndUnresolvable, "selector"))
	if s2.Failed() != 1 || s2.RuledOut("b") || len(s2.Histogram()) != 1 || tally.Snapshot(3).RuledOut("b") {
		t.Errorf("a change to one snapshot showed in another or in the tally: %s", s2.Error())
	}
	if s1.Failed() != 2 || !s1.RuledOut("b") || !s1.RuledOut("a") {
		t.Errorf("the changed snapshot: %s", s1.Error())
	}
}

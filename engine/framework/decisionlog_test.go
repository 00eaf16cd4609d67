package framework

import (
	"fmt"
	"testing"
)

// TestDecisionLogKeepsOrder checks that the log gives back every decision in the order added,
// across chunk boundaries, with the room asked for, and is empty afterwards.
func TestDecisionLogKeepsOrder(t *testing.T) {
	for _, n := range []int{0, 1, firstChunk, firstChunk + 1, 3*maxChunk + 7} {
		var l decisionLog
		for i := 0; i < n; i++ {
			l.add(Decision{Kind: DecisionBind, Task: fmt.Sprint(i)})
		}
		got := l.take(3)
		if len(got) != n || cap(got) != n+3 {
			t.Fatalf("n=%d: len %d cap %d, want %d and %d", n, len(got), cap(got), n, n+3)
		}
		for i, d := range got {
			if d.Task != fmt.Sprint(i) {
				t.Fatalf("n=%d: decision %d is %q", n, i, d.Task)
			}
		}
		if again := l.take(0); again != nil {
			t.Fatalf("n=%d: log not emptied: %d left", n, len(again))
		}
	}
}

// TestDecisionLogExpected checks the log given an expected count: filled at least half, its
// one chunk is handed over (capacity the expected count); less than half, the decisions are
// copied at their exact length; beyond it, they go on in further chunks, in order.
func TestDecisionLogExpected(t *testing.T) {
	for _, c := range []struct{ expected, n, wantCap int }{
		{100, 100, 100}, {100, 50, 100}, {100, 49, 49}, {100, 101, 101}, {3 * maxChunk, 3 * maxChunk, 3 * maxChunk},
	} {
		var l decisionLog
		l.expect(c.expected)
		for i := 0; i < c.n; i++ {
			l.add(Decision{Kind: DecisionBind, Task: fmt.Sprint(i)})
		}
		got := l.take(0)
		if len(got) != c.n || cap(got) != c.wantCap {
			t.Fatalf("%+v: len %d cap %d", c, len(got), cap(got))
		}
		for i, d := range got {
			if d.Task != fmt.Sprint(i) {
				t.Fatalf("%+v: decision %d is %q", c, i, d.Task)
			}
		}
	}
}

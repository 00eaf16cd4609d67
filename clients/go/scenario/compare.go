package scenario

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Outcome is what a run produced, as recorded by the runner and read back
// from the server after the last cycle. Task and job names are
// "namespace/name".
type Outcome struct {
	// Binds holds every task bound during the run, by task; a task bound
	// more than once keeps its last bind.
	Binds map[string]Bind
	// Evictions lists every eviction of the run in order.
	Evictions []Eviction
	// Pipelined maps the tasks pipelined in the last cycle to their node.
	Pipelined map[string]string
	// JobPhases is the phase name (Pending, Inqueue, Running, Completed,
	// Unknown) of each job read after the run.
	JobPhases map[string]string
	// Queues holds the derived figures of each queue read after the run.
	Queues map[string]QueueAmounts
	// Explanations is the explanation summary of each job read after the run.
	Explanations map[string]string
}

// Bind is one bind decision that took effect.
type Bind struct {
	// Task is the task's full name.
	Task string
	// Job is the task's job's full name.
	Job string
	// Node is where the task was bound.
	Node string
	// DeviceIDs are the devices the bind assigned.
	DeviceIDs []string
	// Cycle is the cycle (from 0) that bound the task.
	Cycle int
}

// Eviction is one evict decision that took effect.
type Eviction struct {
	// Task is the victim's full name.
	Task string
	// Job is the victim's job's full name.
	Job string
	// Node is the node the victim left.
	Node string
	// Cycle is the cycle (from 0) that evicted the task.
	Cycle int
}

// Mismatch is the error Compare returns: every difference found, in the
// order of the expect keys (binds, bindCounts, pipelined, evicted,
// evictCounts, jobPhases, queues, deviceBinds, unschedulable) and, within
// a key, by name.
type Mismatch struct {
	// Diffs holds one sentence per difference, at least one.
	Diffs []string
}

// Error returns the first difference, with the number of further ones.
func (m *Mismatch) Error() string {
	if len(m.Diffs) == 1 {
		return m.Diffs[0]
	}
	if len(m.Diffs) == 2 {
		return m.Diffs[0] + " (and 1 more difference)"
	}
	return fmt.Sprintf("%s (and %d more differences)", m.Diffs[0], len(m.Diffs)-1)
}

// Compare checks an outcome against a scenario's expectations. It returns
// nil when everything listed in expect holds, and a *Mismatch otherwise.
// Keys of expect that are nil are not checked.
func Compare(expect *Expect, out *Outcome) error {
	if out == nil {
		out = &Outcome{}
	}
	var diffs []string
	add := func(format string, args ...any) { diffs = append(diffs, fmt.Sprintf(format, args...)) }

	if expect.Binds != nil {
		for _, t := range union(expect.Binds, out.Binds) {
			want, wanted := expect.Binds[t]
			got, bound := out.Binds[t]
			switch {
			case wanted && !bound:
				if want == AnyNode {
					add("binds: missing bind %s", t)
				} else {
					add("binds: missing bind %s (want %s)", t, want)
				}
			case !wanted && bound:
				add("binds: unexpected bind %s -> %s", t, got.Node)
			case want != AnyNode && want != got.Node:
				add("binds: %s bound to %s, want %s", t, got.Node, want)
			}
		}
	}

	if expect.BindCounts != nil {
		got := map[string]int{}
		for _, b := range out.Binds {
			got[b.Job]++
		}
		compareCounts("bindCounts", expect.BindCounts, got, add)
	}

	if expect.Pipelined != nil {
		for _, t := range union(expect.Pipelined, out.Pipelined) {
			want, wanted := expect.Pipelined[t]
			got, piped := out.Pipelined[t]
			switch {
			case wanted && !piped:
				if want == AnyNode {
					add("pipelined: missing pipeline of %s", t)
				} else {
					add("pipelined: missing pipeline of %s (want %s)", t, want)
				}
			case !wanted && piped:
				add("pipelined: unexpected pipeline of %s -> %s", t, got)
			case want != AnyNode && want != got:
				add("pipelined: %s pipelined to %s, want %s", t, got, want)
			}
		}
	}

	if expect.Evicted != nil {
		want := map[string]int{}
		for _, t := range expect.Evicted {
			want[t]++
		}
		got := map[string]int{}
		from := map[string]string{}
		for _, e := range out.Evictions {
			got[e.Task]++
			from[e.Task] = e.Node
		}
		for _, t := range union(want, got) {
			switch w, g := want[t], got[t]; {
			case g == 0:
				add("evicted: missing eviction of %s", t)
			case w == 0:
				add("evicted: unexpected eviction of %s (from %s)", t, from[t])
			case w != g:
				add("evicted: %s evicted %d times, want %d", t, g, w)
			}
		}
	}

	if expect.EvictCounts != nil {
		got := map[string]int{}
		for _, e := range out.Evictions {
			got[e.Job]++
		}
		compareCounts("evictCounts", expect.EvictCounts, got, add)
	}

	for _, j := range slices.Sorted(maps.Keys(expect.JobPhases)) {
		want := expect.JobPhases[j]
		got, ok := out.JobPhases[j]
		switch {
		case !ok:
			add("jobPhases: %s: phase unknown (job not read back), want %s", j, want)
		case got != want:
			add("jobPhases: %s is %s, want %s", j, got, want)
		}
	}

	for _, q := range slices.Sorted(maps.Keys(expect.Queues)) {
		want := expect.Queues[q]
		got, ok := out.Queues[q]
		if !ok {
			add("queues: %s: queue not read back", q)
			continue
		}
		compareAmounts("queues: "+q+" deserved", want.Deserved, got.Deserved, add)
		compareAmounts("queues: "+q+" allocated", want.Allocated, got.Allocated, add)
	}

	for _, t := range slices.Sorted(maps.Keys(expect.DeviceBinds)) {
		want := expect.DeviceBinds[t]
		b, ok := out.Binds[t]
		if !ok {
			add("deviceBinds: %s was not bound, want devices %s", t, fmtList(want))
			continue
		}
		w, g := slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(b.DeviceIDs))
		if !slices.Equal(w, g) {
			add("deviceBinds: %s got devices %s, want %s", t, fmtList(b.DeviceIDs), fmtList(want))
		}
	}

	for _, j := range slices.Sorted(maps.Keys(expect.Unschedulable)) {
		want := expect.Unschedulable[j]
		got, ok := out.Explanations[j]
		switch {
		case !ok || got == "":
			add("unschedulable: %s has no explanation, want one containing %q", j, want)
		case !strings.Contains(got, want):
			add("unschedulable: %s explanation %q does not contain %q", j, got, want)
		}
	}

	if len(diffs) == 0 {
		return nil
	}
	return &Mismatch{Diffs: diffs}
}

// compareCounts compares per-job counts; jobs missing from want must be 0.
func compareCounts(key string, want, got map[string]int, add func(string, ...any)) {
	for _, j := range union(want, got) {
		w, listed := want[j]
		g := got[j]
		switch {
		case !listed && g != 0:
			add("%s: %s got %d, want 0 (not listed)", key, j, g)
		case w != g:
			add("%s: %s got %d, want %d", key, j, g, w)
		}
	}
}

// compareAmounts compares each resource listed in want with got, to 0.1% or
// 1m, whichever is larger. A resource missing from got counts as 0.
func compareAmounts(what string, want, got map[string]string, add func(string, ...any)) {
	for _, r := range slices.Sorted(maps.Keys(want)) {
		w := quantityValue(want[r])
		gs, ok := got[r]
		if !ok {
			gs = "0"
		}
		g, valid := parseQuantity(gs)
		if !valid {
			add("%s %s: server reported invalid quantity %q, want %s", what, r, gs, want[r])
			continue
		}
		if math.Abs(g-w) > math.Max(math.Abs(w)*0.001, 0.001) {
			add("%s %s = %s, want %s", what, r, gs, want[r])
		}
	}
}

func parseQuantity(s string) (float64, bool) {
	q, err := resource.ParseQuantity(strings.TrimSpace(s))
	if err != nil {
		return 0, false
	}
	return q.AsApproximateFloat64(), true
}

// quantityValue parses a quantity already validated by the parser.
func quantityValue(s string) float64 {
	v, _ := parseQuantity(s)
	return v
}

// union returns the keys of a and b, sorted.
func union[A, B any](a map[string]A, b map[string]B) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func fmtList(s []string) string { return "[" + strings.Join(s, ", ") + "]" }

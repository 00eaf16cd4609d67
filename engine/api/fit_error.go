package api

import (
	"fmt"
	"maps"
	"sort"
	"strings"
)

// FitCode classifies why a task does not fit a node, as the Kubernetes framework does.
type FitCode int

const (
	// Unschedulable: the task does not fit now, but evicting tasks could make it fit.
	Unschedulable FitCode = iota + 1
	// UnschedulableAndUnresolvable: no eviction can make the task fit (selector, taint, ...).
	UnschedulableAndUnresolvable
	// InternalError: the check itself failed.
	InternalError
)

// FitError says why one task does not fit one node. Reasons are short phrases such as
// "insufficient cpu" or "untolerated taint dedicated=gpu:NoSchedule".
type FitError struct {
	Node    string
	Code    FitCode
	Reasons []string
}

// NewFitError builds a fit error for a node.
func NewFitError(node string, code FitCode, reasons ...string) *FitError {
	return &FitError{Node: node, Code: code, Reasons: reasons}
}

// Error implements error.
func (e *FitError) Error() string {
	return fmt.Sprintf("node %s: %s", e.Node, strings.Join(e.Reasons, ", "))
}

// Resolvable reports whether eviction could make the task fit (the error is not
// UnschedulableAndUnresolvable).
func (e *FitError) Resolvable() bool { return e.Code != UnschedulableAndUnresolvable }

// AsFitError converts any predicate error into a FitError for the node.
func AsFitError(node string, err error) *FitError {
	if fe, ok := err.(*FitError); ok {
		if fe.Node == "" {
			c := *fe
			c.Node = node
			return &c
		}
		return fe
	}
	return NewFitError(node, Unschedulable, err.Error())
}

// FitErrors gathers, for one task, why the nodes failed: how many failed, how many gave each
// reason, and which failed for a reason no eviction can resolve. It keeps no per-node error,
// so that a task that fits nowhere costs no more to explain than its reasons (a FitTally
// keeps the same figures up to date for a changing set of nodes and hands them out at no
// cost).
type FitErrors struct {
	// Total is how many nodes were considered.
	Total int
	// Err is a reason that applies to every node (e.g. from a pre-predicate).
	Err string

	failed int
	// reasons counts the nodes per reason; unresolvable holds the nodes whose failure no
	// eviction can resolve. When shared is set they are a FitTally's too, and are copied
	// before a change.
	reasons      map[string]int
	unresolvable map[string]struct{}
	shared       bool
}

// NewFitErrors returns an empty collection.
func NewFitErrors() *FitErrors { return &FitErrors{} }

// SetNodeError records a node's failure. Each node is recorded at most once.
func (f *FitErrors) SetNodeError(node string, err error) {
	fe := AsFitError(node, err)
	if f.shared {
		f.reasons, f.unresolvable, f.shared = maps.Clone(f.reasons), maps.Clone(f.unresolvable), false
	}
	f.failed++
	if f.reasons == nil {
		f.reasons = map[string]int{}
	}
	for _, r := range fe.Reasons {
		f.reasons[r]++
	}
	if !fe.Resolvable() {
		if f.unresolvable == nil {
			f.unresolvable = map[string]struct{}{}
		}
		f.unresolvable[node] = struct{}{}
	}
}

// SetError records a reason that applies to all nodes.
func (f *FitErrors) SetError(msg string) { f.Err = msg }

// Failed returns how many nodes failed.
func (f *FitErrors) Failed() int { return f.failed }

// RuledOut reports whether the node failed for a reason no eviction can resolve (Volcano's
// UnschedulableAndUnresolvable).
func (f *FitErrors) RuledOut(node string) bool {
	if len(f.unresolvable) == 0 {
		return false
	}
	_, ok := f.unresolvable[node]
	return ok
}

// AnyRuledOut reports whether some node failed for a reason no eviction can resolve.
func (f *FitErrors) AnyRuledOut() bool { return len(f.unresolvable) > 0 }

// ReasonCount is one reason and how many nodes gave it.
type ReasonCount struct {
	Reason string
	Nodes  int
}

// Histogram counts nodes per reason, most frequent first, ties by reason.
func (f *FitErrors) Histogram() []ReasonCount {
	out := make([]ReasonCount, 0, len(f.reasons))
	for r, n := range f.reasons {
		if n > 0 {
			out = append(out, ReasonCount{Reason: r, Nodes: n})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Nodes != out[j].Nodes {
			return out[i].Nodes > out[j].Nodes
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// FitTally keeps the figures of a FitErrors for a set of per-node failures that changes (a
// placement class's nodes, re-evaluated as statements change them), so that Snapshot hands
// them out without a per-node cost. Snapshots share the tally's maps; the tally copies them
// before it next changes them. The zero value is an empty tally.
type FitTally struct {
	failed       int
	reasons      map[string]int
	unresolvable map[string]struct{}
	shared       bool
}

// Add records a node's failure (nil: none).
func (t *FitTally) Add(fe *FitError) { t.change(fe, 1) }

// Remove forgets a failure Add recorded (nil: none).
func (t *FitTally) Remove(fe *FitError) { t.change(fe, -1) }

func (t *FitTally) change(fe *FitError, d int) {
	if fe == nil {
		return
	}
	if t.shared {
		t.reasons, t.unresolvable = maps.Clone(t.reasons), maps.Clone(t.unresolvable)
		t.shared = false
	}
	t.failed += d
	if t.reasons == nil {
		t.reasons = map[string]int{}
	}
	for _, r := range fe.Reasons {
		if t.reasons[r] += d; t.reasons[r] == 0 {
			delete(t.reasons, r)
		}
	}
	if !fe.Resolvable() {
		if d > 0 {
			if t.unresolvable == nil {
				t.unresolvable = map[string]struct{}{}
			}
			t.unresolvable[fe.Node] = struct{}{}
		} else {
			delete(t.unresolvable, fe.Node)
		}
	}
}

// Snapshot returns the tally's failures as a FitErrors over total nodes.
func (t *FitTally) Snapshot(total int) *FitErrors {
	t.shared = true
	return &FitErrors{Total: total, failed: t.failed, reasons: t.reasons, unresolvable: t.unresolvable, shared: true}
}

// Error summarises: "0/40 nodes fit: 32 insufficient nvidia.com/gpu, 8 untolerated taint ...".
func (f *FitErrors) Error() string {
	total := f.Total
	if total < f.failed {
		total = f.failed
	}
	fit := total - f.failed
	if f.Err != "" && f.failed == 0 {
		return fmt.Sprintf("0/%d nodes fit: %s", total, f.Err)
	}
	parts := []string{}
	for _, rc := range f.Histogram() {
		parts = append(parts, fmt.Sprintf("%d %s", rc.Nodes, rc.Reason))
	}
	if f.Err != "" {
		parts = append([]string{f.Err}, parts...)
	}
	if fit < 0 {
		fit = 0
	}
	return fmt.Sprintf("%d/%d nodes fit: %s", fit, total, strings.Join(parts, ", "))
}

package api

import (
	"fmt"
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

// FitErrors gathers, for one task, why each node failed.
type FitErrors struct {
	// Total is how many nodes were considered.
	Total int
	// Nodes maps a node name to its failure.
	Nodes map[string]*FitError
	// Err is a reason that applies to every node (e.g. from a pre-predicate).
	Err string
}

// NewFitErrors returns an empty collection.
func NewFitErrors() *FitErrors { return &FitErrors{Nodes: map[string]*FitError{}} }

// SetNodeError records a node's failure.
func (f *FitErrors) SetNodeError(node string, err error) {
	f.Nodes[node] = AsFitError(node, err)
}

// SetError records a reason that applies to all nodes.
func (f *FitErrors) SetError(msg string) { f.Err = msg }

// ReasonCount is one reason and how many nodes gave it.
type ReasonCount struct {
	Reason string
	Nodes  int
}

// Histogram counts nodes per reason, most frequent first, ties by reason.
func (f *FitErrors) Histogram() []ReasonCount {
	counts := map[string]int{}
	for _, fe := range f.Nodes {
		for _, r := range fe.Reasons {
			counts[r]++
		}
	}
	out := make([]ReasonCount, 0, len(counts))
	for r, n := range counts {
		out = append(out, ReasonCount{Reason: r, Nodes: n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Nodes != out[j].Nodes {
			return out[i].Nodes > out[j].Nodes
		}
		return out[i].Reason < out[j].Reason
	})
	return out
}

// Error summarises: "0/40 nodes fit: 32 insufficient nvidia.com/gpu, 8 untolerated taint ...".
func (f *FitErrors) Error() string {
	total := f.Total
	if total < len(f.Nodes) {
		total = len(f.Nodes)
	}
	fit := total - len(f.Nodes)
	if f.Err != "" && len(f.Nodes) == 0 {
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

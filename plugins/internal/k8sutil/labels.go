package k8sutil

import (
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
)

// LabelHostname is the label every node carries with its own name.
const LabelHostname = "kubernetes.io/hostname"

// NodeLabel returns a node's label. kubernetes.io/hostname falls back to the node's name, so a
// node that was streamed in without it still has it, as every Kubernetes node does.
func NodeLabel(n *api.Node, key string) (string, bool) {
	if v, ok := n.Labels[key]; ok {
		return v, true
	}
	if key == LabelHostname {
		return n.Name, true
	}
	return "", false
}

// Pair is one label key and value.
type Pair struct{ Key, Value string }

// Selector is an equality-based label selector (every pair must match), compiled from a map
// into a sorted slice so that matching is allocation-free and ordered.
type Selector []Pair

// NewSelector compiles a map of labels into a selector.
func NewSelector(m map[string]string) Selector {
	if len(m) == 0 {
		return nil
	}
	s := make(Selector, 0, len(m))
	for k, v := range m {
		s = append(s, Pair{k, v})
	}
	sort.Slice(s, func(i, j int) bool { return s[i].Key < s[j].Key })
	return s
}

// Empty reports whether the selector has no pairs. An empty selector matches every label set
// (Kubernetes' `{}`), but topology spread counts no task with it, as Kubernetes does.
func (s Selector) Empty() bool { return len(s) == 0 }

// Matches reports whether every pair of the selector is among the labels.
func (s Selector) Matches(labels map[string]string) bool {
	for _, p := range s {
		if v, ok := labels[p.Key]; !ok || v != p.Value {
			return false
		}
	}
	return true
}

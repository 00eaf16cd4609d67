package k8sutil

import (
	"fmt"
	"sort"
	"strings"

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

// SpecKey describes the placement-relevant parts of a task spec that do not depend on other
// tasks: node selector, node affinity (required and preferred), tolerations and host ports.
// Tasks with equal keys are filtered and scored alike by node-local checks.
//
// A spec with none of these parts has the empty key, which no other spec has.
func SpecKey(t *api.Task) string {
	if t == nil || (len(t.NodeSelector) == 0 && t.Affinity == nil && len(t.Tolerations) == 0 && len(t.Ports) == 0) {
		return ""
	}
	var b strings.Builder
	keys := make([]string, 0, len(t.NodeSelector))
	for k := range t.NodeSelector {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, "%q=%q,", k, t.NodeSelector[k])
	}
	b.WriteString("|")
	if t.Affinity != nil {
		fmt.Fprintf(&b, "%q|%q", t.Affinity.NodeRequired, t.Affinity.NodePreferred)
	}
	fmt.Fprintf(&b, "|%q|%v", t.Tolerations, t.Ports)
	return b.String()
}

// HasTaskConstraints reports whether the task has task affinity, anti-affinity or topology
// spread terms: constraints whose answer on a node depends on other tasks and nodes.
func HasTaskConstraints(t *api.Task) bool {
	if t == nil {
		return false
	}
	return len(t.TopologySpread) > 0 ||
		(t.Affinity != nil && (len(t.Affinity.TaskAffinity) > 0 || len(t.Affinity.TaskAntiAffinity) > 0))
}

// SpecKeys remembers SpecKey per task spec (specs are immutable). The zero value is ready;
// it is not safe for concurrent use.
type SpecKeys struct{ m map[*api.Task]string }

// Key returns SpecKey(t), computing it once per spec; a spec without any of the parts SpecKey
// describes costs nothing.
func (s *SpecKeys) Key(t *api.Task) string {
	if t == nil || (len(t.NodeSelector) == 0 && t.Affinity == nil && len(t.Tolerations) == 0 && len(t.Ports) == 0) {
		return ""
	}
	if k, ok := s.m[t]; ok {
		return k
	}
	if s.m == nil {
		s.m = map[*api.Task]string{}
	}
	k := SpecKey(t)
	s.m[t] = k
	return k
}

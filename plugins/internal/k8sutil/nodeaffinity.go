package k8sutil

import (
	"slices"
	"strconv"

	"github.com/sluice-sched/sluice/engine/api"
)

type operator uint8

const (
	opInvalid operator = iota
	opIn
	opNotIn
	opExists
	opDoesNotExist
	opGt
	opLt
)

// requirement is one compiled node selector expression.
type requirement struct {
	key    string
	op     operator
	values []string
	num    int64 // the bound of Gt and Lt
}

// compileRequirement checks an expression as Kubernetes validates one: In and NotIn need
// values, Exists and DoesNotExist none, Gt and Lt exactly one integer. An invalid expression
// compiles to opInvalid, which matches no node (Kubernetes skips a term it cannot parse).
func compileRequirement(r api.SelectorRequirement) requirement {
	out := requirement{key: r.Key, values: r.Values}
	switch r.Operator {
	case "In", "NotIn":
		if len(r.Values) == 0 {
			return out
		}
		out.op = opIn
		if r.Operator == "NotIn" {
			out.op = opNotIn
		}
	case "Exists", "DoesNotExist":
		if len(r.Values) != 0 {
			return out
		}
		out.op = opExists
		if r.Operator == "DoesNotExist" {
			out.op = opDoesNotExist
		}
	case "Gt", "Lt":
		if len(r.Values) != 1 {
			return out
		}
		n, err := strconv.ParseInt(r.Values[0], 10, 64)
		if err != nil {
			return out
		}
		out.num = n
		out.op = opGt
		if r.Operator == "Lt" {
			out.op = opLt
		}
	}
	return out
}

func (r *requirement) matches(n *api.Node) bool {
	v, ok := NodeLabel(n, r.key)
	switch r.op {
	case opIn:
		return ok && slices.Contains(r.values, v)
	case opNotIn:
		return !ok || !slices.Contains(r.values, v)
	case opExists:
		return ok
	case opDoesNotExist:
		return !ok
	case opGt, opLt:
		if !ok {
			return false
		}
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		if r.op == opGt {
			return x > r.num
		}
		return x < r.num
	}
	return false
}

// term is an AND of requirements; nil means the term never matches (empty or invalid).
type term []requirement

func compileTerm(t api.NodeSelectorTerm) term {
	if len(t.MatchExpressions) == 0 {
		return nil // Kubernetes: an empty term matches no node
	}
	out := make(term, 0, len(t.MatchExpressions))
	for _, e := range t.MatchExpressions {
		r := compileRequirement(e)
		if r.op == opInvalid {
			return nil
		}
		out = append(out, r)
	}
	return out
}

func (t term) matches(n *api.Node) bool {
	if t == nil {
		return false
	}
	for i := range t {
		if !t[i].matches(n) {
			return false
		}
	}
	return true
}

// RequiredNodeAffinity is a task's node selector and required node affinity: the node must
// carry every selector label, and match one of the affinity terms when there are any.
type RequiredNodeAffinity struct {
	selector    Selector
	terms       []term
	hasAffinity bool
}

// NewRequiredNodeAffinity compiles a task's node selector and required node affinity.
func NewRequiredNodeAffinity(t *api.Task) RequiredNodeAffinity {
	if t == nil {
		return RequiredNodeAffinity{}
	}
	r := RequiredNodeAffinity{selector: NewSelector(t.NodeSelector)}
	if t.Affinity != nil && len(t.Affinity.NodeRequired) > 0 {
		r.hasAffinity = true
		r.terms = make([]term, len(t.Affinity.NodeRequired))
		for i, nt := range t.Affinity.NodeRequired {
			r.terms[i] = compileTerm(nt)
		}
	}
	return r
}

// Empty reports whether the task constrains nodes at all.
func (r *RequiredNodeAffinity) Empty() bool { return len(r.selector) == 0 && !r.hasAffinity }

// Match reports whether the node satisfies the node selector and the required affinity.
func (r *RequiredNodeAffinity) Match(n *api.Node) bool {
	for _, p := range r.selector {
		if v, ok := NodeLabel(n, p.Key); !ok || v != p.Value {
			return false
		}
	}
	if !r.hasAffinity {
		return true
	}
	for _, t := range r.terms {
		if t.matches(n) {
			return true
		}
	}
	return false
}

type weightedTerm struct {
	weight int64
	term   term
}

// PreferredNodeAffinity is a task's preferred node affinity terms.
type PreferredNodeAffinity []weightedTerm

// NewPreferredNodeAffinity compiles a task's preferred node affinity; terms with no weight,
// no expressions or an invalid expression are dropped, as Kubernetes drops or never matches
// them.
func NewPreferredNodeAffinity(t *api.Task) PreferredNodeAffinity {
	if t == nil || t.Affinity == nil {
		return nil
	}
	var out PreferredNodeAffinity
	for _, p := range t.Affinity.NodePreferred {
		if p.Weight == 0 {
			continue
		}
		if tm := compileTerm(p.Term); tm != nil {
			out = append(out, weightedTerm{weight: int64(p.Weight), term: tm})
		}
	}
	return out
}

// Score sums the weights of the terms the node matches (Kubernetes' NodeAffinity score
// before normalisation).
func (p PreferredNodeAffinity) Score(n *api.Node) int64 {
	var s int64
	for i := range p {
		if p[i].term.matches(n) {
			s += p[i].weight
		}
	}
	return s
}

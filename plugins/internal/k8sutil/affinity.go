package k8sutil

import "github.com/sluice-sched/sluice/engine/api"

// AffinityTerm is a compiled task affinity or anti-affinity term. As in Kubernetes, a term
// selects tasks of its owner's namespace whose labels match the selector; an empty selector
// selects every task of the namespace.
type AffinityTerm struct {
	Namespace   string
	Selector    Selector
	TopologyKey string
	Weight      int64
}

// Matches reports whether the term selects the task.
func (t *AffinityTerm) Matches(task *api.Task) bool {
	return task != nil && task.Namespace == t.Namespace && t.Selector.Matches(task.Labels)
}

// TaskAffinity is a task's compiled task affinity and anti-affinity, split into required
// terms (predicates) and preferred ones (scores).
type TaskAffinity struct {
	RequiredAffinity, RequiredAntiAffinity   []AffinityTerm
	PreferredAffinity, PreferredAntiAffinity []AffinityTerm
}

// NewTaskAffinity compiles a task's task affinity terms.
func NewTaskAffinity(t *api.Task) TaskAffinity {
	var out TaskAffinity
	if t == nil || t.Affinity == nil {
		return out
	}
	compile := func(terms []api.TaskAffinityTerm, req, pref *[]AffinityTerm) {
		for _, a := range terms {
			at := AffinityTerm{Namespace: t.Namespace, Selector: NewSelector(a.Selector), TopologyKey: a.TopologyKey, Weight: int64(a.Weight)}
			if a.Required {
				*req = append(*req, at)
			} else {
				*pref = append(*pref, at)
			}
		}
	}
	compile(t.Affinity.TaskAffinity, &out.RequiredAffinity, &out.PreferredAffinity)
	compile(t.Affinity.TaskAntiAffinity, &out.RequiredAntiAffinity, &out.PreferredAntiAffinity)
	return out
}

// Empty reports whether the task has no task affinity term at all.
func (a *TaskAffinity) Empty() bool {
	return len(a.RequiredAffinity) == 0 && len(a.RequiredAntiAffinity) == 0 &&
		len(a.PreferredAffinity) == 0 && len(a.PreferredAntiAffinity) == 0
}

// HasTaskAffinity reports whether a task spec carries any task affinity or anti-affinity term
// (Kubernetes' "pod with affinity").
func HasTaskAffinity(t *api.Task) bool {
	return t != nil && t.Affinity != nil && (len(t.Affinity.TaskAffinity) > 0 || len(t.Affinity.TaskAntiAffinity) > 0)
}

// MatchesAll reports whether the task matches every term (false for no terms), Kubernetes'
// podMatchesAllAffinityTerms.
func MatchesAll(terms []AffinityTerm, task *api.Task) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(task) {
			return false
		}
	}
	return true
}

package sluice

import sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"

// Ref is what names a namespaced object: a TaskRef or a JobRef (how decisions and job
// outcomes name tasks and jobs), and a Task or a Job itself.
type Ref interface {
	GetNamespace() string
	GetName() string
}

// FullName returns a reference as "namespace/name", the way sluicectl and logs show it; an
// empty namespace is "default". It returns "" for a nil or empty reference (an eviction's
// for_task when it makes room for no task). A name may hold '/' but a namespace never does, so
// the full name of a valid reference is unambiguous: it may key maps.
func FullName(r Ref) string {
	if r == nil || r.GetName() == "" {
		return ""
	}
	ns := r.GetNamespace()
	if ns == "" {
		ns = "default"
	}
	return ns + "/" + r.GetName()
}

// spelling maps the values of a closed set to the names Kubernetes and Volcano give them,
// which resource managers and scenario files use.
type spelling[E comparable] struct {
	names  map[E]string
	values map[string]E
}

func newSpelling[E comparable](names map[E]string) spelling[E] {
	s := spelling[E]{names: names, values: make(map[string]E, len(names))}
	for v, n := range names {
		s.values[n] = v
	}
	return s
}

var (
	taintEffects = newSpelling(map[sluicev1.TaintEffect]string{
		sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE:        "NoSchedule",
		sluicev1.TaintEffect_TAINT_EFFECT_PREFER_NO_SCHEDULE: "PreferNoSchedule",
		sluicev1.TaintEffect_TAINT_EFFECT_NO_EXECUTE:         "NoExecute",
	})
	tolerationOperators = newSpelling(map[sluicev1.TolerationOperator]string{
		sluicev1.TolerationOperator_TOLERATION_OPERATOR_EQUAL:  "Equal",
		sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS: "Exists",
	})
	whenUnsatisfiable = newSpelling(map[sluicev1.WhenUnsatisfiable]string{
		sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE: "DoNotSchedule",
		sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_SCHEDULE_ANYWAY: "ScheduleAnyway",
	})
	networkTopologyModes = newSpelling(map[sluicev1.NetworkTopologyMode]string{
		sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_HARD: "hard",
		sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_SOFT: "soft",
	})
)

// TaintEffectName returns Kubernetes' name of a taint effect: "NoSchedule",
// "PreferNoSchedule" or "NoExecute"; "" for TAINT_EFFECT_UNSPECIFIED (on a toleration: every
// effect) and for a value this client does not know.
func TaintEffectName(e sluicev1.TaintEffect) string { return taintEffects.names[e] }

// ParseTaintEffect returns the taint effect Kubernetes calls name ("NoSchedule", ...); false
// when name is none of them.
func ParseTaintEffect(name string) (sluicev1.TaintEffect, bool) {
	e, ok := taintEffects.values[name]
	return e, ok
}

// TolerationOperatorName returns Kubernetes' name of a toleration operator: "Equal" or
// "Exists"; "" for TOLERATION_OPERATOR_UNSPECIFIED (which means Equal) and for a value this
// client does not know.
func TolerationOperatorName(op sluicev1.TolerationOperator) string {
	return tolerationOperators.names[op]
}

// ParseTolerationOperator returns the toleration operator Kubernetes calls name ("Equal" or
// "Exists"); false when name is neither.
func ParseTolerationOperator(name string) (sluicev1.TolerationOperator, bool) {
	op, ok := tolerationOperators.values[name]
	return op, ok
}

// WhenUnsatisfiableName returns Kubernetes' name of a topology spread's whenUnsatisfiable:
// "DoNotSchedule" or "ScheduleAnyway"; "" for WHEN_UNSATISFIABLE_UNSPECIFIED (which means
// DoNotSchedule) and for a value this client does not know.
func WhenUnsatisfiableName(w sluicev1.WhenUnsatisfiable) string { return whenUnsatisfiable.names[w] }

// ParseWhenUnsatisfiable returns the whenUnsatisfiable Kubernetes calls name
// ("DoNotSchedule" or "ScheduleAnyway"); false when name is neither.
func ParseWhenUnsatisfiable(name string) (sluicev1.WhenUnsatisfiable, bool) {
	w, ok := whenUnsatisfiable.values[name]
	return w, ok
}

// NetworkTopologyModeName returns Volcano's name of a network topology mode: "hard" or
// "soft"; "" for NETWORK_TOPOLOGY_MODE_UNSPECIFIED and for a value this client does not know.
func NetworkTopologyModeName(m sluicev1.NetworkTopologyMode) string {
	return networkTopologyModes.names[m]
}

// ParseNetworkTopologyMode returns the network topology mode Volcano calls name ("hard" or
// "soft"); false when name is neither.
func ParseNetworkTopologyMode(name string) (sluicev1.NetworkTopologyMode, bool) {
	m, ok := networkTopologyModes.values[name]
	return m, ok
}

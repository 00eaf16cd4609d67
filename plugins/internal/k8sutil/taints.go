package k8sutil

import "github.com/sluice-sched/sluice/engine/api"

// Taint effects.
const (
	EffectNoSchedule       = "NoSchedule"
	EffectPreferNoSchedule = "PreferNoSchedule"
	EffectNoExecute        = "NoExecute"
)

// TaintNodeUnschedulable is the taint Kubernetes puts on a cordoned node; a task tolerating it
// may go to a node marked unschedulable.
const TaintNodeUnschedulable = "node.kubernetes.io/unschedulable"

// Tolerated reports whether one of the tolerations tolerates the taint.
func Tolerated(taint api.Taint, tolerations []api.Toleration) bool {
	for i := range tolerations {
		if tolerations[i].Tolerates(taint) {
			return true
		}
	}
	return false
}

// UntoleratedTaint returns the first NoSchedule or NoExecute taint, in the node's order, that
// no toleration tolerates.
func UntoleratedTaint(taints []api.Taint, tolerations []api.Toleration) (api.Taint, bool) {
	for _, t := range taints {
		if t.Effect != EffectNoSchedule && t.Effect != EffectNoExecute {
			continue
		}
		if !Tolerated(t, tolerations) {
			return t, true
		}
	}
	return api.Taint{}, false
}

// ToleratesUnschedulable reports whether the tolerations tolerate a cordoned node.
func ToleratesUnschedulable(tolerations []api.Toleration) bool {
	return Tolerated(api.Taint{Key: TaintNodeUnschedulable, Effect: EffectNoSchedule}, tolerations)
}

// TaintString formats a taint as key=value:Effect (key:Effect without a value).
func TaintString(t api.Taint) string {
	if t.Value == "" {
		return t.Key + ":" + t.Effect
	}
	return t.Key + "=" + t.Value + ":" + t.Effect
}

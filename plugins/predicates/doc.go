// Package predicates is Volcano's predicates plugin: the node filters Volcano runs through
// Kubernetes' filter plugins, written for Sluice's model.
//
// For each task and node, in Volcano's order, it checks the node's task capacity (pods),
// that the node is not cordoned, the node selector and required node affinity, the node's
// NoSchedule and NoExecute taints, host ports, required task affinity and anti-affinity
// (including the anti-affinity of tasks already placed), DoNotSchedule topology spread
// constraints and, when enabled, Volcano's proportional reservation of cpu and memory for
// scarce resources. Each check can be switched off with Volcano's argument. Resource fit is
// not a predicate: as in Volcano, the allocate action checks a task's request against the
// node's (future) idle resources itself.
//
// A failure is an *api.FitError whose reasons read well when counted over nodes ("too many
// tasks", "node unschedulable", "node selector/affinity mismatch", "untolerated taint
// dedicated=gpu:NoSchedule", "host port 8080 in use", "task affinity mismatch", ...) and whose
// code says whether evicting tasks could help (Unschedulable) or not
// (UnschedulableAndUnresolvable), as Volcano classifies each check.
package predicates

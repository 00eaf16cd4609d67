// Package k8sutil holds what the predicates and nodeorder plugins share of Kubernetes'
// scheduling rules, written for Sluice's model: node selector and node affinity matching
// (In, NotIn, Exists, DoesNotExist, Gt, Lt), taint toleration, task affinity terms and their
// topology domains, and View, which mirrors the session's task placement as Volcano's
// Kubernetes node view (ssn.NodeMap) holds it.
//
// Everything here is meant for the per-node hot path: terms are compiled once per task, and
// matching a compiled term against a node allocates nothing.
package k8sutil

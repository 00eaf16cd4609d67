// Package conformance is Volcano's conformance plugin: it keeps critical tasks out of
// preemption and reclaim.
//
// Registered callbacks (as in Volcano), Preemptable, Reclaimable and UnifiedEvictable (gang-aware
// eviction, whatever its kind): every candidate is a victim except tasks in the kube-system
// namespace and tasks of priority class system-cluster-critical or system-node-critical. They
// always decide (Permit).
package conformance

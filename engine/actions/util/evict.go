package util

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// PreemptableStatus reports whether preempt may take a task in this status as a victim: Bound
// or Running, as Volcano's api.PreemptableStatus. (Reclaim takes Running tasks only.)
func PreemptableStatus(s api.TaskStatus) bool { return s == api.Bound || s == api.Running }

// NodesNotRuledOut returns the session's nodes (in name order) except those where this cycle's
// allocate found the task unschedulable for a reason no eviction can fix (Volcano's
// FilterOutUnschedulableAndUnresolvableNodesForTask).
func NodesNotRuledOut(ssn *framework.Session, task *api.TaskInfo) []*api.NodeInfo {
	var recorded *api.FitErrors
	if j, ok := ssn.Jobs[task.Job]; ok {
		recorded = j.NodesFitErrors[task.UID]
	}
	if recorded == nil || !recorded.AnyRuledOut() {
		return ssn.NodeList
	}
	out := make([]*api.NodeInfo, 0, len(ssn.NodeList))
	for _, n := range ssn.NodeList {
		if recorded.RuledOut(n.Name) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// EvictionCandidates returns the nodes where evicting tasks could make room for the task, in
// name order: those NodesNotRuledOut keeps whose predicates pass or fail only for reasons
// eviction can fix (Volcano's PredicateForPreemptAction).
func EvictionCandidates(ssn *framework.Session, task *api.TaskInfo) []*api.NodeInfo {
	var out []*api.NodeInfo
	for _, n := range NodesNotRuledOut(ssn, task) {
		if err := ssn.PredicateFn(task, n); err != nil && !api.AsFitError(n.Name, err).Resolvable() {
			continue
		}
		out = append(out, n)
	}
	return out
}

// PopEach returns an Eviction.Next that pops q's items in order, then nil.
func PopEach(q *PriorityQueue[*api.TaskInfo]) func() *api.TaskInfo {
	return func() *api.TaskInfo {
		if q.Empty() {
			return nil
		}
		return q.Pop()
	}
}

// Eviction is one attempt to make room for a task on one node by evicting victims there.
type Eviction struct {
	// Task is the preemptor or reclaimer, pipelined onto Node when room is made.
	Task *api.TaskInfo
	Node *api.NodeInfo
	// Next returns the next victim to evict, nil when there is none left.
	Next func() *api.TaskInfo
	// Fits reports whether the task fits the node as the evictions so far leave it.
	Fits func() bool
	// Reason says why a victim is evicted.
	Reason func(victim *api.TaskInfo) framework.EvictReason
}

// Try makes the attempt as Volcano's preempt and reclaim do, on a statement of its own: it
// evicts victims until the task fits, then pipelines the task onto the node and merges the
// node's statement into stmt (the job's). When the task still does not fit, or the pipeline
// fails, every eviction made for it is undone, so no eviction on a node the task does not end
// up on is ever committed. It reports whether the task was pipelined.
func (e Eviction) Try(ssn *framework.Session, stmt *framework.Statement) bool {
	onNode := ssn.NewStatement()
	fits := e.Fits()
	for !fits {
		v := e.Next()
		if v == nil {
			break
		}
		if err := onNode.Evict(v, e.Reason(v)); err != nil {
			ssn.Log.Error("evict failed", "victim", v.UID, "for", e.Task.UID, "err", err)
		}
		fits = e.Fits()
	}
	if !fits {
		onNode.Discard()
		return false
	}
	if err := onNode.Pipeline(e.Task, e.Node.Name); err != nil {
		ssn.Log.Error("pipeline failed", "task", e.Task.UID, "node", e.Node.Name, "err", err)
		onNode.Discard()
		return false
	}
	stmt.Merge(onNode)
	return true
}

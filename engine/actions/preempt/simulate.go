package preempt

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// preemptBySimulation is topology-aware preemption: a node qualifies when, with every victim
// the plugins allow evicted, the preemptor passes the predicates and fits; then victims are
// spared one by one, the most important first, as long as the preemptor still fits without
// evicting them (Kubernetes' reprieve). The first qualifying node in score order (ties by name)
// is used. Evictions are simulated through throwaway statements, so predicates see the node as
// it would be (evicted tasks leave the plugins' views). The chosen victims are evicted and the
// preemptor pipelined through a statement of the node's own, merged into stmt only when the
// pipeline succeeds (as Volcano's topologyAwarePreempt).
func preemptBySimulation(ssn *framework.Session, stmt *framework.Statement, preemptor *api.TaskInfo, filter func(*api.TaskInfo) bool) bool {
	queue := ssn.Queues[ssn.Jobs[preemptor.Job].Queue]
	// Nodes where this cycle's allocate found the task unschedulable and unresolvable stay
	// out, as in Volcano; every other node is judged by simulation.
	candidates := util.NodesNotRuledOut(ssn, preemptor)
	nodes := util.SortByScore(candidates, util.PrioritizeNodes(ssn, preemptor, candidates))
	fitsWithout := func(node *api.NodeInfo, evicted []*api.TaskInfo) bool {
		tmp := ssn.NewStatement()
		defer tmp.Discard()
		for _, v := range evicted {
			if err := tmp.Evict(v, framework.EvictReason{Action: Name}); err != nil {
				return false
			}
		}
		return ssn.Allocatable(queue, preemptor) && node.FitsFutureIdle(preemptor.InitResreq) &&
			ssn.PredicateFn(preemptor, node) == nil
	}
	for _, node := range nodes {
		victims := ssn.Preemptable(preemptor, jobTasks(ssn, node, filter))
		if len(victims) == 0 || !fitsWithout(node, victims) {
			continue
		}
		// Least important first out of the queue; spare from the other end.
		var ordered []*api.TaskInfo
		for vq := util.VictimsQueue(ssn, preemptor, victims); !vq.Empty(); {
			ordered = append(ordered, vq.Pop())
		}
		evict := map[string]bool{}
		for _, v := range ordered {
			evict[v.UID] = true
		}
		for i := len(ordered) - 1; i >= 0; i-- {
			evict[ordered[i].UID] = false
			var rest []*api.TaskInfo
			for _, v := range ordered {
				if evict[v.UID] {
					rest = append(rest, v)
				}
			}
			if !fitsWithout(node, rest) {
				evict[ordered[i].UID] = true
			}
		}
		var chosen []*api.TaskInfo
		for _, v := range ordered {
			if evict[v.UID] {
				chosen = append(chosen, v)
			}
		}
		attempt := util.Eviction{
			Task: preemptor,
			Node: node,
			Next: func() *api.TaskInfo {
				v := chosen[0]
				chosen = chosen[1:]
				return v
			},
			// Volcano evicts exactly the chosen victims, then pipelines.
			Fits: func() bool { return len(chosen) == 0 },
			Reason: func(v *api.TaskInfo) framework.EvictReason {
				return framework.EvictReason{Action: Name, ForTask: preemptor.UID, Rule: rule(ssn, preemptor, v)}
			},
		}
		return attempt.Try(ssn, stmt)
	}
	return false
}

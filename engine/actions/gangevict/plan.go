package gangevict

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// PendingTasks returns the job's pending tasks that ask for something, in task order: what
// a gang-aware eviction makes room for (Sluice has no sub-jobs, so a job is one sub-job and
// this is Volcano's worksheet of it).
func PendingTasks(ssn *framework.Session, job *api.JobInfo) []*api.TaskInfo {
	q := util.NewPriorityQueue(ssn.TaskOrderFn)
	for _, t := range job.TasksIn(api.Pending) {
		if !t.BestEffort {
			q.Push(t)
		}
	}
	out := make([]*api.TaskInfo, 0, q.Len())
	for !q.Empty() {
		out = append(out, q.Pop())
	}
	return out
}

// Plan dry-runs an attempt: it evicts the victims, then pipelines every task (in the order
// given) onto the nodes of the first trial domain where all of them fit, and keeps the result
// only if the job is then pipelined. It returns the operations to replay (ok false when the
// attempt fails) and always leaves the session as it found it.
func Plan(ssn *framework.Session, queue *api.QueueInfo, job *api.JobInfo, tasks []*api.TaskInfo,
	trials []Domain, victims []*api.TaskInfo, reason func(*api.TaskInfo) framework.EvictReason) (framework.Saved, bool) {
	if len(tasks) == 0 {
		return framework.Saved{}, false
	}
	stmt := ssn.NewStatement()
	defer stmt.Discard()
	for _, v := range victims {
		if err := stmt.Evict(v, reason(v)); err != nil {
			ssn.Log.Error("gang eviction dry run: evict failed", "victim", v.UID, "err", err)
			return framework.Saved{}, false
		}
	}
	placed := false
	for _, d := range trials {
		if trial, ok := placeAll(ssn, queue, job, tasks, d.Nodes); ok {
			stmt.Merge(trial)
			placed = true
			break
		}
	}
	if !placed || !ssn.JobPipelined(job) {
		return framework.Saved{}, false
	}
	return stmt.Save(), true
}

// placeAll pipelines every task onto the given nodes, each on the node allocate would choose
// among those where it fits the future idle resources and passes the predicates that eviction
// cannot resolve. It returns the statement holding the placements, or discards them and
// returns false when a task fits nowhere or the job is then neither ready nor pipelined.
func placeAll(ssn *framework.Session, queue *api.QueueInfo, job *api.JobInfo, tasks []*api.TaskInfo, nodes []*api.NodeInfo) (*framework.Statement, bool) {
	trial := ssn.NewStatement()
	for _, task := range tasks {
		if !ssn.Allocatable(queue, task) || ssn.PrePredicateFn(task) != nil {
			trial.Discard()
			return nil, false
		}
		candidates := resolvableNodes(job, task, nodes)
		placed := util.PlaceAmong(ssn, task, candidates, func(t *api.TaskInfo, n *api.NodeInfo) error {
			return simulatePredicate(ssn, t, n)
		})
		if placed.Node == nil || !placed.Node.FitsFutureIdle(task.InitResreq) {
			trial.Discard()
			return nil, false
		}
		if err := trial.Pipeline(task, placed.Node.Name); err != nil {
			ssn.Log.Error("gang eviction dry run: pipeline failed", "task", task.UID, "node", placed.Node.Name, "err", err)
			trial.Discard()
			return nil, false
		}
	}
	if trial.Operations() == 0 || (!ssn.JobReady(job) && !ssn.JobPipelined(job)) {
		trial.Discard()
		return nil, false
	}
	return trial, true
}

// resolvableNodes drops the nodes where this cycle's allocate found the task unschedulable for
// a reason eviction cannot resolve.
func resolvableNodes(job *api.JobInfo, task *api.TaskInfo, nodes []*api.NodeInfo) []*api.NodeInfo {
	recorded := job.NodesFitErrors[task.UID]
	if recorded == nil || !recorded.AnyRuledOut() {
		return nodes
	}
	out := make([]*api.NodeInfo, 0, len(nodes))
	for _, n := range nodes {
		if recorded.RuledOut(n.Name) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// simulatePredicate is the dry run's node filter: the task's request must fit the node's
// future idle resources, and a predicate failure counts only when eviction cannot resolve it.
// A task asking for devices must pass every predicate, since evictions free devices at once.
func simulatePredicate(ssn *framework.Session, task *api.TaskInfo, node *api.NodeInfo) error {
	if err := util.ResourceFit(task, node); err != nil {
		return err
	}
	err := ssn.PredicateFn(task, node)
	if err == nil {
		return nil
	}
	if task.Spec != nil && len(task.Spec.Devices) > 0 {
		return err
	}
	if fe := api.AsFitError(node.Name, err); !fe.Resolvable() {
		return fe
	}
	return nil
}

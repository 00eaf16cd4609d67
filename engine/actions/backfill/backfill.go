// Package backfill is Volcano's backfill action: it places best-effort tasks (tasks that
// request no resources and no devices) on any node that passes the predicates.
package backfill

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "backfill"

// Action is one cycle's backfill action.
type Action struct{}

// New builds the action; it takes no arguments.
func New(conf.Arguments) (framework.Action, error) { return &Action{}, nil }

// Name returns "backfill".
func (a *Action) Name() string { return Name }

// Execute runs the action: pending best-effort tasks in queue, job and task order; the first
// task that fits nowhere ends the action, as in Volcano. A job's placements bind once the job
// is ready (its gang counts pending best-effort tasks).
func (a *Action) Execute(ssn *framework.Session) {
	stmts := map[string]*framework.Statement{}
	for _, task := range pendingTasks(ssn) {
		job := ssn.Jobs[task.Job]
		if err := ssn.PrePredicateFn(task); err != nil {
			fe := api.NewFitErrors()
			fe.Total = len(ssn.NodeList)
			for _, n := range ssn.NodeList {
				fe.SetNodeError(n.Name, err)
			}
			job.NodesFitErrors[task.UID] = fe
			break
		}
		nodes, fe := util.PredicateNodes(task, ssn.NodeList, ssn.PredicateFn)
		if len(nodes) == 0 {
			job.NodesFitErrors[task.UID] = fe
			break
		}
		node := util.BestNode(ssn, task, nodes)
		stmt, ok := stmts[job.UID]
		if !ok {
			stmt = ssn.NewStatement()
			stmts[job.UID] = stmt
		}
		if err := stmt.Allocate(task, node); err != nil {
			fe := api.NewFitErrors()
			fe.SetNodeError(node.Name, err)
			job.NodesFitErrors[task.UID] = fe
			continue
		}
		if ssn.JobReady(job) {
			stmt.Commit()
		}
	}
}

// pendingTasks lists the pending best-effort tasks of valid, non-pending jobs: queues in queue
// order, within a queue its jobs in job order, within a job its tasks in task order.
func pendingTasks(ssn *framework.Session) []*api.TaskInfo {
	queues := util.NewPriorityQueue(ssn.QueueOrderFn)
	jobs := map[string]*util.PriorityQueue[*api.JobInfo]{}
	tasks := map[string]*util.PriorityQueue[*api.TaskInfo]{}
	for _, job := range ssn.SortedJobs() {
		if job.IsPending() {
			continue
		}
		if vr := ssn.JobValid(job); vr != nil {
			continue
		}
		q, ok := ssn.Queues[job.Queue]
		if !ok {
			continue
		}
		for _, t := range job.TasksIn(api.Pending) {
			if !t.BestEffort {
				continue
			}
			if _, ok := jobs[q.Name]; !ok {
				jobs[q.Name] = util.NewPriorityQueue(ssn.JobOrderFn)
				queues.Push(q)
			}
			if _, ok := tasks[job.UID]; !ok {
				jobs[q.Name].Push(job)
				tasks[job.UID] = util.NewPriorityQueue(ssn.TaskOrderFn)
			}
			tasks[job.UID].Push(t)
		}
	}
	var out []*api.TaskInfo
	for !queues.Empty() {
		q := queues.Pop()
		for js := jobs[q.Name]; !js.Empty(); {
			j := js.Pop()
			for ts := tasks[j.UID]; !ts.Empty(); {
				out = append(out, ts.Pop())
			}
		}
	}
	return out
}

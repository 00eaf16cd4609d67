// Package backfill is Volcano's backfill action: it places best-effort tasks (tasks that
// request no resources and no devices) on any node that passes the predicates.
package backfill

import (
	"fmt"

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

// Execute runs the action: pending best-effort tasks in queue, job and task order; a task that
// fits nowhere is recorded and the next one tried, as in current Volcano. Each job's
// placements go through a statement of its own, committed (its tasks bound) as soon as the
// job is ready. Placements of a job still not ready at the end stay allocated for the rest of
// the cycle but are neither bound nor pipelined (Volcano allocates them without dispatching),
// and the job's explanation says so.
func (a *Action) Execute(ssn *framework.Session) {
	stmts := map[string]*framework.Statement{}
	var order []*api.JobInfo
	for _, task := range pendingTasks(ssn) {
		if ssn.Interrupted() {
			break
		}
		job := ssn.Jobs[task.Job]
		if err := ssn.PrePredicateFn(task); err != nil {
			fe := api.NewFitErrors()
			fe.Total = len(ssn.NodeList)
			for _, n := range ssn.NodeList {
				fe.SetNodeError(n.Name, err)
			}
			job.NodesFitErrors[task.UID] = fe
			continue
		}
		nodes, fe := util.PredicateNodes(task, ssn.NodeList, ssn.PredicateFn)
		if len(nodes) == 0 {
			job.NodesFitErrors[task.UID] = fe
			continue
		}
		node := util.BestNode(ssn, task, nodes)
		stmt, ok := stmts[job.UID]
		if !ok {
			stmt = ssn.NewStatement()
			stmts[job.UID] = stmt
			order = append(order, job)
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
	for _, job := range order {
		stmt := stmts[job.UID]
		if stmt.Operations() == 0 {
			continue
		}
		noteUndispatched(job, stmt.Operations())
		stmt.LeaveUndispatched()
	}
}

// noteUndispatched explains why n best-effort tasks of the job were placed but not dispatched.
func noteUndispatched(job *api.JobInfo, n int) {
	msg := fmt.Sprintf("backfill: %d best-effort task(s) placed but not dispatched: the job is not ready (%d of minAvailable %d tasks placed)",
		n, job.ReadyTaskNum(), job.MinAvailable)
	if job.JobFitErrors == "" {
		job.JobFitErrors = msg
	} else {
		job.JobFitErrors += "; " + msg
	}
}

// pendingTasks lists the pending best-effort tasks of valid, non-pending jobs: queues in queue
// order, within a queue its jobs in job order, within a job its tasks in task order.
func pendingTasks(ssn *framework.Session) []*api.TaskInfo {
	queues := util.NewPriorityQueue(ssn.QueueOrderFn)
	jobs := map[string]*util.PriorityQueue[*api.JobInfo]{}
	tasks := map[string]*util.PriorityQueue[*api.TaskInfo]{}
	skipIdle := ssn.SkipsIdleJobs()
	for _, job := range ssn.ActiveJobs() { // an idle job has no pending task
		if job.IsPending() {
			continue
		}
		if skipIdle && job.PendingBestEffortTaskNum() == 0 {
			// No pending best-effort task: the job adds nothing below (JobValid only reads).
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
	for !queues.Empty() && !ssn.Interrupted() {
		q := queues.Pop()
		for js := jobs[q.Name]; !js.Empty(); {
			j := js.Pop()
			for ts := tasks[j.UID]; !ts.Empty() && !ssn.Interrupted(); {
				out = append(out, ts.Pop())
			}
		}
	}
	return out
}

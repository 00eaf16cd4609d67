// Package reclaim is Volcano's reclaim action: a queue below its deserved share takes back
// room from reclaimable queues above theirs, evicting running preemptable tasks chosen by
// the plugins' reclaimable callbacks and pipelining its own task onto the freed node.
package reclaim

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "reclaim"

// Action is one cycle's reclaim action.
type Action struct{}

// New builds the action; it takes no arguments.
func New(conf.Arguments) (framework.Action, error) { return &Action{}, nil }

// Name returns "reclaim".
func (a *Action) Name() string { return Name }

// Execute runs the action.
func (a *Action) Execute(ssn *framework.Session) {
	queues := util.NewPriorityQueue(ssn.QueueOrderFn)
	seen := map[string]bool{}
	preemptors := map[string]*util.PriorityQueue[*api.JobInfo]{}
	tasksOf := map[string]*util.PriorityQueue[*api.TaskInfo]{}
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
		if !seen[q.Name] {
			seen[q.Name] = true
			queues.Push(q)
		}
		if !job.HasPendingTasks() {
			continue
		}
		pq, ok := preemptors[q.Name]
		if !ok {
			pq = util.NewPriorityQueue(ssn.JobOrderFn)
			preemptors[q.Name] = pq
		}
		pq.Push(job)
		tq := util.NewPriorityQueue(ssn.TaskOrderFn)
		for _, t := range job.TasksIn(api.Pending) {
			tq.Push(t)
		}
		tasksOf[job.UID] = tq
	}

	for !queues.Empty() {
		queue := queues.Pop()
		if ssn.Overused(queue) {
			continue
		}
		jobs := preemptors[queue.Name]
		if jobs == nil || jobs.Empty() {
			continue
		}
		job := jobs.Pop()
		tasks := tasksOf[job.UID]
		if tasks == nil || tasks.Empty() {
			continue
		}
		task := tasks.Pop()
		if !ssn.Preemptive(queue, task) {
			continue
		}
		if err := ssn.PrePredicateFn(task); err != nil {
			continue
		}
		if reclaimFor(ssn, job, task) {
			jobs.Push(job)
		}
		queues.Push(queue)
	}
}

// reclaimFor tries the nodes in name order and, on the first where evicting reclaimable
// tasks of other queues frees enough room, evicts them and pipelines the task.
func reclaimFor(ssn *framework.Session, job *api.JobInfo, task *api.TaskInfo) bool {
	for _, n := range ssn.NodeList {
		if err := ssn.PredicateFn(task, n); err != nil {
			continue
		}
		var reclaimees []*api.TaskInfo
		for _, t := range util.NodeTasks(n, func(t *api.TaskInfo) bool { return t.Status == api.Running && t.Preemptable }) {
			vj, ok := ssn.Jobs[t.Job]
			if !ok || vj.Queue == job.Queue {
				continue
			}
			if q := ssn.Queues[vj.Queue]; q == nil || !q.Reclaimable() {
				continue
			}
			if jt := util.JobTask(ssn, t); jt != nil {
				reclaimees = append(reclaimees, jt)
			}
		}
		if len(reclaimees) == 0 {
			continue
		}
		victims := ssn.Reclaimable(task, reclaimees)
		if err := util.ValidateVictims(task, n, victims); err != nil {
			continue
		}
		stmt := ssn.NewStatement()
		// What the node will have free anyway counts towards the task (current Volcano), pod
		// slots included.
		reclaimed := n.FutureIdle()
		pods := n.FutureIdlePods()
		enough := func() bool {
			return task.InitResreq.LessEqual(reclaimed, api.Zero) && (n.MaxPods() == 0 || pods >= 1)
		}
		vq := util.VictimsQueue(ssn, task, victims)
		for !vq.Empty() {
			v := vq.Pop()
			reason := framework.EvictReason{Action: Name, ForTask: task.UID,
				Rule: fmt.Sprintf("queue %s is above its deserved share; queue %s reclaims", ssn.Jobs[v.Job].Queue, job.Queue)}
			if err := stmt.Evict(v, reason); err != nil {
				ssn.Log.Error("reclaim evict failed", "victim", v.UID, "err", err)
				continue
			}
			reclaimed.Add(v.Resreq)
			pods++
			if enough() {
				break
			}
		}
		if enough() {
			if err := stmt.Pipeline(task, n.Name); err != nil {
				ssn.Log.Error("reclaim pipeline failed", "task", task.UID, "node", n.Name, "err", err)
			}
			stmt.Commit()
			return true
		}
		stmt.Commit()
	}
	return false
}

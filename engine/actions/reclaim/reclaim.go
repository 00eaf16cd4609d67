// Package reclaim is Volcano's reclaim action: a starving job of a queue below its deserved
// share takes back room from reclaimable queues above theirs, evicting running preemptable
// tasks chosen by the plugins' reclaimable callbacks and pipelining its own task onto the
// freed node. Each node is tried through a statement of its own, merged into the job's only
// when the task lands there; the job's statement is committed when the job is pipelined.
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
type Action struct {
	// cache (predicateErrorCacheEnable, default true, as allocate's) lets the tasks of one
	// placement class share predicate answers (util.EvictionNodes); turning it off changes
	// only the speed, never a decision (a test checks that).
	cache bool
}

// New builds the action from its `configurations` arguments.
func New(args conf.Arguments) (framework.Action, error) {
	cache, err := args.Bool("predicateErrorCacheEnable", true)
	if err != nil {
		return nil, err
	}
	return &Action{cache: cache}, nil
}

// Name returns "reclaim".
func (a *Action) Name() string { return Name }

// Execute runs the action: queues in queue order, skipping overused ones; in each, its
// starving jobs in job order, each through a statement of its own that is committed when the
// job is pipelined and discarded otherwise.
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
		if !ssn.JobStarving(job) {
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

	// Volcano pushes a queue back while it has jobs left, but goes on with its jobs at once:
	// each queue's jobs are all tried in one visit, and a queue popped again finds none.
	nodes := util.NewEvictionNodes(ssn, a.cache)
	for !queues.Empty() && !ssn.Interrupted() {
		queue := queues.Pop()
		if ssn.Overused(queue) {
			continue
		}
		for jobs := preemptors[queue.Name]; jobs != nil && !jobs.Empty(); {
			job := jobs.Pop()
			stmt := ssn.NewStatement()
			for tasks := tasksOf[job.UID]; ssn.JobStarving(job) && !tasks.Empty() && !ssn.Interrupted(); {
				task := tasks.Pop()
				if !ssn.Preemptive(queue, task) {
					continue
				}
				if err := ssn.PrePredicateFn(task); err != nil {
					continue
				}
				reclaimFor(ssn, nodes, stmt, job, task)
			}
			if ssn.JobPipelined(job) {
				stmt.Commit()
			} else {
				stmt.Discard()
			}
		}
	}
}

// reclaimFor tries the candidate nodes in name order (nodes keeps their answers per task
// class); on the first where evicting running reclaimable tasks of other queues (least
// important first, only while the task does not fit) makes room, it pipelines the task and
// adds that node's evictions to stmt.
func reclaimFor(ssn *framework.Session, nodes *util.EvictionNodes, stmt *framework.Statement, job *api.JobInfo, task *api.TaskInfo) bool {
	return nodes.ByName(task, func(n *api.NodeInfo) bool {
		if n.Evictable(api.Running) == 0 {
			return false // no running preemptable task: nothing to reclaim here
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
			return false
		}
		victims := ssn.Reclaimable(task, reclaimees)
		if err := util.ValidateVictims(task, n, victims); err != nil {
			return false
		}
		attempt := util.Eviction{
			Task: task,
			Node: n,
			Next: util.PopEach(util.VictimsQueue(ssn, task, victims)),
			// What the node will have free anyway counts towards the task (current Volcano),
			// pod slots included; evictions add to it.
			Fits: func() bool { return n.FitsFutureIdle(task.InitResreq) },
			Reason: func(v *api.TaskInfo) framework.EvictReason {
				return framework.EvictReason{Action: Name, ForTask: task.UID,
					Rule: fmt.Sprintf("queue %s is above its deserved share; queue %s reclaims", ssn.Jobs[v.Job].Queue, job.Queue)}
			},
		}
		return attempt.Try(ssn, stmt)
	})
}

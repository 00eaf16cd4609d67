// Package allocate is Volcano's allocate action: queue by queue and job by job, it places
// pending tasks on nodes through a statement per job, committed when the job's gang is ready,
// kept as pipelined reservations when the job is only pipelined, and discarded otherwise.
package allocate

import (
	"fmt"
	"strings"

	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "allocate"

// Action is one cycle's allocate action.
type Action struct {
	// predicateErrorCache (Volcano's predicateErrorCacheEnable, default true) lets tasks of
	// one placement class share predicate answers and scores. Sluice's caches are sound, so
	// turning it off changes only the speed, never a decision (a test checks that).
	predicateErrorCache bool
}

// New builds the action from its `configurations` arguments.
func New(args conf.Arguments) (framework.Action, error) {
	cache, err := args.Bool("predicateErrorCacheEnable", true)
	if err != nil {
		return nil, err
	}
	return &Action{predicateErrorCache: cache}, nil
}

// Name returns "allocate".
func (a *Action) Name() string { return Name }

// Execute runs the action.
func (a *Action) Execute(ssn *framework.Session) {
	queues := util.NewPriorityQueue(ssn.QueueOrderFn)
	jobsByQueue := map[string]*util.PriorityQueue[*api.JobInfo]{}
	enqueueConfigured := hasAction(ssn.Config, "enqueue")
	skipIdle := skipsIdleJobs(ssn)
	jobs := ssn.SortedJobs
	if skipIdle {
		jobs = ssn.ActiveJobs
	}
	for _, job := range jobs() {
		if job.IsPending() {
			if enqueueConfigured {
				continue
			}
			job.Phase = api.JobInqueue
		}
		if vr := ssn.JobValid(job); vr != nil {
			job.JobFitErrors = vr.Message
			continue
		}
		q, ok := ssn.Queues[job.Queue]
		if !ok {
			continue
		}
		jq, ok := jobsByQueue[job.Queue]
		if !ok {
			jq = util.NewPriorityQueue(ssn.JobOrderFn)
			jobsByQueue[job.Queue] = jq
			queues.Push(q)
		}
		if skipIdle && job.PendingTaskNum() == job.PendingBestEffortTaskNum() {
			// Nothing for allocate: popped, the job would only put its queue back. Its queue
			// is still visited (and checked for overuse) as when the job was pushed.
			continue
		}
		jq.Push(job)
	}
	if skipIdle {
		takeIdleQueues(ssn, queues, jobsByQueue)
	}

	run := &cycle{a: a, ssn: ssn, cache: util.NewNodeCache(ssn, a.predicateErrorCache), hyperNodeScores: map[string]map[string]float64{}}
	run.pred = run.predicate
	pending := map[string]*util.PriorityQueue[*api.TaskInfo]{}
	for !queues.Empty() && !ssn.Interrupted() {
		queue := queues.Pop()
		if ssn.Overused(queue) {
			if ssn.QueueReason(queue.Name) == "" {
				ssn.SetQueueReason(queue.Name, fmt.Sprintf("queue %s overused", queue.Name))
			}
			continue
		}
		jobs := jobsByQueue[queue.Name]
		if jobs == nil || jobs.Empty() {
			continue
		}
		job := jobs.Pop()
		tasks, ok := pending[job.UID]
		if !ok {
			tasks = util.NewPriorityQueue(ssn.TaskOrderFn)
			list := job.TasksIn(api.Pending)
			tasks.Grow(len(list))
			for _, t := range list {
				if t.BestEffort {
					continue // best-effort tasks are backfill's
				}
				tasks.Push(t)
			}
			pending[job.UID] = tasks
		}
		if tasks.Empty() {
			queues.Push(queue)
			continue
		}
		var stmt *framework.Statement
		if hard, highest := job.IsHardTopologyMode(); hard && len(ssn.Topology.Tiers) > 0 {
			var left *util.PriorityQueue[*api.TaskInfo]
			stmt, left = run.allocateInHyperNode(queue, job, tasks, highest)
			if left != nil {
				pending[job.UID] = left
				jobs.Push(job)
			}
		} else {
			stmt = run.allocateTasks(queue, job, tasks, nil, "")
			// Tasks left (the gang was ready before all were placed, or a task fitted
			// nowhere): the job comes back for them later in the cycle.
			if !tasks.Empty() {
				jobs.Push(job)
			}
		}
		if stmt != nil {
			stmt.Commit()
		}
		queues.Push(queue)
	}
}

// cycle is one run of the action over a session.
type cycle struct {
	a     *Action
	ssn   *framework.Session
	cache *util.NodeCache
	// hyperNodeScores sums, per job and hypernode, the scores of the nodes chosen while
	// trying the job in that hypernode.
	hyperNodeScores map[string]map[string]float64
	// pred is c.predicate, bound once: a method value made at each call allocates.
	pred util.PredicateFn
}

// predicate is allocate's node filter: room in the node's future idle resources, then the
// plugins' predicates.
func (c *cycle) predicate(t *api.TaskInfo, n *api.NodeInfo) error {
	if err := util.ResourceFit(t, n); err != nil {
		return err
	}
	return c.ssn.PredicateFn(t, n)
}

// allocateTasks places the job's pending tasks in task order through one statement, on all
// nodes (nodes nil) or on the nodes of one hypernode. It returns the statement when the job
// is ready (for the caller to commit); when the job is only pipelined its placements stay,
// uncommitted; otherwise they are discarded. Either way it returns nil then.
func (c *cycle) allocateTasks(queue *api.QueueInfo, job *api.JobInfo, tasks *util.PriorityQueue[*api.TaskInfo],
	nodes []*api.NodeInfo, hyperNode string) *framework.Statement {
	ssn := c.ssn
	stmt := ssn.NewStatement()
	failed := newFailureCache()
	for !tasks.Empty() && !ssn.Interrupted() {
		task := tasks.Pop()
		if !ssn.Allocatable(queue, task) {
			if ssn.QueueReason(queue.Name) == "" {
				ssn.SetQueueReason(queue.Name, fmt.Sprintf("queue %s cannot take task %s: over its allocatable share", queue.Name, task.UID))
			}
			continue
		}
		if prev := failed.lookup(ssn, task); prev != nil {
			// An identical task already fitted nowhere, and nothing since can have helped.
			job.NodesFitErrors[task.UID] = prev
			continue
		}
		if err := ssn.PrePredicateFn(task); err != nil {
			fe := api.NewFitErrors()
			all := nodes
			if all == nil {
				all = ssn.NodeList
			}
			fe.Total = len(all)
			for _, n := range all {
				fe.SetNodeError(n.Name, err)
			}
			job.NodesFitErrors[task.UID] = fe
			break
		}
		var placed util.Placement
		if nodes == nil {
			placed = c.cache.Place(task, c.pred)
		} else {
			placed = util.PlaceAmong(ssn, task, nodes, c.pred)
		}
		if placed.Node == nil {
			job.NodesFitErrors[task.UID] = placed.FitErrors
			failed.record(ssn, task, placed.FitErrors)
			if job.NeedContinueAllocating() {
				continue
			}
			break
		}
		node := placed.Node
		if hyperNode != "" {
			if c.hyperNodeScores[job.UID] == nil {
				c.hyperNodeScores[job.UID] = map[string]float64{}
			}
			c.hyperNodeScores[job.UID][hyperNode] += placed.Score
		}
		if node.FitsIdle(task.InitResreq) {
			if err := stmt.Allocate(task, node); err != nil {
				ssn.Log.Error("allocate failed", "task", task.UID, "node", node.Name, "err", err)
			}
		} else if node.FitsFutureIdle(task.InitResreq) {
			if err := stmt.Pipeline(task, node.Name); err != nil {
				ssn.Log.Error("pipeline failed", "task", task.UID, "node", node.Name, "err", err)
			}
		}
		if ssn.JobReady(job) && !tasks.Empty() {
			break
		}
	}
	switch {
	case ssn.JobReady(job):
		return stmt
	case !ssn.JobPipelined(job):
		placeable := job.ReadyTaskNum() + job.WaitingTaskNum() + job.PendingBestEffortTaskNum()
		job.JobFitErrors = fmt.Sprintf("gang: %d of minAvailable %d placeable", placeable, job.MinAvailable)
		stmt.Discard()
	}
	return nil
}

// skipsIdleJobs reports whether the action may leave jobs without pending work out of its
// job queues. A job without a pending task allocate places is, when popped, only a queue
// popped and pushed back with nothing changed in between; under the session's total orders
// the heap then pops the same queue next, so leaving the job out changes no decision, no
// overuse check's answer and no reason. That needs every queue's order key to change only
// while the queue is out of the heap (its own jobs' allocations): hierarchical queue orders
// (drf's, capacity's), where a sibling's allocation moves a parent's share, keep the walk.
// takeIdleQueues pushes the queues that a valid idle job would have brought in had the walk
// visited every job (ActiveJobs leaves idle jobs out). Popped, such a queue is only checked for
// overuse (recording its reason), as when its idle jobs were walked. The queue order is total
// and no queue's key moves while it waits (skipsIdleJobs), so the pop order does not depend on
// the order of the pushes.
func takeIdleQueues(ssn *framework.Session, queues *util.PriorityQueue[*api.QueueInfo], jobsByQueue map[string]*util.PriorityQueue[*api.JobInfo]) {
	for _, q := range ssn.SortedQueues() {
		if _, ok := jobsByQueue[q.Name]; !ok && ssn.ValidIdleJob(q.Name) != nil {
			jobsByQueue[q.Name] = util.NewPriorityQueue(ssn.JobOrderFn)
			queues.Push(q)
		}
	}
}

func skipsIdleJobs(ssn *framework.Session) bool {
	return ssn.SkipsIdleJobs() && !ssn.HierarchyEnabled("drf") && !ssn.HierarchyEnabled("capacity")
}

func hasAction(cfg *conf.Config, name string) bool {
	for _, a := range cfg.Actions {
		if strings.TrimSpace(a) == name {
			return true
		}
	}
	return false
}

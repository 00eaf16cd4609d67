// Package preempt is Volcano's preempt action: starving jobs take room from lower-priority
// work of their own queue, first between jobs, then between tasks of one job. Victims must be
// Bound or Running, preemptable, and chosen by the plugins' preemptable callbacks; the
// preemptor is pipelined onto the node its victims free. Each node is tried through a
// statement of its own, merged into the job's only when the preemptor lands there.
package preempt

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "preempt"

// Action is one cycle's preempt action.
type Action struct {
	// topologyAware (enableTopologyAwarePreemption) judges each node by simulating the
	// evictions: constraints that eviction can satisfy (a running task's anti-affinity) no
	// longer rule a node out, and victims the preemptor can live with are spared.
	topologyAware bool
	// cache (predicateErrorCacheEnable, default true, as allocate's) lets the tasks of one
	// placement class share predicate answers and scores (util.EvictionNodes); turning it off
	// changes only the speed, never a decision (a test checks that).
	cache bool
}

// New builds the action from its `configurations` arguments.
func New(args conf.Arguments) (framework.Action, error) {
	ta, err := args.Bool("enableTopologyAwarePreemption", false)
	if err != nil {
		return nil, err
	}
	cache, err := args.Bool("predicateErrorCacheEnable", true)
	if err != nil {
		return nil, err
	}
	return &Action{topologyAware: ta, cache: cache}, nil
}

// Name returns "preempt".
func (a *Action) Name() string { return Name }

// Execute runs the action. Queues with starving jobs go in queue order. In each, starving
// jobs preempt other jobs' tasks in job order, each job through a statement of its own that
// is committed when the job is pipelined and discarded otherwise; then each starving job's
// pending tasks preempt lower-priority tasks of the same job, each through a statement
// committed only when the task was pipelined.
func (a *Action) Execute(ssn *framework.Session) {
	preemptors := map[string]*util.PriorityQueue[*api.JobInfo]{}
	tasksOf := map[string]*util.PriorityQueue[*api.TaskInfo]{}
	underRequest := map[string][]*api.JobInfo{}
	queues := util.NewPriorityQueue(ssn.QueueOrderFn)
	for _, job := range ssn.SortedJobs() {
		if job.IsPending() {
			continue
		}
		if vr := ssn.JobValid(job); vr != nil {
			continue
		}
		queue, ok := ssn.Queues[job.Queue]
		if !ok || !ssn.JobStarving(job) {
			continue
		}
		pq, ok := preemptors[job.Queue]
		if !ok {
			pq = util.NewPriorityQueue(ssn.JobOrderFn)
			preemptors[job.Queue] = pq
			queues.Push(queue)
		}
		pq.Push(job)
		underRequest[job.Queue] = append(underRequest[job.Queue], job)
		tasksOf[job.UID] = pendingTasks(ssn, job)
	}

	nodes := util.NewEvictionNodes(ssn, a.cache)
	for !queues.Empty() && !ssn.Interrupted() {
		queue := queues.Pop()
		// Preemption between jobs of the queue.
		for pq := preemptors[queue.Name]; !pq.Empty(); {
			job := pq.Pop()
			stmt := ssn.NewStatement()
			for ssn.JobStarving(job) && !tasksOf[job.UID].Empty() && !ssn.Interrupted() {
				preemptor := tasksOf[job.UID].Pop()
				a.preempt(ssn, nodes, stmt, preemptor, func(t *api.TaskInfo) bool {
					if !preemptable(preemptor, t) {
						return false
					}
					vj, found := ssn.Jobs[t.Job]
					return found && vj.Queue == job.Queue && t.Job != preemptor.Job
				})
			}
			if !ssn.JobPipelined(job) {
				stmt.Discard()
				noteFailure(ssn, job)
				continue
			}
			stmt.Commit()
		}
		// Preemption between tasks of one job.
		for _, job := range underRequest[queue.Name] {
			tasks := pendingTasks(ssn, job)
			for !tasks.Empty() && !ssn.Interrupted() {
				preemptor := tasks.Pop()
				stmt := ssn.NewStatement()
				if !a.preempt(ssn, nodes, stmt, preemptor, func(t *api.TaskInfo) bool {
					return preemptable(preemptor, t) && t.Job == preemptor.Job
				}) {
					stmt.Discard()
					break
				}
				stmt.Commit()
			}
		}
	}
	// Volcano's preempt offers the victim-task plugins no tasks: only those that choose
	// victims on their own (rescheduling) act here.
	EvictVictimTasks(ssn, Name, nil)
}

// preemptable is the filter every preemption applies: the victim is Bound or Running, a
// best-effort preemptor only displaces best-effort tasks, and the victim is marked
// preemptable.
func preemptable(preemptor, t *api.TaskInfo) bool {
	if !util.PreemptableStatus(t.Status) {
		return false
	}
	if preemptor.BestEffort && !t.BestEffort {
		return false
	}
	return t.Preemptable
}

func pendingTasks(ssn *framework.Session, job *api.JobInfo) *util.PriorityQueue[*api.TaskInfo] {
	q := util.NewPriorityQueue(ssn.TaskOrderFn)
	for _, t := range job.TasksIn(api.Pending) {
		q.Push(t)
	}
	return q
}

// preempt tries to place the preemptor on a node by evicting victims there, adding what it
// did to stmt; it reports whether the preemptor was pipelined.
func (a *Action) preempt(ssn *framework.Session, nodes *util.EvictionNodes, stmt *framework.Statement, preemptor *api.TaskInfo, filter func(*api.TaskInfo) bool) bool {
	if err := ssn.PrePredicateFn(preemptor); err != nil {
		return false
	}
	if a.topologyAware {
		return preemptBySimulation(ssn, stmt, preemptor, filter)
	}
	return normalPreempt(ssn, nodes, stmt, preemptor, filter)
}

// normalPreempt is Volcano's normalPreempt: the nodes where only room is missing, best score
// first (ties by name), are tried one by one (nodes keeps their answers per task class). On
// each, victims go least important first until the preemptor fits (its queue allows it, the
// node's future idle resources hold it and the predicates pass); the first node where it fits
// gets it, and only that node's evictions join stmt.
func normalPreempt(ssn *framework.Session, nodes *util.EvictionNodes, stmt *framework.Statement, preemptor *api.TaskInfo, filter func(*api.TaskInfo) bool) bool {
	queue := ssn.Queues[ssn.Jobs[preemptor.Job].Queue]
	return nodes.ByScore(preemptor, func(node *api.NodeInfo) bool {
		if node.Evictable(api.Bound)+node.Evictable(api.Running) == 0 {
			return false // no Bound or Running preemptable task: no victim here
		}
		victims := ssn.Preemptable(preemptor, jobTasks(ssn, node, filter))
		if err := util.ValidateVictims(preemptor, node, victims); err != nil {
			return false
		}
		attempt := util.Eviction{
			Task: preemptor,
			Node: node,
			Next: util.PopEach(util.VictimsQueue(ssn, preemptor, victims)),
			Fits: func() bool {
				return ssn.Allocatable(queue, preemptor) && node.FitsFutureIdle(preemptor.InitResreq) &&
					ssn.PredicateFn(preemptor, node) == nil
			},
			Reason: func(v *api.TaskInfo) framework.EvictReason {
				return framework.EvictReason{Action: Name, ForTask: preemptor.UID, Rule: rule(ssn, preemptor, v)}
			},
		}
		return attempt.Try(ssn, stmt)
	})
}

// jobTasks returns the session's views of the node's tasks that pass filter, by UID.
func jobTasks(ssn *framework.Session, node *api.NodeInfo, filter func(*api.TaskInfo) bool) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, t := range util.NodeTasks(node, filter) {
		if jt := util.JobTask(ssn, t); jt != nil {
			out = append(out, jt)
		}
	}
	return out
}

// rule says in words why the victim could be evicted for the preemptor.
func rule(ssn *framework.Session, preemptor, victim *api.TaskInfo) string {
	if preemptor.Job == victim.Job {
		return fmt.Sprintf("task priority %d > %d within job %s", preemptor.Priority, victim.Priority, victim.Job)
	}
	pj, vj := ssn.Jobs[preemptor.Job], ssn.Jobs[victim.Job]
	if pj.Priority != vj.Priority {
		return fmt.Sprintf("job priority %d > %d in queue %s", pj.Priority, vj.Priority, pj.Queue)
	}
	return fmt.Sprintf("preemptor job %s goes before %s in queue %s", pj.UID, vj.UID, pj.Queue)
}

// noteFailure records why a starving job could not preempt.
func noteFailure(ssn *framework.Session, job *api.JobInfo) {
	need := api.EmptyResource()
	for _, t := range job.TasksIn(api.Pending) {
		need = t.InitResreq
		break
	}
	msg := fmt.Sprintf("preempt: no node where evicting preemptable lower-priority tasks frees %s", need)
	if job.JobFitErrors == "" {
		job.JobFitErrors = msg
	} else {
		job.JobFitErrors += "; " + msg
	}
}

// EvictVictimTasks evicts what the victim-task callbacks choose among candidates and commits
// at once.
func EvictVictimTasks(ssn *framework.Session, action string, candidates []*api.TaskInfo) {
	victims := ssn.VictimTasks(candidates)
	if len(victims) == 0 {
		return
	}
	stmt := ssn.NewStatement()
	for _, v := range victims {
		if jt := util.JobTask(ssn, v); jt != nil && jt.Status == api.Running {
			if err := stmt.Evict(jt, framework.EvictReason{Action: action, Rule: "chosen by a victim-tasks plugin"}); err != nil {
				ssn.Log.Error("victim evict failed", "victim", v.UID, "err", err)
			}
		}
	}
	stmt.Commit()
}

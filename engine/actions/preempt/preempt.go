// Package preempt is Volcano's preempt action: starving jobs take room from lower-priority
// work of their own queue, first between jobs, then between tasks of one job. Victims must be
// running and preemptable and chosen by the plugins' preemptable callbacks; the preemptor is
// pipelined onto the node its victims free.
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
}

// New builds the action from its `configurations` arguments.
func New(args conf.Arguments) (framework.Action, error) {
	ta, err := args.Bool("enableTopologyAwarePreemption", false)
	if err != nil {
		return nil, err
	}
	return &Action{topologyAware: ta}, nil
}

// Name returns "preempt".
func (a *Action) Name() string { return Name }

// Execute runs the action.
func (a *Action) Execute(ssn *framework.Session) {
	preemptors := map[string]*util.PriorityQueue[*api.JobInfo]{}
	tasksOf := map[string]*util.PriorityQueue[*api.TaskInfo]{}
	var underRequest []*api.JobInfo
	queueSet := map[string]bool{}
	for _, job := range ssn.SortedJobs() {
		if job.IsPending() {
			continue
		}
		if vr := ssn.JobValid(job); vr != nil {
			continue
		}
		if _, ok := ssn.Queues[job.Queue]; !ok {
			continue
		}
		queueSet[job.Queue] = true
		if !ssn.JobStarving(job) {
			continue
		}
		pq, ok := preemptors[job.Queue]
		if !ok {
			pq = util.NewPriorityQueue(ssn.JobOrderFn)
			preemptors[job.Queue] = pq
		}
		pq.Push(job)
		underRequest = append(underRequest, job)
		tasksOf[job.UID] = pendingTasks(ssn, job)
	}

	for _, queue := range ssn.SortedQueues() {
		if !queueSet[queue.Name] {
			continue
		}
		// Preemption between jobs of the queue.
		for pq := preemptors[queue.Name]; pq != nil && !pq.Empty(); {
			job := pq.Pop()
			stmt := ssn.NewStatement()
			assigned := false
			for ssn.JobStarving(job) && !tasksOf[job.UID].Empty() {
				preemptor := tasksOf[job.UID].Pop()
				ok := a.preempt(ssn, stmt, preemptor, func(t *api.TaskInfo) bool {
					if !preemptable(preemptor, t) {
						return false
					}
					vj, found := ssn.Jobs[t.Job]
					return found && vj.Queue == job.Queue && t.Job != preemptor.Job
				})
				assigned = assigned || ok
			}
			if !ssn.JobPipelined(job) {
				stmt.Discard()
				noteFailure(ssn, job)
				continue
			}
			stmt.Commit()
			if assigned {
				pq.Push(job)
			}
		}
		// Preemption between tasks of one job.
		for _, job := range underRequest {
			if job.Queue != queue.Name {
				continue
			}
			tasks := pendingTasks(ssn, job)
			for !tasks.Empty() {
				preemptor := tasks.Pop()
				stmt := ssn.NewStatement()
				ok := a.preempt(ssn, stmt, preemptor, func(t *api.TaskInfo) bool {
					return preemptable(preemptor, t) && t.Job == preemptor.Job
				})
				stmt.Commit()
				if !ok {
					break
				}
			}
		}
	}
	// Volcano's preempt offers the victim-task plugins no tasks: only those that choose
	// victims on their own (rescheduling) act here.
	EvictVictimTasks(ssn, Name, nil)
}

// preemptable is the filter every preemption applies: the victim runs, a best-effort
// preemptor only displaces best-effort tasks, and the victim is marked preemptable.
func preemptable(preemptor, t *api.TaskInfo) bool {
	if t.Status != api.Running {
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

// preempt tries to place the preemptor on a node by evicting victims there; it reports
// whether the preemptor was pipelined.
func (a *Action) preempt(ssn *framework.Session, stmt *framework.Statement, preemptor *api.TaskInfo, filter func(*api.TaskInfo) bool) bool {
	if err := ssn.PrePredicateFn(preemptor); err != nil {
		return false
	}
	if a.topologyAware {
		return preemptBySimulation(ssn, stmt, preemptor, filter)
	}
	job := ssn.Jobs[preemptor.Job]
	queue := ssn.Queues[job.Queue]
	// Nodes where only room is missing: predicates that eviction cannot fix rule a node out.
	var candidates []*api.NodeInfo
	for _, n := range ssn.NodeList {
		if err := ssn.PredicateFn(preemptor, n); err != nil && !api.AsFitError(n.Name, err).Resolvable() {
			continue
		}
		candidates = append(candidates, n)
	}
	nodes := util.SortByScore(candidates, util.PrioritizeNodes(ssn, preemptor, candidates))
	for _, node := range nodes {
		var preemptees []*api.TaskInfo
		for _, t := range util.NodeTasks(node, filter) {
			if jt := util.JobTask(ssn, t); jt != nil {
				preemptees = append(preemptees, jt)
			}
		}
		victims := ssn.Preemptable(preemptor, preemptees)
		if err := util.ValidateVictims(preemptor, node, victims); err != nil {
			continue
		}
		fits := func() bool {
			return ssn.Allocatable(queue, preemptor) && node.FitsFutureIdle(preemptor.InitResreq) &&
				devicesFit(ssn, preemptor, node)
		}
		vq := util.VictimsQueue(ssn, preemptor, victims)
		for !vq.Empty() {
			if fits() {
				break
			}
			v := vq.Pop()
			if err := stmt.Evict(v, framework.EvictReason{Action: Name, ForTask: preemptor.UID, Rule: rule(ssn, preemptor, v)}); err != nil {
				ssn.Log.Error("preempt evict failed", "victim", v.UID, "err", err)
			}
		}
		if fits() {
			if err := stmt.Pipeline(preemptor, node.Name); err != nil {
				ssn.Log.Error("preempt pipeline failed", "task", preemptor.UID, "node", node.Name, "err", err)
			}
			return true
		}
	}
	return false
}

// devicesFit reports whether a preemptor that asks for devices passes the predicates on the
// node, whose device usage eviction frees at once. Tasks without device requests are judged
// by resources alone, as in Volcano.
func devicesFit(ssn *framework.Session, preemptor *api.TaskInfo, node *api.NodeInfo) bool {
	if preemptor.Spec == nil || len(preemptor.Spec.Devices) == 0 {
		return true
	}
	return ssn.PredicateFn(preemptor, node) == nil
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

package slurm

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Action kinds.
const (
	ActionStart   = "start"
	ActionRequeue = "requeue"
	ActionCancel  = "cancel"
	ActionHold    = "hold"
)

// Action is one thing the executor did (or tried) to a Slurm job.
type Action struct {
	Kind  string
	JobID int64
	// Job is the Sluice job name.
	Job string
	// Nodes: for a start, the nodes in task order; for an eviction, the nodes Sluice
	// evicted tasks from.
	Nodes []string
	// ForTasks: for an eviction, the tasks it makes room for.
	ForTasks []string
	// Commands run, in order.
	Commands []string
	// Err is the first failure; nil when every command succeeded.
	Err error
}

// Executor carries out applied plan decisions with scontrol and scancel.
type Executor struct {
	Runner    Runner
	Commands  Commands
	EvictMode EvictMode
	Logger    *slog.Logger
}

func (e *Executor) logger() *slog.Logger {
	if e.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return e.Logger
}

// Execute carries out the decisions a commit applied, evictions first (a job evicted in
// part is evicted whole: Slurm has no partial job), then binds (a job starts once every
// one of its tasks has a node). st is the state the plan was made on.
func (e *Executor) Execute(ctx context.Context, st *ClusterState, applied []*sluicev1.Decision) []Action {
	type evictGroup struct {
		nodes, forTasks []string
	}
	var evictOrder, bindOrder []string
	evicts := map[string]*evictGroup{}
	binds := map[string]map[string]string{} // job -> task -> node
	for _, d := range applied {
		switch k := d.GetKind().(type) {
		case *sluicev1.Decision_Evict:
			job := k.Evict.GetJob().GetName()
			g := evicts[job]
			if g == nil {
				g = &evictGroup{}
				evicts[job] = g
				evictOrder = append(evictOrder, job)
			}
			g.nodes = appendUnique(g.nodes, k.Evict.GetNode())
			if f := sluice.FullName(k.Evict.GetForTask()); f != "" {
				g.forTasks = appendUnique(g.forTasks, f)
			}
		case *sluicev1.Decision_Bind:
			job := k.Bind.GetJob().GetName()
			if binds[job] == nil {
				binds[job] = map[string]string{}
				bindOrder = append(bindOrder, job)
			}
			binds[job][k.Bind.GetTask().GetName()] = k.Bind.GetNode()
		}
	}

	var actions []Action
	for _, job := range evictOrder {
		g := evicts[job]
		actions = append(actions, e.evict(ctx, st, job, g.nodes, g.forTasks))
	}
	for _, job := range bindOrder {
		actions = append(actions, e.start(ctx, st, job, binds[job]))
	}
	return actions
}

func (e *Executor) evict(ctx context.Context, st *ClusterState, job string, nodes, forTasks []string) Action {
	log := e.logger()
	a := Action{Kind: ActionRequeue, Job: job, Nodes: nodes, ForTasks: forTasks}
	if e.EvictMode == EvictCancel {
		a.Kind = ActionCancel
	}
	sj := st.SlurmJobs[job]
	if sj == nil {
		a.Err = fmt.Errorf("evict %s: not a Slurm job this adapter knows", job)
		log.Warn("slurm: evict skipped", "job", job, "err", a.Err)
		return a
	}
	a.JobID = sj.ID
	id := strconv.FormatInt(sj.ID, 10)
	switch {
	case a.Kind == ActionCancel:
		a.Err = e.run(ctx, &a, e.Commands.scancel(), id)
	case sj.Kind == KindDispatched || sj.Kind == KindWaiting:
		// Released but not started yet: holding it again is the requeue.
		a.Err = e.run(ctx, &a, e.Commands.scontrol(), "hold", id)
	default:
		a.Err = e.run(ctx, &a, e.Commands.scontrol(), "requeuehold", id)
	}
	attrs := []any{"job", job, "slurm_job", sj.ID, "nodes", strings.Join(nodes, ","), "for", strings.Join(forTasks, ",")}
	if a.Err != nil {
		log.Error("slurm: evict failed", append(attrs, "action", a.Kind, "err", a.Err)...)
	} else {
		log.Info("slurm: evicted job", append(attrs, "action", a.Kind)...)
	}
	return a
}

func (e *Executor) start(ctx context.Context, st *ClusterState, job string, taskNodes map[string]string) Action {
	log := e.logger()
	a := Action{Kind: ActionStart, Job: job}
	sj := st.SlurmJobs[job]
	if sj == nil {
		a.Err = fmt.Errorf("start %s: not a Slurm job this adapter knows", job)
		log.Warn("slurm: start skipped", "job", job, "err", a.Err)
		return a
	}
	a.JobID = sj.ID
	if sj.Kind != KindWaiting {
		a.Err = fmt.Errorf("start %s: Slurm job %d is %s, not waiting", job, sj.ID, sj.Kind)
		log.Warn("slurm: start skipped", "job", job, "slurm_job", sj.ID, "err", a.Err)
		return a
	}
	seen := map[string]bool{}
	for _, t := range sj.TaskNames {
		n, ok := taskNodes[t]
		if !ok {
			a.Err = fmt.Errorf("start %s: %d of %d tasks bound; a Slurm job starts whole", job, len(taskNodes), len(sj.TaskNames))
			log.Warn("slurm: start skipped", "job", job, "slurm_job", sj.ID, "err", a.Err)
			return a
		}
		if seen[n] {
			a.Err = fmt.Errorf("start %s: two tasks bound to node %s; a Slurm job takes distinct nodes", job, n)
			log.Warn("slurm: start skipped", "job", job, "slurm_job", sj.ID, "err", a.Err)
			return a
		}
		seen[n] = true
		a.Nodes = append(a.Nodes, n)
	}
	id := strconv.FormatInt(sj.ID, 10)
	// StartTime=now lifts the delay Slurm puts on a requeued job (cred_expire, 120 s by
	// default); a job whose user asked for a later begin time is never bound.
	if a.Err = e.run(ctx, &a, e.Commands.scontrol(), "update", "JobId="+id, "NodeList="+strings.Join(a.Nodes, ","), "StartTime=now"); a.Err == nil {
		a.Err = e.run(ctx, &a, e.Commands.scontrol(), "release", id)
	}
	if a.Err != nil {
		log.Error("slurm: start failed", "job", job, "slurm_job", sj.ID, "nodes", strings.Join(a.Nodes, ","), "err", a.Err)
	} else {
		log.Info("slurm: started job", "job", job, "slurm_job", sj.ID, "name", sj.Name, "nodes", strings.Join(a.Nodes, ","))
	}
	return a
}

// Hold holds a released job again (it goes back to waiting for Sluice), for the reason
// given.
func (e *Executor) Hold(ctx context.Context, job string, sj *SlurmJob, reason string) Action {
	a := Action{Kind: ActionHold, JobID: sj.ID, Job: job}
	a.Err = e.run(ctx, &a, e.Commands.scontrol(), "hold", strconv.FormatInt(sj.ID, 10))
	if a.Err != nil {
		e.logger().Error("slurm: hold failed", "job", job, "slurm_job", sj.ID, "reason", reason, "err", a.Err)
	} else {
		e.logger().Warn("slurm: held job again", "job", job, "slurm_job", sj.ID, "reason", reason)
	}
	return a
}

func (e *Executor) run(ctx context.Context, a *Action, name string, args ...string) error {
	line := commandLine(name, args)
	a.Commands = append(a.Commands, line)
	e.logger().Debug("slurm: run", "command", line)
	_, err := e.Runner.Run(ctx, name, args...)
	return err
}

func appendUnique(l []string, v string) []string {
	for _, x := range l {
		if x == v {
			return l
		}
	}
	return append(l, v)
}

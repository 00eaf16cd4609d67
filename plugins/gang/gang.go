package gang

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "gang"

// Reasons of an invalid job, as Volcano's PodGroup condition reasons.
const (
	// ReasonNotEnoughPodsOfTask: some role has fewer live tasks than its minimum.
	ReasonNotEnoughPodsOfTask = "NotEnoughPodsOfTask"
	// ReasonNotEnoughTasks: the job has fewer valid tasks than minAvailable.
	ReasonNotEnoughTasks = "NotEnoughTasks"
)

type plugin struct{}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) { return &plugin{}, nil }

func (*plugin) Name() string { return Name }

func (*plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddJobValidFn(Name, validate)
	evictable := func(_ *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return victims(ssn, candidates), framework.Permit
	}
	ssn.AddReclaimableFn(Name, evictable)
	ssn.AddPreemptableFn(Name, evictable)
	// Gang-aware eviction keeps gangs whole through its victim bundles (safe surplus tasks
	// apart from whole gangs), so here every candidate may go.
	ssn.AddUnifiedEvictableFn(Name, func(_ *framework.EvictionContext, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return candidates, framework.Permit
	})
	ssn.AddJobOrderFn(Name, func(l, r *api.JobInfo) int {
		lr, rr := l.IsReady(), r.IsReady()
		switch {
		case lr == rr:
			return 0
		case lr:
			return 1
		}
		return -1
	})
	ssn.AddJobReadyFn(Name, ready)
	ssn.AddJobPipelinedFn(Name, func(j *api.JobInfo) framework.Vote {
		if pipelined(j) {
			return framework.Permit
		}
		return framework.Reject
	})
	ssn.AddJobStarvingFn(Name, func(j *api.JobInfo) bool { return j.IsStarving() })
}

// OnSessionClose explains the jobs whose gang could not be satisfied this cycle.
func (*plugin) OnSessionClose(ssn *framework.Session) {
	for _, j := range ssn.ActiveJobs() { // an idle job has no pending task
		if !j.HasPendingTasks() || len(j.Tasks) == 0 || j.IsPending() || ready(j) || pipelined(j) {
			continue
		}
		if j.JobFitErrors == "" {
			j.JobFitErrors = Message(j)
		}
	}
}

// Message is the job-level reason of a gang that could not be satisfied: how many tasks are
// placed or pipelined against minAvailable.
func Message(j *api.JobInfo) string {
	return fmt.Sprintf("gang: %d of minAvailable %d placeable", j.ReadyTaskNum()+j.WaitingTaskNum(), j.MinAvailable)
}

func validate(j *api.JobInfo) *framework.ValidateResult {
	if !j.CheckTaskValid() {
		return &framework.ValidateResult{
			Reason:  ReasonNotEnoughPodsOfTask,
			Message: "Not enough valid pods of each task for gang-scheduling",
		}
	}
	if vtn := j.ValidTaskNum(); vtn < j.MinAvailable {
		return &framework.ValidateResult{
			Reason:  ReasonNotEnoughTasks,
			Message: fmt.Sprintf("Not enough valid tasks for gang-scheduling, valid: %d, min: %d", vtn, j.MinAvailable),
		}
	}
	return nil
}

func ready(j *api.JobInfo) bool { return j.CheckTaskReady() && j.IsReady() }

func pipelined(j *api.JobInfo) bool { return j.CheckTaskPipelined() && j.IsPipelined() }

// victims keeps, in order, the candidates whose job still has more ready tasks than
// minAvailable once the victims chosen before them are gone.
func victims(ssn *framework.Session, candidates []*api.TaskInfo) []*api.TaskInfo {
	var out []*api.TaskInfo
	occupied := map[string]int32{}
	for _, c := range candidates {
		j := ssn.Jobs[c.Job]
		if j == nil {
			continue
		}
		n, ok := occupied[j.UID]
		if !ok {
			n = j.ReadyTaskNum()
		}
		if n > j.MinAvailable {
			n--
			out = append(out, c)
		}
		occupied[j.UID] = n
	}
	return out
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

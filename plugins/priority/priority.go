package priority

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "priority"

type plugin struct{}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) { return &plugin{}, nil }

func (*plugin) Name() string { return Name }

func (*plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddTaskOrderFn(Name, func(l, r *api.TaskInfo) int { return higherFirst(l.Priority, r.Priority) })
	ssn.AddJobOrderFn(Name, func(l, r *api.JobInfo) int { return higherFirst(l.Priority, r.Priority) })
	ssn.AddPreemptableFn(Name, func(preemptor *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return victims(ssn, preemptor, candidates), framework.Permit
	})
	ssn.AddUnifiedEvictableFn(Name, func(ctx *framework.EvictionContext, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		if ctx.Kind == framework.EvictionKindGangReclaim {
			// Reclaim across queues is a matter of shares, not of priority.
			return candidates, framework.Permit
		}
		return lowerJobs(ssn, ctx.Job, candidates), framework.Permit
	})
	ssn.AddJobStarvingFn(Name, func(j *api.JobInfo) bool {
		return j.ReadyTaskNum()+j.WaitingTaskNum() < int32(len(j.Tasks))
	})
}

func (*plugin) OnSessionClose(*framework.Session) {}

// higherFirst orders a higher priority before a lower one.
func higherFirst(l, r int32) int {
	switch {
	case l > r:
		return -1
	case l < r:
		return 1
	}
	return 0
}

// lowerJobs keeps the candidates whose job has a lower priority than job (none without a job).
func lowerJobs(ssn *framework.Session, job *api.JobInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	if job == nil {
		return nil
	}
	var out []*api.TaskInfo
	for _, c := range candidates {
		if cj := ssn.Jobs[c.Job]; cj != nil && cj.Priority < job.Priority {
			out = append(out, c)
		}
	}
	return out
}

// victims keeps the candidates of lower priority than the preemptor: job priority across jobs,
// task priority within the preemptor's own job.
func victims(ssn *framework.Session, preemptor *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	pj := ssn.Jobs[preemptor.Job]
	if pj == nil {
		return nil
	}
	var out []*api.TaskInfo
	for _, c := range candidates {
		cj := ssn.Jobs[c.Job]
		if cj == nil {
			continue
		}
		if cj.UID != pj.UID {
			if cj.Priority < pj.Priority {
				out = append(out, c)
			}
			continue
		}
		if c.Priority < preemptor.Priority {
			out = append(out, c)
		}
	}
	return out
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

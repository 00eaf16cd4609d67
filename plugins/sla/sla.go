package sla

import (
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "sla"

// Keys of the waiting time: the plugin argument (also a job annotation) and the job annotation
// that takes precedence.
const (
	JobWaitingTime        = "sla-waiting-time"
	VolcanoJobWaitingTime = "volcano.sh/sla-waiting-time"
)

type plugin struct {
	// global is the cluster-wide waiting time; nil when the argument is not given.
	global *time.Duration
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. The argument sla-waiting-time is a positive Go
// duration such as "1h"; as in Volcano (and its tests), any other value is ignored and the
// plugin runs without a global waiting time, jobs' own annotations still applying.
func New(args conf.Arguments) (framework.Plugin, error) {
	p := &plugin{}
	if _, ok := args[JobWaitingTime]; ok {
		if d, err := args.Duration(JobWaitingTime, 0); err == nil && d > 0 {
			p.global = &d
		}
	}
	return p, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddJobOrderFn(Name, p.jobOrder)
	vote := func(j *api.JobInfo) framework.Vote { return p.permit(ssn, j) }
	// A job past its waiting time is enqueued at once and may be pipelined, so the cluster
	// reserves room for it.
	ssn.AddJobEnqueueableFn(Name, vote)
	ssn.AddJobPipelinedFn(Name, vote)
	ssn.AddWakeUpFn(Name, func() (time.Time, bool) { return p.wakeUp(ssn) })
}

// wakeUp is the earliest deadline (creation time + waiting time) still ahead of the session's
// clock: from then on the plugin permits that job.
func (p *plugin) wakeUp(ssn *framework.Session) (time.Time, bool) {
	var at time.Time
	found := false
	for _, j := range ssn.Jobs {
		w := p.waitingTime(j)
		if w == nil {
			continue
		}
		if d := j.CreationTimestamp.Add(*w); d.After(ssn.Now) && (!found || d.Before(at)) {
			at, found = d, true
		}
	}
	return at, found
}

func (*plugin) OnSessionClose(*framework.Session) {}

// jobWaitingTime reads a job's own waiting time from its annotations, volcano.sh/sla-waiting-time
// first, then sla-waiting-time; a value that is not a positive duration is ignored.
func jobWaitingTime(j *api.JobInfo) *time.Duration {
	if j.WaitingTime != nil {
		return j.WaitingTime
	}
	if j.Spec == nil {
		return nil
	}
	for _, key := range []string{VolcanoJobWaitingTime, JobWaitingTime} {
		v, ok := j.Spec.Annotations[key]
		if !ok {
			continue
		}
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			return &d
		}
	}
	return nil
}

// waitingTime is the job's own waiting time, else the cluster-wide one, else nil.
func (p *plugin) waitingTime(j *api.JobInfo) *time.Duration {
	if d := jobWaitingTime(j); d != nil {
		return d
	}
	return p.global
}

// jobOrder puts jobs with a waiting time before jobs without, and among them the one whose
// deadline (creation time + waiting time) comes first.
func (p *plugin) jobOrder(l, r *api.JobInfo) int {
	lw, rw := p.waitingTime(l), p.waitingTime(r)
	switch {
	case lw == nil && rw == nil:
		return 0
	case lw == nil:
		return 1
	case rw == nil:
		return -1
	}
	ld, rd := l.CreationTimestamp.Add(*lw), r.CreationTimestamp.Add(*rw)
	switch {
	case ld.Before(rd):
		return -1
	case ld.After(rd):
		return 1
	}
	return 0
}

// permit is Permit for a job that has waited at least its waiting time since its creation
// (measured on the session's clock), Abstain otherwise.
func (p *plugin) permit(ssn *framework.Session, j *api.JobInfo) framework.Vote {
	w := p.waitingTime(j)
	if w == nil || ssn.Now.Sub(j.CreationTimestamp) < *w {
		return framework.Abstain
	}
	return framework.Permit
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

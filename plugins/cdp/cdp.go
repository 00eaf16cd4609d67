package cdp

import (
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "cdp"

// CooldownTime is the label or annotation that sets a task's cooldown, a Go duration such as
// "600s".
const CooldownTime = "volcano.sh/cooldown-time"

type plugin struct{}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) { return &plugin{}, nil }

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	filter := func(_ *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		var victims []*api.TaskInfo
		for _, c := range candidates {
			if !cooling(c, ssn.Now) {
				victims = append(victims, c)
			}
		}
		return victims, framework.Permit
	}
	ssn.AddPreemptableFn(Name, filter)
	ssn.AddReclaimableFn(Name, filter)
	ssn.AddWakeUpFn(Name, func() (time.Time, bool) { return wakeUp(ssn) })
}

// wakeUp is the earliest end of a cooldown still ahead of the session's clock among running
// tasks: from then on the task may be a victim.
func wakeUp(ssn *framework.Session) (time.Time, bool) {
	var at time.Time
	found := false
	for _, j := range ssn.Jobs {
		for _, t := range j.TaskStatusIndex[api.Running] {
			if !cooling(t, ssn.Now) {
				continue
			}
			d, _ := cooldown(t)
			if end := t.StartedAt.Add(d); !found || end.Before(at) {
				at, found = end, true
			}
		}
	}
	return at, found
}

func (*plugin) OnSessionClose(*framework.Session) {}

// cooldown returns the task's cooldown from its labels, else its annotations; a value that is
// not a duration disables it.
func cooldown(t *api.TaskInfo) (time.Duration, bool) {
	v, ok := t.Labels()[CooldownTime]
	if !ok {
		if v, ok = t.Annotations()[CooldownTime]; !ok {
			return 0, false
		}
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, false
	}
	return d, true
}

// cooling reports whether a running task is still within its cooldown: it started less than
// the cooldown before now. A task that is not running, or has no start time, is not protected.
func cooling(t *api.TaskInfo, now time.Time) bool {
	d, ok := cooldown(t)
	if !ok || t.Status != api.Running || t.StartedAt.IsZero() {
		return false
	}
	return t.StartedAt.Add(d).After(now)
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

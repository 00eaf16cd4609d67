package drf

import (
	"cmp"
	"math"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// Name is the plugin's configuration name.
const Name = "drf"

// shareDelta is how close two shares must be to count as equal when choosing victims.
const shareDelta = 0.000001

// attr is a job's allocation and dominant share.
type attr struct {
	allocated *api.Resource
	share     float64
	dominant  string
}

type plugin struct {
	total *api.Resource
	jobs  map[string]*attr
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) {
	return &plugin{total: api.EmptyResource(), jobs: map[string]*attr{}}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	if hierarchyEnabled(ssn) {
		ssn.Log.Warn("drf: enableHierarchy is not supported; using flat dominant resource fairness")
	}
	p.total = ssn.TotalResource.Clone()
	for _, j := range ssn.SortedJobs() {
		a := &attr{allocated: api.EmptyResource()}
		for _, t := range j.SortedTasks() {
			if api.AllocatedStatus(t.Status) {
				a.allocated.Add(t.Resreq)
			}
		}
		p.update(a)
		p.jobs[j.UID] = a
	}

	ssn.AddPreemptableFn(Name, p.preemptable)
	ssn.AddJobOrderFn(Name, func(l, r *api.JobInfo) int {
		return cmp.Compare(p.jobShare(l.UID), p.jobShare(r.UID))
	})
	ssn.AddEventHandler(&framework.EventHandler{
		AllocateFunc: func(e *framework.Event) {
			if a := p.jobs[e.Task.Job]; a != nil {
				a.allocated.Add(e.Task.Resreq)
				p.update(a)
			}
		},
		DeallocateFunc: func(e *framework.Event) {
			if a := p.jobs[e.Task.Job]; a != nil {
				a.allocated.Sub(e.Task.Resreq)
				p.update(a)
			}
		},
	})
}

func (p *plugin) OnSessionClose(*framework.Session) {}

// jobShare returns a job's dominant share (0 for a job the plugin does not know).
func (p *plugin) jobShare(job string) float64 {
	if a := p.jobs[job]; a != nil {
		return a.share
	}
	return 0
}

func (p *plugin) preemptable(preemptor *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
	la := p.jobs[preemptor.Job]
	if la == nil {
		return nil, framework.Permit
	}
	_, ls := resutil.DominantShare(la.allocated.Clone().Add(preemptor.Resreq), p.total)
	var victims []*api.TaskInfo
	remaining := map[string]*api.Resource{}
	for _, c := range candidates {
		alloc, ok := remaining[c.Job]
		if !ok {
			ra := p.jobs[c.Job]
			if ra == nil {
				continue
			}
			alloc = ra.allocated.Clone()
			remaining[c.Job] = alloc
		}
		// As in Volcano, the candidate is taken off its job's allocation whether or not it
		// becomes a victim.
		_, rs := resutil.DominantShare(alloc.Sub(c.Resreq), p.total)
		if ls < rs || math.Abs(ls-rs) <= shareDelta {
			victims = append(victims, c)
		}
	}
	return victims, framework.Permit
}

func (p *plugin) update(a *attr) { a.dominant, a.share = resutil.DominantShare(a.allocated, p.total) }

func hierarchyEnabled(ssn *framework.Session) bool {
	for _, tier := range ssn.Tiers {
		for _, opt := range tier.Plugins {
			if opt.Name == Name {
				return opt.Enabled(conf.FlagHierarchy)
			}
		}
	}
	return false
}

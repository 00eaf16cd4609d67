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

// attr is a job's (or, in the hierarchy, a queue's) allocation and dominant share.
type attr struct {
	allocated *api.Resource
	share     float64
	dominant  string
}

func (a *attr) clone() *attr {
	return &attr{allocated: a.allocated.Clone(), share: a.share, dominant: a.dominant}
}

type plugin struct {
	total *api.Resource
	// jobs holds the session's attrs: every job's when base is nil, else those the session
	// changed (copies of base's).
	jobs map[string]*attr
	// base, when set, is the attrs kept between cycles (read-only in the session).
	base map[string]*attr
	// tree is the hierarchical state, nil unless enableHierarchy is set.
	tree *tree
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) {
	return &plugin{total: api.EmptyResource(), jobs: map[string]*attr{}}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.total = ssn.TotalResource.Clone()
	hierarchy := ssn.HierarchyEnabled(Name)
	var sorted []*api.JobInfo
	if hierarchy {
		// The tree holds the session's attrs: built afresh.
		sorted = ssn.SortedJobs()
		for _, j := range sorted {
			p.jobs[j.UID] = p.jobAttr(j)
		}
	} else {
		p.base = p.openKept(ssn)
	}
	if hierarchy {
		t, err := newTree(ssn.Queues, sorted, p.jobs, p.total)
		if err != nil {
			// As in Volcano, a hierarchy that cannot be built leaves the plugin out of the
			// session altogether.
			ssn.Log.Warn("drf: cannot build the queue hierarchy; the plugin takes no part", "err", err)
			return
		}
		p.tree = t
		ssn.AddQueueOrderFn(Name, func(l, r *api.QueueInfo) int {
			return cmp.Compare(p.tree.compare(l.Name, r.Name), 0)
		})
		ssn.AddReclaimableFn(Name, func(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
			return p.reclaimable(ssn, reclaimer, candidates)
		})
	}

	ssn.AddPreemptableFn(Name, p.preemptable)
	ssn.AddJobOrderFn(Name, func(l, r *api.JobInfo) int {
		return cmp.Compare(p.jobShare(l.UID), p.jobShare(r.UID))
	})
	ssn.AddEventHandler(&framework.EventHandler{
		AllocateFunc: func(e *framework.Event) {
			if a := p.mut(e.Task.Job); a != nil {
				a.allocated.Add(e.Task.Resreq)
				p.update(a)
				if p.tree != nil {
					p.tree.allocate(e.Task.Job, e.Task.Resreq)
				}
			}
		},
		DeallocateFunc: func(e *framework.Event) {
			if a := p.mut(e.Task.Job); a != nil {
				a.allocated.Sub(e.Task.Resreq)
				p.update(a)
				if p.tree != nil {
					p.tree.deallocate(e.Task.Job, e.Task.Resreq)
				}
			}
		},
	})
}

func (p *plugin) OnSessionClose(*framework.Session) {}

// jobShare returns a job's dominant share (0 for a job the plugin does not know).
func (p *plugin) jobShare(job string) float64 {
	if a := p.get(job); a != nil {
		return a.share
	}
	return 0
}

// get returns the job's attr (nil for a job the plugin does not know); it must not be
// changed.
func (p *plugin) get(job string) *attr {
	if a := p.jobs[job]; a != nil || p.base == nil {
		return a
	}
	return p.base[job]
}

// mut returns the session's own attr of the job, copied from the kept one at its first change.
func (p *plugin) mut(job string) *attr {
	if a := p.jobs[job]; a != nil || p.base == nil {
		return a
	}
	b := p.base[job]
	if b == nil {
		return nil
	}
	a := b.clone()
	p.jobs[job] = a
	return a
}

// jobAttr derives a job's attr from its allocated tasks, in key order.
func (p *plugin) jobAttr(j *api.JobInfo) *attr {
	a := &attr{allocated: api.EmptyResource()}
	for _, t := range j.SortedTasks() {
		if api.AllocatedStatus(t.Status) {
			a.allocated.Add(t.Resreq)
		}
	}
	p.update(a)
	return a
}

func (p *plugin) preemptable(preemptor *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
	la := p.get(preemptor.Job)
	if la == nil {
		return nil, framework.Permit
	}
	_, ls := resutil.DominantShare(la.allocated.Clone().Add(preemptor.Resreq), p.total)
	var victims []*api.TaskInfo
	remaining := map[string]*api.Resource{}
	for _, c := range candidates {
		alloc, ok := remaining[c.Job]
		if !ok {
			ra := p.get(c.Job)
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

// reclaimable is Volcano's hierarchical reclaim: on a copy of the tree in which the reclaimer's
// job also holds the reclaimer, a candidate is a victim when, with the candidate taken off its
// job, the reclaimer's queue comes strictly before the candidate's in hierarchical order.
// Candidates are judged one at a time: each is put back before the next. Always decides
// (Permit).
func (p *plugin) reclaimable(ssn *framework.Session, reclaimer *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
	lj, la := ssn.Jobs[reclaimer.Job], p.jobs[reclaimer.Job]
	if lj == nil || la == nil || ssn.Queues[lj.Queue] == nil {
		return nil, framework.Permit
	}
	t := p.tree.clone()
	t.allocated.Add(reclaimer.Resreq)
	t.setJob(lj.UID, p.withDelta(la, reclaimer.Resreq, nil))
	var victims []*api.TaskInfo
	for _, c := range candidates {
		rj, ra := ssn.Jobs[c.Job], p.jobs[c.Job]
		if rj == nil || ra == nil || ssn.Queues[rj.Queue] == nil {
			continue
		}
		t.allocated.Sub(c.Resreq)
		t.setJob(rj.UID, p.withDelta(ra, nil, c.Resreq))
		ret := t.compare(lj.Queue, rj.Queue)
		t.allocated.Add(c.Resreq)
		t.setJob(rj.UID, ra.clone())
		if ret < 0 {
			victims = append(victims, c)
		}
	}
	return victims, framework.Permit
}

// withDelta returns a copy of a with add added and sub taken off (either may be nil), its
// share recomputed.
func (p *plugin) withDelta(a *attr, add, sub *api.Resource) *attr {
	c := a.clone()
	if add != nil {
		c.allocated.Add(add)
	}
	if sub != nil {
		c.allocated.Sub(sub)
	}
	p.update(c)
	return c
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

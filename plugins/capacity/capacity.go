package capacity

import (
	"fmt"
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// Name is the plugin's configuration name.
const Name = "capacity"

// Argument names.
const (
	argAncestorReclaimLevel = "ancestorReclaimLevel"
	argDRA                  = "capacity.DynamicResourceAllocationEnable"
	argDRAConsumable        = "capacity.DRAConsumableCapacityEnable"
)

type plugin struct {
	// ancestorReclaimLevel is how many levels of ancestors reclaim looks at (hierarchy only).
	ancestorReclaimLevel int

	hierarchy bool
	// ready is false when the queue tree is broken; every callback then refuses.
	ready          bool
	total          *api.Resource
	totalGuarantee *api.Resource
	queues         map[string]*queueAttr
	// names lists the known queues in name order.
	names []string
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. ancestorReclaimLevel must be a non-negative integer;
// Volcano's DRA switches are accepted as booleans and ignored (Sluice has no DRA).
func New(args conf.Arguments) (framework.Plugin, error) {
	lvl, err := args.Int(argAncestorReclaimLevel, 0)
	if err != nil {
		return nil, err
	}
	if lvl < 0 {
		return nil, fmt.Errorf("argument %q: want a non-negative integer, got %d", argAncestorReclaimLevel, lvl)
	}
	for _, k := range []string{argDRA, argDRAConsumable} {
		if _, err := args.Bool(k, false); err != nil {
			return nil, err
		}
	}
	return &plugin{
		ancestorReclaimLevel: lvl,
		total:                api.EmptyResource(),
		totalGuarantee:       api.EmptyResource(),
		queues:               map[string]*queueAttr{},
	}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.total = ssn.TotalResource.Clone()
	p.hierarchy = ssn.HierarchyEnabled(Name)
	if p.hierarchy {
		var why string
		p.ready, why = p.buildHierarchical(ssn)
		if !p.ready {
			ssn.Log.Warn("capacity: queue hierarchy is broken; refusing to schedule", "reason", why)
		}
		ssn.AddQueueOrderFn(Name, p.hierarchicalQueueOrder)
		ssn.AddVictimQueueOrderFn(Name, p.victimQueueOrder)
	} else {
		p.buildFlat(ssn)
		p.ready = true
		ssn.AddQueueOrderFn(Name, p.flatQueueOrder)
	}

	ssn.AddReclaimableFn(Name, func(reclaimer *api.TaskInfo, reclaimees []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return p.reclaimable(ssn, reclaimer, reclaimees)
	})
	ssn.AddUnifiedEvictableFn(Name, func(ctx *framework.EvictionContext, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return p.unifiedEvictable(ssn, ctx, candidates)
	})
	ssn.AddPreemptiveFn(Name, p.preemptive)
	ssn.AddAllocatableFn(Name, func(q *api.QueueInfo, t *api.TaskInfo) bool { return p.allocatable(ssn, q, t) })
	ssn.AddJobEnqueueableFn(Name, func(j *api.JobInfo) framework.Vote { return p.enqueueable(ssn, j) })
	ssn.AddJobEnqueuedFn(Name, p.enqueued)
	ssn.AddEventHandler(&framework.EventHandler{
		AllocateFunc:   func(e *framework.Event) { p.account(ssn, e.Task, +1) },
		DeallocateFunc: func(e *framework.Event) { p.account(ssn, e.Task, -1) },
	})
}

// OnSessionClose publishes every queue's figures: allocated, deserved, share and overuse
// (share above 1, as Volcano's queue_overused metric). Queues the plugin does not know (no
// jobs, flat mode) report their configured deserved amount and nothing allocated.
func (p *plugin) OnSessionClose(ssn *framework.Session) {
	for _, q := range ssn.SortedQueues() {
		attr := p.queues[q.Name]
		if attr == nil {
			attr = newAttr(q.Queue)
		}
		s := attr.shareNow()
		ssn.SetQueueFigures(q.Name, framework.QueueFigures{
			Allocated: attr.allocated.Clone(),
			Deserved:  attr.deserved.Clone(),
			Share:     s,
			Overused:  s > 1,
		})
	}
}

// account follows allocations and deallocations: the task's queue and, with hierarchy, every
// ancestor. As in Volcano only the queue's own share is refreshed; ancestors keep the share
// they had when the session opened.
func (p *plugin) account(ssn *framework.Session, t *api.TaskInfo, sign int) {
	attr := p.queueOf(ssn, t)
	if attr == nil {
		return
	}
	apply := func(r *api.Resource) {
		if sign > 0 {
			r.Add(t.Resreq)
		} else {
			r.Sub(t.Resreq)
		}
	}
	apply(attr.allocated)
	attr.updateShare()
	if p.hierarchy {
		for _, a := range attr.ancestors {
			apply(p.queues[a].allocated)
		}
	}
}

// queueOf returns the figures of the task's queue, nil when the plugin does not know its job
// or queue.
func (p *plugin) queueOf(ssn *framework.Session, t *api.TaskInfo) *queueAttr {
	j := ssn.Jobs[t.Job]
	if j == nil {
		return nil
	}
	return p.queues[j.Queue]
}

// compareShare is Volcano's compareShareWithDeserved: the smaller share first; on equal
// shares a queue with a deserved amount goes before a best-effort one.
func compareShare(l, r *queueAttr) int {
	if l == nil || r == nil {
		return 0
	}
	if l.share == r.share {
		lHas, rHas := !l.deserved.IsEmpty(), !r.deserved.IsEmpty()
		switch {
		case lHas == rHas:
			return 0
		case lHas:
			return -1
		}
		return 1
	}
	if l.share < r.share {
		return -1
	}
	return 1
}

func comparePriority(l, r *api.QueueInfo) int {
	switch {
	case l.Priority > r.Priority:
		return -1
	case l.Priority < r.Priority:
		return 1
	}
	return 0
}

// flatQueueOrder: the higher queue priority first, then compareShare.
func (p *plugin) flatQueueOrder(l, r *api.QueueInfo) int {
	if c := comparePriority(l, r); c != 0 {
		return c
	}
	return compareShare(p.queues[l.Name], p.queues[r.Name])
}

// hierarchicalQueueOrder: the higher priority first; leaf queues before inner ones; two inner
// queues by share; two leaves by the shares of their ancestors just below the deepest one
// they share (siblings by their own shares).
func (p *plugin) hierarchicalQueueOrder(l, r *api.QueueInfo) int {
	if c := comparePriority(l, r); c != 0 {
		return c
	}
	la, ra := p.queues[l.Name], p.queues[r.Name]
	if la == nil || ra == nil {
		return 0
	}
	switch {
	case la.isLeaf() && !ra.isLeaf():
		return -1
	case !la.isLeaf() && ra.isLeaf():
		return 1
	case !la.isLeaf() && !ra.isLeaf():
		return compareShare(la, ra)
	}
	lvl := level(la, ra)
	lp, rp := la, ra
	if lvl+1 < len(la.ancestors) {
		lp = p.queues[la.ancestors[lvl+1]]
	}
	if lvl+1 < len(ra.ancestors) {
		rp = p.queues[ra.ancestors[lvl+1]]
	}
	return compareShare(lp, rp)
}

// victimQueueOrder: victims come first from the queue closest to the preemptor's in the tree
// (the deeper the shared ancestor, the closer).
func (p *plugin) victimQueueOrder(l, r, preemptor *api.QueueInfo) int {
	la, ra, pa := p.queues[l.Name], p.queues[r.Name], p.queues[preemptor.Name]
	if la == nil || ra == nil || pa == nil {
		return 0
	}
	ll, rl := level(la, pa), level(ra, pa)
	switch {
	case ll > rl:
		return -1
	case ll < rl:
		return 1
	}
	return 0
}

// chain returns the queue and its ancestors, the queue first and the root last (the queue
// alone without hierarchy).
func (p *plugin) chain(attr *queueAttr) []*queueAttr {
	out := []*queueAttr{attr}
	if p.hierarchy {
		for i := len(attr.ancestors) - 1; i >= 0; i-- {
			out = append(out, p.queues[attr.ancestors[i]])
		}
	}
	return out
}

// allocatable: the queue is open, the tree is sound, the queue is a leaf (with hierarchy), and
// the queue and every ancestor can take the task's request within their real capability in
// every dimension the task asks for. A refusal is recorded as the queue's reason.
func (p *plugin) allocatable(ssn *framework.Session, q *api.QueueInfo, t *api.TaskInfo) bool {
	if !q.IsOpen() || !p.ready {
		return false
	}
	attr := p.queues[q.Name]
	if attr == nil {
		return true
	}
	if p.hierarchy && !attr.isLeaf() {
		return false
	}
	for _, a := range p.chain(attr) {
		future := a.allocated.Clone().Add(t.Resreq)
		if over := future.StrictlyAboveIn(a.realCapability, t.Resreq); len(over) > 0 {
			who := "queue " + q.Name
			if a != attr {
				who = fmt.Sprintf("queue %s (ancestor %s)", q.Name, a.name)
			}
			ssn.SetQueueReason(q.Name, fmt.Sprintf("%s capacity insufficient: %s", who,
				describe(over, future, ">", a.realCapability, "capability")))
			return false
		}
	}
	return true
}

// preemptive: may the queue reclaim for the task? The queue must be open and able to take the
// request within its real capability, and hold, after taking it, at most its deserved amount
// in some dimension in play; failing that, with hierarchy and ancestorReclaimLevel, an
// ancestor within that many levels (the root excluded) may qualify instead.
func (p *plugin) preemptive(q *api.QueueInfo, t *api.TaskInfo) bool {
	if !p.ready || !q.IsOpen() {
		return false
	}
	attr := p.queues[q.Name]
	if attr == nil {
		return false
	}
	future := attr.allocated.Clone().Add(t.Resreq)
	if len(future.StrictlyAboveIn(attr.realCapability, t.Resreq)) > 0 {
		return false
	}
	if somewhereWithin(future, attr.deserved, t.Resreq) {
		return true
	}
	if !p.hierarchy || p.ancestorReclaimLevel <= 0 {
		return false
	}
	for lvl := 1; lvl <= p.ancestorReclaimLevel; lvl++ {
		id, ok := ancestorAt(attr, lvl)
		if !ok || id == api.RootQueue {
			continue
		}
		a := p.queues[id]
		if a == nil {
			continue
		}
		if somewhereWithin(a.allocated.Clone().Add(t.Resreq), a.deserved, t.Resreq) {
			return true
		}
	}
	return false
}

// victimOrder sorts reclaim candidates as Volcano's BuildVictimsPriorityQueue pops them: tasks
// of one job in reverse task order, jobs of one queue in reverse job order, queues in victim
// queue order for the reclaimer's queue.
func victimOrder(ssn *framework.Session, reclaimer *api.TaskInfo, cands []*api.TaskInfo) []*api.TaskInfo {
	out := append([]*api.TaskInfo(nil), cands...)
	pj := ssn.Jobs[reclaimer.Job]
	sort.SliceStable(out, func(i, k int) bool {
		l, r := out[i], out[k]
		if l.Job == r.Job {
			return ssn.TaskOrderFn(r, l)
		}
		lj, rj := ssn.Jobs[l.Job], ssn.Jobs[r.Job]
		if lj == nil || rj == nil {
			return l.UID < r.UID
		}
		if pj != nil && lj.Queue != rj.Queue {
			lq, rq, pq := ssn.Queues[lj.Queue], ssn.Queues[rj.Queue], ssn.Queues[pj.Queue]
			if lq != nil && rq != nil && pq != nil {
				return ssn.VictimQueueOrderFn(lq, rq, pq)
			}
		}
		return ssn.JobOrderFn(rj, lj)
	})
	return out
}

// reclaimable chooses, in victim order, the candidates whose queue may give them up: the
// candidate shares a dimension with the reclaimer's request; its queue keeps its guarantee
// without it; and either the candidate asks for nothing the queue deserves (best-effort use)
// or the queue, less the victims already chosen from it, holds more than it deserves in a
// dimension the candidate uses and the queue deserves. With hierarchy and
// ancestorReclaimLevel, the reclaimee's ancestors within that many levels that the reclaimer
// does not share must be above their deserved amount too.
func (p *plugin) reclaimable(ssn *framework.Session, reclaimer *api.TaskInfo, reclaimees []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
	if !p.ready {
		return nil, framework.Reject
	}
	reclaimerAttr := p.queueOf(ssn, reclaimer)
	if reclaimerAttr == nil {
		return nil, framework.Reject
	}
	ancestorsInPlay := p.hierarchy && p.ancestorReclaimLevel > 0
	var victims []*api.TaskInfo
	held := allocations{}
	for _, c := range victimOrder(ssn, reclaimer, reclaimees) {
		attr := p.queueOf(ssn, c)
		if attr == nil {
			continue
		}
		if !intersects(c.Resreq, reclaimer.InitResreq) {
			continue
		}
		allocated := held.of(attr)
		if !keepsGuarantee(attr, allocated, c) {
			continue
		}
		switch {
		case !intersects(c.Resreq, attr.deserved):
			if ancestorsInPlay && p.sharesAncestor(reclaimerAttr, attr) && !intersects(reclaimer.Resreq, reclaimerAttr.deserved) {
				continue
			}
		case !aboveInRelevant(allocated, attr.deserved, c.Resreq):
			continue
		}
		var ancestors []*api.Resource
		eligible := true
		if ancestorsInPlay {
			for lvl := 1; lvl <= p.ancestorReclaimLevel; lvl++ {
				a, check := p.reclaimeeAncestorToCheck(reclaimerAttr, attr, lvl)
				if !check {
					continue
				}
				if a == nil {
					eligible = false
					break
				}
				aAllocated := held.of(a)
				ancestors = append(ancestors, aAllocated)
				if !intersects(c.Resreq, a.deserved) {
					continue
				}
				if !aboveInRelevant(aAllocated, a.deserved, c.Resreq) {
					eligible = false
					break
				}
			}
		}
		if !eligible {
			continue
		}
		allocated.Sub(c.Resreq)
		for _, a := range ancestors {
			a.Sub(c.Resreq)
		}
		victims = append(victims, c)
	}
	return victims, framework.Permit
}

// unifiedEvictable is Volcano's gang-aware victim callback. Capacity does not judge preemption:
// every candidate may go. For reclaim it walks the candidates in the order offered (the
// action's bundle order) and keeps those whose queue, less the victims already kept from it,
// keeps its guarantee without them and either deserves none of what they ask for or holds more
// than it deserves in a dimension they use and it deserves. Unlike Reclaimable it neither
// reorders the candidates, nor asks that they share a dimension with the evicting job's
// request, nor checks ancestors. It always decides (Permit), or Reject when the tree is broken.
func (p *plugin) unifiedEvictable(ssn *framework.Session, ctx *framework.EvictionContext, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
	if ctx.Kind == framework.EvictionKindGangPreempt {
		return candidates, framework.Permit
	}
	if !p.ready {
		return nil, framework.Reject
	}
	var victims []*api.TaskInfo
	held := allocations{}
	for _, c := range candidates {
		attr := p.queueOf(ssn, c)
		if attr == nil {
			continue
		}
		allocated := held.of(attr)
		if !keepsGuarantee(attr, allocated, c) {
			continue
		}
		if intersects(c.Resreq, attr.deserved) && !aboveInRelevant(allocated, attr.deserved, c.Resreq) {
			continue
		}
		allocated.Sub(c.Resreq)
		victims = append(victims, c)
	}
	return victims, framework.Permit
}

// allocations holds, per queue name, what a queue holds less the victims chosen from it so far.
type allocations map[string]*api.Resource

// of returns the queue's entry, starting from what it holds.
func (a allocations) of(attr *queueAttr) *api.Resource {
	if r, ok := a[attr.name]; ok {
		return r
	}
	r := attr.allocated.Clone()
	a[attr.name] = r
	return r
}

// keepsGuarantee reports whether the queue, holding allocated, still holds its guarantee
// without the task.
func keepsGuarantee(attr *queueAttr, allocated *api.Resource, t *api.TaskInfo) bool {
	return attr.guarantee.LessEqual(allocated.Clone().Sub(t.Resreq), api.Zero)
}

// ancestorsWithin returns a queue's ancestors within the configured number of levels.
func (p *plugin) ancestorsWithin(attr *queueAttr) map[int]string {
	out := map[int]string{}
	for lvl := 1; lvl <= p.ancestorReclaimLevel; lvl++ {
		if id, ok := ancestorAt(attr, lvl); ok {
			out[lvl] = id
		}
	}
	return out
}

// sharesAncestor is Volcano's sharesAnyNonRootAncestorWithinLevel.
func (p *plugin) sharesAncestor(a, b *queueAttr) bool {
	bs := map[string]bool{}
	for _, id := range p.ancestorsWithin(b) {
		bs[id] = true
	}
	for _, id := range p.ancestorsWithin(a) {
		if id != api.RootQueue && bs[id] {
			return true
		}
	}
	return false
}

// reclaimeeAncestorToCheck is Volcano's getReclaimeeAncestorToCheck: the reclaimee's ancestor
// lvl levels up must be checked unless it is the root or also the reclaimer's ancestor at that
// level.
func (p *plugin) reclaimeeAncestorToCheck(reclaimer, reclaimee *queueAttr, lvl int) (*queueAttr, bool) {
	id, ok := ancestorAt(reclaimee, lvl)
	if !ok || id == api.RootQueue {
		return nil, false
	}
	if rid, ok := ancestorAt(reclaimer, lvl); ok && rid == id {
		return nil, false
	}
	return p.queues[id], true
}

// enqueueable: Reject when the tree is broken, the queue is not a leaf (with hierarchy) or
// not open; Permit a job without minResources, and one that keeps its queue within its
// deserved amount (withinDeserved); otherwise Permit when, for the queue and every ancestor,
// minResources + allocated + inqueue - elastic fits in the real capability in every dimension
// minResources asks for.
func (p *plugin) enqueueable(ssn *framework.Session, j *api.JobInfo) framework.Vote {
	if !p.ready {
		setFitError(j, "queue hierarchy is broken")
		return framework.Reject
	}
	q := ssn.Queues[j.Queue]
	attr := p.queues[j.Queue]
	if q == nil || attr == nil {
		return framework.Abstain
	}
	if p.hierarchy && !attr.isLeaf() {
		setFitError(j, fmt.Sprintf("queue %s is not a leaf queue", q.Name))
		return framework.Reject
	}
	if !q.IsOpen() {
		setFitError(j, fmt.Sprintf("queue %s is not open", q.Name))
		return framework.Reject
	}
	min := resutil.JobMinResources(j)
	if min == nil {
		return framework.Permit
	}
	if withinDeserved(attr, min) {
		return framework.Permit
	}
	for _, a := range p.chain(attr) {
		need := min.Clone().Add(a.allocated).Add(a.inqueue).Sub(a.elastic)
		if over := need.StrictlyAboveIn(a.realCapability, min); len(over) > 0 {
			who := "queue " + q.Name
			if a != attr {
				who = fmt.Sprintf("queue %s (ancestor %s)", q.Name, a.name)
			}
			setFitError(j, fmt.Sprintf("%s resource quota insufficient: %s", who,
				describe(over, need, ">", a.realCapability, "capability")))
			return framework.Reject
		}
	}
	return framework.Permit
}

// withinDeserved reports whether the queue, with the job admitted, stays within its deserved
// amount (already raised to its guarantee): allocated + inqueue - elastic + minResources is at
// most deserved in cpu and memory and in every scalar deserved names (a scalar it does not
// name is not limited, as Volcano's LessEqual with an infinite default). Such a job is entitled
// to its resources (reclaim can win them back), so it is admitted whatever the real capability
// of the queue or its ancestors says. A queue without deserved has no such entitlement.
func withinDeserved(attr *queueAttr, min *api.Resource) bool {
	if attr.deserved.IsEmpty() {
		return false
	}
	need := min.Clone().Add(attr.allocated).Add(attr.inqueue).Sub(attr.elastic)
	if !lessEqualTol(need.MilliCPU, attr.deserved.MilliCPU) || !lessEqualTol(need.Memory, attr.deserved.Memory) {
		return false
	}
	for _, k := range attr.deserved.ScalarNames() {
		if !lessEqualTol(need.Get(k), attr.deserved.Scalars[k]) {
			return false
		}
	}
	return true
}

// enqueued counts an admitted job's minResources as inqueue in its queue and, with hierarchy,
// every ancestor.
func (p *plugin) enqueued(j *api.JobInfo) {
	attr := p.queues[j.Queue]
	min := resutil.JobMinResources(j)
	if attr == nil || min == nil {
		return
	}
	for _, a := range p.chain(attr) {
		a.inqueue.Add(min)
	}
}

// setFitError records a job-level reason unless the job has one.
func setFitError(j *api.JobInfo, msg string) {
	if j.JobFitErrors == "" {
		j.JobFitErrors = msg
	}
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

package proportion

import (
	"cmp"
	"fmt"
	"math"
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// Name is the plugin's configuration name.
const Name = "proportion"

// queueAttr is what the plugin knows of one queue in the session.
type queueAttr struct {
	name     string
	weight   int32
	priority int32
	share    float64

	deserved  *api.Resource
	allocated *api.Resource
	request   *api.Resource
	// elastic sums, over the queue's jobs, what each holds beyond its minResources.
	elastic *api.Resource
	// inqueue sums the minResources of enqueued jobs not yet running (and what running jobs'
	// minResources still reserve).
	inqueue *api.Resource
	// capability is nil when the queue sets none.
	capability     *api.Resource
	realCapability *api.Resource
	guarantee      *api.Resource
}

type plugin struct {
	total          *api.Resource
	totalGuarantee *api.Resource
	queues         map[string]*queueAttr
	// names lists the known queues in name order.
	names []string
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) {
	return &plugin{total: api.EmptyResource(), totalGuarantee: api.EmptyResource(), queues: map[string]*queueAttr{}}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.total = ssn.TotalResource.Clone()
	for _, q := range ssn.SortedQueues() {
		if resutil.IsSet(q.Queue.Guarantee) {
			p.totalGuarantee.Add(&q.Queue.Guarantee)
		}
	}
	p.openKept(ssn)
	sort.Strings(p.names)
	p.computeDeserved()

	ssn.AddQueueOrderFn(Name, p.queueOrder)
	ssn.AddReclaimableFn(Name, func(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return p.reclaimable(ssn, reclaimer, candidates), framework.Permit
	})
	ssn.AddOverusedFn(Name, func(q *api.QueueInfo) bool {
		attr := p.queues[q.Name]
		if attr == nil || !attr.overused() {
			return false
		}
		ssn.SetQueueReason(q.Name, attr.overusedReason())
		return true
	})
	ssn.AddAllocatableFn(Name, func(q *api.QueueInfo, t *api.TaskInfo) bool {
		if !q.IsOpen() {
			ssn.SetQueueReason(q.Name, fmt.Sprintf("queue %s is not open", q.Name))
			return false
		}
		if !p.allocatable(q, t) {
			if attr := p.queues[q.Name]; attr != nil && ssn.QueueReason(q.Name) == "" {
				future := attr.allocated.Clone().Add(t.Resreq)
				ssn.SetQueueReason(q.Name, fmt.Sprintf("queue %s would exceed its deserved share: %s", q.Name,
					describe(future.ExceededIn(attr.deserved, t.Resreq), future, ">", attr.deserved, "deserved")))
			}
			return false
		}
		return true
	})
	ssn.AddPreemptiveFn(Name, func(q *api.QueueInfo, t *api.TaskInfo) bool {
		return q.IsOpen() && p.allocatable(q, t)
	})
	ssn.AddJobEnqueueableFn(Name, func(j *api.JobInfo) framework.Vote { return p.enqueueable(ssn, j) })
	// The queue books a job's minimum only once the job is enqueued, so a job that a later
	// plugin refuses leaves no trace (Volcano #5387).
	ssn.AddJobEnqueuedFn(Name, func(j *api.JobInfo) {
		if attr := p.queues[j.Queue]; attr != nil {
			if min := resutil.JobMinResources(j); min != nil {
				attr.inqueue.Add(min)
			}
		}
	})
	ssn.AddEventHandler(&framework.EventHandler{
		AllocateFunc: func(e *framework.Event) {
			if attr := p.queueOf(ssn, e.Task); attr != nil {
				attr.allocated.Add(e.Task.Resreq)
				attr.updateShare()
			}
		},
		DeallocateFunc: func(e *framework.Event) {
			if attr := p.queueOf(ssn, e.Task); attr != nil {
				attr.allocated.Sub(e.Task.Resreq)
				attr.updateShare()
			}
		},
	})
}

// OnSessionClose publishes the figures of every queue the plugin knows.
func (p *plugin) OnSessionClose(ssn *framework.Session) {
	for _, name := range p.names {
		attr := p.queues[name]
		ssn.SetQueueFigures(name, framework.QueueFigures{
			Allocated: attr.allocated.Clone(),
			Deserved:  attr.deserved.Clone(),
			Share:     attr.share,
			Overused:  attr.overused(),
		})
	}
}

func (p *plugin) newQueueAttr(q *api.QueueInfo) *queueAttr {
	attr := &queueAttr{
		name:      q.Name,
		weight:    q.Weight,
		priority:  q.Priority,
		deserved:  api.EmptyResource(),
		allocated: api.EmptyResource(),
		request:   api.EmptyResource(),
		elastic:   api.EmptyResource(),
		inqueue:   api.EmptyResource(),
		guarantee: api.EmptyResource(),
	}
	if resutil.IsSet(q.Queue.Capability) {
		attr.capability = q.Queue.Capability.Clone()
		if attr.capability.MilliCPU <= 0 {
			attr.capability.MilliCPU = math.MaxFloat64
		}
		if attr.capability.Memory <= 0 {
			attr.capability.Memory = math.MaxFloat64
		}
	}
	if resutil.IsSet(q.Queue.Guarantee) {
		attr.guarantee = q.Queue.Guarantee.Clone()
	}
	attr.realCapability = p.total.ExceededPart(p.totalGuarantee).Add(attr.guarantee)
	if attr.capability != nil {
		attr.realCapability.MinDimension(attr.capability, api.Infinity)
	}
	return attr
}

// addJob accounts one job of the queue.
func (attr *queueAttr) addJob(j *api.JobInfo) {
	for _, t := range j.SortedTasks() {
		switch {
		case api.AllocatedStatus(t.Status):
			attr.allocated.Add(t.Resreq)
			attr.request.Add(t.Resreq)
		case t.Status == api.Pending:
			attr.request.Add(t.Resreq)
		}
	}
	min := resutil.JobMinResources(j)
	if j.Phase == api.JobInqueue && min != nil {
		attr.inqueue.Add(min)
	}
	// A running job whose minResources are not all held yet keeps the rest reserved, unless
	// fewer than minAvailable of its tasks hold resources (e.g. a finished driver).
	if j.Phase == api.JobRunning && min != nil && resutil.AllocatedTaskNum(j) >= j.MinAvailable {
		attr.inqueue.Add(resutil.InqueueResource(min, j.Allocated))
	}
	if min == nil {
		min = api.EmptyResource()
	}
	attr.elastic.Add(j.Allocated.ExceededPart(min))
}

// computeDeserved water-fills the cluster over the known queues by weight.
func (p *plugin) computeDeserved() {
	remaining := p.total.Clone()
	meet := map[string]bool{}
	for {
		totalWeight := int32(0)
		for _, name := range p.names {
			if !meet[name] {
				totalWeight += p.queues[name].weight
			}
		}
		if totalWeight == 0 {
			break
		}
		oldRemaining := remaining.Clone()
		increased, decreased := api.EmptyResource(), api.EmptyResource()
		for _, name := range p.names {
			if meet[name] {
				continue
			}
			attr := p.queues[name]
			old := attr.deserved.Clone()
			attr.deserved.Add(remaining.Clone().Multi(float64(attr.weight) / float64(totalWeight)))
			attr.deserved.MinDimension(attr.realCapability, api.Infinity)
			attr.deserved.MinDimension(attr.request, api.Zero)
			attr.deserved = api.MaxResource(attr.deserved, attr.guarantee)
			attr.updateShare()
			if attr.request.LessEqual(attr.deserved, api.Zero) || sameResource(attr.deserved, old) {
				meet[name] = true
			}
			inc, dec := diff(attr.deserved, old)
			increased.Add(inc)
			decreased.Add(dec)
		}
		remaining = remaining.Clone().Add(decreased).ExceededPart(increased)
		if remaining.IsEmpty() || sameResource(remaining, oldRemaining) {
			break
		}
	}
}

// updateShare sets the queue's share: the largest allocated/deserved over deserved's
// dimensions.
func (attr *queueAttr) updateShare() {
	_, attr.share = resutil.DominantShare(attr.allocated, attr.deserved)
}

func (attr *queueAttr) overused() bool { return attr.deserved.LessEqual(attr.allocated, api.Zero) }

// overusedReason names the first dimension of deserved (cpu when it has none).
func (attr *queueAttr) overusedReason() string {
	n := api.ResourceCPU
	if names := attr.deserved.Names(); len(names) > 0 {
		n = names[0]
	}
	return fmt.Sprintf("queue %s overused: allocated %s %s >= deserved %s", attr.name, n,
		formatAmount(n, attr.allocated.Get(n)), formatAmount(n, attr.deserved.Get(n)))
}

func (p *plugin) queueOf(ssn *framework.Session, t *api.TaskInfo) *queueAttr {
	j := ssn.Jobs[t.Job]
	if j == nil {
		return nil
	}
	return p.queues[j.Queue]
}

func (p *plugin) shareOf(q *api.QueueInfo) float64 {
	if attr := p.queues[q.Name]; attr != nil {
		return attr.share
	}
	return 0
}

func (p *plugin) queueOrder(l, r *api.QueueInfo) int {
	if l.Priority != r.Priority {
		if l.Priority > r.Priority {
			return -1
		}
		return 1
	}
	return cmp.Compare(p.shareOf(l), p.shareOf(r))
}

// allocatable reports whether the queue's allocation plus the task's request stays within its
// deserved amount in every dimension the task asks for.
func (p *plugin) allocatable(q *api.QueueInfo, t *api.TaskInfo) bool {
	attr := p.queues[q.Name]
	if attr == nil {
		return true
	}
	return attr.allocated.SumWithin(t.Resreq, attr.deserved)
}

func (p *plugin) reclaimable(ssn *framework.Session, reclaimer *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	var victims []*api.TaskInfo
	allocations := map[string]*api.Resource{}
	for _, c := range candidates {
		j := ssn.Jobs[c.Job]
		if j == nil {
			continue
		}
		attr := p.queues[j.Queue]
		if attr == nil {
			continue
		}
		allocated, ok := allocations[j.Queue]
		if !ok {
			allocated = attr.allocated.Clone()
			allocations[j.Queue] = allocated
		}
		if allocated.LessPartly(c.Resreq, api.Zero) {
			continue
		}
		if !allocated.LessEqual(attr.deserved, api.Zero) {
			allocated.Sub(c.Resreq)
			victims = append(victims, c)
		}
	}
	return victims
}

func (p *plugin) enqueueable(ssn *framework.Session, j *api.JobInfo) framework.Vote {
	q := ssn.Queues[j.Queue]
	if q == nil {
		return framework.Abstain
	}
	if !q.IsOpen() {
		setFitError(j, fmt.Sprintf("queue %s is not open", q.Name))
		return framework.Reject
	}
	attr := p.queues[q.Name]
	min := resutil.JobMinResources(j)
	if attr == nil || min == nil {
		return framework.Permit
	}
	need := min.Clone().Add(attr.allocated).Add(attr.inqueue).Sub(attr.elastic)
	if over := need.ExceededIn(attr.realCapability, min); len(over) > 0 {
		setFitError(j, fmt.Sprintf("queue %s resource quota insufficient: %s", q.Name,
			describe(over, need, ">", attr.realCapability, "capability")))
		return framework.Reject
	}
	return framework.Permit
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

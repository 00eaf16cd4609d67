package capacity

import (
	"fmt"
	"math"
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// queueAttr is what the plugin knows of one queue in the session.
type queueAttr struct {
	name     string
	parent   string
	priority int32
	share    float64
	// ancestors runs from the root down to the parent (hierarchical mode only).
	ancestors []string
	children  map[string]*queueAttr
	linked    bool

	deserved  *api.Resource
	allocated *api.Resource
	request   *api.Resource
	// elastic sums, over the queue's jobs, what each holds beyond its minResources.
	elastic *api.Resource
	// inqueue sums what admitted jobs' minResources still reserve.
	inqueue        *api.Resource
	capability     *api.Resource
	realCapability *api.Resource
	guarantee      *api.Resource
}

func newAttr(q *api.Queue) *queueAttr {
	attr := &queueAttr{
		name:           q.Name,
		parent:         q.Parent,
		priority:       q.Priority,
		children:       map[string]*queueAttr{},
		deserved:       q.Deserved.Clone(),
		allocated:      api.EmptyResource(),
		request:        api.EmptyResource(),
		elastic:        api.EmptyResource(),
		inqueue:        api.EmptyResource(),
		capability:     api.EmptyResource(),
		realCapability: api.EmptyResource(),
		guarantee:      api.EmptyResource(),
	}
	attr.deserved.MaxTaskNum = 0
	if resutil.IsSet(q.Capability) {
		attr.capability = q.Capability.Clone()
	}
	if resutil.IsSet(q.Guarantee) {
		attr.guarantee = q.Guarantee.Clone()
	}
	return attr
}

// updateShare is Volcano's updateQueueAttrShare: a queue without deserved is best-effort and
// has share 1 whatever it holds (so it goes after every queue below its deserved amount);
// otherwise the share is the largest allocated/deserved over deserved's dimensions.
func (attr *queueAttr) updateShare() { attr.share = attr.shareNow() }

func (attr *queueAttr) shareNow() float64 {
	if attr.deserved.IsEmpty() {
		return 1
	}
	_, share := resutil.DominantShare(attr.allocated, attr.deserved)
	return share
}

func (attr *queueAttr) isLeaf() bool { return len(attr.children) == 0 }

// jobFigures is one job's contribution to its queue.
type jobFigures struct {
	allocated, request, inqueue, elastic *api.Resource
}

// figuresOf computes what a job adds to its queue: allocated and requested resources, what its
// minResources still reserve (an Inqueue job; a Running job whose placed tasks reach
// minAvailable, so that a finished driver does not reserve again) and its elastic part.
func figuresOf(j *api.JobInfo) jobFigures {
	f := jobFigures{allocated: api.EmptyResource(), request: api.EmptyResource(), inqueue: api.EmptyResource()}
	for _, t := range j.SortedTasks() {
		switch {
		case api.AllocatedStatus(t.Status):
			f.allocated.Add(t.Resreq)
			f.request.Add(t.Resreq)
		case t.Status == api.Pending:
			f.request.Add(t.Resreq)
		}
	}
	min := resutil.JobMinResources(j)
	if min != nil && j.Phase == api.JobInqueue {
		f.inqueue.Add(resutil.InqueueResource(min, j.Allocated))
	}
	if min != nil && j.Phase == api.JobRunning && resutil.AllocatedTaskNum(j) >= j.MinAvailable {
		f.inqueue.Add(resutil.InqueueResource(min, j.Allocated))
	}
	if min == nil {
		min = api.EmptyResource()
	}
	f.elastic = j.Allocated.ExceededPart(min)
	return f
}

func (attr *queueAttr) add(f jobFigures) {
	attr.allocated.Add(f.allocated)
	attr.request.Add(f.request)
	attr.inqueue.Add(f.inqueue)
	attr.elastic.Add(f.elastic)
}

// buildFlat is Volcano's buildQueueAttrs: only queues with jobs are known; each may use the
// cluster less every queue's guarantee, plus its own guarantee, capped by its capability (a
// capability without cpu or memory leaves that dimension unlimited); its deserved amount is
// capped by that and raised to its guarantee.
func (p *plugin) buildFlat(ssn *framework.Session) {
	for _, q := range ssn.SortedQueues() {
		if resutil.IsSet(q.Queue.Guarantee) {
			p.totalGuarantee.Add(&q.Queue.Guarantee)
		}
	}
	for _, j := range ssn.SortedJobs() {
		q := ssn.Queues[j.Queue]
		if q == nil {
			continue
		}
		attr := p.queues[q.Name]
		if attr == nil {
			attr = newAttr(q.Queue)
			if resutil.IsSet(q.Queue.Capability) {
				if attr.capability.MilliCPU <= 0 {
					attr.capability.MilliCPU = math.MaxFloat64
				}
				if attr.capability.Memory <= 0 {
					attr.capability.Memory = math.MaxFloat64
				}
			}
			attr.realCapability = p.total.ExceededPart(p.totalGuarantee).Add(attr.guarantee)
			if resutil.IsSet(q.Queue.Capability) {
				attr.realCapability.MinDimension(attr.capability, api.Infinity)
			}
			p.queues[q.Name] = attr
			p.names = append(p.names, q.Name)
		}
		attr.add(figuresOf(j))
	}
	sort.Strings(p.names)
	for _, name := range p.names {
		attr := p.queues[name]
		attr.deserved.MinDimension(attr.realCapability, api.Infinity)
		attr.deserved = api.MaxResource(attr.deserved, attr.guarantee)
		attr.updateShare()
	}
}

// buildHierarchical is Volcano's buildHierarchicalQueueAttrs. Every queue is known and linked
// to its parent ("" is the root); jobs count in their queue and every ancestor; the tree is
// then checked from the root down (see limitChildren). It reports false, and the plugin then
// refuses everything as Volcano does, when the tree is broken: a cycle, an unknown parent, or
// a job in a queue that has children.
func (p *plugin) buildHierarchical(ssn *framework.Session) (bool, string) {
	for _, q := range ssn.SortedQueues() {
		p.queues[q.Name] = newAttr(q.Queue)
		p.names = append(p.names, q.Name)
	}
	if p.queues[api.RootQueue] == nil {
		p.queues[api.RootQueue] = newAttr(&api.Queue{Name: api.RootQueue})
		p.names = append(p.names, api.RootQueue)
	}
	sort.Strings(p.names)
	for _, name := range p.names {
		if err := p.link(name, map[string]bool{}); err != nil {
			return false, err.Error()
		}
	}
	for _, j := range ssn.SortedJobs() {
		attr := p.queues[j.Queue]
		if attr == nil {
			continue
		}
		if !attr.isLeaf() {
			return false, fmt.Sprintf("queue %s of job %s is not a leaf queue", attr.name, j.UID)
		}
		f := figuresOf(j)
		attr.add(f)
		for _, a := range attr.ancestors {
			p.queues[a].add(f)
		}
	}
	root := p.queues[api.RootQueue]
	if root.capability.IsEmpty() {
		root.capability = infiniteResource(p.total)
	}
	// The root may hold at most what the cluster has: its real capability is the cluster
	// total (Volcano), whatever capability it states, which children still inherit.
	root.realCapability = p.total.Clone()
	p.limitChildren(root)
	for _, name := range p.names {
		p.queues[name].updateShare()
	}
	return true, ""
}

// link records a queue's ancestors and makes it a child of its parent, parents first.
func (p *plugin) link(name string, visiting map[string]bool) error {
	attr := p.queues[name]
	if name == api.RootQueue || attr.linked {
		return nil
	}
	if visiting[name] {
		return fmt.Errorf("cycle in the queue hierarchy at queue %s", name)
	}
	visiting[name] = true
	parent := attr.parent
	if parent == "" {
		parent = api.RootQueue
	}
	pattr := p.queues[parent]
	if pattr == nil {
		return fmt.Errorf("queue %s has unknown parent queue %s", name, parent)
	}
	if err := p.link(parent, visiting); err != nil {
		return err
	}
	pattr.children[name] = attr
	attr.ancestors = append(append([]string(nil), pattr.ancestors...), parent)
	attr.linked = true
	return nil
}

// limitChildren is Volcano's checkHierarchicalQueue: a child's deserved is raised to its
// guarantee; cpu, memory and scalars its capability leaves unset are inherited from the
// parent; the root's deserved and guarantee become the sums of its children's; a child may use
// what its parent may use less all its siblings' guarantees, plus its own guarantee, capped by
// its capability. (Volcano only logs the inconsistencies it finds, and so does nothing here.)
func (p *plugin) limitChildren(attr *queueAttr) {
	names := make([]string, 0, len(attr.children))
	for n := range attr.children {
		names = append(names, n)
	}
	sort.Strings(names)
	totalGuarantee, totalDeserved := api.EmptyResource(), api.EmptyResource()
	for _, n := range names {
		child := attr.children[n]
		child.deserved = api.MaxResource(child.deserved, child.guarantee)
		totalDeserved.Add(child.deserved)
		totalGuarantee.Add(child.guarantee)
		if child.capability.MilliCPU <= 0 {
			child.capability.MilliCPU = attr.capability.MilliCPU
		}
		if child.capability.Memory <= 0 {
			child.capability.Memory = attr.capability.Memory
		}
		for _, k := range attr.capability.ScalarNames() {
			if _, ok := child.capability.Scalars[k]; !ok {
				child.capability.SetScalar(k, attr.capability.Scalars[k])
			}
		}
	}
	if attr.name == api.RootQueue {
		attr.guarantee = totalGuarantee
		attr.deserved = totalDeserved
	}
	for _, n := range names {
		child := attr.children[n]
		child.realCapability = attr.realCapability.ExceededPart(totalGuarantee).Add(child.guarantee)
		child.realCapability.MinDimension(child.capability, api.Infinity)
	}
	for _, n := range names {
		p.limitChildren(attr.children[n])
	}
}

// level is Volcano's getQueueLevel: the index of the deepest ancestor two queues share (0, the
// root, when they share no other).
func level(l, r *queueAttr) int {
	lvl := 0
	for i := 0; i < len(l.ancestors) && i < len(r.ancestors); i++ {
		if l.ancestors[i] != r.ancestors[i] {
			return lvl
		}
		lvl = i
	}
	return lvl
}

// ancestorAt is Volcano's queueAncestorAtDepth: the ancestor depth levels up (1: the parent).
func ancestorAt(attr *queueAttr, depth int) (string, bool) {
	if attr == nil || depth <= 0 || len(attr.ancestors) < depth {
		return "", false
	}
	return attr.ancestors[len(attr.ancestors)-depth], true
}

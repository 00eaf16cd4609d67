package nodegroup

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "nodegroup"

// LabelNodeGroup is the node label that names a node's group.
const LabelNodeGroup = "volcano.sh/nodegroup-name"

// Argument names, as Volcano spells them.
const (
	ArgStrict               = "strict"
	ArgEnablePreferredOrder = "enablePreferredOrder"
)

// Fit reasons. They are short and free of node names so that explanations aggregate.
const (
	ReasonLabelNotFound  = "node group label not found"
	ReasonNoAffinity     = "node group affinity not specified"
	ReasonUnsatisfied    = "node does not satisfy the node group affinity"
	ReasonLimitsInvalid  = "queue's nodegroup resource limits are invalid"
	reasonLimitsExceeded = "nodegroup resource limit exceeded"
)

// baseScore is what a required group scores; a preferred one scores half of it.
const baseScore = 100

type plugin struct {
	strict         bool
	preferredOrder bool
	// queues holds the session's per-queue state, built in OnSessionOpen.
	queues map[string]*queueAttr
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	strict, err := args.Bool(ArgStrict, true)
	if err != nil {
		return nil, err
	}
	order, err := args.Bool(ArgEnablePreferredOrder, false)
	if err != nil {
		return nil, err
	}
	return &plugin{strict: strict, preferredOrder: order}, nil
}

func (*plugin) Name() string { return Name }

// affinity is a queue's node-group affinity as sets of groups.
type affinity struct {
	required, preferred, antiRequired, antiPreferred map[string]struct{}
	// preferredIndex is each preferred group's position (its last one when listed twice),
	// for enablePreferredOrder.
	preferredIndex map[string]int
}

func newAffinity(q *api.Queue) *affinity {
	a, anti := q.NodeGroupAffinity, q.NodeGroupAntiAffinity
	if len(a.Required)+len(a.Preferred)+len(anti.Required)+len(anti.Preferred) == 0 {
		return nil
	}
	idx := make(map[string]int, len(a.Preferred))
	for i, g := range a.Preferred {
		idx[g] = i
	}
	return &affinity{
		required:       set(a.Required),
		preferred:      set(a.Preferred),
		antiRequired:   set(anti.Required),
		antiPreferred:  set(anti.Preferred),
		preferredIndex: idx,
	}
}

func set(groups []string) map[string]struct{} {
	m := make(map[string]struct{}, len(groups))
	for _, g := range groups {
		m[g] = struct{}{}
	}
	return m
}

func has(m map[string]struct{}, g string) bool { _, ok := m[g]; return ok }

// allows is Volcano's predicate on a group: required or preferred groups fit, a required
// anti-affinity removes a group, and a preferred anti-affinity (soft) lets it back in.
func (a *affinity) allows(group string) bool {
	ok := has(a.required, group) || has(a.preferred, group)
	if has(a.antiRequired, group) {
		ok = false
	}
	if has(a.antiPreferred, group) {
		ok = true
	}
	return ok
}

// score is Volcano's node score for a group.
func (a *affinity) score(group string, preferredOrder bool) float64 {
	s := 0.0
	if has(a.required, group) {
		s += baseScore
	}
	if preferredOrder {
		if i, ok := a.preferredIndex[group]; ok {
			n := len(a.preferredIndex)
			s += 0.5 * baseScore * float64(n-i) / float64(n)
		}
	} else if has(a.preferred, group) {
		s += 0.5 * baseScore
	}
	if has(a.antiPreferred, group) {
		s = -1
	}
	return s
}

// queueAttr is one queue's state for the session.
type queueAttr struct {
	// aff is the queue's own affinity or, with hierarchy, the nearest ancestor's; nil: none.
	aff *affinity
	// limits caps the queue per group; limitErr is set when the annotation is malformed.
	limits   map[string]groupLimit
	limitErr error
	// allocated is what the queue's allocated tasks request, per group.
	allocated map[string]*api.Resource
}

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.queues = buildQueues(ssn)
	p.initAllocated(ssn)
	ssn.AddPredicateFn(Name, p.predicate(ssn))
	ssn.AddNodeOrderFn(Name, p.nodeOrder(ssn))
	// Answers depend on the task's queue and the node's group, except under per-group
	// resource limits, where other nodes' allocations count.
	ssn.AddClassKeyFn(Name, func(t *api.TaskInfo) (string, bool) {
		j, ok := ssn.Jobs[t.Job]
		if !ok {
			return "", false
		}
		if q := p.queues[j.Queue]; q != nil && (len(q.limits) > 0 || q.limitErr != nil) {
			return "", false
		}
		return j.Queue, true
	})
	ssn.AddEventHandler(&framework.EventHandler{
		AllocateFunc:   func(e *framework.Event) { p.account(ssn, e.Task, 1) },
		DeallocateFunc: func(e *framework.Event) { p.account(ssn, e.Task, -1) },
	})
}

func (p *plugin) OnSessionClose(*framework.Session) { p.queues = nil }

// buildQueues reads every queue's affinity and limits and, with hierarchy enabled, lets a
// queue without affinity inherit its nearest ancestor's.
func buildQueues(ssn *framework.Session) map[string]*queueAttr {
	own := make(map[string]*queueAttr, len(ssn.Queues))
	for name, q := range ssn.Queues {
		limits, err := parseLimits(q.Queue.Annotations[AnnotationResourceLimits])
		own[name] = &queueAttr{aff: newAffinity(q.Queue), limits: limits, limitErr: err, allocated: map[string]*api.Resource{}}
	}
	if !ssn.HierarchyEnabled(Name) {
		return own
	}
	inherited := make(map[string]*affinity, len(own))
	for name, attr := range own {
		if attr.aff == nil {
			inherited[name] = ancestorAffinity(ssn, own, name)
		}
	}
	for name, aff := range inherited {
		own[name].aff = aff
	}
	return own
}

// ancestorAffinity walks up from a queue to the first ancestor with its own affinity. The walk
// stops at the root queue, at a parent missing from the session, or on a cycle, as Volcano's
// ancestor lists do.
func ancestorAffinity(ssn *framework.Session, own map[string]*queueAttr, name string) *affinity {
	seen := map[string]bool{name: true}
	for cur := name; cur != api.RootQueue; {
		parent := ssn.Queues[cur].Parent
		if parent == "" {
			parent = api.RootQueue
		}
		if _, ok := ssn.Queues[parent]; !ok || seen[parent] {
			return nil
		}
		seen[parent] = true
		if a := own[parent].aff; a != nil {
			return a
		}
		cur = parent
	}
	return nil
}

// attrOf returns the state of the task's queue, nil when the job or queue is unknown.
func (p *plugin) attrOf(ssn *framework.Session, t *api.TaskInfo) *queueAttr {
	j, ok := ssn.Jobs[t.Job]
	if !ok {
		return nil
	}
	return p.queues[j.Queue]
}

func (p *plugin) predicate(ssn *framework.Session) framework.PredicateFn {
	return func(task *api.TaskInfo, node *api.NodeInfo) error {
		attr := p.attrOf(ssn, task)
		if attr != nil && attr.limitErr != nil {
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, ReasonLimitsInvalid)
		}
		unset := attr == nil || attr.aff == nil
		group, labelled := node.Node.Labels[LabelNodeGroup]
		switch {
		case !labelled:
			if !p.strict && unset {
				return nil
			}
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, ReasonLabelNotFound)
		case unset:
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, ReasonNoAffinity)
		case !attr.aff.allows(group):
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, ReasonUnsatisfied)
		}
		if names := attr.exceeded(group, task.Resreq); names != "" {
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable,
				reasonLimitsExceeded+" in group "+group+": "+names)
		}
		return nil
	}
}

func (p *plugin) nodeOrder(ssn *framework.Session) framework.NodeOrderFn {
	return func(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
		group, labelled := node.Node.Labels[LabelNodeGroup]
		if !labelled {
			return 0, nil
		}
		attr := p.attrOf(ssn, task)
		if attr == nil || attr.aff == nil {
			return 0, nil
		}
		return attr.aff.score(group, p.preferredOrder), nil
	}
}

// initAllocated accounts the tasks that hold resources when the session opens, jobs and tasks
// in name order so that sums do not depend on map order.
func (p *plugin) initAllocated(ssn *framework.Session) {
	for _, j := range ssn.SortedJobs() {
		attr := p.queues[j.Queue]
		if attr == nil || len(attr.limits) == 0 {
			continue
		}
		for _, t := range j.SortedTasks() {
			if api.AllocatedStatus(t.Status) {
				p.add(ssn, attr, t, 1)
			}
		}
	}
}

// account follows an allocate (sign 1) or deallocate (sign -1) event.
func (p *plugin) account(ssn *framework.Session, t *api.TaskInfo, sign float64) {
	if attr := p.attrOf(ssn, t); attr != nil && len(attr.limits) > 0 {
		p.add(ssn, attr, t, sign)
	}
}

func (p *plugin) add(ssn *framework.Session, attr *queueAttr, t *api.TaskInfo, sign float64) {
	n, ok := ssn.Nodes[t.NodeName]
	if t.NodeName == "" || !ok {
		return
	}
	group, ok := n.Node.Labels[LabelNodeGroup]
	if !ok {
		return
	}
	r := attr.allocated[group]
	if r == nil {
		if sign < 0 {
			return
		}
		r = api.EmptyResource()
		attr.allocated[group] = r
	}
	if sign > 0 {
		r.Add(t.Resreq)
	} else {
		r.Sub(t.Resreq)
	}
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

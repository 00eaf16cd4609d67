package drf

import (
	"cmp"
	"fmt"
	"maps"
	"slices"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// hnode is a node of the hierarchical DRF tree: the root, a queue or a job (a leaf).
type hnode struct {
	// name is the queue's name, the job's UID, or "root".
	name string
	// weight divides the node's share when it is compared with a sibling: the queue's weight,
	// 1 for the root and for jobs.
	weight float64
	// attr is the node's allocation and dominant share. A job's is the plugin's attr of the
	// job (its own copy in a clone); an inner node's is derived from its children by refresh.
	attr *attr
	// request is what all the job's tasks ask for (jobs only: a leaf is a node with a request).
	request *api.Resource
	// children are the queues below, by name, then the jobs, by UID (nil for a job); queues
	// indexes the queue children by name.
	children []*hnode
	queues   map[string]*hnode
	// saturated marks a job that cannot use more of what is still free, or an inner node all
	// of whose children are saturated. Saturated nodes go after demanding ones.
	saturated bool
}

func (n *hnode) isJob() bool { return n.request != nil }

// tree is Volcano's hierarchical DRF state: every job of the session hangs under the queue
// path of its queue. Inner nodes are derived from the jobs lazily: a change marks the tree
// stale and the next comparison refreshes it, which gives what Volcano's refresh after every
// change gives, since the derived figures depend only on the jobs' allocations and the total
// allocated.
type tree struct {
	root *hnode
	// jobs maps a job's UID to its leaf.
	jobs map[string]*hnode
	// paths maps a queue to the queue names from below the root down to it (read-only, shared
	// by clones).
	paths map[string][]string
	// total is the cluster's resources (read-only); allocated is what the jobs in the tree hold
	// (Volcano's totalAllocated).
	total, allocated *api.Resource
	stale            bool
}

// queuePaths derives every queue's place in the hierarchy from the parent chain, as Volcano's
// BuildEffectiveQueueHierarchy does for queues without the hierarchy annotations: the names of
// its ancestors below the root, then its own. It fails, naming the queue, on a parent that is
// not in the session or on a cycle.
func queuePaths(queues map[string]*api.QueueInfo) (map[string][]string, error) {
	paths := make(map[string][]string, len(queues))
	for _, name := range slices.Sorted(maps.Keys(queues)) {
		var path []string
		for q := queues[name]; q.Name != api.RootQueue; {
			if len(path) == len(queues) {
				return nil, fmt.Errorf("queue %s: the parent chain has a cycle", name)
			}
			path = append(path, q.Name)
			if q.Parent == "" || q.Parent == api.RootQueue {
				break
			}
			parent, ok := queues[q.Parent]
			if !ok {
				return nil, fmt.Errorf("queue %s: parent queue %s is not in the session", q.Name, q.Parent)
			}
			q = parent
		}
		slices.Reverse(path)
		paths[name] = path
	}
	return paths, nil
}

// newTree builds the tree of the session's jobs (jobs holds their attrs, which the leaves
// share) under their queues' paths. A job whose queue is not in the session stays out.
func newTree(queues map[string]*api.QueueInfo, sorted []*api.JobInfo, jobs map[string]*attr, total *api.Resource) (*tree, error) {
	paths, err := queuePaths(queues)
	if err != nil {
		return nil, err
	}
	t := &tree{
		root:      newInner(api.RootQueue, 1),
		jobs:      make(map[string]*hnode, len(sorted)),
		paths:     paths,
		total:     total,
		allocated: api.EmptyResource(),
		stale:     true,
	}
	for _, j := range sorted {
		path, ok := paths[j.Queue]
		a := jobs[j.UID]
		if !ok || a == nil {
			continue
		}
		n := t.root
		for _, q := range path {
			child := n.queues[q]
			if child == nil {
				child = newInner(q, float64(max(queues[q].Weight, 1)))
				n.queues[q] = child
				n.children = append(n.children, child)
			}
			n = child
		}
		leaf := &hnode{name: j.UID, weight: 1, attr: a, request: j.TotalRequest.Clone()}
		n.children = append(n.children, leaf)
		t.jobs[j.UID] = leaf
		t.allocated.Add(a.allocated)
	}
	t.root.sortChildren()
	return t, nil
}

func newInner(name string, weight float64) *hnode {
	return &hnode{name: name, weight: weight, attr: &attr{allocated: api.EmptyResource()}, children: []*hnode{}, queues: map[string]*hnode{}}
}

// sortChildren puts every inner node's children in their order: queues by name, then jobs by
// UID, so that sums over them are always taken in one order.
func (n *hnode) sortChildren() {
	slices.SortFunc(n.children, func(a, b *hnode) int {
		if a.isJob() != b.isJob() {
			if b.isJob() {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.name, b.name)
	})
	for _, c := range n.children {
		if !c.isJob() {
			c.sortChildren()
		}
	}
}

// clone returns an independent copy of the tree: its own nodes and job attrs.
func (t *tree) clone() *tree {
	c := &tree{jobs: make(map[string]*hnode, len(t.jobs)), paths: t.paths, total: t.total, allocated: t.allocated.Clone(), stale: t.stale}
	c.root = t.root.clone(c.jobs)
	return c
}

func (n *hnode) clone(jobs map[string]*hnode) *hnode {
	c := &hnode{name: n.name, weight: n.weight, attr: n.attr.clone(), request: n.request, saturated: n.saturated}
	if n.isJob() {
		jobs[n.name] = c
		return c
	}
	c.children = make([]*hnode, 0, len(n.children))
	c.queues = make(map[string]*hnode, len(n.queues))
	for _, child := range n.children {
		cc := child.clone(jobs)
		c.children = append(c.children, cc)
		if !cc.isJob() {
			c.queues[cc.name] = cc
		}
	}
	return c
}

// allocate records that the job took r (its attr has already changed).
func (t *tree) allocate(job string, r *api.Resource) {
	if t.jobs[job] != nil {
		t.allocated.Add(r)
		t.stale = true
	}
}

// deallocate records that the job gave r back (its attr has already changed).
func (t *tree) deallocate(job string, r *api.Resource) {
	if t.jobs[job] != nil {
		t.allocated.Sub(r)
		t.stale = true
	}
}

// setJob makes a the job's allocation in the tree.
func (t *tree) setJob(job string, a *attr) {
	if leaf := t.jobs[job]; leaf != nil {
		leaf.attr = a
		t.stale = true
	}
}

// refresh derives the inner nodes from the jobs when something changed since the last time.
func (t *tree) refresh() {
	if !t.stale {
		return
	}
	// A resource is in demand while the jobs together hold less of it than the cluster has.
	demanding := map[string]bool{}
	for _, rn := range t.total.Names() {
		if t.allocated.Get(rn) < t.total.Get(rn) {
			demanding[rn] = true
		}
	}
	t.root.refresh(t.total, demanding)
	t.stale = false
}

// refresh is Volcano's updateHierarchicalShare. A job is saturated when it holds all it asks
// for of some resource, or asks for a resource that is no longer in demand. An inner node's
// allocation is the sum of its children's, where every child that holds something and is not
// saturated is first scaled to the smallest dominant share among them (at most 1): the
// demanding children count as if they had progressed equally. A node is saturated when all its
// children are.
func (n *hnode) refresh(total *api.Resource, demanding map[string]bool) {
	if n.isJob() {
		n.saturated = resourceSaturated(n.attr.allocated, n.request, demanding)
		return
	}
	mdr := 1.0
	for _, c := range n.children {
		c.refresh(total, demanding)
		if c.attr.share != 0 && !c.saturated {
			mdr = min(mdr, c.attr.share)
		}
	}
	allocated := api.EmptyResource()
	saturated := true
	for _, c := range n.children {
		saturated = saturated && c.saturated
		switch {
		case c.attr.share == 0:
		case c.saturated:
			allocated.Add(c.attr.allocated)
		default:
			allocated.Add(c.attr.allocated.Clone().Multi(mdr / c.attr.share))
		}
	}
	n.attr.allocated = allocated
	n.attr.dominant, n.attr.share = resutil.DominantShare(allocated, total)
	n.saturated = saturated
}

// resourceSaturated is Volcano's resourceSaturated for a job holding allocated and asking for
// request in all.
func resourceSaturated(allocated, request *api.Resource, demanding map[string]bool) bool {
	for _, rn := range allocated.Names() {
		req := request.Get(rn)
		if req != 0 && (allocated.Get(rn) >= req || !demanding[rn]) {
			return true
		}
	}
	return false
}

// compare is Volcano's compareQueues: walking down from the root along both queues' paths, the
// first level where the two nodes differ decides. A demanding node goes before a saturated one;
// otherwise the smaller share divided by weight goes first. The result is negative when l goes
// first, positive when r does, and 0 when they never differ (one queue is an ancestor of the
// other, or either has no job in the session and so no node).
func (t *tree) compare(l, r string) float64 {
	t.refresh()
	lp, rp := t.paths[l], t.paths[r]
	ln, rn := t.root, t.root
	for i := 0; ; i++ {
		if ln.saturated != rn.saturated {
			if rn.saturated {
				return -1
			}
			return 1
		}
		if ls, rs := ln.attr.share/ln.weight, rn.attr.share/rn.weight; ls != rs {
			return ls - rs
		}
		if i == min(len(lp), len(rp)) {
			return 0
		}
		ln, rn = ln.queues[lp[i]], rn.queues[rp[i]]
		if ln == nil || rn == nil {
			return 0
		}
	}
}

package k8sutil

import (
	"maps"
	"sync/atomic"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// DefaultMilliCPURequest and DefaultMemoryRequest are what Kubernetes' resource scores count
// for a task that requests no cpu or no memory (schedutil's non-zero defaults).
const (
	DefaultMilliCPURequest = 100
	DefaultMemoryRequest   = 200 * 1024 * 1024
)

// NodeDelta is how Volcano's Kubernetes view of a node differs from Sluice's NodeInfo, and
// what its non-zero request sums add.
type NodeDelta struct {
	// Evicted counts the node's tasks evicted in this session: Sluice keeps them on the node
	// as Releasing, Volcano's view has dropped them. EvictedReq sums their requests.
	Evicted    int
	EvictedReq api.Resource
	// ZeroCPU and ZeroMemory count the tasks in the view that request no cpu or no memory.
	ZeroCPU, ZeroMemory int
}

// Placed is a task on a node in the view.
type Placed struct {
	Task *api.Task
	Node *api.NodeInfo
}

// View mirrors the task placement that Volcano's Kubernetes node view (ssn.NodeMap) holds
// during a session: every task on a node when the session opened, plus tasks allocated or
// pipelined since, minus tasks deallocated since (discarded placements and evictions). It is
// kept up to date by the event handler it registers; it must be created in OnSessionOpen.
//
// Readers (predicates, scores) may run concurrently with each other, never with an event.
type View struct {
	ssn     *framework.Session
	gen     atomic.Uint64
	evicted map[string]string     // task UID -> node name
	deltas  map[string]*NodeDelta // node name -> delta, only for nodes that have one
	// base, when set, holds the deltas of the nodes as the session opened (kept between
	// cycles, read-only): deltas then holds the session's own, copied at their first change.
	base map[string]*NodeDelta
	// affinity holds the tasks in the view that carry task affinity terms, by UID.
	affinity map[string]Placed
}

// NewView builds the view of the session's current placement and registers its event
// handler on the session.
func NewView(ssn *framework.Session) *View {
	v := &View{
		ssn:      ssn,
		evicted:  map[string]string{},
		deltas:   map[string]*NodeDelta{},
		affinity: map[string]Placed{},
	}
	for _, n := range ssn.NodeList {
		for _, t := range n.Tasks {
			v.add(t, n)
		}
	}
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: v.onAllocate, DeallocateFunc: v.onDeallocate})
	return v
}

// keptViewKey names the view's state kept between cycles (framework.KeptState).
const keptViewKey = "k8sutil.View"

// keptView is the view's state kept for a cluster between cycles: each node's part (its
// zero-request counts, its tasks with affinity terms), derived from the node's view alone,
// and their union, so that a cycle re-derives only the nodes whose views changed.
type keptView struct {
	nodes    map[string]*nodePart
	deltas   map[string]*NodeDelta
	affinity map[string]Placed
}

// nodePart is what one node adds to the view as the session opens.
type nodePart struct {
	delta    NodeDelta
	affinity []*api.TaskInfo
}

// partOf derives a node's part (nil when it adds nothing).
func partOf(n *api.NodeInfo) *nodePart {
	var part *nodePart
	for _, t := range n.Tasks {
		zc, zm := t.Resreq.MilliCPU <= 0, t.Resreq.Memory <= 0
		aff := HasTaskAffinity(t.Spec)
		if !zc && !zm && !aff {
			continue
		}
		if part == nil {
			part = &nodePart{}
		}
		if zc {
			part.delta.ZeroCPU++
		}
		if zm {
			part.delta.ZeroMemory++
		}
		if aff {
			part.affinity = append(part.affinity, t)
		}
	}
	return part
}

// newKeptView builds the view on the state kept between cycles, brought up to date for the
// nodes whose views changed, and registers its event handler. A session not on kept views
// derives it from every node.
func newKeptView(ssn *framework.Session) *View {
	k, ch := framework.KeptState[keptView](ssn, keptViewKey)
	if ch.All || k.nodes == nil {
		k.nodes, k.deltas, k.affinity = map[string]*nodePart{}, map[string]*NodeDelta{}, map[string]Placed{}
		for _, n := range ssn.NodeList {
			k.setNode(n.Name, n)
		}
	} else {
		for _, name := range ch.Nodes {
			k.setNode(name, ssn.Nodes[name])
		}
	}
	v := &View{
		ssn:      ssn,
		evicted:  map[string]string{},
		deltas:   map[string]*NodeDelta{},
		base:     k.deltas,
		affinity: maps.Clone(k.affinity),
	}
	if v.affinity == nil {
		v.affinity = map[string]Placed{}
	}
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: v.onAllocate, DeallocateFunc: v.onDeallocate})
	return v
}

// setNode replaces the node's part by that of n (nil: the node is gone).
func (k *keptView) setNode(name string, n *api.NodeInfo) {
	if old := k.nodes[name]; old != nil {
		for _, t := range old.affinity {
			delete(k.affinity, t.UID)
		}
		delete(k.deltas, name)
		delete(k.nodes, name)
	}
	if n == nil {
		return
	}
	part := partOf(n)
	if part == nil {
		return
	}
	k.nodes[name] = part
	if part.delta.ZeroCPU != 0 || part.delta.ZeroMemory != 0 {
		d := part.delta
		k.deltas[name] = &d
	}
	for _, t := range part.affinity {
		k.affinity[t.UID] = Placed{Task: t.Spec, Node: n}
	}
}

// SessionView returns the session's view, built (and its event handler registered) at the
// first call in the session: plugins that read the same placement share one view.
func SessionView(ssn *framework.Session) *View {
	return ssn.Shared("k8sutil.View", func() any { return newKeptView(ssn) }).(*View)
}

// Gen changes whenever the view changes; per-task state computed from the view stays valid
// while it does not.
func (v *View) Gen() uint64 { return v.gen.Load() }

// Delta returns the node's delta, or nil when it has none.
func (v *View) Delta(node string) *NodeDelta {
	if len(v.deltas) > 0 {
		if d := v.deltas[node]; d != nil {
			return d
		}
	}
	if len(v.base) == 0 {
		return nil
	}
	return v.base[node]
}

// Gone reports whether a task still on a Sluice node was evicted in this session and so is
// not in the view.
func (v *View) Gone(uid string) bool {
	if len(v.evicted) == 0 {
		return false
	}
	_, ok := v.evicted[uid]
	return ok
}

// TaskCount is the number of tasks the view has on the node.
func (v *View) TaskCount(n *api.NodeInfo) int {
	if d := v.Delta(n.Name); d != nil {
		return len(n.Tasks) - d.Evicted
	}
	return len(n.Tasks)
}

// WithAffinity returns the tasks in the view that carry task affinity terms. The map must
// not be changed; iterate it only for order-independent results (sums, any).
func (v *View) WithAffinity() map[string]Placed { return v.affinity }

func (v *View) delta(node string) *NodeDelta {
	d := v.deltas[node]
	if d == nil {
		d = &NodeDelta{}
		if b := v.base[node]; b != nil {
			*d = *b // the kept delta has no evictions, so nothing is shared
		}
		v.deltas[node] = d
	}
	return d
}

func (v *View) add(t *api.TaskInfo, n *api.NodeInfo) {
	if zc, zm := t.Resreq.MilliCPU <= 0, t.Resreq.Memory <= 0; zc || zm {
		d := v.delta(n.Name)
		if zc {
			d.ZeroCPU++
		}
		if zm {
			d.ZeroMemory++
		}
	}
	if HasTaskAffinity(t.Spec) {
		v.affinity[t.UID] = Placed{Task: t.Spec, Node: n}
	}
}

func (v *View) remove(t *api.TaskInfo, n *api.NodeInfo) {
	if zc, zm := t.Resreq.MilliCPU <= 0, t.Resreq.Memory <= 0; zc || zm {
		d := v.delta(n.Name)
		if zc {
			d.ZeroCPU--
		}
		if zm {
			d.ZeroMemory--
		}
	}
	delete(v.affinity, t.UID)
}

// onAllocate handles an allocation or pipelining, and the undoing of an eviction.
func (v *View) onAllocate(e *framework.Event) {
	t := e.Task
	n := v.ssn.Nodes[t.NodeName]
	if n == nil {
		return
	}
	if node, ok := v.evicted[t.UID]; ok {
		delete(v.evicted, t.UID)
		d := v.delta(node)
		d.Evicted--
		d.EvictedReq.Sub(t.Resreq)
	}
	v.add(t, n)
	v.gen.Add(1)
}

// onDeallocate handles an eviction (the task stays on the node as Releasing) and the undoing
// of an allocation or pipelining.
func (v *View) onDeallocate(e *framework.Event) {
	t := e.Task
	n := v.ssn.Nodes[t.NodeName]
	if n == nil {
		return
	}
	if t.Status == api.Releasing {
		v.evicted[t.UID] = n.Name
		d := v.delta(n.Name)
		d.Evicted++
		d.EvictedReq.Add(t.Resreq)
	}
	v.remove(t, n)
	v.gen.Add(1)
}

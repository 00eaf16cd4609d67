package k8sutil

import (
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

// SessionView returns the session's view, built (and its event handler registered) at the
// first call in the session: plugins that read the same placement share one view.
func SessionView(ssn *framework.Session) *View {
	return ssn.Shared("k8sutil.View", func() any { return NewView(ssn) }).(*View)
}

// Gen changes whenever the view changes; per-task state computed from the view stays valid
// while it does not.
func (v *View) Gen() uint64 { return v.gen.Load() }

// Delta returns the node's delta, or nil when it has none.
func (v *View) Delta(node string) *NodeDelta {
	if len(v.deltas) == 0 {
		return nil
	}
	return v.deltas[node]
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

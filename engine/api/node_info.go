package api

import (
	"fmt"
	"math"
	"sort"
)

// NodeInfo is a session's mutable view of one node: what it offers and what its tasks hold.
type NodeInfo struct {
	Name string
	// Node is the immutable node as streamed in.
	Node *Node
	// Allocatable is what the node offers; MaxTaskNum is its task capacity.
	Allocatable *Resource
	// Capacity equals Allocatable (Sluice has no separate capacity).
	Capacity *Resource
	// Idle is Allocatable minus Used.
	Idle *Resource
	// Used is held by tasks placed here (Releasing ones included).
	Used *Resource
	// Releasing is held by tasks being evicted.
	Releasing *Resource
	// Pipelined is promised to tasks waiting for Releasing resources.
	Pipelined *Resource
	// Tasks are the node's tasks by UID (node-owned copies).
	Tasks map[string]*TaskInfo
	// Devices is the node's device inventory with per-device usage, sorted by id.
	Devices []*DeviceInfo
	// Version changes whenever a task is added to, removed from or updated on the node, so
	// a cache of answers about the node can tell whether they may have changed.
	Version uint64
	// Pod slots, as current Volcano counts them (every task takes one "pods" unit of the
	// node's allocatable pods): slots held by tasks on the node (releasing ones included), by
	// releasing tasks, and promised to pipelined tasks. A node without a pods figure has
	// unlimited slots.
	podsUsed, podsReleasing, podsPipelined int
	// evictable counts the node's preemptable tasks by status (Bound and Running only), so that
	// eviction can pass over a node without victims at no cost.
	evictable [2]int
	// position is the node's place in its session's node list (SetPosition).
	position int32
	// magnitude adds up the magnitudes of the cpu and memory amounts of Allocatable and of
	// the tasks on the node; inexact is set once an amount was not an integer, had scalars, or
	// magnitude reached 2^53 (see SumsExact).
	magnitude [2]float64
	inexact   bool
}

// exactLimit is 2^53, the first integer a float64 cannot tell from its successor.
const exactLimit = 1 << 53

// note takes an amount added to (d = 1) or removed from (d = -1) the node into magnitude.
func (ni *NodeInfo) note(r *Resource, d float64) {
	if ni.inexact {
		return
	}
	if len(r.Scalars) > 0 || r.MilliCPU != math.Trunc(r.MilliCPU) || r.Memory != math.Trunc(r.Memory) {
		ni.inexact = true
		return
	}
	ni.magnitude[0] += d * math.Abs(r.MilliCPU)
	ni.magnitude[1] += d * math.Abs(r.Memory)
	if ni.magnitude[0] >= exactLimit || ni.magnitude[1] >= exactLimit {
		ni.inexact = true
	}
}

// SumsExact reports whether every amount the node's sums (Idle, Used, Releasing, Pipelined)
// ever took in was an integer without scalars and the magnitudes of its allocatable and its
// tasks' amounts stayed under 2^53: every partial sum was then exact, so the sums are those
// of a fresh build whatever the order tasks came and went in.
func (ni *NodeInfo) SumsExact() bool { return !ni.inexact }

// Patched marks a view changed in place (tasks removed and added) as a fresh build of the
// same tasks: its Version becomes a fresh build's, one step per task.
func (ni *NodeInfo) Patched() { ni.Version = uint64(len(ni.Tasks)) }

// SetPosition records the node's place in its session's node list, so that the session finds
// it without a lookup by name.
func (ni *NodeInfo) SetPosition(i int32) { ni.position = i }

// Position returns what SetPosition recorded (0 before).
func (ni *NodeInfo) Position() int32 { return ni.position }

// evictableSlot is a status's slot in NodeInfo.evictable, -1 for the other statuses.
func evictableSlot(s TaskStatus) int {
	switch s {
	case Bound:
		return 0
	case Running:
		return 1
	}
	return -1
}

// Evictable returns how many preemptable tasks (Task.Preemptable) on the node are in the
// status, which must be Bound or Running (0 for any other).
func (ni *NodeInfo) Evictable(s TaskStatus) int {
	if i := evictableSlot(s); i >= 0 {
		return ni.evictable[i]
	}
	return 0
}

// MaxPods is the node's pod capacity (0: unlimited).
func (ni *NodeInfo) MaxPods() int { return ni.Allocatable.MaxTaskNum }

// IdlePods is how many more tasks the node takes now (meaningless when MaxPods is 0).
func (ni *NodeInfo) IdlePods() int { return ni.MaxPods() - ni.podsUsed }

// FutureIdlePods is how many tasks the node will take once releasing tasks are gone and
// pipelined tasks placed.
func (ni *NodeInfo) FutureIdlePods() int {
	return ni.MaxPods() - ni.podsUsed + ni.podsReleasing - ni.podsPipelined
}

// podsFit reports whether slots more tasks fit in free pod slots.
func (ni *NodeInfo) podsFit(free int) bool { return ni.MaxPods() == 0 || free >= 1 }

// DeviceInfo is one device of a node and what is allocated on it in this session.
type DeviceInfo struct {
	Device
	// UsedMemory (bytes) and UsedCores (percent) are taken by shared requests.
	UsedMemory float64
	UsedCores  int32
	// Tasks holding a share or all of the device, by task UID.
	Holders map[string]struct{}
	// Whole is true when a task holds the whole device.
	Whole bool
}

// NewNodeInfo builds the session view of a node with no tasks.
func NewNodeInfo(n *Node) *NodeInfo {
	alloc := n.Allocatable.Clone()
	ni := &NodeInfo{
		Name:        n.Name,
		Node:        n,
		Allocatable: alloc,
		Capacity:    alloc.Clone(),
		Idle:        alloc.Clone(),
		Used:        EmptyResource(),
		Releasing:   EmptyResource(),
		Pipelined:   EmptyResource(),
		Tasks:       map[string]*TaskInfo{},
	}
	ni.Idle.MaxTaskNum = 0
	ni.note(alloc, 1)
	for _, d := range n.Devices {
		dev := &DeviceInfo{Device: d, Holders: map[string]struct{}{}}
		if dev.Cores == 0 {
			dev.Cores = 100
		}
		ni.Devices = append(ni.Devices, dev)
	}
	sort.Slice(ni.Devices, func(i, j int) bool { return ni.Devices[i].ID < ni.Devices[j].ID })
	return ni
}

// FutureIdle is what the node will have free once releasing tasks are gone and pipelined
// tasks have taken their room: Idle + Releasing - Pipelined.
func (ni *NodeInfo) FutureIdle() *Resource {
	return ni.Idle.Clone().Add(ni.Releasing).Sub(ni.Pipelined)
}

// FutureIdleHolds reports whether req.LessEqual(ni.FutureIdle(), Zero) holds, comparing in
// place with the same arithmetic instead of building FutureIdle (a resource and its scalar
// map per call: the most allocated garbage of a cycle on nodes with scalar resources).
func (ni *NodeInfo) FutureIdleHolds(req *Resource) bool {
	if !lessEqualTol(req.MilliCPU, ni.Idle.MilliCPU+ni.Releasing.MilliCPU-ni.Pipelined.MilliCPU) ||
		!lessEqualTol(req.Memory, ni.Idle.Memory+ni.Releasing.Memory-ni.Pipelined.Memory) {
		return false
	}
	// FutureIdle's scalars are those of idle, releasing and pipelined; LessEqual checks every
	// name of either side (in any order: each check stands alone), a missing side as 0.
	for name, v := range req.Scalars {
		if !ni.futureScalarHolds(v, name) {
			return false
		}
	}
	for _, m := range []map[string]float64{ni.Idle.Scalars, ni.Releasing.Scalars, ni.Pipelined.Scalars} {
		for name := range m {
			if _, asked := req.Scalars[name]; !asked && !ni.futureScalarHolds(0, name) {
				return false
			}
		}
	}
	return true
}

// futureScalarHolds is LessEqual's check of one scalar dimension, asking v of the node's
// future idle amount of it, computed as FutureIdle does: (idle + releasing) - pipelined.
func (ni *NodeInfo) futureScalarHolds(v float64, name string) bool {
	fi := ni.Idle.Scalars[name] + ni.Releasing.Scalars[name] - ni.Pipelined.Scalars[name]
	if fi == -1 {
		return true
	}
	if v == -1 {
		return false
	}
	return lessEqualTol(v, fi)
}

// FitsIdle reports whether req (and one pod slot) fits in the node's idle resources.
func (ni *NodeInfo) FitsIdle(req *Resource) bool {
	return ni.podsFit(ni.IdlePods()) && req.LessEqual(ni.Idle, Zero)
}

// FitsFutureIdle reports whether req (and one pod slot) fits in the node's future idle
// resources, like req.LessEqual(ni.FutureIdle(), Zero) without building FutureIdle.
func (ni *NodeInfo) FitsFutureIdle(req *Resource) bool {
	if !ni.podsFit(ni.FutureIdlePods()) {
		return false
	}
	fi := func(name string) float64 { return ni.Idle.Get(name) + ni.Releasing.Get(name) - ni.Pipelined.Get(name) }
	if !lessEqualTol(req.MilliCPU, fi(ResourceCPU)) || !lessEqualTol(req.Memory, fi(ResourceMemory)) {
		return false
	}
	for name, v := range req.Scalars {
		if !lessEqualTol(v, fi(name)) {
			return false
		}
	}
	// A dimension the request lacks counts as zero and must not be overdrawn either.
	for _, m := range []map[string]float64{ni.Idle.Scalars, ni.Releasing.Scalars, ni.Pipelined.Scalars} {
		for name := range m {
			if _, asked := req.Scalars[name]; !asked && !lessEqualTol(0, fi(name)) {
				return false
			}
		}
	}
	return true
}

// AddTask places a copy of the task on the node and accounts its resources by status. It
// fails, changing nothing, when the node lacks idle resources for a non-pipelined task.
func (ni *NodeInfo) AddTask(t *TaskInfo) error { return ni.AddTaskIn(t, nil) }

// AddTaskIn is AddTask with the node's copy taken from the arena (nil: allocated alone).
func (ni *NodeInfo) AddTaskIn(t *TaskInfo, a *TaskInfoArena) error {
	if t.NodeName != "" && t.NodeName != ni.Name {
		return fmt.Errorf("task %s is already on node %s, not %s", t.UID, t.NodeName, ni.Name)
	}
	if _, ok := ni.Tasks[t.UID]; ok {
		return fmt.Errorf("task %s is already on node %s", t.UID, ni.Name)
	}
	if t.Status != Pipelined && !ni.FitsIdle(t.Resreq) {
		return fmt.Errorf("node %s cannot hold task %s: idle <%s> and %d pod slots, request <%s>",
			ni.Name, t.UID, ni.Idle, ni.IdlePods(), t.Resreq)
	}
	ni.addTaskAs(a.Clone(t))
	t.NodeName = ni.Name
	return nil
}

// addTaskUnchecked accounts a task already known to be on the node (a snapshot may show a
// node overcommitted; the session must still see it as it is).
func (ni *NodeInfo) addTaskUnchecked(t *TaskInfo) { ni.addTaskAs(t.Clone()) }

// addTaskAs accounts c, a copy of a task that the node is to keep.
func (ni *NodeInfo) addTaskAs(c *TaskInfo) {
	ni.account(c)
	ni.Tasks[c.UID] = c
}

// account takes c, the node's copy of a task, into the node's sums and counts, as placed on
// the node in its status, and moves Version.
func (ni *NodeInfo) account(c *TaskInfo) {
	ni.note(c.Resreq, 1)
	switch c.Status {
	case Pipelined:
		ni.Pipelined.Add(c.Resreq)
		ni.podsPipelined++
	default:
		ni.Idle.Sub(c.Resreq)
		ni.Used.Add(c.Resreq)
		ni.podsUsed++
		if c.Status == Releasing {
			ni.Releasing.Add(c.Resreq)
			ni.podsReleasing++
		}
	}
	if i := evictableSlot(c.Status); i >= 0 && c.Preemptable {
		ni.evictable[i]++
	}
	c.NodeName = ni.Name
	ni.Version++
}

// AddExistingTask accounts a task that the snapshot already places on this node, without the
// idle check of AddTask.
func (ni *NodeInfo) AddExistingTask(t *TaskInfo) { ni.addTaskUnchecked(t) }

// RemoveTask removes the task and gives back what it held.
func (ni *NodeInfo) RemoveTask(t *TaskInfo) {
	cur, ok := ni.Tasks[t.UID]
	if !ok {
		return
	}
	ni.unaccount(cur)
	delete(ni.Tasks, cur.UID)
}

// unaccount undoes account for cur, the node's copy of a task, and moves Version.
func (ni *NodeInfo) unaccount(cur *TaskInfo) {
	ni.note(cur.Resreq, -1)
	switch cur.Status {
	case Pipelined:
		ni.Pipelined.Sub(cur.Resreq)
		ni.podsPipelined--
	default:
		ni.Idle.Add(cur.Resreq)
		ni.Used.Sub(cur.Resreq)
		ni.podsUsed--
		if cur.Status == Releasing {
			ni.Releasing.Sub(cur.Resreq)
			ni.podsReleasing--
		}
	}
	if i := evictableSlot(cur.Status); i >= 0 && cur.Preemptable {
		ni.evictable[i]--
	}
	ni.Version++
}

// UpdateTask re-accounts a task whose status changed.
func (ni *NodeInfo) UpdateTask(t *TaskInfo) {
	ni.RemoveTask(t)
	ni.addTaskUnchecked(t)
}

// RestatusOwnTask is UpdateTask for a task whose copy on this node only the caller's session
// holds (one the session's statement placed with AddTask): the copy is overwritten in place
// instead of replaced, with the same accounting.
func (ni *NodeInfo) RestatusOwnTask(t *TaskInfo) {
	cur, ok := ni.Tasks[t.UID]
	if !ok || cur == t {
		ni.UpdateTask(t)
		return
	}
	// The copy stays under its key: only the sums and counts move, as RemoveTask and
	// addTaskAs would move them.
	ni.unaccount(cur)
	*cur = *t
	cur.DeviceIDs = append([]string(nil), t.DeviceIDs...)
	ni.account(cur)
}

// SortedTasks returns the node's tasks sorted by UID.
func (ni *NodeInfo) SortedTasks() []*TaskInfo {
	out := make([]*TaskInfo, 0, len(ni.Tasks))
	for _, t := range ni.Tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// Labels returns the node's labels.
func (ni *NodeInfo) Labels() map[string]string { return ni.Node.Labels }

// Clone returns a deep copy of the node view.
func (ni *NodeInfo) Clone() *NodeInfo {
	c := *ni
	c.Allocatable = ni.Allocatable.Clone()
	c.Capacity = ni.Capacity.Clone()
	c.Idle = ni.Idle.Clone()
	c.Used = ni.Used.Clone()
	c.Releasing = ni.Releasing.Clone()
	c.Pipelined = ni.Pipelined.Clone()
	c.Tasks = make(map[string]*TaskInfo, len(ni.Tasks))
	for k, t := range ni.Tasks {
		c.Tasks[k] = t.Clone()
	}
	c.Devices = make([]*DeviceInfo, len(ni.Devices))
	for i, d := range ni.Devices {
		dc := *d
		dc.Holders = make(map[string]struct{}, len(d.Holders))
		for k := range d.Holders {
			dc.Holders[k] = struct{}{}
		}
		c.Devices[i] = &dc
	}
	return &c
}

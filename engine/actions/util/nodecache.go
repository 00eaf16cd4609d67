package util

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// NodeCache remembers, per task class (framework.Session.TaskClass), each node's predicate
// answer, resource fit and score, and keeps the feasible nodes ordered by score. A node's
// answers are recomputed only when the session's change log says a statement touched the node
// (and its Version moved). This is sound because a class key promises that every enabled
// plugin's answers depend only on the key and the node's own state, and only statements change
// a node during a cycle. One cache serves one action run on one session; the predicate it is
// given must be the same for every call.
//
// On kept views, when every placement plugin says its answers depend on nothing else across
// cycles either (framework.KeptPlacements), the classes are kept between cycles
// (framework.KeptActionState) under the session's configuration: the answers of the nodes
// whose views the refresh rebuilt are recomputed at the class's first use in a cycle, the
// others kept. A new node list or configuration starts afresh.
type NodeCache struct {
	ssn     *framework.Session
	classes map[string]*class
	off     bool
}

// keptKey is the key of allocate's kept placements (framework.KeptActionState).
const keptKey = "actions/util.placements"

// keptPlacements are the classes a NodeCache keeps between cycles.
type keptPlacements struct {
	// cfg is the configuration the answers were computed under; nodes the length of the
	// node list the entries follow.
	cfg     *conf.Config
	nodes   int
	classes map[string]*class
}

// stale is the version of an entry whose node's view was rebuilt since it was computed: no
// node view reaches it.
const stale = ^uint64(0)

// class is what one task class knows of every node.
type class struct {
	// rep stands for every task of the class when a node's answers are (re)computed: a copy
	// of the class's first task as it was before placement. Tasks of one class get the same
	// answers (ClassKeyFn), so asking with one task spares plugins compiling each task's own
	// inputs (nodeorder's per-spec state) when the node a placement changed is re-evaluated.
	rep     *api.TaskInfo
	entries []cacheEntry
	// seen is how much of the session's change log the class has applied.
	seen int
	// rebuilt lists the nodes whose views a refresh rebuilt since the class last ran, their
	// entries marked stale; used says whether the class ran in the current cycle.
	rebuilt []int32
	used    bool
	// idle and future order the nodes whose idle (future idle) resources fit the class.
	idle, future scoreHeap
	// tally sums the entries' failures, for the fit errors of a task that fits nowhere.
	tally api.FitTally
}

// cacheEntry is what a class knows of one node at one node version.
type cacheEntry struct {
	version uint64
	err     error
	// fe is err as a fit error for the node (nil when err is), as tally counts it.
	fe *api.FitError
	// gen identifies this answer; heap items of older answers are stale.
	gen   uint32
	score float64
	// idle says which group a feasible node is in: idle (else future).
	idle bool
}

// NewNodeCache returns an empty cache for the session (or the classes kept from the last
// cycles); with enabled false it reuses nothing and every Place computes every answer afresh
// (the results are the same, only slower).
func NewNodeCache(ssn *framework.Session, enabled bool) *NodeCache {
	c := &NodeCache{ssn: ssn, classes: map[string]*class{}, off: !enabled}
	if enabled && ssn.KeepsPlacements() {
		k, ch := framework.KeptActionState[keptPlacements](ssn, keptKey)
		k.bringUpToDate(ssn, ch)
		c.classes = k.classes
	}
	return c
}

// bringUpToDate marks stale the entries of the nodes the refresh rebuilt, and drops the
// classes the last cycle did not use; it starts afresh on a new node list or configuration.
func (k *keptPlacements) bringUpToDate(ssn *framework.Session, ch framework.Changes) {
	if ch.All || k.cfg != ssn.Config || k.nodes != len(ssn.NodeList) {
		k.cfg, k.nodes, k.classes = ssn.Config, len(ssn.NodeList), map[string]*class{}
		return
	}
	rebuilt := make([]int32, 0, len(ch.Nodes))
	for _, name := range ch.Nodes {
		n := ssn.Nodes[name]
		if n == nil {
			// Deleted: positions moved (a node added in its place keeps the length).
			k.classes = map[string]*class{}
			return
		}
		rebuilt = append(rebuilt, n.Position())
	}
	for key, cl := range k.classes {
		if !cl.used {
			delete(k.classes, key)
			continue
		}
		cl.used, cl.seen = false, 0
		for _, i := range rebuilt {
			if cl.entries[i].version != stale {
				cl.entries[i].version = stale
				cl.rebuilt = append(cl.rebuilt, i)
			}
		}
		cl.compact()
	}
}

// Placement is the outcome of choosing a node for a task.
type Placement struct {
	// Node is the chosen node, nil when none fits.
	Node *api.NodeInfo
	// FitErrors says why each node failed, when none fits.
	FitErrors *api.FitErrors
	// Score is the chosen node's score (0 when it was the only candidate of its group).
	Score float64
}

// Place filters the session's nodes with fn and chooses the best one as allocate does: nodes
// whose idle resources fit the task first, else nodes whose future idle resources fit; within
// a group the highest score, the first by name on ties. Tasks of one class share answers; for
// a task without a class everything is computed afresh.
func (c *NodeCache) Place(task *api.TaskInfo, fn PredicateFn) Placement {
	nodes := c.ssn.NodeList
	key, ok := "", false
	if !c.off {
		key, ok = c.ssn.TaskClass(task)
	}
	if !ok {
		return PlaceAmong(c.ssn, task, nodes, fn)
	}
	cl, found := c.classes[key]
	log := c.ssn.NodeChanges()
	if !found {
		cl = &class{rep: task.Clone(), entries: make([]cacheEntry, len(nodes)), seen: len(log)}
		c.classes[key] = cl
		for i := range nodes {
			c.evaluate(cl, fn, i)
		}
	} else {
		if !cl.used {
			cl.rep = task.Clone() // kept from an earlier cycle: a task of this one stands in
		}
		for _, i := range cl.rebuilt {
			c.refresh(cl, fn, i)
		}
		cl.rebuilt = cl.rebuilt[:0]
		for _, i := range log[cl.seen:] {
			c.refresh(cl, fn, i)
		}
		cl.seen = len(log)
	}
	cl.used = true
	if i, ok := cl.best(&cl.idle); ok {
		return Placement{Node: nodes[i], Score: cl.entries[i].score}
	}
	if i, ok := cl.best(&cl.future); ok {
		return Placement{Node: nodes[i], Score: cl.entries[i].score}
	}
	return Placement{FitErrors: cl.tally.Snapshot(len(nodes))}
}

// refresh recomputes node i's answers when its view moved since they were computed.
func (c *NodeCache) refresh(cl *class, fn PredicateFn, i int32) {
	if cl.entries[i].version != c.ssn.NodeList[i].Version {
		c.evaluate(cl, fn, int(i))
	}
}

// evaluate computes node i's answers for the class (asking with its stand-in task) and files
// the node in its group.
func (c *NodeCache) evaluate(cl *class, fn PredicateFn, i int) {
	task := cl.rep
	n := c.ssn.NodeList[i]
	e := &cl.entries[i]
	cl.tally.Remove(e.fe)
	e.fe = nil
	e.version = n.Version
	e.gen++
	e.err = fn(task, n)
	idle := false
	if e.err == nil {
		if idle = n.FitsIdle(task.InitResreq); !idle && !n.FitsFutureIdle(task.InitResreq) {
			// The predicate passed but the room is not there (a pod slot, say).
			e.err = RoomError(task, n)
		}
	}
	if e.err != nil {
		e.fe = api.AsFitError(n.Name, e.err)
		cl.tally.Add(e.fe)
		return
	}
	e.score = 0
	if c.ssn.HasNodeOrder() {
		if s, err := c.ssn.NodeOrderFn(task, n); err == nil {
			e.score = s
		}
	}
	e.idle = idle
	item := scored{score: e.score, node: int32(i), gen: e.gen}
	if idle {
		cl.idle.push(item)
	} else {
		cl.future.push(item)
	}
}

// best returns the top node of the group, dropping stale items.
func (cl *class) best(h *scoreHeap) (int, bool) {
	for h.Len() > 0 {
		top := h.items[0]
		if cl.entries[top.node].gen == top.gen {
			return int(top.node), true
		}
		h.pop()
	}
	return 0, false
}

// compact rebuilds the groups from the entries when stale items (of answers since
// recomputed) outnumber the nodes: kept between cycles, the heaps would grow by every node
// changed in every cycle.
func (cl *class) compact() {
	if len(cl.idle.items)+len(cl.future.items) <= 2*len(cl.entries)+64 {
		return
	}
	cl.idle.items, cl.future.items = cl.idle.items[:0], cl.future.items[:0]
	for i := range cl.entries {
		e := &cl.entries[i]
		if e.err != nil || e.gen == 0 {
			continue
		}
		item := scored{score: e.score, node: int32(i), gen: e.gen}
		if e.idle {
			cl.idle.items = append(cl.idle.items, item)
		} else {
			cl.future.items = append(cl.future.items, item)
		}
	}
	cl.idle.init()
	cl.future.init()
}

// scored is a node's score for a class at one answer generation.
type scored struct {
	score float64
	node  int32
	gen   uint32
}

// scoreHeap orders nodes by score, highest first, then by position (name order). Its push and
// pop are typed (no container/heap): boxing a scored item in an interface costs an allocation
// per push and pop, and a placed task does several.
type scoreHeap struct{ items []scored }

func (h *scoreHeap) Len() int { return len(h.items) }

// less orders item i before item j.
func (h *scoreHeap) less(i, j int) bool {
	a, b := &h.items[i], &h.items[j]
	if a.score != b.score {
		return a.score > b.score
	}
	return a.node < b.node
}

// push adds an item.
func (h *scoreHeap) push(it scored) {
	h.items = append(h.items, it)
	for j := len(h.items) - 1; j > 0; {
		i := (j - 1) / 2
		if !h.less(j, i) {
			break
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		j = i
	}
}

// pop removes and returns the first item; the heap must not be empty.
func (h *scoreHeap) pop() scored {
	n := len(h.items) - 1
	h.items[0], h.items[n] = h.items[n], h.items[0]
	h.down(0, n)
	v := h.items[n]
	h.items = h.items[:n]
	return v
}

// init orders items given in any order.
func (h *scoreHeap) init() {
	n := len(h.items)
	for i := n/2 - 1; i >= 0; i-- {
		h.down(i, n)
	}
}

// down moves item i down among the first n items until both its children come after it.
func (h *scoreHeap) down(i, n int) {
	for {
		j := 2*i + 1
		if j >= n {
			return
		}
		if r := j + 1; r < n && h.less(r, j) {
			j = r
		}
		if !h.less(j, i) {
			return
		}
		h.items[i], h.items[j] = h.items[j], h.items[i]
		i = j
	}
}

// PlaceAmong filters the given nodes with fn and chooses as Place does, computing everything
// afresh.
func PlaceAmong(ssn *framework.Session, task *api.TaskInfo, nodes []*api.NodeInfo, fn PredicateFn) Placement {
	feasible, fe := PredicateNodes(task, nodes, fn)
	if len(feasible) == 0 {
		return Placement{FitErrors: fe}
	}
	var idle, future []*api.NodeInfo
	for _, n := range feasible {
		switch {
		case n.FitsIdle(task.InitResreq):
			idle = append(idle, n)
		case n.FitsFutureIdle(task.InitResreq):
			future = append(future, n)
		}
	}
	for _, group := range [][]*api.NodeInfo{idle, future} {
		switch len(group) {
		case 0:
			continue
		case 1:
			return Placement{Node: group[0]}
		}
		scores := PrioritizeNodes(ssn, task, group)
		n := SelectBestNode(ssn, task, group, scores)
		for i := range group {
			if group[i] == n {
				return Placement{Node: n, Score: scores[i]}
			}
		}
		return Placement{Node: n}
	}
	// Every node passed fn but none has the room.
	fe = api.NewFitErrors()
	fe.Total = len(nodes)
	for _, n := range feasible {
		fe.SetNodeError(n.Name, RoomError(task, n))
	}
	return Placement{FitErrors: fe}
}

// RoomError says why a task fits neither the node's idle nor its future idle resources and
// pod slots.
func RoomError(task *api.TaskInfo, n *api.NodeInfo) error {
	var reasons []string
	if n.MaxPods() > 0 && n.FutureIdlePods() < 1 {
		reasons = append(reasons, "insufficient pods")
	}
	for _, r := range n.FutureIdle().Insufficient(task.InitResreq) {
		reasons = append(reasons, "insufficient "+r)
	}
	if len(reasons) == 0 {
		reasons = append(reasons, "insufficient resources")
	}
	return api.NewFitError(n.Name, api.Unschedulable, reasons...)
}

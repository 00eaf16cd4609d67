package util

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// EvictionNodes walks, for preempt and reclaim, the nodes where evicting tasks could make room
// for a task: those its predicates accept or reject only for a reason eviction can resolve,
// less those this cycle's allocate found it cannot use whatever is evicted (EvictionCandidates),
// in name order or best score first (PrioritizeNodes, then SortByScore).
//
// For a task with a placement class (framework.Session.TaskClass) each node's predicate answer
// and score are kept per class and recomputed only for nodes a statement changed since (as
// NodeCache does, and sound for the same reason: a class key promises that every enabled
// plugin's predicates and per-node scores depend only on the key and the node's own state, and
// that batch scores are the same on every node). The tasks of a job then cost what changed and
// the nodes they try, not the cluster's size. A task without a class is evaluated afresh, as
// EvictionCandidates and PrioritizeNodes do. One EvictionNodes serves one action run.
type EvictionNodes struct {
	ssn     *framework.Session
	classes map[string]*evictClass
	off     bool
}

// evictClass is what one task class knows of every node.
type evictClass struct {
	entries []evictEntry
	// seen is how much of the session's change log the class has applied.
	seen int
	// batch is the class's batch score, the same on every node, and whether there is one
	// (batchOK: PrioritizeNodes adds it); set when the class is made.
	batch   float64
	batchOK bool
	// order holds the candidate nodes, best score first (ties in name order); items of
	// older answers are stale.
	order scoreHeap
}

// evictEntry is what a class knows of one node at one node version.
type evictEntry struct {
	version   uint64
	candidate bool
	score     float64
	gen       uint32
}

// NewEvictionNodes returns an empty cache for the session; with enabled false it reuses nothing
// and every task is evaluated afresh (the nodes and their order are the same, only slower).
func NewEvictionNodes(ssn *framework.Session, enabled bool) *EvictionNodes {
	return &EvictionNodes{ssn: ssn, classes: map[string]*evictClass{}, off: !enabled}
}

// ByName calls try with each candidate node of the task in name order until it returns true,
// and reports whether it did.
func (e *EvictionNodes) ByName(task *api.TaskInfo, try func(*api.NodeInfo) bool) bool {
	cl, ok := e.class(task, false)
	if !ok {
		for _, n := range EvictionCandidates(e.ssn, task) {
			if try(n) {
				return true
			}
		}
		return false
	}
	out := ruledOut(e.ssn, task)
	for i, n := range e.ssn.NodeList {
		if !cl.entries[i].candidate || (out != nil && out.RuledOut(n.Name)) {
			continue
		}
		if try(n) {
			return true
		}
	}
	return false
}

// ByScore calls try with each candidate node of the task, best score first (ties in name
// order), until it returns true, and reports whether it did. The order is the one the nodes
// had when ByScore was called, whatever try does to them.
func (e *EvictionNodes) ByScore(task *api.TaskInfo, try func(*api.NodeInfo) bool) bool {
	cl, ok := e.class(task, true)
	if !ok {
		candidates := EvictionCandidates(e.ssn, task)
		for _, n := range SortByScore(candidates, PrioritizeNodes(e.ssn, task, candidates)) {
			if try(n) {
				return true
			}
		}
		return false
	}
	out := ruledOut(e.ssn, task)
	// Pop the nodes in order and put them back afterwards: the heap keeps its order for the
	// class's next task, and the tried nodes that try changed are recomputed then.
	var popped []scored
	defer func() {
		for _, it := range popped {
			cl.order.push(it)
		}
	}()
	for cl.order.Len() > 0 {
		it := cl.order.pop()
		if en := cl.entries[it.node]; en.gen != it.gen || !en.candidate {
			continue // stale
		}
		popped = append(popped, it)
		n := e.ssn.NodeList[it.node]
		if out != nil && out.RuledOut(n.Name) {
			continue
		}
		if try(n) {
			return true
		}
	}
	return false
}

// ruledOut returns the task's fit errors from this cycle's allocate when some node is ruled
// out by them, else nil.
func ruledOut(ssn *framework.Session, task *api.TaskInfo) *api.FitErrors {
	j, ok := ssn.Jobs[task.Job]
	if !ok {
		return nil
	}
	if fe := j.NodesFitErrors[task.UID]; fe != nil && fe.AnyRuledOut() {
		return fe
	}
	return nil
}

// class returns the task's class brought up to date with the session's changes, or false
// when the task has none. byScore says whether the caller orders by score.
func (e *EvictionNodes) class(task *api.TaskInfo, byScore bool) (*evictClass, bool) {
	if e.off {
		return nil, false
	}
	key, ok := e.ssn.TaskClass(task)
	if !ok {
		return nil, false
	}
	if byScore {
		key = "s" + key
	}
	nodes := e.ssn.NodeList
	log := e.ssn.NodeChanges()
	cl, found := e.classes[key]
	if !found {
		cl = &evictClass{entries: make([]evictEntry, len(nodes)), seen: len(log)}
		e.classes[key] = cl
		for i := range nodes {
			e.evaluate(cl, task, i, byScore)
		}
		if byScore && e.ssn.HasNodeOrder() {
			e.setBatch(cl, task)
		}
		for i := range nodes {
			e.file(cl, i, byScore)
		}
		return cl, true
	}
	for _, i := range log[cl.seen:] {
		if cl.entries[i].version != nodes[i].Version {
			e.evaluate(cl, task, int(i), byScore)
			e.file(cl, int(i), byScore)
		}
	}
	cl.seen = len(log)
	return cl, true
}

// evaluate computes node i's answers for the class: whether it is a candidate, and with
// byScore its score (the per-node score, plus the class's batch score once it is known).
func (e *EvictionNodes) evaluate(cl *evictClass, task *api.TaskInfo, i int, byScore bool) {
	n := e.ssn.NodeList[i]
	en := &cl.entries[i]
	en.version = n.Version
	en.gen++
	err := e.ssn.PredicateFn(task, n)
	en.candidate = err == nil || api.AsFitError(n.Name, err).Resolvable()
	en.score = 0
	if byScore && en.candidate && e.ssn.HasNodeOrder() {
		if s, err := e.ssn.NodeOrderFn(task, n); err == nil {
			en.score = s
		}
		if cl.batchOK {
			en.score += cl.batch
		}
	}
}

// setBatch asks the batch scores once for the class, over its candidates as PrioritizeNodes
// would, and adds the class's value (the same on every node) to the scores computed so far.
func (e *EvictionNodes) setBatch(cl *evictClass, task *api.TaskInfo) {
	var candidates []*api.NodeInfo
	for i, n := range e.ssn.NodeList {
		if cl.entries[i].candidate {
			candidates = append(candidates, n)
		}
	}
	if len(candidates) == 0 {
		return
	}
	batch, err := e.ssn.BatchNodeOrderFn(task, candidates)
	if err != nil {
		return
	}
	cl.batch, cl.batchOK = batch[candidates[0].Name], true
	for i := range cl.entries {
		if cl.entries[i].candidate {
			cl.entries[i].score += cl.batch
		}
	}
}

// file puts node i in the class's order when it is a candidate and the class is ordered by
// score.
func (e *EvictionNodes) file(cl *evictClass, i int, byScore bool) {
	if en := cl.entries[i]; byScore && en.candidate {
		cl.order.push(scored{score: en.score, node: int32(i), gen: en.gen})
	}
}

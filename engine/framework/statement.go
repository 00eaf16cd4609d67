package framework

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/api"
)

// EvictReason says why a task is evicted: the action, the task the eviction makes room for,
// and the rule that allowed it.
type EvictReason struct {
	// Action is preempt, reclaim, shuffle, ...
	Action string
	// ForTask is the UID of the preemptor or reclaimer task ("" for shuffle).
	ForTask string
	// Rule is the rule in words, e.g. "priority 1000 > 10".
	Rule string
}

type opKind int

const (
	opEvict opKind = iota + 1
	opPipeline
	opAllocate
)

type operation struct {
	kind       opKind
	task       *api.TaskInfo
	node       string
	prevStatus api.TaskStatus
	reason     EvictReason
	// job and nodeInfo are the session's views of the task's job and of node, found when the
	// operation was made.
	job      *api.JobInfo
	nodeInfo *api.NodeInfo
}

// Statement records tentative evictions, pipelines and allocations. Each operation changes
// the session at once (so later decisions see it); Discard undoes them all in reverse order;
// Commit turns them into plan decisions.
type Statement struct {
	ssn *Session
	ops []operation
}

// NewStatement starts an empty statement on the session.
func (s *Session) NewStatement() *Statement {
	st := &Statement{ssn: s, ops: s.spareOps}
	s.spareOps = nil
	return st
}

// recycle empties the statement and leaves its operation buffer to the session's next
// statement: allocate makes one statement per job, and growing a new buffer for each gang
// is a few allocations per job and cycle.
func (st *Statement) recycle() {
	clear(st.ops)
	if cap(st.ops) > cap(st.ssn.spareOps) {
		st.ssn.spareOps = st.ops[:0]
	}
	st.ops = nil
}

// Operations returns how many operations the statement holds.
func (st *Statement) Operations() int { return len(st.ops) }

func (st *Statement) job(t *api.TaskInfo) (*api.JobInfo, error) {
	j, ok := st.ssn.Jobs[t.Job]
	if !ok {
		return nil, fmt.Errorf("task %s: job %s not in session", t.UID, t.Job)
	}
	return j, nil
}

// views returns the operation's job and node as the session has them: those found when it was
// made, which are the session's (its maps never change), else looked up.
func (op *operation) views(ssn *Session) (*api.JobInfo, *api.NodeInfo) {
	j, n := op.job, op.nodeInfo
	if j == nil {
		j = ssn.Jobs[op.task.Job]
	}
	if n == nil {
		n = ssn.Nodes[op.node]
	}
	return j, n
}

// Evict marks a running task as releasing on its node, for the given reason.
func (st *Statement) Evict(victim *api.TaskInfo, reason EvictReason) error {
	j, err := st.job(victim)
	if err != nil {
		return err
	}
	node, ok := st.ssn.Nodes[victim.NodeName]
	if !ok {
		return fmt.Errorf("evict %s: node %q not in session", victim.UID, victim.NodeName)
	}
	st.ssn.touch(j)
	prev := victim.Status
	j.UpdateTaskStatusIn(victim, api.Releasing, &st.ssn.indexes)
	node.UpdateTask(victim)
	st.ssn.noteNodeChange(node)
	st.ssn.fireDeallocate(victim)
	st.ops = append(st.ops, operation{kind: opEvict, task: victim, node: node.Name, prevStatus: prev, reason: reason, job: j, nodeInfo: node})
	return nil
}

// Pipeline places a pending task on a node whose room will free up (future idle).
func (st *Statement) Pipeline(task *api.TaskInfo, nodeName string) error {
	j, err := st.job(task)
	if err != nil {
		return err
	}
	node, ok := st.ssn.Nodes[nodeName]
	if !ok {
		return fmt.Errorf("pipeline %s: node %q not in session", task.UID, nodeName)
	}
	st.ssn.touch(j)
	prev := task.Status
	j.UpdateTaskStatusIn(task, api.Pipelined, &st.ssn.indexes)
	task.NodeName = nodeName
	if err := node.AddTaskIn(task, &st.ssn.copies); err != nil {
		j.UpdateTaskStatusIn(task, prev, &st.ssn.indexes)
		task.NodeName = ""
		return err
	}
	st.ssn.noteNodeChange(node)
	st.ssn.fireAllocate(task)
	st.ops = append(st.ops, operation{kind: opPipeline, task: task, node: nodeName, prevStatus: prev, job: j, nodeInfo: node})
	return nil
}

// Allocate places a pending task on a node's idle resources.
func (st *Statement) Allocate(task *api.TaskInfo, node *api.NodeInfo) error {
	j, err := st.job(task)
	if err != nil {
		return err
	}
	st.ssn.touch(j)
	prev := task.Status
	j.UpdateTaskStatusIn(task, api.Allocated, &st.ssn.indexes)
	task.NodeName = node.Name
	if err := node.AddTaskIn(task, &st.ssn.copies); err != nil {
		j.UpdateTaskStatusIn(task, prev, &st.ssn.indexes)
		task.NodeName = ""
		return err
	}
	st.ssn.noteNodeChange(node)
	st.ssn.fireAllocate(task)
	op := operation{kind: opAllocate, task: task, node: node.Name, prevStatus: prev, job: j}
	if st.ssn.owns(node) {
		op.nodeInfo = node
	}
	st.ops = append(st.ops, op)
	return nil
}

// Saved is a statement's operations kept for replaying after the statement was discarded (to
// try several placements and keep the best, as hypernode-aware allocation does).
type Saved struct{ ops []operation }

// Len returns how many operations were saved.
func (sv Saved) Len() int { return len(sv.ops) }

// Save records the statement's operations.
func (st *Statement) Save() Saved { return Saved{ops: append([]operation(nil), st.ops...)} }

// Recover replays saved operations on this statement, in order.
func (st *Statement) Recover(sv Saved) error {
	for _, op := range sv.ops {
		var err error
		switch op.kind {
		case opEvict:
			err = st.Evict(op.task, op.reason)
		case opPipeline:
			err = st.Pipeline(op.task, op.node)
		case opAllocate:
			node, ok := st.ssn.Nodes[op.node]
			if !ok {
				return fmt.Errorf("recover allocate of %s: node %q not in session", op.task.UID, op.node)
			}
			err = st.Allocate(op.task, node)
		}
		if err != nil {
			return fmt.Errorf("recover %s: %w", op.task.UID, err)
		}
	}
	return nil
}

// Merge moves other's operations to the end of st and empties other, as Volcano's
// Statement.Merge does: a statement tried on one node is kept by merging it into the job's.
// st's Discard then undoes other's operations first (they came last), and st's Commit turns
// them into decisions. Merging a statement into itself does nothing.
func (st *Statement) Merge(other *Statement) {
	if other == nil || other == st {
		return
	}
	st.ops = append(st.ops, other.ops...)
	other.ops = nil
}

// LeaveUndispatched ends the statement with its operations still in effect for the rest of
// the cycle but turns none of them into a plan decision: its allocated tasks keep their room
// and count for their gang, and the plan neither binds nor pipelines them. It is meant for
// statements of allocations only: Volcano's Session.Allocate, for a job whose gang is not
// ready, leaves the task allocated and undispatched.
func (st *Statement) LeaveUndispatched() {
	for _, op := range st.ops {
		if op.kind != opAllocate {
			continue
		}
		if st.ssn.undispatched == nil {
			st.ssn.undispatched = map[string]bool{}
		}
		st.ssn.undispatched[op.task.UID] = true
	}
	st.ops = nil
}

// Discard undoes every operation in reverse order and empties the statement.
func (st *Statement) Discard() {
	for i := len(st.ops) - 1; i >= 0; i-- {
		op := st.ops[i]
		j, node := op.views(st.ssn)
		switch op.kind {
		case opEvict:
			j.UpdateTaskStatusIn(op.task, op.prevStatus, &st.ssn.indexes)
			node.UpdateTask(op.task)
			st.ssn.noteNodeChange(node)
			st.ssn.fireAllocate(op.task)
		case opPipeline, opAllocate:
			j.UpdateTaskStatusIn(op.task, op.prevStatus, &st.ssn.indexes)
			node.RemoveTask(op.task)
			st.ssn.noteNodeChange(node)
			st.ssn.fireDeallocate(op.task)
			op.task.NodeName = ""
			op.task.DeviceIDs = nil
		}
	}
	st.recycle()
}

// Commit turns the operations into plan decisions: allocations become binds (the task moves
// to Binding, as in Volcano: a bind decided but not yet carried out, so that later actions of
// the cycle treat it as Volcano does, not as a preemption victim; committing the plan makes
// the stored task Bound), evictions become evict decisions. Pipelines stay as they are; the session
// reports them as pipeline decisions when it closes.
func (st *Statement) Commit() {
	bound := st.bindAtOnce()
	for _, op := range st.ops {
		switch op.kind {
		case opEvict:
			st.ssn.committed.add(Decision{
				Kind: DecisionEvict, Task: op.task.UID, Job: op.task.Job, Node: op.node,
				Action: op.reason.Action, ForTask: op.reason.ForTask, Reason: op.reason.Rule,
			})
		case opAllocate:
			j, node := op.views(st.ssn)
			if j != bound {
				j.UpdateTaskStatusIn(op.task, api.Binding, &st.ssn.indexes)
			}
			// The node's copy of the task is the one Allocate made in this session.
			node.RestatusOwnTask(op.task)
			st.ssn.noteNodeChange(node)
			st.ssn.committed.add(Decision{
				Kind: DecisionBind, Task: op.task.UID, Job: op.task.Job, Node: op.node,
				DeviceIDs: append([]string(nil), op.task.DeviceIDs...),
			})
		}
	}
	st.recycle()
}

// bindAtOnce moves the tasks of a statement made only of allocations of one job's tasks,
// when they are all of the job's Allocated tasks (a gang placed by allocate), to Binding in
// one step (JobInfo.RestatusAll), and returns the job; nil when it moved nothing.
func (st *Statement) bindAtOnce() *api.JobInfo {
	if len(st.ops) == 0 || st.ops[0].kind != opAllocate {
		return nil
	}
	j, _ := st.ops[0].views(st.ssn)
	if j == nil {
		return nil
	}
	for i := range st.ops {
		if op := &st.ops[i]; op.kind != opAllocate || op.task.Job != j.UID {
			return nil
		}
	}
	if !j.RestatusAll(api.Allocated, api.Binding, len(st.ops), func(i int) *api.TaskInfo { return st.ops[i].task }) {
		return nil
	}
	return j
}

package state

import (
	"fmt"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// DecisionKind is what a plan decision does to its task.
type DecisionKind int

// Decision kinds a commit writes (pipelined placements are never written).
const (
	// Bind makes a Pending task Bound to the node, with its devices.
	Bind DecisionKind = iota + 1
	// Evict makes a task running on the node Releasing.
	Evict
)

// String returns "bind" or "evict".
func (k DecisionKind) String() string {
	switch k {
	case Bind:
		return "bind"
	case Evict:
		return "evict"
	}
	return "invalid"
}

// PlanDecision is one decision of a plan to commit.
type PlanDecision struct {
	Kind DecisionKind
	// Task is the task's namespace/name; Node the node's name.
	Task, Node string
	// DeviceIDs are the devices of a bind.
	DeviceIDs []string
}

// PhaseChange records a job's new phase.
type PhaseChange struct {
	// Job is the job's namespace/name.
	Job   string
	Phase api.JobPhase
}

// PlanCommit is what committing a plan writes: its decisions and the phase changes of its
// jobs, made from the cluster's state at BaseRevision. Everything the commit checks is in
// the store and in these fields, so it applies alike on every replica.
type PlanCommit struct {
	BaseRevision uint64
	Decisions    []PlanDecision
	Phases       []PhaseChange
}

// CommitOutcome is what a commit did.
type CommitOutcome struct {
	// Revision is the cluster's revision after the commit (unchanged when nothing applied).
	Revision uint64
	// Rejected holds, for each decision in order, "" when it applied, or why it was refused.
	Rejected []string
}

// CommitPlan writes a plan's decisions in one transaction: a bind makes its task Bound to
// the node with its devices (Volcano's Bound: the binding is recorded where the cluster's
// state is kept, and the task is not running yet; Binding is a bind still in flight, which a
// commit never leaves behind), an eviction makes its task Releasing, and a job whose phase
// changed gets it. A decision that conflicts with the state (its task changed since the
// base revision or gone, its node gone or unschedulable, no room left, the task no longer
// Pending or running there) is refused with the reason, and the others apply; a phase change
// of a job changed since the base revision is dropped. An error (a change the store refuses)
// aborts the whole commit. With a Replicator the commit is an op of the log, checked when it
// applies.
func (s *Store) CommitPlan(cluster string, pc *PlanCommit) (*CommitOutcome, error) {
	if s.repl != nil {
		return s.replicateCommit(cluster, pc)
	}
	return s.commitPlan(cluster, pc)
}

func (s *Store) commitPlan(cluster string, pc *PlanCommit) (*CommitOutcome, error) {
	out := &CommitOutcome{Rejected: make([]string, len(pc.Decisions))}
	rev, err := s.update(cluster, func(tx *Txn) error {
		for i, d := range pc.Decisions {
			reason, err := tx.applyDecision(pc.BaseRevision, d)
			if err != nil {
				return err
			}
			out.Rejected[i] = reason
		}
		for _, ph := range pc.Phases {
			if err := tx.applyPhase(pc.BaseRevision, ph); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out.Revision = rev
	return out, nil
}

// changedSince reports whether the row of table with key was written after base (or is
// missing).
func (tx *Txn) changedSince(table, key string, base uint64) bool {
	o, err := tx.txn.First(table, indexID, tx.cluster, key)
	if err != nil {
		panic(fmt.Sprintf("state: reading %s %q: %v", table, key, err))
	}
	return o == nil || o.(keyed).modRevision() > base
}

// applyDecision applies one bind or evict; it returns a conflict reason (decision refused)
// or an error (commit aborted).
func (tx *Txn) applyDecision(base uint64, d PlanDecision) (string, error) {
	cur, ok := tx.Task(d.Task)
	if !ok {
		return fmt.Sprintf("task %s no longer exists", d.Task), nil
	}
	if tx.changedSince(tableTasks, d.Task, base) {
		return fmt.Sprintf("task %s changed since the plan's revision", d.Task), nil
	}
	node, ok := tx.Node(d.Node)
	if !ok {
		return fmt.Sprintf("node %s no longer exists", d.Node), nil
	}
	next := *cur
	switch d.Kind {
	case Bind:
		if cur.Status != api.Pending {
			return fmt.Sprintf("task %s is %s, not Pending", d.Task, cur.Status), nil
		}
		if node.Unschedulable {
			return fmt.Sprintf("node %s is unschedulable", d.Node), nil
		}
		if short := tx.roomShortfall(node, &cur.Resources); short != "" {
			return fmt.Sprintf("node %s has no room for task %s: insufficient %s", d.Node, d.Task, short), nil
		}
		if reason := tx.deviceConflict(node, cur, d.DeviceIDs); reason != "" {
			return reason, nil
		}
		next.Status = api.Bound
		next.Node = d.Node
		next.DeviceIDs = append([]string(nil), d.DeviceIDs...)
	case Evict:
		if cur.Node != d.Node || !api.AllocatedStatus(cur.Status) {
			return fmt.Sprintf("task %s is no longer running on node %s", d.Task, d.Node), nil
		}
		next.Status = api.Releasing
	default:
		return "", nil
	}
	if err := tx.Upsert(Change{Task: &next}); err != nil {
		return "", fmt.Errorf("apply %s of %s: %w", d.Kind, d.Task, err)
	}
	return "", nil
}

// roomShortfall names the resources the node lacks for req, given its current tasks.
func (tx *Txn) roomShortfall(node *api.Node, req *api.Resource) string {
	free := node.Allocatable.Clone()
	n := 0
	for _, t := range tx.TasksOnNode(node.Name) {
		if api.OccupiesNode(t.Status) {
			free.Sub(&t.Resources)
			n++
		}
	}
	if node.Allocatable.MaxTaskNum > 0 && n+1 > node.Allocatable.MaxTaskNum {
		return "pods"
	}
	return strings.Join(free.Insufficient(req), ", ")
}

// applyPhase records a job's new phase if the job is unchanged since the base revision.
func (tx *Txn) applyPhase(base uint64, ph PhaseChange) error {
	cur, ok := tx.Job(ph.Job)
	if !ok || tx.changedSince(tableJobs, ph.Job, base) {
		return nil
	}
	next := *cur
	next.Phase = ph.Phase
	if err := tx.Upsert(Change{Job: &next}); err != nil {
		return fmt.Errorf("record phase of job %s: %w", ph.Job, err)
	}
	return nil
}

// devicePart is how a task holds one device: whole, or a share of its memory and cores.
type devicePart struct {
	id     string
	whole  bool
	memory float64
	cores  int32
}

// deviceParts maps device ids to the task's requests as the deviceshare plugin does: each
// id serves the first request that matches the device (type, and model when given) and
// still wants one; a request with neither memory nor cores takes its devices whole, and an
// id no request matches is held whole. Ids the node lacks are left out.
func deviceParts(node *api.Node, t *api.Task, ids []string) []devicePart {
	left := make([]int32, len(t.Devices))
	for i, r := range t.Devices {
		left[i] = max(r.Count, 1)
	}
	var out []devicePart
	for _, id := range ids {
		d := nodeDevice(node, id)
		if d == nil {
			continue
		}
		pt := devicePart{id: id, whole: true}
		for i, r := range t.Devices {
			if left[i] > 0 && r.Type == d.Type && (r.Model == "" || strings.EqualFold(r.Model, d.Model)) {
				left[i]--
				if r.Memory > 0 || r.Cores > 0 {
					pt = devicePart{id: id, memory: r.Memory, cores: r.Cores}
				}
				break
			}
		}
		out = append(out, pt)
	}
	return out
}

func nodeDevice(node *api.Node, id string) *api.Device {
	for i := range node.Devices {
		if node.Devices[i].ID == id {
			return &node.Devices[i]
		}
	}
	return nil
}

// deviceConflict returns why a bind of t with these devices no longer fits what the other
// tasks on the node hold: a device gone, a whole device held by another task, a device held
// whole by another, or a share that no longer fits the device's memory or cores.
func (tx *Txn) deviceConflict(node *api.Node, t *api.Task, ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	for _, id := range ids {
		if nodeDevice(node, id) == nil {
			return fmt.Sprintf("device %s no longer exists on node %s", id, node.Name)
		}
	}
	type usage struct {
		holder, wholeHolder string
		memory              float64
		cores               int32
	}
	used := map[string]*usage{}
	for _, o := range tx.TasksOnNode(node.Name) {
		if o.Key() == t.Key() || !api.OccupiesNode(o.Status) || len(o.DeviceIDs) == 0 {
			continue
		}
		for _, pt := range deviceParts(node, o, o.DeviceIDs) {
			u := used[pt.id]
			if u == nil {
				u = &usage{holder: o.Key()}
				used[pt.id] = u
			}
			if pt.whole {
				if u.wholeHolder == "" {
					u.wholeHolder = o.Key()
				}
			} else {
				u.memory += pt.memory
				u.cores += pt.cores
			}
		}
	}
	for _, pt := range deviceParts(node, t, ids) {
		u := used[pt.id]
		if u == nil {
			continue
		}
		d := nodeDevice(node, pt.id)
		switch {
		case u.wholeHolder != "":
			return fmt.Sprintf("device %s on node %s is held whole by task %s", pt.id, node.Name, u.wholeHolder)
		case pt.whole:
			return fmt.Sprintf("device %s on node %s is held by task %s", pt.id, node.Name, u.holder)
		case d.Memory-u.memory < pt.memory:
			return fmt.Sprintf("device %s on node %s has no room for task %s: insufficient memory", pt.id, node.Name, t.Key())
		case d.Cores > 0 && d.Cores-u.cores < pt.cores:
			return fmt.Sprintf("device %s on node %s has no room for task %s: insufficient cores", pt.id, node.Name, t.Key())
		}
	}
	return ""
}

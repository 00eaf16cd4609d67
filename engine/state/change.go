package state

import (
	"fmt"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// Kind names a kind of object the store keeps.
type Kind int

// Kinds of objects. The zero Kind is invalid, so a zero Ref is rejected.
const (
	KindNode Kind = iota + 1
	KindQueue
	KindJob
	KindTask
	KindPriorityClass
	KindQuota
	KindBudget
	KindHyperNode
)

var kindNames = [...]string{
	KindNode:          "node",
	KindQueue:         "queue",
	KindJob:           "job",
	KindTask:          "task",
	KindPriorityClass: "priority_class",
	KindQuota:         "quota",
	KindBudget:        "budget",
	KindHyperNode:     "hyper_node",
}

var kindTables = [...]string{
	KindNode:          tableNodes,
	KindQueue:         tableQueues,
	KindJob:           tableJobs,
	KindTask:          tableTasks,
	KindPriorityClass: tablePriorityClasses,
	KindQuota:         tableQuotas,
	KindBudget:        tableDisruptionBudget,
	KindHyperNode:     tableHyperNodes,
}

// String returns the kind's name as it appears in field paths ("node", "priority_class",
// "hyper_node", ...), or "Kind(n)" for an invalid kind.
func (k Kind) String() string {
	if k.valid() {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

func (k Kind) valid() bool { return k >= KindNode && k <= KindHyperNode }

// namespaced reports whether objects of this kind are keyed namespace/name.
func (k Kind) namespaced() bool { return k == KindJob || k == KindTask || k == KindBudget }

// Ref names an object to delete. Jobs, tasks and budgets are named by Namespace and Name;
// a quota by Namespace (or by Name when Namespace is empty); every other kind by Name.
type Ref struct {
	Kind            Kind
	Namespace, Name string
}

// Key returns the object's key within its cluster: namespace/name for jobs, tasks and
// budgets, the namespace for quotas, the name otherwise.
func (r Ref) Key() string {
	switch {
	case r.Kind.namespaced():
		return r.Namespace + "/" + r.Name
	case r.Kind == KindQuota && r.Namespace != "":
		return r.Namespace
	}
	return r.Name
}

// String returns "kind key", e.g. `task "ns/t1"`.
func (r Ref) String() string { return fmt.Sprintf("%s %q", r.Kind, r.Key()) }

// Change is one delta: an upsert of one object, or a delete. Exactly one field is set.
// Upserted objects become the store's: the caller must not modify them afterwards. An upsert
// replaces the stored object, except for the server-owned fields it leaves unset (a job's
// phase, a task's status, node and devices, ...), which keep their stored values: merge.go
// lists them.
type Change struct {
	Node          *api.Node
	Queue         *api.Queue
	Job           *api.Job
	Task          *api.Task
	PriorityClass *api.PriorityClass
	Quota         *api.NamespaceQuota
	Budget        *api.DisruptionBudget
	HyperNode     *api.HyperNode
	Delete        *Ref
}

// set counts the fields that are set.
func (c *Change) set() int {
	n := 0
	for _, b := range [...]bool{
		c.Node != nil, c.Queue != nil, c.Job != nil, c.Task != nil, c.PriorityClass != nil,
		c.Quota != nil, c.Budget != nil, c.HyperNode != nil, c.Delete != nil,
	} {
		if b {
			n++
		}
	}
	return n
}

// Batch is a set of changes applied atomically to one cluster.
type Batch struct {
	Changes []Change
	// ReplaceAll makes the cluster exactly this batch: everything else is deleted first.
	// Server-owned fields the batch leaves unset still keep their values from before it.
	ReplaceAll bool
	// Now fills in the unset times of new objects: a new job's creation time, the start
	// time of a task first seen Running (see merge.go). The writer sets it (the leader's
	// clock, in a replicated store), so that every replica fills in the same time.
	Now time.Time
	// Limits bound what the batch may make of the cluster; zero fields bound nothing. They
	// travel with the batch (in a replicated log too), so that every replica applies the
	// limits the leader had when it took the batch.
	Limits Limits
	// Owned says that the caller made the batch's objects for this batch alone and keeps no
	// reference to them, so that Apply may fill in their unset server-owned fields in place
	// instead of copying them (merge.go). A store with a Replicator ignores it: the log takes
	// the batch as it came. It does not travel in the log.
	Owned bool
	// whole is set on batches of a replicated log written before upserts kept server-owned
	// fields: their upserts replace objects whole (see opHeader.Merges).
	whole bool
}

// ValidationError is a change the store refuses: a bad name, a dangling reference, a
// dependent object left behind by a delete. Field is the path of the offending value within
// the batch, e.g. "changes[3].task.job" or "changes[0].hyper_node.members[2]"; the segment
// after the index is the Change field (Kind.String()) and then the object's field in
// snake_case. Field is "cluster" for a bad cluster name. The gRPC layer turns it into a
// BadRequest field violation.
type ValidationError struct {
	// Index is the position of the change in the batch (in a Txn, the ordinal of the Upsert
	// or Delete call), or -1 for an error about the batch as a whole.
	Index int
	// Field is the path of the offending value.
	Field string
	// Object and Path are Field's parts after the change's index, for callers that map the
	// path onto their own request: Object is the Change field ("task", "hyper_node",
	// "delete"; "" for an error about the change as a whole), Path the object's field within
	// it ("job", "members[2]"; "" for the object as a whole). Both are "" when Index is -1.
	Object, Path string
	// Msg says what is wrong.
	Msg string
}

// Error implements error.
func (e *ValidationError) Error() string {
	return "state: " + e.Field + ": " + e.Msg
}

// invalid builds a ValidationError for change i; field is relative to the change.
func invalid(i int, field, format string, args ...any) *ValidationError {
	path := fmt.Sprintf("changes[%d]", i)
	if field != "" {
		path += "." + field
	}
	object, rest := field, ""
	if cut := strings.IndexAny(field, ".["); cut >= 0 {
		object, rest = field[:cut], strings.TrimPrefix(field[cut:], ".")
	}
	return &ValidationError{Index: i, Field: path, Object: object, Path: rest, Msg: fmt.Sprintf(format, args...)}
}

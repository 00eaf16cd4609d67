package state

import (
	"bytes"
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/sluice-sched/sluice/engine/api"
)

// View reads one cluster's state at one point in time: a Snapshot's, or a Txn's including
// its own changes. Lists are sorted by key (byte order): names, or namespace/name for jobs,
// tasks and budgets, namespaces for quotas. The objects returned are the store's own and must
// not be modified.
type View struct {
	txn     *memdb.Txn
	cluster string
	rev     uint64
}

// Snapshot is a consistent read-only view of a cluster at a revision. Reading it never
// blocks and later writes never show in it; it may be kept as long as needed and read from
// several goroutines.
type Snapshot struct {
	View
	mark Mark
}

// Cluster returns the cluster the view reads.
func (v *View) Cluster() string { return v.cluster }

// Revision returns the revision the view reads: a snapshot's revision, or for a Txn the
// revision it started from.
func (v *View) Revision() uint64 { return v.rev }

// Nodes returns every node.
func (v *View) Nodes() []*api.Node { return all[api.Node](v, tableNodes) }

// Queues returns every queue.
func (v *View) Queues() []*api.Queue { return all[api.Queue](v, tableQueues) }

// Jobs returns every job.
func (v *View) Jobs() []*api.Job { return all[api.Job](v, tableJobs) }

// Tasks returns every task.
func (v *View) Tasks() []*api.Task { return all[api.Task](v, tableTasks) }

// PriorityClasses returns every priority class.
func (v *View) PriorityClasses() []*api.PriorityClass {
	return all[api.PriorityClass](v, tablePriorityClasses)
}

// Quotas returns every namespace quota.
func (v *View) Quotas() []*api.NamespaceQuota { return all[api.NamespaceQuota](v, tableQuotas) }

// Budgets returns every disruption budget.
func (v *View) Budgets() []*api.DisruptionBudget {
	return all[api.DisruptionBudget](v, tableDisruptionBudget)
}

// HyperNodes returns every hypernode.
func (v *View) HyperNodes() []*api.HyperNode { return all[api.HyperNode](v, tableHyperNodes) }

// TasksOfJob returns the tasks of the job with key namespace/name.
func (v *View) TasksOfJob(jobKey string) []*api.Task {
	items, _ := page[api.Task](v, tableTasks, indexJob, slotA, jobKey, "", 0, nil)
	return items
}

// TasksOnNode returns the tasks placed on a node.
func (v *View) TasksOnNode(node string) []*api.Task {
	if node == "" {
		return nil
	}
	items, _ := page[api.Task](v, tableTasks, indexNode, slotB, node, "", 0, nil)
	return items
}

// JobsInQueue returns the jobs of a queue.
func (v *View) JobsInQueue(queue string) []*api.Job {
	items, _ := page[api.Job](v, tableJobs, indexQueue, slotA, queue, "", 0, nil)
	return items
}

// Node returns the node with that name.
func (v *View) Node(name string) (*api.Node, bool) { return one[api.Node](v, tableNodes, name) }

// Queue returns the queue with that name.
func (v *View) Queue(name string) (*api.Queue, bool) { return one[api.Queue](v, tableQueues, name) }

// Job returns the job with key namespace/name.
func (v *View) Job(key string) (*api.Job, bool) { return one[api.Job](v, tableJobs, key) }

// Task returns the task with key namespace/name.
func (v *View) Task(key string) (*api.Task, bool) { return one[api.Task](v, tableTasks, key) }

// PriorityClass returns the priority class with that name.
func (v *View) PriorityClass(name string) (*api.PriorityClass, bool) {
	return one[api.PriorityClass](v, tablePriorityClasses, name)
}

// Quota returns the quota of a namespace.
func (v *View) Quota(namespace string) (*api.NamespaceQuota, bool) {
	return one[api.NamespaceQuota](v, tableQuotas, namespace)
}

// Budget returns the disruption budget with key namespace/name.
func (v *View) Budget(key string) (*api.DisruptionBudget, bool) {
	return one[api.DisruptionBudget](v, tableDisruptionBudget, key)
}

// HyperNode returns the hypernode with that name.
func (v *View) HyperNode(name string) (*api.HyperNode, bool) {
	return one[api.HyperNode](v, tableHyperNodes, name)
}

// ModRevision returns the modify revision of the object of kind k with key (as Ref.Key
// names it: the name, namespace/name, or a quota's namespace): the revision of the last write
// that stored it, an upsert or a plan commit. It is false when there is no such object (or k
// is invalid).
func (v *View) ModRevision(k Kind, key string) (uint64, bool) {
	if !k.valid() {
		return 0, false
	}
	o, err := v.txn.First(kindTables[k], indexID, v.cluster, key)
	if err != nil {
		panic(fmt.Sprintf("state: reading %s %q: %v", kindTables[k], key, err))
	}
	if o == nil {
		return 0, false
	}
	return o.(keyed).modRevision(), true
}

// ListNodes returns up to limit nodes (all when limit <= 0) whose names sort after the cursor
// after ("" starts at the beginning), and the cursor of the next page: the last name
// returned when more follow, "" at the end.
func (v *View) ListNodes(after string, limit int) (items []*api.Node, next string) {
	return page[api.Node](v, tableNodes, indexID, slotID, "", after, limit, nil)
}

// ListQueues pages through queues like ListNodes.
func (v *View) ListQueues(after string, limit int) (items []*api.Queue, next string) {
	return page[api.Queue](v, tableQueues, indexID, slotID, "", after, limit, nil)
}

// JobFilter narrows ListJobs; empty fields match everything.
type JobFilter struct {
	// Queue keeps the jobs of this queue.
	Queue string
	// Phases keeps the jobs in one of these phases.
	Phases []api.JobPhase
}

// keep returns the filter's test of a job beyond its index, nil when there is none.
func (f JobFilter) keep() func(*api.Job) bool {
	if len(f.Phases) == 0 {
		return nil
	}
	return func(j *api.Job) bool { return slices.Contains(f.Phases, j.Phase) }
}

// ListJobs pages through jobs (by key, namespace/name) like ListNodes, optionally only those
// of one queue and in some phases.
func (v *View) ListJobs(after string, limit int, f JobFilter) (items []*api.Job, next string) {
	if f.Queue != "" {
		return page(v, tableJobs, indexQueue, slotA, f.Queue, after, limit, f.keep())
	}
	return page(v, tableJobs, indexID, slotID, "", after, limit, f.keep())
}

// TaskFilter narrows ListTasks; empty fields match everything.
type TaskFilter struct {
	// Job keeps the tasks of the job with this key (namespace/name).
	Job string
	// Node keeps the tasks placed on this node.
	Node string
	// Statuses keeps the tasks in one of these statuses.
	Statuses []api.TaskStatus
}

// keep returns the filter's test of a task beyond the index ListTasks walks (the job's when
// Job is set), nil when there is none.
func (f TaskFilter) keep() func(*api.Task) bool {
	node := f.Job != "" && f.Node != ""
	if !node && len(f.Statuses) == 0 {
		return nil
	}
	return func(t *api.Task) bool {
		return (!node || t.Node == f.Node) && (len(f.Statuses) == 0 || slices.Contains(f.Statuses, t.Status))
	}
}

// ListTasks pages through tasks (by key, namespace/name) like ListNodes, optionally only
// those of one job, on one node and in some statuses.
func (v *View) ListTasks(after string, limit int, f TaskFilter) (items []*api.Task, next string) {
	switch {
	case f.Job != "":
		return page(v, tableTasks, indexJob, slotA, f.Job, after, limit, f.keep())
	case f.Node != "":
		return page(v, tableTasks, indexNode, slotB, f.Node, after, limit, f.keep())
	}
	return page(v, tableTasks, indexID, slotID, "", after, limit, f.keep())
}

// all lists a table's rows of the view's cluster.
func all[T any](v *View, table string) []*T {
	items, _ := page[T](v, table, indexID, slotID, "", "", 0, nil)
	return items
}

// one returns the object of table with key.
func one[T any](v *View, table, key string) (*T, bool) {
	o, err := v.txn.First(table, indexID, v.cluster, key)
	if err != nil {
		panic(fmt.Sprintf("state: reading %s %q: %v", table, key, err))
	}
	if o == nil {
		return nil, false
	}
	return o.(*row[T]).obj, true
}

// page walks index of table in key order over the rows of the view's cluster (and of value
// in the index, for a secondary index), starting after the row with key after, and returns up
// to limit objects that keep accepts (limit <= 0: all) with the next cursor. Secondary index
// keys end with the row's key, so every index lists in key order.
func page[T any](v *View, table, index string, slot int, value, after string, limit int,
	keep func(*T) bool) ([]*T, string) {
	args := []any{v.cluster}
	if slot != slotID {
		args = append(args, value)
	}
	prefix, err := argsKey(args)
	if err != nil {
		panic(fmt.Sprintf("state: %v", err))
	}
	var it memdb.ResultIterator
	if after == "" {
		it, err = v.txn.Get(table, index+"_prefix", args...)
	} else {
		it, err = v.txn.LowerBound(table, index, append(args, after)...)
	}
	if err != nil {
		panic(fmt.Sprintf("state: listing %s by %s: %v", table, index, err))
	}
	var items []*T
	last := ""
	for o := it.Next(); o != nil; o = it.Next() {
		r := o.(*row[T])
		if !bytes.HasPrefix(r.idx[slot], prefix) {
			break
		}
		if r.key == after || (keep != nil && !keep(r.obj)) {
			continue
		}
		if limit > 0 && len(items) == limit {
			return items, last
		}
		items = append(items, r.obj)
		last = r.key
	}
	return items, ""
}

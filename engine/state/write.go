package state

import (
	"fmt"
	"strings"
	"time"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/sluice-sched/sluice/engine/api"
)

// writer applies changes to one cluster inside one memdb write transaction. Checks that only
// need the change itself (names, required fields) run at once; referential checks are queued
// in pend and run by check, after a whole batch (Apply) or after each call (Txn).
type writer struct {
	txn     *memdb.Txn
	cluster string
	// rev is the revision this transaction writes: every row it inserts records it.
	rev uint64
	// now is the time that fills in unset times of new objects (Batch.Now); prior, when not
	// nil, is the state before a ReplaceAll batch, which merges read instead of txn (merge.go).
	now   time.Time
	prior *memdb.Txn
	// whole disables the merges: upserts replace objects whole (old log entries).
	whole bool
	// owned lets the merges fill in the batch's objects in place (Batch.Owned).
	owned bool
	pend  pending
	// undo, when tracking, records every mutation of the current Txn call so that a failed
	// call can be taken back without aborting the transaction.
	tracking bool
	undo     []undoEntry
	// base is how many objects the cluster held when the transaction started; objects how
	// many the transaction added, net of those it removed (clusterRow.objects).
	base, objects int
	// limits are the batch's; grown holds the jobs that gained a task (a new task, or one
	// moved from another job), with the first change that did plus one, for
	// Limits.MaxTasksPerJob.
	limits Limits
	grown  map[string]int
	// checkOnly runs the checks that need nothing but the change, and writes nothing (txn
	// may be nil, and then prior must be set, or whole: merges read the stored object);
	// only upserts may be checked so.
	checkOnly bool
	// log collects the keys of the nodes, jobs and tasks written or deleted; replaced is set
	// once everything was deleted (a change log that cannot chain).
	log      changeLog
	replaced bool
	// bounds are the store's change log bounds (nil: no log chains).
	bounds *logBounds
	// ov serves the transaction's reads by key (overlay.go).
	ov overlay
	// scratch is the store's reusable bookkeeping, if this writer took it (reserve);
	// reserved is set once reserve ran.
	scratch  *writerScratch
	reserved bool
}

// reserve sizes the writer's bookkeeping for a batch of n changes: the store's scratch when
// the writer has it (newWriter), fresh maps and lists otherwise.
func (w *writer) reserve(n int) {
	w.reserved = true
	if sc := w.scratch; sc != nil {
		w.pend.pos, w.pend.items, w.ov.rows = sc.pos, sc.items[:0], sc.rows
		return
	}
	w.pend.pos = make(map[pendKey]int, n)
	w.pend.items = make([]checkItem, 0, n)
	w.ov.rows = make(map[tableKey]keyed, n)
}

// writerScratch is a writer's bookkeeping (its queued checks and its overlay's rows) that the
// store hands from one write to the next (Store.scratch): a batch of n changes would
// otherwise make two maps and a list of n entries each time.
type writerScratch struct {
	pos   map[pendKey]int
	items []checkItem
	rows  map[tableKey]keyed
}

// maxScratch is the most entries of a scratch the store keeps: maps do not shrink, and a large
// batch (a whole cluster's replace_all, a bulk load) must not hold its bookkeeping's memory
// for the life of the store. Streamed batches are smaller (Sync clients send about 1,000
// changes a batch); a larger batch makes its own.
const maxScratch = 1 << 12

// takeScratch returns the bookkeeping the writer leaves for the next write: what reserve
// gave it, emptied (nothing of the write stays reachable from it), or nil if it grew past
// maxScratch; the store's scratch untouched if the writer never reserved (Update's writers
// check and read as they go).
func (w *writer) takeScratch() *writerScratch {
	if !w.reserved {
		return w.scratch
	}
	if w.pend.pos == nil || w.ov.rows == nil ||
		len(w.pend.pos) > maxScratch || cap(w.pend.items) > maxScratch || len(w.ov.rows) > maxScratch {
		return nil
	}
	items := w.pend.items[:cap(w.pend.items)]
	clear(items)
	clear(w.pend.pos)
	clear(w.ov.rows)
	return &writerScratch{pos: w.pend.pos, items: items[:0], rows: w.ov.rows}
}

// undoEntry is one mutation: before is the replaced or deleted row (nil for an insert of a
// new key), after the inserted row (nil for a delete).
type undoEntry struct {
	table         string
	before, after keyed
}

// change applies change i.
func (w *writer) change(i int, c *Change) error {
	if n := c.set(); n != 1 {
		return invalid(i, "", "exactly one of node, queue, job, task, priority_class, quota, "+
			"budget, hyper_node or delete must be set, got %d", n)
	}
	switch {
	case c.Node != nil:
		return w.upsertNode(i, c.Node)
	case c.Queue != nil:
		return w.upsertQueue(i, c.Queue)
	case c.Job != nil:
		return w.upsertJob(i, c.Job)
	case c.Task != nil:
		return w.upsertTask(i, c.Task)
	case c.PriorityClass != nil:
		return w.upsertPriorityClass(i, c.PriorityClass)
	case c.Quota != nil:
		return w.upsertQuota(i, c.Quota)
	case c.Budget != nil:
		return w.upsertBudget(i, c.Budget)
	case c.HyperNode != nil:
		return w.upsertHyperNode(i, c.HyperNode)
	default:
		return w.delete(i, *c.Delete)
	}
}

func (w *writer) upsertNode(i int, n *api.Node) error {
	if err := checkName(i, "node.name", n.Name); err != nil {
		return err
	}
	return w.insert(tableNodes, n.Name, newRow(w.cluster, n.Name, n, "", ""))
}

func (w *writer) upsertQueue(i int, q *api.Queue) error {
	if err := checkName(i, "queue.name", q.Name); err != nil {
		return err
	}
	if err := checkRef(i, "queue.parent", q.Parent); err != nil {
		return err
	}
	if q.Name == api.RootQueue && q.Parent != "" {
		return invalid(i, "queue.parent", "the root queue cannot have a parent, got %q", q.Parent)
	}
	r := newRow(w.cluster, q.Name, q, q.Parent, "")
	if err := w.insert(tableQueues, q.Name, r); err != nil {
		return err
	}
	w.pend.add(i, checkQueue, q.Name, r)
	return nil
}

func (w *writer) upsertJob(i int, j *api.Job) error {
	if err := checkNamespaced(i, "job", j.Namespace, j.Name); err != nil {
		return err
	}
	if err := checkName(i, "job.queue", j.Queue); err != nil {
		return err
	}
	key := j.Key()
	var before keyed
	known := false
	if !w.whole {
		old, b, current, err := stored[api.Job](w, tableJobs, key)
		if err != nil {
			return err
		}
		j = mergeJob(j, old, w.now, w.owned)
		before, known = b, current
	}
	r := newRow(w.cluster, key, j, j.Queue, "")
	if err := w.upsert(tableJobs, key, r, before, known); err != nil {
		return err
	}
	w.pend.add(i, checkJob, key, r)
	return nil
}

func (w *writer) upsertTask(i int, t *api.Task) error {
	if err := checkNamespaced(i, "task", t.Namespace, t.Name); err != nil {
		return err
	}
	if err := checkName(i, "task.job", t.Job); err != nil {
		return err
	}
	if err := checkRef(i, "task.node", t.Node); err != nil {
		return err
	}
	key, jobKey := t.Key(), t.JobKey()
	var before keyed
	known := false
	if !w.whole {
		old, b, current, err := stored[api.Task](w, tableTasks, key)
		if err != nil {
			return err
		}
		t = mergeTask(t, old, w.now, w.owned)
		if old == nil || old.Namespace != t.Namespace || old.Job != t.Job {
			w.grew(i, jobKey)
		}
		before, known = b, current
	}
	if t.Node == "" && placed(t.Status) {
		return invalid(i, "task.node", "a %s task must name its node (only a task already placed keeps its stored one)", t.Status)
	}
	r := newRow(w.cluster, key, t, jobKey, t.Node)
	if err := w.upsert(tableTasks, key, r, before, known); err != nil {
		return err
	}
	w.pend.addRef(i, checkTask, key, r, jobKey)
	return nil
}

func (w *writer) upsertPriorityClass(i int, pc *api.PriorityClass) error {
	if err := checkName(i, "priority_class.name", pc.Name); err != nil {
		return err
	}
	return w.insert(tablePriorityClasses, pc.Name, newRow(w.cluster, pc.Name, pc, "", ""))
}

func (w *writer) upsertQuota(i int, q *api.NamespaceQuota) error {
	if err := checkName(i, "quota.namespace", q.Namespace); err != nil {
		return err
	}
	return w.insert(tableQuotas, q.Namespace, newRow(w.cluster, q.Namespace, q, "", ""))
}

func (w *writer) upsertBudget(i int, b *api.DisruptionBudget) error {
	if err := checkNamespaced(i, "budget", b.Namespace, b.Name); err != nil {
		return err
	}
	key := b.Namespace + "/" + b.Name
	return w.insert(tableDisruptionBudget, key, newRow(w.cluster, key, b, "", ""))
}

func (w *writer) upsertHyperNode(i int, h *api.HyperNode) error {
	if err := checkName(i, "hyper_node.name", h.Name); err != nil {
		return err
	}
	if h.Tier < 1 {
		return invalid(i, "hyper_node.tier", "must be at least 1, got %d", h.Tier)
	}
	seen := make(map[string]struct{}, len(h.Members))
	for j, m := range h.Members {
		field := fmt.Sprintf("hyper_node.members[%d]", j)
		if err := checkName(i, field, m); err != nil {
			return err
		}
		if _, dup := seen[m]; dup {
			return invalid(i, field, "duplicate member %q", m)
		}
		seen[m] = struct{}{}
	}
	r := newRow(w.cluster, h.Name, h, "", "")
	if err := w.insert(tableHyperNodes, h.Name, r); err != nil {
		return err
	}
	w.pend.add(i, checkHyperNode, h.Name, r)
	return nil
}

// delete removes the object ref names, which must exist; deleting a job deletes its tasks.
// Whether the delete leaves anything dangling is checked later, after the rest of the batch
// had its chance to delete or move the dependents.
func (w *writer) delete(i int, ref Ref) error {
	if !ref.Kind.valid() {
		return invalid(i, "delete.kind", "unknown kind %d", int(ref.Kind))
	}
	switch {
	case ref.Kind.namespaced():
		if err := checkNamespaced(i, "delete", ref.Namespace, ref.Name); err != nil {
			return err
		}
	case ref.Kind == KindQuota && ref.Namespace != "":
		if err := checkName(i, "delete.namespace", ref.Namespace); err != nil {
			return err
		}
	default:
		if err := checkName(i, "delete.name", ref.Name); err != nil {
			return err
		}
	}
	key := ref.Key()
	table := kindTables[ref.Kind]
	existing, err := w.get(table, key)
	if err != nil {
		return err
	}
	if existing == nil {
		// Deletes are idempotent: a resource manager replaying its deltas after a reconnect
		// must not be refused for deleting what is already gone.
		return nil
	}
	switch ref.Kind {
	case KindJob:
		if err := w.deleteTasksOf(key); err != nil {
			return err
		}
		w.pend.drop(checkJob, key)
	case KindTask:
		w.pend.drop(checkTask, key)
	case KindQueue:
		w.pend.drop(checkQueue, key)
		w.pend.add(i, checkQueueGone, key, nil)
	case KindNode:
		w.pend.add(i, checkNodeGone, key, nil)
	case KindHyperNode:
		w.pend.drop(checkHyperNode, key)
		w.pend.add(i, checkHyperNodeGone, key, nil)
	}
	return w.remove(table, existing)
}

// deleteTasksOf deletes the tasks of a job (cascade).
func (w *writer) deleteTasksOf(jobKey string) error {
	it, err := w.txn.Get(tableTasks, indexJob+"_prefix", w.cluster, jobKey)
	if err != nil {
		return fmt.Errorf("state: listing tasks of job %q: %w", jobKey, err)
	}
	var tasks []keyed
	for o := it.Next(); o != nil; o = it.Next() {
		tasks = append(tasks, o.(keyed))
	}
	for _, t := range tasks {
		w.pend.drop(checkTask, t.(*row[api.Task]).key)
		if err := w.remove(tableTasks, t); err != nil {
			return err
		}
	}
	return nil
}

// deleteAll deletes every object of the cluster (ReplaceAll). The cluster's revision row
// stays.
func (w *writer) deleteAll() error {
	w.replaced = true
	w.ov.cleared = true
	for k := KindNode; k <= KindHyperNode; k++ {
		table := kindTables[k]
		it, err := w.txn.Get(table, indexID+"_prefix", w.cluster)
		if err != nil {
			return fmt.Errorf("state: listing %s: %w", table, err)
		}
		var rows []keyed
		for o := it.Next(); o != nil; o = it.Next() {
			rows = append(rows, o.(keyed))
		}
		for _, r := range rows {
			if err := w.remove(table, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// get returns the row of table with key, or nil.
func (w *writer) get(table, key string) (keyed, error) {
	return w.ov.lookup(table, w.cluster, key)
}

// grew records that change i gave the job jobKey a task. Only a batch with limits needs to
// know (Limits.MaxTasksPerJob), so that batches without cost nothing.
func (w *writer) grew(i int, jobKey string) {
	if w.limits.MaxTasksPerJob <= 0 {
		return
	}
	if w.grown == nil {
		w.grown = map[string]int{}
	}
	if w.grown[jobKey] == 0 {
		w.grown[jobKey] = i + 1
	}
}

// insert inserts or replaces the row of table (an object table) with key. r is a new row,
// which records the transaction's revision.
func (w *writer) insert(table, key string, r keyed) error {
	return w.upsert(table, key, r, nil, false)
}

// upsert is insert, given the row the transaction holds under key (nil: none) when known is
// set, so that a caller who read it already spares the lookup.
func (w *writer) upsert(table, key string, r keyed, before keyed, known bool) error {
	if w.checkOnly {
		return nil
	}
	r.setModRevision(w.rev)
	if !known {
		var err error
		if before, err = w.ov.lookup(table, w.cluster, key); err != nil {
			return err
		}
	}
	e := undoEntry{table: table, after: r, before: before}
	if err := w.txn.Insert(table, r); err != nil {
		return fmt.Errorf("state: writing %s: %w", table, err)
	}
	w.ov.put(table, key, r)
	w.record(table, key)
	if before == nil {
		w.objects++
	}
	if w.tracking {
		w.undo = append(w.undo, e)
	}
	return nil
}

// remove deletes an existing row of an object table.
func (w *writer) remove(table string, r keyed) error {
	if err := w.txn.Delete(table, r); err != nil {
		return fmt.Errorf("state: deleting from %s: %w", table, err)
	}
	w.ov.put(table, r.rowKey(), nil)
	w.record(table, r.rowKey())
	w.objects--
	if w.tracking {
		w.undo = append(w.undo, undoEntry{table: table, before: r})
	}
	return nil
}

// rollback takes back the mutations recorded since mark, newest first.
func (w *writer) rollback(mark int) error {
	for k := len(w.undo) - 1; k >= mark; k-- {
		e := w.undo[k]
		var err error
		if e.before != nil {
			err = w.txn.Insert(e.table, e.before)
			w.ov.put(e.table, e.before.rowKey(), e.before)
		} else {
			err = w.txn.Delete(e.table, e.after)
			w.ov.put(e.table, e.after.rowKey(), nil)
		}
		if err != nil {
			return fmt.Errorf("state: rolling back a change to %s: %w", e.table, err)
		}
		switch {
		case e.before == nil:
			w.objects--
		case e.after == nil:
			w.objects++
		}
	}
	w.undo = w.undo[:mark]
	return nil
}

// defaultQueue is the queue the store creates when a job names it and it does not exist.
const defaultQueue = "default"

// checkName rejects an empty name or one with a NUL (the key separator).
func checkName(i int, field, name string) error {
	if name == "" {
		return invalid(i, field, "must not be empty")
	}
	return checkRef(i, field, name)
}

// checkRef rejects a reference (which may be empty) containing a NUL.
func checkRef(i int, field, name string) error {
	if strings.IndexByte(name, 0) >= 0 {
		return invalid(i, field, "must not contain a NUL character")
	}
	return nil
}

// checkNamespaced checks the namespace and name of a namespace/name key: the name must not be
// empty and the namespace must not contain "/", so that keys are unambiguous.
func checkNamespaced(i int, prefix, namespace, name string) error {
	if name != "" && strings.IndexByte(namespace, 0) < 0 && strings.IndexByte(name, 0) < 0 &&
		strings.IndexByte(namespace, '/') < 0 {
		return nil // valid: spare building the field names
	}
	if err := checkRef(i, prefix+".namespace", namespace); err != nil {
		return err
	}
	if strings.IndexByte(namespace, '/') >= 0 {
		return invalid(i, prefix+".namespace", "must not contain '/', got %q", namespace)
	}
	return checkName(i, prefix+".name", name)
}

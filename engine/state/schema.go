package state

import (
	"fmt"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/sluice-sched/sluice/engine/api"
)

// Table names.
const (
	tableClusters         = "clusters"
	tableNodes            = "nodes"
	tableQueues           = "queues"
	tableJobs             = "jobs"
	tableTasks            = "tasks"
	tablePriorityClasses  = "priority_classes"
	tableQuotas           = "namespace_quotas"
	tableDisruptionBudget = "disruption_budgets"
	tableHyperNodes       = "hyper_nodes"
	tablePlans            = "plans"
	tableConfigs          = "scheduler_configs"
	tablePlanCounters     = "plan_counters"
	// tableResyncs is declared in resync.go.
)

// Index names. Every table has indexID; the others are secondary indexes whose keys end with
// the object's key, so that they are unique and list in key order.
const (
	indexID     = "id"     // (cluster, key)
	indexJob    = "job"    // tasks: (cluster, job key, task key)
	indexNode   = "node"   // tasks: (cluster, node, task key); absent for unplaced tasks
	indexQueue  = "queue"  // jobs: (cluster, queue, job key)
	indexParent = "parent" // queues: (cluster, parent, queue name); absent for top-level ""
	indexMember = "member" // hyper_nodes: (cluster, "n"|"h", member, hypernode name)
)

// Slots of row.idx: which precomputed key an index reads.
const (
	slotID = iota
	slotA
	slotB
)

// Member kinds in the hyper_nodes member index: tier-1 hypernodes list nodes, higher tiers
// list hypernodes.
const (
	memberNode      = "n"
	memberHyperNode = "h"
)

// schema returns the memdb schema of the store: one function per table, as Nomad does.
func schema() *memdb.DBSchema {
	tables := []*memdb.TableSchema{
		clustersTable(),
		nodesTable(),
		queuesTable(),
		jobsTable(),
		tasksTable(),
		priorityClassesTable(),
		quotasTable(),
		budgetsTable(),
		hyperNodesTable(),
		table(tablePlans),
		table(tableConfigs),
		table(tablePlanCounters),
		table(tableResyncs),
	}
	s := &memdb.DBSchema{Tables: make(map[string]*memdb.TableSchema, len(tables))}
	for _, t := range tables {
		s.Tables[t.Name] = t
	}
	return s
}

// The plans table holds *Plan rows keyed by plan id; the scheduler_configs table one
// *SchedulerConfig row per cluster that has its own configuration; the plan_counters table
// one *planCounter row per cluster that proposed a plan. None of them is cluster state: writing
// them does not change the cluster's revision, and a replace_all batch keeps them.

// idIndex is the primary index every table has: (cluster, key).
func idIndex() *memdb.IndexSchema {
	return &memdb.IndexSchema{Name: indexID, Unique: true, Indexer: slotIndex(slotID)}
}

// clustersTable holds one clusterRow per cluster that has had a successful write: its
// revision. Rows are never deleted, so revisions never go back.
func clustersTable() *memdb.TableSchema {
	return table(tableClusters)
}

// nodesTable holds *api.Node rows keyed by node name.
func nodesTable() *memdb.TableSchema {
	return table(tableNodes)
}

// queuesTable holds *api.Queue rows keyed by queue name, indexed by parent so that deleting a
// queue can find its children.
func queuesTable() *memdb.TableSchema {
	return table(tableQueues, &memdb.IndexSchema{
		Name: indexParent, Unique: true, AllowMissing: true, Indexer: slotIndex(slotA),
	})
}

// jobsTable holds *api.Job rows keyed by namespace/name, indexed by queue.
func jobsTable() *memdb.TableSchema {
	return table(tableJobs, &memdb.IndexSchema{
		Name: indexQueue, Unique: true, Indexer: slotIndex(slotA),
	})
}

// tasksTable holds *api.Task rows keyed by namespace/name, indexed by job key and by node.
// Tasks without a node are absent from the node index.
func tasksTable() *memdb.TableSchema {
	return table(tableTasks,
		&memdb.IndexSchema{Name: indexJob, Unique: true, Indexer: slotIndex(slotA)},
		&memdb.IndexSchema{
			Name: indexNode, Unique: true, AllowMissing: true, Indexer: slotIndex(slotB),
		},
	)
}

// priorityClassesTable holds *api.PriorityClass rows keyed by class name.
func priorityClassesTable() *memdb.TableSchema {
	return table(tablePriorityClasses)
}

// quotasTable holds *api.NamespaceQuota rows keyed by namespace.
func quotasTable() *memdb.TableSchema {
	return table(tableQuotas)
}

// budgetsTable holds *api.DisruptionBudget rows keyed by namespace/name.
func budgetsTable() *memdb.TableSchema {
	return table(tableDisruptionBudget)
}

// hyperNodesTable holds *api.HyperNode rows keyed by name, indexed by member so that deleting
// a node or hypernode can find the hypernodes that still list it.
func hyperNodesTable() *memdb.TableSchema {
	return table(tableHyperNodes, &memdb.IndexSchema{
		Name: indexMember, Unique: true, AllowMissing: true, Indexer: memberIndex{},
	})
}

// table builds a table schema with the id index and the given secondary indexes.
func table(name string, secondary ...*memdb.IndexSchema) *memdb.TableSchema {
	t := &memdb.TableSchema{Name: name, Indexes: map[string]*memdb.IndexSchema{indexID: idIndex()}}
	for _, ix := range secondary {
		t.Indexes[ix.Name] = ix
	}
	return t
}

// keyed is what every stored row offers its indexers: precomputed index keys.
type keyed interface {
	indexKey(slot int) []byte
	// modRevision is the cluster revision that wrote the row; setModRevision sets it, before
	// the row is inserted.
	modRevision() uint64
	setModRevision(rev uint64)
	// rowKey is the row's key in its table.
	rowKey() string
}

// row is the record of every object table: the object, its cluster and key, and its index
// keys computed once when the row is built. The object is shared, never copied: it and the
// row are immutable once inserted (writers build a new row to change an object).
type row[T any] struct {
	cluster string
	key     string
	// idx holds the id key and up to two secondary keys (nil: absent from that index). Each
	// slice is capped at its length, so an append by memdb can never write into its neighbour.
	idx [3][]byte
	obj *T
	// rev is the cluster revision of the write that stored the row (its "modify revision"):
	// a plan commit compares it with the plan's base revision to find what changed since.
	rev uint64
}

func (r *row[T]) indexKey(slot int) []byte  { return r.idx[slot] }
func (r *row[T]) rowKey() string            { return r.key }
func (r *row[T]) modRevision() uint64       { return r.rev }
func (r *row[T]) setModRevision(rev uint64) { r.rev = rev }

// newRow builds a row whose id key is (cluster, key) and whose secondary keys are
// (cluster, a, key) and (cluster, b, key); an empty a or b leaves that slot absent. All keys
// share one allocation.
func newRow[T any](cluster, key string, obj *T, a, b string) *row[T] {
	idLen := len(cluster) + len(key) + 2
	n := idLen
	if a != "" {
		n += idLen + len(a) + 1
	}
	if b != "" {
		n += idLen + len(b) + 1
	}
	buf := make([]byte, 0, n)
	r := &row[T]{cluster: cluster, key: key, obj: obj}
	buf = appendKey(buf, cluster, key)
	r.idx[slotID] = buf[0:len(buf):len(buf)]
	if a != "" {
		s := len(buf)
		buf = appendKey(buf, cluster, a, key)
		r.idx[slotA] = buf[s:len(buf):len(buf)]
	}
	if b != "" {
		s := len(buf)
		buf = appendKey(buf, cluster, b, key)
		r.idx[slotB] = buf[s:len(buf):len(buf)]
	}
	return r
}

// clusterRow records a cluster's revision and how many objects it holds (every kind
// together), which every write keeps up to date so that a limit on a cluster's size costs
// nothing to check.
type clusterRow struct {
	name     string
	id       []byte
	revision uint64
	objects  int
	// log is what the write that stored the row changed (nil for a restored row).
	log *changeLog
}

func newClusterRow(name string, revision uint64, objects int) *clusterRow {
	id := appendKey(nil, name)
	return &clusterRow{name: name, id: id[:len(id):len(id)], revision: revision, objects: objects}
}

// A cluster row's modify revision is the cluster's revision.
func (r *clusterRow) modRevision() uint64   { return r.revision }
func (r *clusterRow) setModRevision(uint64) {}
func (r *clusterRow) rowKey() string        { return r.name }

func (r *clusterRow) indexKey(slot int) []byte {
	if slot == slotID {
		return r.id
	}
	return nil
}

// appendKey appends each part followed by a NUL terminator. Names never contain NUL (the
// writer rejects them), and NUL sorts first, so keys sort as their parts do and a key built
// from the first parts of another is its prefix.
func appendKey(buf []byte, parts ...string) []byte {
	for _, p := range parts {
		buf = append(buf, p...)
		buf = append(buf, 0)
	}
	return buf
}

// encodedKey is a lookup argument holding a key appendKey encoded already: a pointer to it
// is the only argument, so that a lookup neither boxes strings nor encodes them again.
type encodedKey struct{ b []byte }

// argsKey encodes memdb lookup arguments, which must all be strings, or be one *encodedKey.
func argsKey(args []any) ([]byte, error) {
	if len(args) == 1 {
		if k, ok := args[0].(*encodedKey); ok {
			return k.b, nil
		}
	}
	n := 0
	for i, a := range args {
		s, ok := a.(string)
		if !ok {
			return nil, fmt.Errorf("argument %d must be a string, got %T", i, a)
		}
		n += len(s) + 1
	}
	buf := make([]byte, 0, n)
	for _, a := range args {
		buf = appendKey(buf, a.(string))
	}
	return buf, nil
}

// slotIndex is a memdb indexer reading one precomputed key of a keyed row; lookups take the
// key's parts as string arguments, and a prefix of the parts finds every row under it.
type slotIndex int

// FromObject implements memdb.SingleIndexer.
func (s slotIndex) FromObject(raw any) (bool, []byte, error) {
	r, ok := raw.(keyed)
	if !ok {
		return false, nil, fmt.Errorf("unexpected row type %T", raw)
	}
	k := r.indexKey(int(s))
	return k != nil, k, nil
}

// FromArgs implements memdb.Indexer.
func (slotIndex) FromArgs(args ...any) ([]byte, error) { return argsKey(args) }

// PrefixFromArgs implements memdb.PrefixIndexer.
func (slotIndex) PrefixFromArgs(args ...any) ([]byte, error) { return argsKey(args) }

// memberIndex indexes a hypernode under each of its members:
// (cluster, "n" or "h", member, hypernode name).
type memberIndex struct{}

// FromObject implements memdb.MultiIndexer.
func (memberIndex) FromObject(raw any) (bool, [][]byte, error) {
	r, ok := raw.(*row[api.HyperNode])
	if !ok {
		return false, nil, fmt.Errorf("unexpected row type %T", raw)
	}
	h := r.obj
	if len(h.Members) == 0 {
		return false, nil, nil
	}
	kind := memberKind(h.Tier)
	vals := make([][]byte, len(h.Members))
	for i, m := range h.Members {
		vals[i] = appendKey(nil, r.cluster, kind, m, r.key)
	}
	return true, vals, nil
}

// FromArgs implements memdb.Indexer.
func (memberIndex) FromArgs(args ...any) ([]byte, error) { return argsKey(args) }

// PrefixFromArgs implements memdb.PrefixIndexer.
func (memberIndex) PrefixFromArgs(args ...any) ([]byte, error) { return argsKey(args) }

// memberKind says what the members of a hypernode of this tier are.
func memberKind(tier int32) string {
	if tier <= 1 {
		return memberNode
	}
	return memberHyperNode
}

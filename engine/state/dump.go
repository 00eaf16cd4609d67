package state

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/sluice-sched/sluice/engine/api"
)

// Dump is a point-in-time image of the whole store (every cluster, its revision and every
// object with the revision that wrote it), for a replicated log's snapshots. Taking one is
// free (a memdb read transaction); WriteTo encodes it, and Store.Restore reads it back.
type Dump struct {
	txn *memdb.Txn
	id  string
}

// Dump returns an image of the store as it is now; later writes do not show in it.
func (s *Store) Dump() *Dump { return &Dump{txn: s.load().Txn(false), id: s.ID()} }

// dumpFormat is the version of the dump encoding.
const dumpFormat = 1

// dumpHeader opens a dump.
type dumpHeader struct {
	Format   int
	Clusters []dumpCluster
	// StoreID is the store's id (Store.ID); dumps written before stores had one have "".
	StoreID string
}

type dumpCluster struct {
	Name     string
	Revision uint64
}

// dumpRecord is one row of a dump: an object (Change has exactly one upsert field set), a
// plan, a scheduler configuration, a plan counter or a resync's stage. The last record has
// End set. Dumps written before plans and configurations were stored decode alike (gob skips
// absent fields).
type dumpRecord struct {
	Cluster  string
	Revision uint64
	Change   Change
	Plan     *Plan
	Config   *SchedulerConfig
	Counter  *planCounter
	Resync   *resyncStage
	End      bool
}

// metaTables are the tables of rows that are not cluster objects, dumped after the objects.
var metaTables = [...]string{tablePlans, tableConfigs, tablePlanCounters, tableResyncs}

// WriteTo encodes the image (encoding/gob, one stream) to w.
func (d *Dump) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: bufio.NewWriterSize(w, 1<<16)}
	enc := gob.NewEncoder(cw)
	h := dumpHeader{Format: dumpFormat, StoreID: d.id}
	it, err := d.txn.Get(tableClusters, indexID)
	if err != nil {
		return cw.n, fmt.Errorf("state: dumping clusters: %w", err)
	}
	for o := it.Next(); o != nil; o = it.Next() {
		r := o.(*clusterRow)
		h.Clusters = append(h.Clusters, dumpCluster{Name: r.name, Revision: r.revision})
	}
	if err := enc.Encode(&h); err != nil {
		return cw.n, fmt.Errorf("state: dumping: %w", err)
	}
	for k := KindNode; k <= KindHyperNode; k++ {
		it, err := d.txn.Get(kindTables[k], indexID)
		if err != nil {
			return cw.n, fmt.Errorf("state: dumping %s: %w", kindTables[k], err)
		}
		for o := it.Next(); o != nil; o = it.Next() {
			rec := recordOf(o)
			if err := enc.Encode(&rec); err != nil {
				return cw.n, fmt.Errorf("state: dumping %s: %w", kindTables[k], err)
			}
		}
	}
	for _, table := range metaTables {
		it, err := d.txn.Get(table, indexID)
		if err != nil {
			return cw.n, fmt.Errorf("state: dumping %s: %w", table, err)
		}
		for o := it.Next(); o != nil; o = it.Next() {
			rec := recordOf(o)
			if err := enc.Encode(&rec); err != nil {
				return cw.n, fmt.Errorf("state: dumping %s: %w", table, err)
			}
		}
	}
	if err := enc.Encode(&dumpRecord{End: true}); err != nil {
		return cw.n, fmt.Errorf("state: dumping: %w", err)
	}
	return cw.n, cw.w.(*bufio.Writer).Flush()
}

// recordOf turns a stored row into a dump record.
func recordOf(o any) dumpRecord {
	var c Change
	var cluster string
	var rev uint64
	switch r := o.(type) {
	case *row[api.Node]:
		c.Node, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.Queue]:
		c.Queue, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.Job]:
		c.Job, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.Task]:
		c.Task, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.PriorityClass]:
		c.PriorityClass, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.NamespaceQuota]:
		c.Quota, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.DisruptionBudget]:
		c.Budget, cluster, rev = r.obj, r.cluster, r.rev
	case *row[api.HyperNode]:
		c.HyperNode, cluster, rev = r.obj, r.cluster, r.rev
	case *row[Plan]:
		return dumpRecord{Cluster: r.cluster, Revision: r.rev, Plan: r.obj}
	case *row[SchedulerConfig]:
		return dumpRecord{Cluster: r.cluster, Revision: r.rev, Config: r.obj}
	case *row[planCounter]:
		return dumpRecord{Cluster: r.cluster, Revision: r.rev, Counter: r.obj}
	case *row[resyncStage]:
		return dumpRecord{Cluster: r.cluster, Revision: r.rev, Resync: r.obj}
	default:
		panic(fmt.Sprintf("state: dumping an unexpected row %T", o))
	}
	return dumpRecord{Cluster: cluster, Revision: rev, Change: c}
}

// rowOf builds the row of an upsert, with the same keys as the writer builds: its table and
// row.
func rowOf(cluster string, c *Change) (string, keyed, error) {
	switch {
	case c.set() != 1 || c.Delete != nil:
		return "", nil, errors.New("a record must hold one object")
	case c.Node != nil:
		return tableNodes, newRow(cluster, c.Node.Name, c.Node, "", ""), nil
	case c.Queue != nil:
		return tableQueues, newRow(cluster, c.Queue.Name, c.Queue, c.Queue.Parent, ""), nil
	case c.Job != nil:
		return tableJobs, newRow(cluster, c.Job.Key(), c.Job, c.Job.Queue, ""), nil
	case c.Task != nil:
		t := c.Task
		return tableTasks, newRow(cluster, t.Key(), t, t.JobKey(), t.Node), nil
	case c.PriorityClass != nil:
		return tablePriorityClasses, newRow(cluster, c.PriorityClass.Name, c.PriorityClass, "", ""), nil
	case c.Quota != nil:
		return tableQuotas, newRow(cluster, c.Quota.Namespace, c.Quota, "", ""), nil
	case c.Budget != nil:
		b := c.Budget
		return tableDisruptionBudget, newRow(cluster, b.Namespace+"/"+b.Name, b, "", ""), nil
	default:
		return tableHyperNodes, newRow(cluster, c.HyperNode.Name, c.HyperNode, "", ""), nil
	}
}

// recordRow builds the row of a dump record and names its table.
func recordRow(rec *dumpRecord) (string, keyed, error) {
	switch {
	case rec.Plan != nil:
		return tablePlans, newRow(rec.Cluster, rec.Plan.ID, rec.Plan, "", ""), nil
	case rec.Config != nil:
		return tableConfigs, newRow(rec.Cluster, configKey, rec.Config, "", ""), nil
	case rec.Counter != nil:
		return tablePlanCounters, newRow(rec.Cluster, counterKey, rec.Counter, "", ""), nil
	case rec.Resync != nil:
		return tableResyncs, stageRow(rec.Cluster, rec.Resync), nil
	}
	return rowOf(rec.Cluster, &rec.Change)
}

// Restore replaces the whole store, its id included, with a dump that WriteTo wrote. On error the store is
// unchanged. Snapshots taken before keep reading the old state. It must not run
// concurrently with writes (a replicated log restores on its state machine's goroutine,
// which is the only writer).
func (s *Store) Restore(r io.Reader) error {
	db := newDB()
	txn := db.Txn(true)
	defer txn.Abort()
	dec := gob.NewDecoder(bufio.NewReaderSize(r, 1<<16))
	var h dumpHeader
	if err := dec.Decode(&h); err != nil {
		return fmt.Errorf("state: restoring: reading the header: %w", err)
	}
	if h.Format != dumpFormat {
		return fmt.Errorf("state: restoring: unknown dump format %d", h.Format)
	}
	// Object counts are not in the dump: they are counted as the objects come back.
	objects := map[string]int{}
	for n := 0; ; n++ {
		var rec dumpRecord
		if err := dec.Decode(&rec); err != nil {
			return fmt.Errorf("state: restoring: record %d: %w", n, err)
		}
		if rec.End {
			break
		}
		table, row, err := recordRow(&rec)
		if err != nil {
			return fmt.Errorf("state: restoring: record %d: %w", n, err)
		}
		row.setModRevision(rec.Revision)
		if err := txn.Insert(table, row); err != nil {
			return fmt.Errorf("state: restoring: record %d: %w", n, err)
		}
		if rec.Plan == nil && rec.Config == nil && rec.Counter == nil && rec.Resync == nil {
			objects[rec.Cluster]++
		}
	}
	for _, c := range h.Clusters {
		if err := txn.Insert(tableClusters, newClusterRow(c.Name, c.Revision, objects[c.Name])); err != nil {
			return fmt.Errorf("state: restoring cluster %q: %w", c.Name, err)
		}
	}
	txn.Commit()
	s.db.Store(db)
	s.setID(h.StoreID)
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

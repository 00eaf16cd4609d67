package state

import (
	"errors"
	"fmt"
	"slices"

	memdb "github.com/hashicorp/go-memdb"
)

// A cluster exists from the first row stored for it until DeleteCluster: its revision row
// (written by the first accepted batch), its scheduler configuration, or its plan counter
// (written with its first plan). DeleteCluster removes every row of the cluster, in every
// table (the stages of its resyncs in progress too), in one transaction; the cluster then
// reads as one never written (revision 0).

// ClusterInfo sums up what the store holds for one cluster.
type ClusterInfo struct {
	Name     string
	Revision uint64
	// Objects counts the cluster's objects, indexed by Kind (index 0 is unused).
	Objects [KindHyperNode + 1]int
	// Config is the cluster's own scheduler configuration, nil when it has none.
	Config *SchedulerConfig
	// Plans counts the stored plans, proposed and finished.
	Plans int
}

// ErrClusterNotFound is matched (errors.Is) by every *ClusterNotFoundError.
var ErrClusterNotFound = errors.New("cluster not found")

// ClusterNotFoundError says that the store holds nothing for a cluster.
type ClusterNotFoundError struct {
	Cluster string
}

// Error implements error.
func (e *ClusterNotFoundError) Error() string {
	return fmt.Sprintf("cluster %q not found: nothing was ever stored for it, or it was deleted", e.Cluster)
}

// Is makes errors.Is(err, ErrClusterNotFound) true.
func (e *ClusterNotFoundError) Is(target error) bool { return target == ErrClusterNotFound }

// Info sums up the view's cluster; false when the cluster does not exist.
func (v *View) Info() (*ClusterInfo, bool) { return clusterInfo(v.txn, v.cluster) }

// Exists reports whether the view's cluster exists: whether anything is stored for it. It
// costs a few lookups, unlike Info, which counts every row.
func (v *View) Exists() bool { return clusterExists(v.txn, v.cluster) }

// clusterExists reports whether txn holds any row of a cluster: its revision row, or (for a
// state written before a cluster needed a batch to exist) its configuration, plan counter or
// a plan.
func clusterExists(txn *memdb.Txn, cluster string) bool {
	for _, q := range [...]struct {
		table string
		args  []any
	}{
		{tableClusters, []any{cluster}},
		{tableConfigs, []any{cluster, configKey}},
		{tablePlanCounters, []any{cluster, counterKey}},
	} {
		o, err := txn.First(q.table, indexID, q.args...)
		if err != nil {
			panic(fmt.Sprintf("state: reading %s of cluster %q: %v", q.table, cluster, err))
		}
		if o != nil {
			return true
		}
	}
	o, err := txn.First(tablePlans, indexID+"_prefix", cluster)
	if err != nil {
		panic(fmt.Sprintf("state: reading the plans of cluster %q: %v", cluster, err))
	}
	return o != nil
}

// clusterInfo reads what txn holds for a cluster; false when it holds nothing.
func clusterInfo(txn *memdb.Txn, cluster string) (*ClusterInfo, bool) {
	info := &ClusterInfo{Name: cluster}
	o, err := txn.First(tableClusters, indexID, cluster)
	if err != nil {
		panic(fmt.Sprintf("state: reading cluster %q: %v", cluster, err))
	}
	exists := o != nil
	if exists {
		info.Revision = o.(*clusterRow).revision
	}
	for k := KindNode; k <= KindHyperNode; k++ {
		info.Objects[k] = countRows(txn, kindTables[k], cluster)
	}
	v := View{txn: txn, cluster: cluster}
	if sc, ok := v.Config(); ok {
		info.Config, exists = sc, true
	}
	if _, ok := one[planCounter](&v, tablePlanCounters, counterKey); ok {
		exists = true
	}
	info.Plans = countRows(txn, tablePlans, cluster)
	return info, exists || info.Plans > 0
}

// countRows counts a cluster's rows of a table.
func countRows(txn *memdb.Txn, table, cluster string) int {
	it, err := txn.Get(table, indexID+"_prefix", cluster)
	if err != nil {
		panic(fmt.Sprintf("state: counting %s: %v", table, err))
	}
	n := 0
	for o := it.Next(); o != nil; o = it.Next() {
		n++
	}
	return n
}

// ClusterNames returns the names of the clusters that exist (see ClusterInfo), sorted.
// Unlike Clusters, it includes clusters that only have a configuration or plans.
func (s *Store) ClusterNames() []string {
	txn := s.load().Txn(false)
	seen := map[string]bool{}
	var out []string
	for _, table := range [...]string{tableClusters, tableConfigs, tablePlanCounters, tablePlans} {
		it, err := txn.Get(table, indexID)
		if err != nil {
			panic(fmt.Sprintf("state: listing %s: %v", table, err))
		}
		for o := it.Next(); o != nil; o = it.Next() {
			var name string
			switch r := o.(type) {
			case *clusterRow:
				name = r.name
			case *row[SchedulerConfig]:
				name = r.cluster
			case *row[planCounter]:
				name = r.cluster
			case *row[Plan]:
				name = r.cluster
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

// DeleteCluster deletes every row of a cluster in one transaction: its objects, plans,
// plan counter, configuration, revision row and the stages of its resyncs in progress (whose
// next step then fails with ErrResyncLost). It returns the cluster as it was, or a
// *ClusterNotFoundError when the store holds nothing for it. With a Replicator the delete goes
// through the log (a cluster that does not exist never reaches it).
func (s *Store) DeleteCluster(cluster string) (*ClusterInfo, error) {
	if err := checkCluster(cluster); err != nil {
		return nil, err
	}
	if s.repl == nil {
		return s.deleteCluster(cluster)
	}
	if _, ok := s.Snapshot(cluster).Info(); !ok {
		return nil, &ClusterNotFoundError{Cluster: cluster}
	}
	res, err := s.replicate(cluster, &Op{Cluster: cluster, DeleteCluster: true})
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return res.Deleted, nil
}

// deletedTables are the tables DeleteCluster empties of a cluster's rows, its revision row
// aside.
var deletedTables = [...]string{
	tableNodes, tableQueues, tableJobs, tableTasks, tablePriorityClasses, tableQuotas,
	tableDisruptionBudget, tableHyperNodes, tablePlans, tableConfigs, tablePlanCounters,
	tableResyncs,
}

func (s *Store) deleteCluster(cluster string) (*ClusterInfo, error) {
	if err := checkCluster(cluster); err != nil {
		return nil, err
	}
	txn := s.load().Txn(true)
	defer txn.Abort()
	info, ok := clusterInfo(txn, cluster)
	if !ok {
		return nil, &ClusterNotFoundError{Cluster: cluster}
	}
	for _, table := range deletedTables {
		if _, err := txn.DeleteAll(table, indexID+"_prefix", cluster); err != nil {
			return nil, fmt.Errorf("state: deleting the %s of cluster %q: %w", table, cluster, err)
		}
	}
	if _, err := txn.DeleteAll(tableClusters, indexID, cluster); err != nil {
		return nil, fmt.Errorf("state: deleting the revision of cluster %q: %w", cluster, err)
	}
	txn.Commit()
	return info, nil
}

package state

import (
	"slices"
	"testing"

	memdb "github.com/hashicorp/go-memdb"

	"github.com/sluice-sched/sluice/engine/api"
)

func TestSchemaIsValid(t *testing.T) {
	s := schema()
	if err := s.Validate(); err != nil {
		t.Fatalf("schema: %v", err)
	}
	if _, err := memdb.NewMemDB(s); err != nil {
		t.Fatalf("NewMemDB: %v", err)
	}
	want := []string{tableClusters, tableNodes, tableQueues, tableJobs, tableTasks,
		tablePriorityClasses, tableQuotas, tableDisruptionBudget, tableHyperNodes,
		tablePlans, tableConfigs, tablePlanCounters, tableResyncs}
	for _, name := range want {
		if _, ok := s.Tables[name]; !ok {
			t.Errorf("table %q missing", name)
		}
	}
	if len(s.Tables) != len(want) {
		t.Errorf("schema has %d tables, want %d", len(s.Tables), len(want))
	}
}

// TestSchemaIndexes writes rows straight into memdb and reads them back through every index.
func TestSchemaIndexes(t *testing.T) {
	db, err := memdb.NewMemDB(schema())
	if err != nil {
		t.Fatal(err)
	}
	insert := func(txn *memdb.Txn, table string, r keyed) {
		t.Helper()
		if err := txn.Insert(table, r); err != nil {
			t.Fatalf("insert into %s: %v", table, err)
		}
	}
	txn := db.Txn(true)
	for _, c := range []string{"c1", "c1x"} { // "c1" is a prefix of "c1x": clusters must not mix
		insert(txn, tableClusters, newClusterRow(c, 7, 0))
		for _, n := range []string{"n2", "n1"} {
			insert(txn, tableNodes, newRow(c, n, &api.Node{Name: n}, "", ""))
		}
		for _, q := range []*api.Queue{{Name: "q1"}, {Name: "q2", Parent: "q1"}, {Name: "q3", Parent: "q1"}} {
			insert(txn, tableQueues, newRow(c, q.Name, q, q.Parent, ""))
		}
		for _, j := range []*api.Job{{Namespace: "ns", Name: "j1", Queue: "q2"}, {Namespace: "ns", Name: "j2", Queue: "q2"}} {
			insert(txn, tableJobs, newRow(c, j.Key(), j, j.Queue, ""))
		}
		for _, tk := range []*api.Task{
			{Namespace: "ns", Name: "t3", Job: "j1", Node: "n1"},
			{Namespace: "ns", Name: "t1", Job: "j1", Node: "n1"},
			{Namespace: "ns", Name: "t2", Job: "j1"},
			{Namespace: "ns", Name: "t4", Job: "j2", Node: "n2"},
		} {
			insert(txn, tableTasks, newRow(c, tk.Key(), tk, tk.JobKey(), tk.Node))
		}
		insert(txn, tablePriorityClasses, newRow(c, "high", &api.PriorityClass{Name: "high"}, "", ""))
		insert(txn, tableQuotas, newRow(c, "ns", &api.NamespaceQuota{Namespace: "ns"}, "", ""))
		insert(txn, tableDisruptionBudget, newRow(c, "ns/b", &api.DisruptionBudget{Namespace: "ns", Name: "b"}, "", ""))
		for _, h := range []*api.HyperNode{{Name: "s1", Tier: 1, Members: []string{"n1", "n2"}}, {Name: "s2", Tier: 2, Members: []string{"s1"}}} {
			insert(txn, tableHyperNodes, newRow(c, h.Name, h, "", ""))
		}
	}
	txn.Commit()

	read := db.Txn(false)
	keysOf := func(table, index string, args ...any) []string {
		t.Helper()
		it, err := read.Get(table, index, args...)
		if err != nil {
			t.Fatalf("Get(%s, %s): %v", table, index, err)
		}
		var out []string
		for o := it.Next(); o != nil; o = it.Next() {
			switch r := o.(type) {
			case *clusterRow:
				out = append(out, r.name)
			case *row[api.Node]:
				out = append(out, r.key)
			case *row[api.Queue]:
				out = append(out, r.key)
			case *row[api.Job]:
				out = append(out, r.key)
			case *row[api.Task]:
				out = append(out, r.key)
			case *row[api.PriorityClass]:
				out = append(out, r.key)
			case *row[api.NamespaceQuota]:
				out = append(out, r.key)
			case *row[api.DisruptionBudget]:
				out = append(out, r.key)
			case *row[api.HyperNode]:
				out = append(out, r.key)
			default:
				t.Fatalf("unexpected row %T", o)
			}
		}
		return out
	}
	tests := []struct {
		table, index string
		args         []any
		want         []string
	}{
		{tableClusters, indexID, nil, []string{"c1", "c1x"}},
		{tableClusters, indexID, []any{"c1"}, []string{"c1"}},
		{tableNodes, indexID + "_prefix", []any{"c1"}, []string{"n1", "n2"}},
		{tableNodes, indexID, []any{"c1", "n2"}, []string{"n2"}},
		{tableNodes, indexID, []any{"c1", "n"}, nil},
		{tableQueues, indexParent + "_prefix", []any{"c1", "q1"}, []string{"q2", "q3"}},
		{tableQueues, indexParent + "_prefix", []any{"c1", ""}, nil},
		{tableJobs, indexQueue + "_prefix", []any{"c1", "q2"}, []string{"ns/j1", "ns/j2"}},
		{tableJobs, indexQueue + "_prefix", []any{"c1", "q1"}, nil},
		{tableTasks, indexID + "_prefix", []any{"c1x"}, []string{"ns/t1", "ns/t2", "ns/t3", "ns/t4"}},
		{tableTasks, indexJob + "_prefix", []any{"c1", "ns/j1"}, []string{"ns/t1", "ns/t2", "ns/t3"}},
		{tableTasks, indexJob, []any{"c1", "ns/j1", "ns/t2"}, []string{"ns/t2"}},
		{tableTasks, indexNode + "_prefix", []any{"c1", "n1"}, []string{"ns/t1", "ns/t3"}},
		{tableTasks, indexNode + "_prefix", []any{"c1", "n2"}, []string{"ns/t4"}},
		{tablePriorityClasses, indexID, []any{"c1", "high"}, []string{"high"}},
		{tableQuotas, indexID, []any{"c1", "ns"}, []string{"ns"}},
		{tableDisruptionBudget, indexID, []any{"c1", "ns/b"}, []string{"ns/b"}},
		{tableHyperNodes, indexMember + "_prefix", []any{"c1", memberNode, "n2"}, []string{"s1"}},
		{tableHyperNodes, indexMember + "_prefix", []any{"c1", memberHyperNode, "s1"}, []string{"s2"}},
		{tableHyperNodes, indexMember + "_prefix", []any{"c1", memberHyperNode, "n1"}, nil},
	}
	for _, tt := range tests {
		if got := keysOf(tt.table, tt.index, tt.args...); !slices.Equal(got, tt.want) {
			t.Errorf("%s by %s %v = %v, want %v", tt.table, tt.index, tt.args, got, tt.want)
		}
	}
	// Every task is in the node index once it has a node: 3 of 4 per cluster.
	if got := keysOf(tableTasks, indexNode); len(got) != 6 {
		t.Errorf("node index holds %d tasks, want 6", len(got))
	}
	// Non-string arguments are refused, not a panic.
	if _, err := read.First(tableNodes, indexID, "c1", 3); err == nil {
		t.Error("lookup with an int argument: want an error")
	}
}

// TestRowKeysAreCapped makes sure memdb appending to an index key can never overwrite the
// key that follows it in the row's shared buffer.
func TestRowKeysAreCapped(t *testing.T) {
	r := newRow("c", "ns/t", &api.Task{}, "ns/j", "n1")
	for slot, k := range r.idx {
		if cap(k) != len(k) {
			t.Errorf("slot %d: cap %d != len %d", slot, cap(k), len(k))
		}
	}
	if got := string(r.idx[slotB]); got != "c\x00n1\x00ns/t\x00" {
		t.Errorf("node key = %q", got)
	}
}

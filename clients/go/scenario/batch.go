package scenario

import (
	"sort"

	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Batch returns the cluster as one replace-all DeltaBatch of upserts, in the
// order priority classes, queues (parents before children), hypernodes
// (lower tiers first), quotas, disruption budgets, nodes, jobs, tasks. The
// messages are copies; changing them does not change c.
func (c *Cluster) Batch() *sluicev1.DeltaBatch {
	b := &sluicev1.DeltaBatch{ReplaceAll: true}
	add := func(d *sluicev1.Delta) { b.Deltas = append(b.Deltas, d) }
	for _, pc := range c.PriorityClasses {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertPriorityClass{UpsertPriorityClass: clone(pc)}})
	}
	queues, _ := parentsFirst(c.Queues)
	if queues == nil { // a cycle: cannot come from the parser; keep file order
		queues = c.Queues
	}
	for _, q := range queues {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: clone(q)}})
	}
	hyper := append([]*sluicev1.HyperNode(nil), c.HyperNodes...)
	sort.SliceStable(hyper, func(i, j int) bool { return hyper[i].Tier < hyper[j].Tier })
	for _, h := range hyper {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertHyperNode{UpsertHyperNode: clone(h)}})
	}
	for _, q := range c.Quotas {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNamespaceQuota{UpsertNamespaceQuota: clone(q)}})
	}
	for _, db := range c.DisruptionBudgets {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertDisruptionBudget{UpsertDisruptionBudget: clone(db)}})
	}
	for _, n := range c.Nodes {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: clone(n)}})
	}
	for _, j := range c.Jobs {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: clone(j)}})
	}
	for _, t := range c.Tasks {
		add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: clone(t)}})
	}
	return b
}

// Len returns the number of objects in the cluster.
func (c *Cluster) Len() int {
	return len(c.PriorityClasses) + len(c.Queues) + len(c.HyperNodes) + len(c.Quotas) +
		len(c.DisruptionBudgets) + len(c.Nodes) + len(c.Jobs) + len(c.Tasks)
}

func clone[M proto.Message](m M) M { return proto.Clone(m).(M) }

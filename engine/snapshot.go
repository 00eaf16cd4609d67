package engine

import (
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// toFrameworkSnapshot copies the store snapshot's object lists (already sorted by key) into
// the framework's input.
func toFrameworkSnapshot(cluster string, s *state.Snapshot) *framework.Snapshot {
	return &framework.Snapshot{
		Cluster:         cluster,
		Revision:        s.Revision(),
		Nodes:           s.Nodes(),
		Queues:          s.Queues(),
		Jobs:            s.Jobs(),
		Tasks:           s.Tasks(),
		PriorityClasses: s.PriorityClasses(),
		Quotas:          s.Quotas(),
		Budgets:         s.Budgets(),
		HyperNodes:      s.HyperNodes(),
		TasksOfJob:      s.TasksOfJob,
		TasksOnNode:     s.TasksOnNode,
	}
}

package engine

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// toFrameworkSnapshot copies the store snapshot's object lists (already sorted by key) into
// the framework's input. Nodes, jobs and tasks are listed when the session needs them
// (framework.Snapshot.Load), which a session on kept views patched to the same mark never
// does.
func toFrameworkSnapshot(cluster string, s *state.Snapshot) *framework.Snapshot {
	return &framework.Snapshot{
		Cluster:  cluster,
		Revision: s.Revision(),
		Load: func(fs *framework.Snapshot) {
			fs.Nodes, fs.Jobs, fs.Tasks = s.Nodes(), s.Jobs(), s.Tasks()
		},
		Mark:            s.Mark(),
		Queues:          s.Queues(),
		PriorityClasses: s.PriorityClasses(),
		Quotas:          s.Quotas(),
		Budgets:         s.Budgets(),
		HyperNodes:      s.HyperNodes(),
		TasksOfJob:      s.TasksOfJob,
		TasksOnNode:     s.TasksOnNode,
		ChangesSince: func(mark any) (api.ObjectChanges, bool) {
			m, ok := mark.(state.Mark)
			if !ok {
				return api.ObjectChanges{}, false
			}
			return s.ChangesSince(m)
		},
	}
}

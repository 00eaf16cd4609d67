package sluice

import sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"

// UpsertNode returns a delta that creates or replaces n.
func UpsertNode(n *sluicev1.Node) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: n}}
}

// UpsertQueue returns a delta that creates or replaces q.
func UpsertQueue(q *sluicev1.Queue) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: q}}
}

// UpsertJob returns a delta that creates or replaces j.
func UpsertJob(j *sluicev1.Job) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: j}}
}

// UpsertTask returns a delta that creates or replaces t.
func UpsertTask(t *sluicev1.Task) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}}
}

// UpsertPriorityClass returns a delta that creates or replaces pc.
func UpsertPriorityClass(pc *sluicev1.PriorityClass) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertPriorityClass{UpsertPriorityClass: pc}}
}

// Delete returns a delta that deletes an object; namespace matters only for jobs,
// tasks and disruption budgets (empty means "default").
func Delete(kind sluicev1.ObjectKind, namespace, name string) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_Delete{Delete: &sluicev1.ObjectRef{Kind: kind, Namespace: namespace, Name: name}}}
}

package slurm

import (
	"google.golang.org/protobuf/proto"
	"maps"
	"slices"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Deltas returns the whole state as upserts, in dependency order (queues, nodes, jobs,
// tasks; each by name): the content of a replace_all batch.
func (st *ClusterState) Deltas() []*sluicev1.Delta {
	var out []*sluicev1.Delta
	for _, k := range slices.Sorted(maps.Keys(st.Queues)) {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: st.Queues[k]}})
	}
	for _, k := range slices.Sorted(maps.Keys(st.Nodes)) {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: st.Nodes[k]}})
	}
	for _, k := range slices.Sorted(maps.Keys(st.Jobs)) {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: st.Jobs[k]}})
	}
	for _, k := range slices.Sorted(maps.Keys(st.Tasks)) {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: st.Tasks[k]}})
	}
	return out
}

// Diff returns the deltas that turn old into st: upserts of what is new or changed, in
// dependency order, then deletions of what is gone (tasks, jobs, nodes, queues). A nil old
// gives every object as an upsert.
func (st *ClusterState) Diff(old *ClusterState) []*sluicev1.Delta {
	if old == nil {
		return st.Deltas()
	}
	var out []*sluicev1.Delta
	for _, k := range slices.Sorted(maps.Keys(st.Queues)) {
		if q := st.Queues[k]; !proto.Equal(q, old.Queues[k]) {
			out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: q}})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.Nodes)) {
		if n := st.Nodes[k]; !proto.Equal(n, old.Nodes[k]) {
			out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: n}})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.Jobs)) {
		if j := st.Jobs[k]; !proto.Equal(j, old.Jobs[k]) {
			out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: j}})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(st.Tasks)) {
		if t := st.Tasks[k]; !proto.Equal(t, old.Tasks[k]) {
			out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}})
		}
	}
	del := func(kind sluicev1.ObjectKind, ns, name string) {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_Delete{Delete: &sluicev1.ObjectRef{Kind: kind, Namespace: ns, Name: name}}})
	}
	for _, k := range slices.Sorted(maps.Keys(old.Tasks)) {
		if _, ok := st.Tasks[k]; !ok {
			// Deleting a job deletes its tasks; only tasks of jobs that stay need their own.
			if _, jobStays := st.Jobs[old.Tasks[k].GetJob()]; jobStays {
				del(sluicev1.ObjectKind_OBJECT_KIND_TASK, old.Namespace, k)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old.Jobs)) {
		if _, ok := st.Jobs[k]; !ok {
			del(sluicev1.ObjectKind_OBJECT_KIND_JOB, old.Namespace, k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old.Nodes)) {
		if _, ok := st.Nodes[k]; !ok {
			del(sluicev1.ObjectKind_OBJECT_KIND_NODE, "", k)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(old.Queues)) {
		if _, ok := st.Queues[k]; !ok {
			del(sluicev1.ObjectKind_OBJECT_KIND_QUEUE, "", k)
		}
	}
	return out
}

// applyDecisions records in st what a committed plan changed on the server (binds make
// tasks BOUND to their node with their devices, evictions RELEASING), so that the next Diff
// corrects the server when Slurm did not follow: a task Slurm shows pending, running or on
// other nodes differs from the record and is sent again; one Slurm shows dispatched where the
// plan put it is what the server holds already (a report without the plan's device ids,
// which differs from the record, keeps them on the server).
func (st *ClusterState) applyDecisions(applied []*sluicev1.Decision) {
	for _, d := range applied {
		switch k := d.GetKind().(type) {
		case *sluicev1.Decision_Bind:
			if t := st.Tasks[k.Bind.GetTask().GetName()]; t != nil {
				c := proto.CloneOf(t)
				c.Status, c.Node = sluicev1.TaskStatus_TASK_STATUS_BOUND, k.Bind.GetNode()
				c.DeviceIds = k.Bind.GetDeviceIds()
				st.Tasks[c.Name] = c
			}
		case *sluicev1.Decision_Evict:
			if t := st.Tasks[k.Evict.GetTask().GetName()]; t != nil {
				c := proto.CloneOf(t)
				c.Status = sluicev1.TaskStatus_TASK_STATUS_RELEASING
				st.Tasks[c.Name] = c
			}
		}
	}
}

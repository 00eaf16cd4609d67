package state

import (
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// Server-owned fields.
//
// An upsert replaces every field the resource manager owns, but a field the server
// maintains keeps its stored value when the change leaves it unset. This file is the one
// place where that happens: Apply, Txn.Upsert (plan commits) and ApplyOp (every replica of a
// replicated store, deterministically) all go through it. "Stored" is the object as it was
// before the change: in the transaction so far, or, for a ReplaceAll batch (which deletes
// everything first), before the batch. The fields, and what unset means:
//
//   - Job.Phase ("", set by plan commits): the stored phase; Inqueue for a new job.
//   - Job.CreatedAt (zero): the stored time; the batch's Now for a new job.
//   - Task.Status (0, set by plan commits): the stored status; Pending for a new task.
//   - Task.Node ("", set by binds), for a task that stays placed (Binding, Bound, Running or
//     Releasing, before and after): the stored node.
//   - Task.DeviceIDs (empty, set by binds), for a task that stays placed on the same node:
//     the stored ids. A task reported on another node, or no longer placed, drops them.
//   - Task.StartedAt (zero): the stored time, unless the task is Pending again; a Running
//     task that still has none gets the batch's Now.
//
// Every other field of every kind is the resource manager's: what the change holds,
// defaults included, replaces what was stored. Nodes, queues, priority classes, quotas,
// budgets and hypernodes have no server-owned fields (only their modify revision, which the
// row records).

// stored returns the object of table with key before the current change (see above), or nil,
// and the row the transaction holds under key when that is known: the same row, unless a
// ReplaceAll batch reads the state from before it (then current is false and the caller
// looks the transaction up itself).
func stored[T any](w *writer, table, key string) (obj *T, before keyed, current bool, err error) {
	var r keyed
	if w.prior != nil {
		r, err = firstByID(w.prior, table, w.cluster, key)
	} else {
		r, err = w.ov.lookup(table, w.cluster, key)
	}
	current = w.prior == nil
	if err != nil || r == nil {
		return nil, nil, current, err
	}
	return r.(*row[T]).obj, r, current, nil
}

// mergeJob returns j with its unset server-owned fields taken from old (nil for a new job),
// or defaulted. Unless inPlace (Batch.Owned), j itself is never modified: a copy is made when
// something is filled in, so that a batch checked before it is replicated goes into the log
// as the client sent it.
func mergeJob(j, old *api.Job, now time.Time, inPlace bool) *api.Job {
	phase, created := j.Phase, j.CreatedAt
	if phase == "" {
		phase = api.JobInqueue
		if old != nil && old.Phase != "" {
			phase = old.Phase
		}
	}
	if created.IsZero() {
		created = now
		if old != nil && !old.CreatedAt.IsZero() {
			created = old.CreatedAt
		}
	}
	if phase == j.Phase && created.Equal(j.CreatedAt) {
		return j
	}
	out := j
	if !inPlace {
		c := *j
		out = &c
	}
	out.Phase, out.CreatedAt = phase, created
	return out
}

// taskOwned holds a task's server-owned fields.
type taskOwned struct {
	status  api.TaskStatus
	node    string
	devices []string
	started time.Time
}

// mergeTask returns t with its unset server-owned fields taken from old (nil for a new task),
// or defaulted; like mergeJob it copies t rather than modify it, unless inPlace.
func mergeTask(t, old *api.Task, now time.Time, inPlace bool) *api.Task {
	m := mergedTask(t, old, now)
	if m.status == t.Status && m.node == t.Node && len(m.devices) == len(t.DeviceIDs) &&
		m.started.Equal(t.StartedAt) {
		return t
	}
	out := t
	if !inPlace {
		c := *t
		out = &c
	}
	out.Status, out.Node, out.DeviceIDs, out.StartedAt = m.status, m.node, m.devices, m.started
	return out
}

// mergedTask returns the server-owned fields mergeTask gives t.
func mergedTask(t, old *api.Task, now time.Time) taskOwned {
	m := taskOwned{status: t.Status, node: t.Node, devices: t.DeviceIDs, started: t.StartedAt}
	if m.status == 0 {
		m.status = api.Pending
		if old != nil {
			m.status = old.Status
		}
	}
	stays := old != nil && placed(old.Status) && placed(m.status)
	if m.node == "" && stays {
		m.node = old.Node
	}
	if len(m.devices) == 0 && stays && m.node == old.Node {
		m.devices = old.DeviceIDs
	}
	if m.started.IsZero() && m.status != api.Pending {
		if old != nil {
			m.started = old.StartedAt
		}
		if m.started.IsZero() && m.status == api.Running {
			m.started = now
		}
	}
	return m
}

// placed reports whether a task in this status is on a node (and must name it).
func placed(s api.TaskStatus) bool {
	switch s {
	case api.Running, api.Releasing, api.Binding, api.Bound:
		return true
	}
	return false
}

package state

import (
	"slices"

	"github.com/sluice-sched/sluice/engine/api"
)

// Default bounds of a cluster's change log: a chain of revision rows longer than this, or
// naming more keys, starts again, so that the log a snapshot can reach stays bounded (a
// reader further behind compares everything instead).
const (
	changeLogRevisions = 256
	changeLogKeys      = 1 << 18
)

// logBounds are a store's change log bounds.
type logBounds struct{ revisions, keys int }

// LimitChangeLog sets how far back each cluster's change log reaches (Snapshot.ChangesSince):
// at most revisions writes, naming at most keys keys in all (defaults 256 and 262,144).
// Smaller bounds save memory and make readers further behind compare everything; tests use
// them to take that path. It applies to the writes that follow.
func (s *Store) LimitChangeLog(revisions, keys int) {
	s.logBounds.Store(&logBounds{revisions: revisions, keys: keys})
}

// changeLog is what one write changed, kept on the revision row it stored: the keys of the
// nodes, jobs and tasks it wrote or deleted (or tried to: a key whose write was taken back
// may be listed), and the row before it. prev is nil where the chain starts: the first write,
// a write that replaced everything, a restore, or a chain that reached its bounds.
type changeLog struct {
	prev               *clusterRow
	nodes, jobs, tasks []string
	// depth and keys count the rows and keys of the chain down to its start, this one's
	// included.
	depth, keys int
}

// record notes that the transaction wrote or deleted the object of table with key.
func (w *writer) record(table, key string) {
	if w.replaced {
		return // the log will not chain: no need to name what changed
	}
	switch table {
	case tableNodes:
		w.log.nodes = append(w.log.nodes, key)
	case tableJobs:
		w.log.jobs = append(w.log.jobs, key)
	case tableTasks:
		w.log.tasks = append(w.log.tasks, key)
	}
}

// newRevisionRow returns the cluster's revision row for a write that found prev (nil: none),
// with the write's change log chained to prev's.
func (w *writer) newRevisionRow(prev *clusterRow, rev uint64, objects int) *clusterRow {
	r := newClusterRow(w.cluster, rev, objects)
	l := w.log
	l.depth = 1
	l.keys = len(l.nodes) + len(l.jobs) + len(l.tasks)
	if b := w.bounds; b != nil && prev != nil && prev.log != nil && !w.replaced {
		if l.depth+prev.log.depth <= b.revisions && l.keys+prev.log.keys <= b.keys {
			l.prev = prev
			l.depth += prev.log.depth
			l.keys += prev.log.keys
		}
	}
	r.log = &l
	return r
}

// ChangesSince returns what changed in the snapshot's cluster since the snapshot with mark m
// (the store's change log, read back from this snapshot's revision to m's). ok is false when
// the log does not reach back to m (too many revisions or keys ago, a restore or a write that
// replaced everything since, a mark of another cluster or store): the caller compares
// everything.
func (s *Snapshot) ChangesSince(m Mark) (c api.ObjectChanges, ok bool) {
	if m.row == nil || s.mark.row == nil {
		return c, false
	}
	var nodes, jobs, tasks []string
	for r := s.mark.row; r != m.row; r = r.log.prev {
		if r == nil || r.log == nil {
			return c, false
		}
		nodes = append(nodes, r.log.nodes...)
		jobs = append(jobs, r.log.jobs...)
		tasks = append(tasks, r.log.tasks...)
	}
	c.Nodes = lookUp[api.Node](s, tableNodes, nodes)
	c.Jobs = lookUp[api.Job](s, tableJobs, jobs)
	c.Tasks = lookUp[api.Task](s, tableTasks, tasks)
	return c, true
}

// lookUp sorts and dedups keys and pairs each with the snapshot's object.
func lookUp[T any](s *Snapshot, table string, keys []string) []api.Changed[T] {
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	out := make([]api.Changed[T], len(keys))
	for i, k := range keys {
		out[i].Key = k
		out[i].Obj, _ = one[T](&s.View, table, k)
	}
	return out
}

package util

import (
	"errors"
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// ValidateVictims checks that evicting the victims would free enough room on the node for
// the evictor: its request must fit in the node's future idle plus the victims' requests.
func ValidateVictims(evictor *api.TaskInfo, node *api.NodeInfo, victims []*api.TaskInfo) error {
	if len(victims) == 0 {
		return errors.New("no victims")
	}
	fi := node.FutureIdle()
	for _, v := range victims {
		fi.Add(v.Resreq)
	}
	if !evictor.InitResreq.LessEqual(fi, api.Zero) {
		return errors.New("evicting every victim would not free enough resources")
	}
	if node.MaxPods() > 0 && node.FutureIdlePods()+len(victims) < 1 {
		return errors.New("evicting every victim would not free a pod slot")
	}
	return nil
}

// VictimsQueue orders victims for eviction as Volcano does: within one job the reverse of task
// order; across queues the victim queue order for the evictor's queue; otherwise the reverse of
// job order (the least important goes first).
func VictimsQueue(ssn *framework.Session, evictor *api.TaskInfo, victims []*api.TaskInfo) *PriorityQueue[*api.TaskInfo] {
	var evictorQueue *api.QueueInfo
	if j, ok := ssn.Jobs[evictor.Job]; ok {
		evictorQueue = ssn.Queues[j.Queue]
	}
	q := NewPriorityQueue(func(l, r *api.TaskInfo) bool {
		if l.Job == r.Job {
			return ssn.TaskOrderFn(r, l)
		}
		lj, rj := ssn.Jobs[l.Job], ssn.Jobs[r.Job]
		if evictorQueue != nil && lj.Queue != rj.Queue {
			lq, rq := ssn.Queues[lj.Queue], ssn.Queues[rj.Queue]
			if lq != nil && rq != nil {
				return ssn.VictimQueueOrderFn(lq, rq, evictorQueue)
			}
		}
		return ssn.JobOrderFn(rj, lj)
	})
	for _, v := range victims {
		q.Push(v)
	}
	return q
}

// JobTask returns the session's own view of a task (node views are copies).
func JobTask(ssn *framework.Session, t *api.TaskInfo) *api.TaskInfo {
	if j, ok := ssn.Jobs[t.Job]; ok {
		if jt, ok := j.Tasks[t.UID]; ok {
			return jt
		}
	}
	return nil
}

// NodeTasks returns a node's tasks sorted by UID, filtered by keep.
func NodeTasks(node *api.NodeInfo, keep func(*api.TaskInfo) bool) []*api.TaskInfo {
	out := make([]*api.TaskInfo, 0, len(node.Tasks))
	for _, t := range node.Tasks {
		if keep(t) {
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// SortByScore returns the nodes ordered by descending score; equal scores keep the given
// (name) order.
func SortByScore(nodes []*api.NodeInfo, scores []float64) []*api.NodeInfo {
	idx := make([]int, len(nodes))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	out := make([]*api.NodeInfo, len(nodes))
	for i, k := range idx {
		out[i] = nodes[k]
	}
	return out
}

package framework

import (
	"slices"
	"sort"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// activity indexes kept job views by whether a cycle can have work for them, so that a
// steady cycle visits what is pending rather than every job. A job is idle when its view, as
// built, has no pending task, no pipelined or allocated task, and a phase other than Pending:
//
//   - no action places, pipelines or enqueues anything of it, and nothing of it turns pending
//     during a cycle (a statement's Discard only restores the status a task had);
//   - its outcome, with no pending, pipelined or allocated task, has no explanation: it is a
//     function of the view alone (outcomeOf), the same every cycle until the view is rebuilt.
//
// Kept views are rebuilt whenever they change (Views), so the index is patched for the jobs a
// refresh rebuilt, added or deleted (Changes.Jobs) and is otherwise the one of the last cycle.
type activity struct {
	// active holds the jobs that are not idle, sorted by UID.
	active []*api.JobInfo
	// idle holds the idle jobs by queue name and UID; idleQueue gives an idle job's queue.
	idle      map[string]map[string]*api.JobInfo
	idleQueue map[string]string
	// witness remembers, per queue, an idle job that passed JobValid last time (a hint for
	// ValidIdleJob; the answer is always asked again).
	witness map[string]*api.JobInfo
	// outcomes are the outcomes of the last session closed on the views, by position in
	// jobList; outcomesEpoch is the refresh that session opened on (0: none).
	outcomes      []JobOutcome
	outcomesEpoch uint64
	// hyperNodes is set when the last session set AllocatedHyperNode on every job (the
	// cluster had hypernodes): the next one without clears them all.
	hyperNodes bool
}

// isIdle reports whether a job view, as built, is idle (see activity).
func isIdle(j *api.JobInfo) bool {
	return !j.IsPending() && j.PendingTaskNum() == 0 && j.WaitingTaskNum() == 0 && j.AllocatedTaskNum() == 0
}

// build indexes every job of jobs (sorted by UID).
func (a *activity) build(jobs []*api.JobInfo) {
	a.active = a.active[:0]
	a.idle, a.idleQueue, a.witness = map[string]map[string]*api.JobInfo{}, map[string]string{}, map[string]*api.JobInfo{}
	a.outcomes, a.outcomesEpoch, a.hyperNodes = nil, 0, false
	for _, j := range jobs {
		a.add(j)
	}
}

// add indexes one job; active jobs are appended (the caller keeps active sorted).
func (a *activity) add(j *api.JobInfo) {
	if !isIdle(j) {
		a.active = append(a.active, j)
		return
	}
	q := a.idle[j.Queue]
	if q == nil {
		q = map[string]*api.JobInfo{}
		a.idle[j.Queue] = q
	}
	q[j.UID] = j
	a.idleQueue[j.UID] = j.Queue
}

// patch re-indexes the jobs whose views were rebuilt, added or deleted (keys, sorted); jobs
// holds the current views by key.
func (a *activity) patch(keys []string, jobs map[string]*api.JobInfo) {
	if len(keys) == 0 {
		return
	}
	changed := make(map[string]bool, len(keys))
	for _, k := range keys {
		changed[k] = true
		if q, ok := a.idleQueue[k]; ok {
			delete(a.idle[q], k)
			if len(a.idle[q]) == 0 {
				delete(a.idle, q)
			}
			delete(a.idleQueue, k)
		}
	}
	kept := a.active[:0]
	for _, j := range a.active {
		if !changed[j.UID] {
			kept = append(kept, j)
		}
	}
	clear(a.active[len(kept):])
	a.active = kept
	for _, k := range keys {
		if j := jobs[k]; j != nil {
			a.add(j)
		}
	}
	sort.Slice(a.active, func(i, j int) bool { return a.active[i].UID < a.active[j].UID })
}

// ActiveJobs returns the jobs an action or plugin walking jobs may have work for, sorted by
// UID, in a slice the caller must not change. On kept views (SkipsIdleJobs) these are the
// jobs that were not idle when the session opened: an idle job (no pending, pipelined or
// allocated task, phase not Pending) gains none during a cycle, so an action that only
// places, pipelines or enqueues, or a plugin that only explains such work, has nothing to do
// with it. Otherwise (the from-scratch reference) they are every job. A walk that also acts on
// idle jobs uses SortedJobs.
func (s *Session) ActiveJobs() []*api.JobInfo {
	if s.views == nil {
		return s.SortedJobs()
	}
	return s.views.activity.active
}

// ValidIdleJob returns, on kept views, an idle job of the queue (see ActiveJobs) that passes
// JobValid now, or nil when none does: an action that skips idle jobs but whose walk used to
// take a queue in for any valid job of it (allocate) asks this for the queues the active jobs
// did not bring in. JobValid must only read the job. Without kept views it returns nil.
func (s *Session) ValidIdleJob(queue string) *api.JobInfo {
	if s.views == nil {
		return nil
	}
	a := &s.views.activity
	if w := a.witness[queue]; w != nil && a.idle[queue][w.UID] == w && s.JobValid(w) == nil {
		return w
	}
	delete(a.witness, queue)
	for _, j := range a.idle[queue] { // any order: JobValid only reads, and one is enough
		if s.JobValid(j) == nil {
			a.witness[queue] = j
			return j
		}
	}
	return nil
}

// touch logs, on kept views, that a statement changed the job's view.
func (s *Session) touch(j *api.JobInfo) {
	if s.views != nil && (len(s.touched) == 0 || s.touched[len(s.touched)-1] != j) {
		s.touched = append(s.touched, j)
	}
}

// visitedJobs returns, sorted by UID, the jobs the session may have changed or had work for:
// on kept views the active jobs and the jobs statements changed, unless SortedJobs handed out
// every job; every job otherwise. Per-cycle fields (phase, fit errors) are written only on jobs
// a walk handed out (ReusableViews), and idle jobs are handed out only by SortedJobs. On kept
// views it records their positions for releaseViews.
func (s *Session) visitedJobs() []*api.JobInfo {
	all := s.jobList()
	if s.views == nil || s.walkedAll {
		return all
	}
	touched := slices.Clone(s.touched)
	slices.SortFunc(touched, func(a, b *api.JobInfo) int { return strings.Compare(a.UID, b.UID) })
	touched = slices.Compact(touched)
	active := s.views.activity.active
	out := make([]*api.JobInfo, 0, len(active)+len(touched))
	for i, k := 0, 0; i < len(active) || k < len(touched); {
		switch {
		case k == len(touched) || (i < len(active) && active[i].UID < touched[k].UID):
			out = append(out, active[i])
			i++
		case i == len(active) || touched[k].UID < active[i].UID:
			out = append(out, touched[k])
			k++
		default: // the same job
			out = append(out, active[i])
			i++
			k++
		}
	}
	s.visited = make([]int32, len(out))
	for n, j := range out {
		s.visited[n] = int32(position(all, j.UID))
	}
	s.visitedKnown = true
	return out
}

// position returns the position of the job with the UID in jobs (sorted by UID), or
// len(jobs) when it is not there.
func position(jobs []*api.JobInfo, uid string) int {
	i := sort.Search(len(jobs), func(k int) bool { return jobs[k].UID >= uid })
	if i < len(jobs) && jobs[i].UID != uid {
		return len(jobs)
	}
	return i
}

// outcomes returns every job's outcome, in UID order. On kept views the outcomes of the last
// session are taken over for the jobs neither visited (visitedJobs) nor rebuilt, added or
// deleted since: their views are the very ones that session saw, idle and unchanged, and an
// idle job's outcome depends on its view alone. The slice may be the last plan's: plans only
// read it.
func (s *Session) outcomes() []JobOutcome {
	all := s.jobList()
	if len(all) == 0 {
		return nil
	}
	out, ok := s.keptOutcomes(all)
	if !ok {
		out = make([]JobOutcome, len(all))
		for i, j := range all {
			out[i] = s.outcome(j)
		}
	}
	if s.views != nil {
		s.views.activity.outcomes, s.views.activity.outcomesEpoch = out, s.views.epoch
	}
	return out
}

// keptOutcomes returns the last session's outcomes brought up to date: between two jobs the
// refresh changed (Changes.Jobs, sorted as the jobs), the unchanged jobs are the same in the
// same order, so their outcomes are copied over a segment at a time; the changed and visited
// jobs' are worked out anew. ok is false when there is nothing to take over.
func (s *Session) keptOutcomes(all []*api.JobInfo) (out []JobOutcome, ok bool) {
	v := s.views
	if v == nil || !s.visitedKnown || v.changes.All {
		return nil, false
	}
	a := &v.activity
	old := a.outcomes
	if a.outcomesEpoch == 0 || a.outcomesEpoch+1 != v.epoch {
		return nil, false // none, or not the last refresh's session's
	}
	if len(v.changes.Jobs) == 0 && len(s.visited) == 0 && len(old) == len(all) {
		return old, true
	}
	out = make([]JobOutcome, len(all))
	oi, ni := 0, 0
	for _, key := range v.changes.Jobs {
		op := oi + sort.Search(len(old)-oi, func(k int) bool { return old[oi+k].Job >= key })
		np := ni + sort.Search(len(all)-ni, func(k int) bool { return all[ni+k].UID >= key })
		if op-oi != np-ni {
			return nil, false // cannot happen: the unchanged jobs are the same
		}
		copy(out[ni:np], old[oi:op])
		oi, ni = op, np
		if oi < len(old) && old[oi].Job == key {
			oi++ // rebuilt or deleted
		}
		if ni < len(all) && all[ni].UID == key {
			out[ni] = s.outcome(all[ni]) // rebuilt or added
			ni++
		}
	}
	if len(old)-oi != len(all)-ni {
		return nil, false
	}
	copy(out[ni:], old[oi:])
	for _, i := range s.visited {
		out[i] = s.outcome(all[i])
	}
	return out, true
}

// Package gangreclaim is Volcano's gangreclaim action: a starving job of a queue that is not
// overused takes room back from other, reclaimable queues for all its pending tasks at once,
// evicting whole victim bundles (safe surplus tasks first, then, if allowed, tasks whose gang
// it breaks) in one hypernode domain, and pipelines its tasks onto the room they free. See
// package gangevict for the search.
package gangreclaim

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/actions/gangevict"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "gangreclaim"

// New builds the action from its `configurations` arguments: maxDomains (default 8) and
// allowWholeBundle (default true).
var New = gangevict.Builder(policy)

// policy: overused queues do not reclaim, and a queue reclaims only if the preemptive
// callbacks accept all the job's pending tasks; victims are running tasks of other,
// reclaimable queues; bundles go in victim queue order; the gang-aware victim callbacks vet
// them as a gang reclaim.
var policy = gangevict.Policy{
	Action:       Name,
	Kind:         framework.EvictionKindGangReclaim,
	SkipOverused: true,
	Admit: func(ssn *framework.Session, q *api.QueueInfo, standIn *api.TaskInfo) bool {
		return ssn.Preemptive(q, standIn)
	},
	Candidate: func(ssn *framework.Session, job, victim *api.JobInfo, t *api.TaskInfo) bool {
		if t.Status != api.Running || victim.Queue == job.Queue {
			return false
		}
		q := ssn.Queues[victim.Queue]
		return q != nil && q.Reclaimable()
	},
	Sort: func(ssn *framework.Session, job *api.JobInfo, bundles []*gangevict.Bundle, need *api.Resource) {
		own := ssn.Queues[job.Queue]
		gangevict.SortBundles(bundles, need, func(l, r *api.JobInfo) bool {
			lq, rq := ssn.Queues[l.Queue], ssn.Queues[r.Queue]
			if own == nil || lq == nil || rq == nil || lq == rq {
				// Bundles of one queue are ordered by what they free, not by job.
				return false
			}
			return ssn.VictimQueueOrderFn(lq, rq, own)
		})
	},
	Rule: func(_ *framework.Session, job, victim *api.JobInfo) string {
		return fmt.Sprintf("queue %s reclaims from queue %s", job.Queue, victim.Queue)
	},
}

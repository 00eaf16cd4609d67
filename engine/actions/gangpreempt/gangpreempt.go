// Package gangpreempt is Volcano's gangpreempt action: a starving job takes room from
// lower-priority jobs of its own queue for all its pending tasks at once, evicting whole
// victim bundles (safe surplus tasks first, then, if allowed, tasks whose gang it breaks) in
// one hypernode domain, and pipelines its tasks onto the room they free. See package
// gangevict for the search.
package gangpreempt

import (
	"fmt"

	"github.com/sluice-sched/sluice/engine/actions/gangevict"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "gangpreempt"

// New builds the action from its `configurations` arguments: maxDomains (default 8) and
// allowWholeBundle (default true).
var New = gangevict.Builder(policy)

// policy: victims are bound or running tasks of other, lower-priority jobs of the preemptor's
// queue; bundles go least important victim job first; the gang-aware victim callbacks vet
// them as a gang preemption.
var policy = gangevict.Policy{
	Action: Name,
	Kind:   framework.EvictionKindGangPreempt,
	Candidate: func(_ *framework.Session, job, victim *api.JobInfo, t *api.TaskInfo) bool {
		if t.Status != api.Running && t.Status != api.Bound {
			return false
		}
		return victim.UID != job.UID && victim.Queue == job.Queue && victim.Priority < job.Priority
	},
	Sort: func(ssn *framework.Session, _ *api.JobInfo, bundles []*gangevict.Bundle, need *api.Resource) {
		gangevict.SortBundles(bundles, need, func(l, r *api.JobInfo) bool { return !ssn.JobOrderFn(l, r) })
	},
	Rule: func(_ *framework.Session, job, victim *api.JobInfo) string {
		return fmt.Sprintf("job priority %d > %d in queue %s", job.Priority, victim.Priority, job.Queue)
	},
}

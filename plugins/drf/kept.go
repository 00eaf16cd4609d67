package drf

import (
	"maps"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// keptKey names drf's state kept between cycles (framework.KeptState).
const keptKey = "drf.jobs"

// kept is what drf keeps for a cluster between cycles (without the hierarchy): every job's
// attr as a session derives it at open, and the total its shares were worked out with. A
// job's attr depends only on its own view and the total, so a cycle re-derives the jobs whose
// views changed, and every share when the total changed.
type kept struct {
	jobs  map[string]*attr
	total *api.Resource
}

// openKept brings the kept attrs up to date for the session and returns them.
func (p *plugin) openKept(ssn *framework.Session) map[string]*attr {
	k, ch := framework.KeptState[kept](ssn, keptKey)
	if ch.All || k.jobs == nil {
		k.jobs = make(map[string]*attr, len(ssn.Jobs))
		for _, j := range ssn.SortedJobs() {
			k.jobs[j.UID] = p.jobAttr(j)
		}
		k.total = p.total.Clone()
		return k.jobs
	}
	if !sameAmounts(k.total, p.total) {
		for _, a := range k.jobs {
			p.update(a) // between sessions: no session holds them
		}
		k.total = p.total.Clone()
	}
	for _, key := range ch.Jobs {
		if j := ssn.Jobs[key]; j != nil {
			k.jobs[key] = p.jobAttr(j)
		} else {
			delete(k.jobs, key)
		}
	}
	return k.jobs
}

// sameAmounts reports whether two resources hold the same amounts, bit for bit.
func sameAmounts(a, b *api.Resource) bool {
	return a.MilliCPU == b.MilliCPU && a.Memory == b.Memory && a.MaxTaskNum == b.MaxTaskNum &&
		maps.Equal(a.Scalars, b.Scalars) && (a.Scalars == nil) == (b.Scalars == nil)
}

package overcommit

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// keptKey names overcommit's state kept between cycles (framework.KeptState).
const keptKey = "overcommit.sums"

// kept is what overcommit keeps for a cluster between cycles: each node's used amount and
// each job's part of the inqueue sum, and both sums, so that a cycle re-derives only the nodes
// and jobs whose views changed. As proportion's, the kept sums are used only while exact
// (resutil.ExactBound): every amount an integer, the magnitudes of all under 2^53, so that
// they are a fresh sum's bit for bit whatever the order; otherwise each cycle sums afresh.
type kept struct {
	used    map[string]*api.Resource
	inqueue map[string]*api.Resource
	usedSum resutil.ExactSum
	inqSum  resutil.ExactSum
	// abs sums the magnitudes of every amount added into the sums.
	abs     float64
	inexact bool
}

// inqueuePart is what a job adds to the inqueue sum at open, nil for nothing: its minResources
// when enqueued, what they still reserve when running with minAvailable tasks holding room.
func inqueuePart(j *api.JobInfo) *api.Resource {
	min := resutil.JobMinResources(j)
	switch {
	case min == nil:
		return nil
	case j.Phase == api.JobInqueue:
		return min.Clone()
	case j.Phase == api.JobRunning && resutil.AllocatedTaskNum(j) >= j.MinAvailable:
		return resutil.InqueueResource(min, j.Allocated)
	}
	return nil
}

// put adds (sign 1) or takes off (sign -1) an amount of sums kept by key in m.
func (k *kept) put(m map[string]*api.Resource, sum *resutil.ExactSum, key string, r *api.Resource, sign float64) {
	if r == nil {
		return
	}
	sum.Add(r, sign)
	mag, exact := resutil.Magnitude(r)
	k.abs += sign * mag
	if !exact {
		k.inexact = true
	}
	if sign > 0 {
		m[key] = r
	} else {
		delete(m, key)
	}
}

// reset empties the state.
func (k *kept) reset() {
	*k = kept{used: map[string]*api.Resource{}, inqueue: map[string]*api.Resource{}}
}

// openKept returns the sum of the nodes' used amounts and the inqueue sum at open: from the
// kept sums brought up to date for the session's changes, or summed afresh (in node and job
// order, the reference) when the state is new or inexact.
func openKept(ssn *framework.Session) (used, inqueue *api.Resource) {
	k, ch := framework.KeptState[kept](ssn, keptKey)
	if ch.All || k.inexact || k.used == nil {
		return openFresh(ssn, k)
	}
	for _, name := range ch.Nodes {
		k.put(k.used, &k.usedSum, name, k.used[name], -1)
		if n := ssn.Nodes[name]; n != nil {
			k.put(k.used, &k.usedSum, name, n.Used.Clone(), 1)
		}
	}
	for _, key := range ch.Jobs {
		k.put(k.inqueue, &k.inqSum, key, k.inqueue[key], -1)
		if j := ssn.Jobs[key]; j != nil {
			k.put(k.inqueue, &k.inqSum, key, inqueuePart(j), 1)
		}
	}
	if k.inexact || k.abs >= resutil.ExactBound {
		return openFresh(ssn, k)
	}
	return k.usedSum.Resource(), k.inqSum.Resource()
}

// openFresh sums afresh, in the order of a fresh build (the reference), and fills k.
func openFresh(ssn *framework.Session, k *kept) (used, inqueue *api.Resource) {
	k.reset()
	used, inqueue = api.EmptyResource(), api.EmptyResource()
	for _, n := range ssn.NodeList {
		used.Add(n.Used)
		k.put(k.used, &k.usedSum, n.Name, n.Used.Clone(), 1)
	}
	for _, j := range ssn.SortedJobs() {
		if part := inqueuePart(j); part != nil {
			inqueue.Add(part)
			k.put(k.inqueue, &k.inqSum, j.UID, part, 1)
		}
	}
	if k.abs >= resutil.ExactBound {
		k.inexact = true
	}
	return used, inqueue
}

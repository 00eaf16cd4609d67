package proportion

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
)

// keptKey names proportion's state kept between cycles (framework.KeptState).
const keptKey = "proportion.sums"

// kept is what proportion keeps for a cluster between cycles: each job's part of its queue's
// sums and the sums by queue, so that a cycle re-derives only the jobs whose views changed.
//
// A fresh build adds amounts task by task, job by job in UID order, and float addition
// depends on order. Kept sums are added and taken off in another order, so they are used
// only while every amount they sum is an integer and the magnitudes of all of them add up to
// less than 2^53: then every partial sum is exact, whatever the order, and the kept sums are
// a fresh build's bit for bit. Otherwise (inexact) every cycle sums afresh, in the fresh
// build's order.
type kept struct {
	jobs   map[string]*jobPart
	queues map[string]*queueSums
	// abs sums the magnitudes of every amount added into the sums (an integer while exact).
	abs     float64
	inexact bool
}

// jobPart is one job's part of its queue's sums.
type jobPart struct {
	queue                                string
	allocated, request, inqueue, elastic *api.Resource
	// abs sums the magnitudes of the amounts the part adds, one by one as a fresh build does.
	abs float64
}

// queueSums are the sums of a queue's job parts.
type queueSums struct {
	jobs                                 int
	allocated, request, inqueue, elastic resutil.ExactSum
}

// partOf derives a job's part. ok is false when an amount is not an integer.
func partOf(j *api.JobInfo) (part *jobPart, ok bool) {
	part = &jobPart{queue: j.Queue, allocated: api.EmptyResource(), request: api.EmptyResource(), inqueue: api.EmptyResource()}
	ok = true
	addTo := func(dst, r *api.Resource, times float64) {
		dst.Add(r)
		m, exact := resutil.Magnitude(r)
		part.abs += times * m
		ok = ok && exact
	}
	for _, t := range j.SortedTasks() {
		switch {
		case api.AllocatedStatus(t.Status):
			addTo(part.allocated, t.Resreq, 2) // in allocated and in request
			part.request.Add(t.Resreq)
		case t.Status == api.Pending:
			addTo(part.request, t.Resreq, 1)
		}
	}
	min := resutil.JobMinResources(j)
	if j.Phase == api.JobInqueue && min != nil {
		addTo(part.inqueue, min, 1)
	}
	if j.Phase == api.JobRunning && min != nil && resutil.AllocatedTaskNum(j) >= j.MinAvailable {
		addTo(part.inqueue, resutil.InqueueResource(min, j.Allocated), 1)
	}
	if min == nil {
		min = api.EmptyResource()
	}
	part.elastic = j.Allocated.ExceededPart(min)
	m, exact := resutil.Magnitude(part.elastic)
	part.abs += m
	ok = ok && exact
	return part, ok
}

func (k *kept) addPart(key string, part *jobPart, sign float64) {
	q := k.queues[part.queue]
	if q == nil {
		q = &queueSums{}
		k.queues[part.queue] = q
	}
	q.jobs += int(sign)
	q.allocated.Add(part.allocated, sign)
	q.request.Add(part.request, sign)
	q.inqueue.Add(part.inqueue, sign)
	q.elastic.Add(part.elastic, sign)
	k.abs += sign * part.abs
	if q.jobs == 0 {
		delete(k.queues, part.queue)
	}
	if sign > 0 {
		k.jobs[key] = part
	} else {
		delete(k.jobs, key)
	}
}

// reset empties the state.
func (k *kept) reset() {
	k.jobs, k.queues, k.abs, k.inexact = map[string]*jobPart{}, map[string]*queueSums{}, 0, false
}

// openKept fills the plugin's queue attributes from the kept sums brought up to date for the
// session's changes, or sums afresh when the state is new or inexact. It returns whether the
// kept sums were used.
func (p *plugin) openKept(ssn *framework.Session) bool {
	k, ch := framework.KeptState[kept](ssn, keptKey)
	if ch.All || k.inexact || k.jobs == nil {
		p.openFresh(ssn, k)
		return false
	}
	for _, key := range ch.Jobs {
		if old := k.jobs[key]; old != nil {
			k.addPart(key, old, -1)
		}
		if j := ssn.Jobs[key]; j != nil {
			part, ok := partOf(j)
			k.addPart(key, part, 1)
			if !ok {
				k.inexact = true
			}
		}
	}
	if k.inexact || k.abs >= resutil.ExactBound {
		k.reset()
		p.openFresh(ssn, k)
		return false
	}
	for name, sums := range k.queues {
		q := ssn.Queues[name]
		if q == nil {
			continue
		}
		attr := p.newQueueAttr(q)
		attr.allocated = sums.allocated.Resource()
		attr.request = sums.request.Resource()
		attr.inqueue = sums.inqueue.Resource()
		attr.elastic = sums.elastic.Resource()
		p.queues[name] = attr
		p.names = append(p.names, name)
	}
	return true
}

// openFresh sums every job's tasks in the fresh build's order (the reference) and fills k
// with every job's part.
func (p *plugin) openFresh(ssn *framework.Session, k *kept) {
	k.reset()
	for _, j := range ssn.SortedJobs() {
		part, ok := partOf(j)
		k.addPart(j.UID, part, 1)
		if !ok {
			k.inexact = true
		}
		q := ssn.Queues[j.Queue]
		if q == nil {
			continue
		}
		attr := p.queues[q.Name]
		if attr == nil {
			attr = p.newQueueAttr(q)
			p.queues[q.Name] = attr
			p.names = append(p.names, q.Name)
		}
		attr.addJob(j)
	}
	if k.abs >= resutil.ExactBound {
		k.inexact = true
	}
}

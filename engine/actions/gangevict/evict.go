package gangevict

import (
	"fmt"
	"sort"
	"strconv"

	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// PreemptableKey is the job annotation (or label) that, when present, decides whether a job's
// tasks may be victims of gang-aware eviction; without it they may.
const PreemptableKey = "volcano.sh/preemptable"

// Policy is what sets one gang-aware eviction action apart.
type Policy struct {
	// Action names the action in eviction reasons.
	Action string
	// SkipOverused skips queues the plugins find overused (reclaim).
	SkipOverused bool
	// Kind tells the gang-aware victim callbacks (Session.UnifiedEvictable) which eviction
	// asks them.
	Kind framework.EvictionKind
	// Admit, if set, decides whether the queue may evict for the job at all; standIn asks for
	// all the job's pending tasks (reclaim asks the preemptive callbacks).
	Admit func(ssn *framework.Session, queue *api.QueueInfo, standIn *api.TaskInfo) bool
	// Candidate reports whether a task of victim (found on a node of the domain) may be a
	// victim for job.
	Candidate func(ssn *framework.Session, job, victim *api.JobInfo, t *api.TaskInfo) bool
	// Sort orders the bundles, least costly first.
	Sort func(ssn *framework.Session, job *api.JobInfo, bundles []*Bundle, need *api.Resource)
	// Rule says in words why the job may evict the victim.
	Rule func(ssn *framework.Session, job, victim *api.JobInfo) string
}

// Execute runs a gang-aware eviction action: queue by queue in queue order, every starving job
// of the queue in job order gets one attempt, through a statement committed when the job is
// then pipelined and discarded otherwise.
func Execute(ssn *framework.Session, p Policy, o Options) {
	queues, starving := starvingJobs(ssn)
	for _, q := range queues {
		if p.SkipOverused && ssn.Overused(q) {
			continue
		}
		for _, job := range starving[q.Name] {
			stmt := ssn.NewStatement()
			tried := evictFor(ssn, p, o, stmt, q, job)
			if ssn.JobPipelined(job) {
				stmt.Commit()
				continue
			}
			stmt.Discard()
			if tried {
				noteFailure(p.Action, job)
			}
		}
	}
}

// starvingJobs returns, in queue order, the queues of the jobs that are neither pending nor
// invalid, and per queue its starving jobs in job order. Both orders are taken
// before any eviction (Volcano's heaps see the changes of earlier attempts only in part).
func starvingJobs(ssn *framework.Session) ([]*api.QueueInfo, map[string][]*api.JobInfo) {
	var queues []*api.QueueInfo
	starving := map[string][]*api.JobInfo{}
	for _, job := range ssn.SortedJobs() {
		q := ssn.Queues[job.Queue]
		if q == nil || job.IsPending() || ssn.JobValid(job) != nil {
			continue
		}
		if _, seen := starving[q.Name]; !seen {
			queues = append(queues, q)
			starving[q.Name] = nil
		}
		if ssn.JobStarving(job) {
			starving[q.Name] = append(starving[q.Name], job)
		}
	}
	sort.SliceStable(queues, func(i, j int) bool { return ssn.QueueOrderFn(queues[i], queues[j]) })
	for _, jobs := range starving {
		sort.SliceStable(jobs, func(i, j int) bool { return ssn.JobOrderFn(jobs[i], jobs[j]) })
	}
	return queues, starving
}

// evictFor tries the job's domains in order and keeps the first attempt that leaves the job
// pipelined, replaying it on stmt. It reports whether the job had pending tasks to try for.
func evictFor(ssn *framework.Session, p Policy, o Options, stmt *framework.Statement, q *api.QueueInfo, job *api.JobInfo) bool {
	tasks := PendingTasks(ssn, job)
	if len(tasks) == 0 {
		return false
	}
	need := sum(tasks, func(t *api.TaskInfo) *api.Resource { return t.InitResreq })
	// The stand-in is the job's first pending task asking for all its pending tasks: the
	// preemptive callbacks take one task, where Volcano's take the job's pending tasks. It is
	// also the task evictions are made for.
	standIn := tasks[0].Clone()
	standIn.Resreq, standIn.InitResreq = need.Clone(), need.Clone()
	if p.Admit != nil && !p.Admit(ssn, q, standIn) {
		return true
	}
	hard, highest := job.IsHardTopologyMode()
	for _, d := range Domains(ssn, job, o.MaxDomains) {
		if len(d.Nodes) == 0 {
			continue
		}
		bundles := selectBundles(ssn, p, o, job, need, d)
		if len(bundles) == 0 {
			continue
		}
		trials := []Domain{d}
		if hard && d.HyperNode != "" {
			trials = Gradient(ssn, job, d.HyperNode, highest)
		}
		kinds := map[string]BundleKind{}
		free := sum(d.Nodes, func(n *api.NodeInfo) *api.Resource { return n.Idle.Clone().Add(n.Releasing) })
		var victims []*api.TaskInfo
		for _, b := range bundles {
			for _, t := range b.Tasks {
				kinds[t.UID] = b.Kind
			}
			victims = append(victims, b.Tasks...)
			free.Add(b.Local)
			if !need.LessEqual(free, api.Zero) {
				continue
			}
			reason := func(v *api.TaskInfo) framework.EvictReason {
				return framework.EvictReason{Action: p.Action, ForTask: standIn.UID,
					Rule: fmt.Sprintf("%s (%s bundle)", p.Rule(ssn, job, ssn.Jobs[v.Job]), kinds[v.UID])}
			}
			saved, ok := Plan(ssn, q, job, tasks, trials, victims, reason)
			if !ok {
				continue
			}
			replay := ssn.NewStatement()
			if err := replay.Recover(saved); err != nil {
				ssn.Log.Error("gang eviction: replaying the dry run failed", "job", job.UID, "err", err)
				replay.Discard()
				continue
			}
			stmt.Merge(replay)
			return true
		}
	}
	return true
}

// selectBundles gathers the victim candidates on the domain's nodes into bundles, lets the
// gang-aware victim callbacks vet them in bundle order and returns the usable bundles in order.
func selectBundles(ssn *framework.Session, p Policy, o Options, job *api.JobInfo, need *api.Resource, d Domain) []*Bundle {
	byJob := map[string][]*api.TaskInfo{}
	var victimJobs []*api.JobInfo
	for _, n := range d.Nodes {
		for _, t := range util.NodeTasks(n, func(t *api.TaskInfo) bool { return t.Preemptable }) {
			vj := ssn.Jobs[t.Job]
			if vj == nil || !jobEvictable(vj) || !p.Candidate(ssn, job, vj, t) {
				continue
			}
			jt := util.JobTask(ssn, t)
			if jt == nil {
				continue
			}
			if byJob[vj.UID] == nil {
				victimJobs = append(victimJobs, vj)
			}
			byJob[vj.UID] = append(byJob[vj.UID], jt)
		}
	}
	var bundles []*Bundle
	for _, vj := range victimJobs {
		bundles = append(bundles, Bundles(vj, byJob[vj.UID])...)
	}
	if len(bundles) == 0 {
		return nil
	}
	p.Sort(ssn, job, bundles, need)
	ctx := &framework.EvictionContext{Kind: p.Kind, Job: job, HyperNode: d.HyperNode}
	allowed := ssn.UnifiedEvictable(ctx, Flatten(bundles))
	if len(allowed) == 0 {
		return nil
	}
	valid := KeepAllowed(bundles, allowed)
	p.Sort(ssn, job, valid, need)
	out := valid[:0]
	for _, b := range valid {
		if b.Kind == Whole && !o.AllowWholeBundle {
			continue
		}
		out = append(out, b)
	}
	return out
}

// jobEvictable reads the job's volcano.sh/preemptable annotation, else its label: a job with
// neither may lose tasks to gang-aware eviction; one with either only if the value is true.
func jobEvictable(j *api.JobInfo) bool {
	if j.Spec == nil {
		return true
	}
	for _, m := range []map[string]string{j.Spec.Annotations, j.Spec.Labels} {
		if v, ok := m[PreemptableKey]; ok {
			b, err := strconv.ParseBool(v)
			return err == nil && b
		}
	}
	return true
}

// noteFailure records why a starving job got no room.
func noteFailure(action string, job *api.JobInfo) {
	msg := action + ": no domain where evicting the allowed victim bundles lets every pending task be pipelined"
	if job.JobFitErrors == "" {
		job.JobFitErrors = msg
	} else {
		job.JobFitErrors += "; " + msg
	}
}

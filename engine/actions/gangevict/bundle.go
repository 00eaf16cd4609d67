package gangevict

import (
	"math"
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
)

// BundleKind says what evicting a bundle costs its gang.
type BundleKind int

// Bundle kinds; safe bundles sort before whole ones.
const (
	// Safe tasks can go without taking their job below minAvailable or a role below its
	// minimum.
	Safe BundleKind = iota
	// Whole tasks would break their gang: evicting them costs the whole job.
	Whole
)

// String returns "safe" or "whole".
func (k BundleKind) String() string {
	if k == Whole {
		return "whole"
	}
	return "safe"
}

// Bundle is a set of victim candidates of one job, on the nodes of one domain.
type Bundle struct {
	Kind  BundleKind
	Job   *api.JobInfo
	Tasks []*api.TaskInfo
	// Local is what the bundle's tasks request; Global is what breaking the gang costs (every
	// task of the job for a whole bundle, nothing for a safe one).
	Local, Global *api.Resource
}

// Bundles splits a job's candidates (its running tasks in a domain) into at most two bundles,
// as Volcano's CreateJobBundles does. Candidates are taken lowest priority first (then by
// name); each is safe while the job keeps more ready tasks than minAvailable and, when the
// job's minimum covers its per-role minimums, its role keeps more ready tasks than the role's
// minimum; the rest are whole. A job already below minAvailable has only a safe bundle.
func Bundles(job *api.JobInfo, candidates []*api.TaskInfo) []*Bundle {
	if job == nil || len(candidates) == 0 {
		return nil
	}
	tasks := append([]*api.TaskInfo(nil), candidates...)
	sort.Slice(tasks, func(i, j int) bool {
		if tasks[i].Priority != tasks[j].Priority {
			return tasks[i].Priority < tasks[j].Priority
		}
		return tasks[i].UID < tasks[j].UID
	})
	surplus := job.ReadyTaskNum() - job.MinAvailable
	if surplus < 0 {
		return []*Bundle{newBundle(Safe, job, tasks)}
	}
	roleSurplus := map[string]int32{}
	if job.MinAvailable >= job.TaskMinAvailableTotal {
		ready := map[string]int32{}
		for _, t := range job.Tasks {
			if api.AllocatedStatus(t.Status) || t.Status == api.Succeeded || (t.Status == api.Pending && t.BestEffort) {
				ready[t.Role]++
			}
		}
		for role, min := range job.TaskMinAvailable {
			roleSurplus[role] = ready[role] - min
		}
	}
	var safe, whole []*api.TaskInfo
	for _, t := range tasks {
		rs, bounded := roleSurplus[t.Role]
		if surplus > 0 && (!bounded || rs > 0) {
			safe = append(safe, t)
			surplus--
			if bounded {
				roleSurplus[t.Role]--
			}
			continue
		}
		whole = append(whole, t)
	}
	var out []*Bundle
	if len(safe) > 0 {
		out = append(out, newBundle(Safe, job, safe))
	}
	if len(whole) > 0 {
		out = append(out, newBundle(Whole, job, whole))
	}
	return out
}

func newBundle(kind BundleKind, job *api.JobInfo, tasks []*api.TaskInfo) *Bundle {
	global := api.EmptyResource()
	if kind == Whole {
		global = job.TotalRequest.Clone()
	}
	return &Bundle{Kind: kind, Job: job, Tasks: tasks, Local: sumResreq(tasks), Global: global}
}

// Flatten returns the bundles' tasks in bundle order.
func Flatten(bundles []*Bundle) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, b := range bundles {
		out = append(out, b.Tasks...)
	}
	return out
}

// KeepAllowed keeps what the callbacks allowed: a whole bundle only if every task of it is
// allowed (a gang is broken entirely or not at all), a safe bundle shrunk to its allowed tasks.
func KeepAllowed(bundles []*Bundle, allowed []*api.TaskInfo) []*Bundle {
	ok := make(map[string]bool, len(allowed))
	for _, t := range allowed {
		ok[t.UID] = true
	}
	var out []*Bundle
	for _, b := range bundles {
		var kept []*api.TaskInfo
		for _, t := range b.Tasks {
			if ok[t.UID] {
				kept = append(kept, t)
			}
		}
		switch {
		case len(kept) == 0:
		case b.Kind == Whole && len(kept) == len(b.Tasks):
			out = append(out, b)
		case b.Kind == Safe:
			nb := *b
			nb.Tasks, nb.Local = kept, sumResreq(kept)
			out = append(out, &nb)
		}
	}
	return out
}

// SortBundles orders bundles as Volcano does: safe before whole; then by first (bundles of
// different jobs that first orders apart, l before r when first(l, r)); then by return on
// investment for need (what the bundle frees towards need over what it costs, highest first;
// safe bundles cost nothing); then by job, first task and size.
func SortBundles(bundles []*Bundle, need *api.Resource, first func(l, r *api.JobInfo) bool) {
	sort.SliceStable(bundles, func(i, j int) bool {
		l, r := bundles[i], bundles[j]
		if l.Kind != r.Kind {
			return l.Kind < r.Kind
		}
		if first != nil && l.Job.UID != r.Job.UID {
			if lr, rl := first(l.Job, r.Job), first(r.Job, l.Job); lr != rl {
				return lr
			}
		}
		if li, ri := roi(l, need), roi(r, need); li != ri {
			return li > ri
		}
		if l.Job.UID != r.Job.UID {
			return l.Job.UID < r.Job.UID
		}
		if l.Tasks[0].UID != r.Tasks[0].UID {
			return l.Tasks[0].UID < r.Tasks[0].UID
		}
		return len(l.Tasks) < len(r.Tasks)
	})
}

// roi is what the bundle frees towards need (each dimension capped at need) over what breaking
// it costs; a bundle that costs nothing has an infinite return.
func roi(b *Bundle, need *api.Resource) float64 {
	cost := score(b.Global, need, false)
	if cost == 0 {
		return math.Inf(1)
	}
	return score(b.Local, need, true) / cost
}

// score sums, over need's dimensions, res's share of need.
func score(res, need *api.Resource, capAtNeed bool) float64 {
	total := 0.0
	for _, name := range need.Names() {
		n := need.Get(name)
		v := res.Get(name)
		if capAtNeed && v > n {
			v = n
		}
		total += v / n
	}
	return total
}

// sum adds up what each item holds.
func sum[T any](items []T, of func(T) *api.Resource) *api.Resource {
	r := api.EmptyResource()
	for _, it := range items {
		r.Add(of(it))
	}
	return r
}

func sumResreq(tasks []*api.TaskInfo) *api.Resource {
	return sum(tasks, func(t *api.TaskInfo) *api.Resource { return t.Resreq })
}

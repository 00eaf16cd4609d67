package resourcequota

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "resourcequota"

// tolerance absorbs float rounding when comparing amounts (milli-units, bytes).
const tolerance = 1e-6

type plugin struct{}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin. It takes no arguments and, like Volcano, ignores any.
func New(conf.Arguments) (framework.Plugin, error) { return &plugin{}, nil }

func (*plugin) Name() string { return Name }

// usage is what a namespace holds or has been promised: resources and a task count.
type usage struct {
	res  *api.Resource
	pods int
}

func newUsage() *usage { return &usage{res: api.EmptyResource()} }

// session is the plugin's state for one cycle.
type session struct {
	quotas map[string][]*api.NamespaceQuota
	// used is what each namespace's tasks on nodes request; pending what enqueued jobs
	// promised this cycle.
	used, pending map[string]*usage
}

func (*plugin) OnSessionOpen(ssn *framework.Session) {
	s := &session{quotas: map[string][]*api.NamespaceQuota{}, used: map[string]*usage{}, pending: map[string]*usage{}}
	for _, q := range ssn.Quotas {
		s.quotas[q.Namespace] = append(s.quotas[q.Namespace], q)
	}
	if len(s.quotas) > 0 {
		for _, j := range ssn.SortedJobs() {
			if _, ok := s.quotas[j.Namespace]; !ok {
				continue
			}
			for _, t := range j.SortedTasks() {
				if api.AllocatedStatus(t.Status) || t.Status == api.Releasing {
					u := s.of(s.used, t.Namespace)
					u.res.Add(t.Resreq)
					u.pods++
				}
			}
		}
	}
	ssn.AddJobEnqueueableFn(Name, s.enqueueable)
	// Pending usage grows only when the job is enqueued, so a job that a later plugin refuses
	// leaves no trace (Volcano #5387).
	ssn.AddJobEnqueuedFn(Name, s.enqueued)
}

func (s *session) enqueued(j *api.JobInfo) {
	want := j.MinResources
	if want == nil || (want.IsEmpty() && want.MaxTaskNum == 0) {
		return
	}
	pending := s.of(s.pending, j.Namespace)
	pending.res.Add(want)
	pending.pods += want.MaxTaskNum
}

func (*plugin) OnSessionClose(*framework.Session) {}

func (s *session) of(m map[string]*usage, ns string) *usage {
	u, ok := m[ns]
	if !ok {
		u = newUsage()
		m[ns] = u
	}
	return u
}

func (s *session) enqueueable(j *api.JobInfo) framework.Vote {
	want := j.MinResources
	if want == nil || (want.IsEmpty() && want.MaxTaskNum == 0) {
		return framework.Permit
	}
	used, pending := s.of(s.used, j.Namespace), s.of(s.pending, j.Namespace)
	for _, q := range s.quotas[j.Namespace] {
		if over := exceeded(&q.Hard, used, pending, want); len(over) > 0 {
			j.JobFitErrors = message(j.Namespace, over, &q.Hard, used, pending, want)
			return framework.Reject
		}
	}
	return framework.Permit
}

// dims lists the dimensions a quota limits and a request names, cpu and memory first, pods
// last.
func dims(hard, want *api.Resource) []string {
	var out []string
	if hard.MilliCPU > 0 && want.MilliCPU > 0 {
		out = append(out, api.ResourceCPU)
	}
	if hard.Memory > 0 && want.Memory > 0 {
		out = append(out, api.ResourceMemory)
	}
	for _, name := range hard.ScalarNames() {
		if _, ok := want.Scalars[name]; ok {
			out = append(out, name)
		}
	}
	if hard.MaxTaskNum > 0 && want.MaxTaskNum > 0 {
		out = append(out, api.ResourcePods)
	}
	return out
}

func amount(u *usage, name string) float64 {
	if name == api.ResourcePods {
		return float64(u.pods)
	}
	return u.res.Get(name)
}

// exceeded returns the dimensions in which used + pending + want would exceed hard.
func exceeded(hard *api.Resource, used, pending *usage, want *api.Resource) []string {
	var over []string
	for _, d := range dims(hard, want) {
		if amount(used, d)+amount(pending, d)+want.Get(d) > hard.Get(d)+tolerance {
			over = append(over, d)
		}
	}
	return over
}

func format(name string, v float64) string {
	switch name {
	case api.ResourceMemory:
		return api.FormatBytes(v)
	case api.ResourcePods:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return api.FormatMilli(v)
}

func list(names []string, get func(string) float64) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + " " + format(n, get(n))
	}
	return strings.Join(parts, ", ")
}

// message is Volcano's rejection message, for the dimensions exceeded, plus what jobs
// enqueued earlier in the cycle promised.
func message(ns string, over []string, hard *api.Resource, used, pending *usage, want *api.Resource) string {
	m := fmt.Sprintf("resource quota of namespace %s insufficient: requested %s, used %s",
		ns, list(over, want.Get), list(over, func(n string) float64 { return amount(used, n) }))
	for _, d := range over {
		if amount(pending, d) > 0 {
			m += ", enqueued this cycle " + list(over, func(n string) float64 { return amount(pending, n) })
			break
		}
	}
	return m + ", limited " + list(over, hard.Get)
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

package overcommit

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "overcommit"

const (
	// FactorArg is the argument holding the default overcommit factor.
	FactorArg = "overcommit-factor"
	// FactorPrefix prefixes the arguments holding one resource's factor.
	FactorPrefix = FactorArg + "."
	// DefaultFactor is the overcommit factor when none is given.
	DefaultFactor = 1.2
)

type plugin struct {
	// factor is the default factor; factors overrides it per resource name.
	factor  float64
	factors map[string]float64

	idle    *api.Resource
	inqueue *api.Resource
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin from its arguments: "overcommit-factor" and
// "overcommit-factor.<resource>", numbers; a factor below 1 means the default (1.2), as in
// Volcano. A value that is not a number is an error. Other arguments are ignored.
func New(args conf.Arguments) (framework.Plugin, error) {
	p := &plugin{factor: DefaultFactor, factors: map[string]float64{}, idle: api.EmptyResource(), inqueue: api.EmptyResource()}
	for _, key := range args.Keys() {
		var target string
		switch {
		case key == FactorArg:
		case strings.HasPrefix(key, FactorPrefix) && len(key) > len(FactorPrefix):
			target = strings.TrimPrefix(key, FactorPrefix)
		default:
			continue
		}
		f, err := args.Float64(key, DefaultFactor)
		if err != nil {
			return nil, err
		}
		if f < 1 {
			// Volcano falls back to the default for a factor below 1, and its tests rely on it.
			f = DefaultFactor
		}
		if target == "" {
			p.factor = f
		} else {
			p.factors[target] = f
		}
	}
	return p, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	used := api.EmptyResource()
	for _, n := range ssn.NodeList {
		used.Add(n.Used)
	}
	p.idle = p.scale(ssn.TotalResource.Clone()).Sub(used)
	for _, j := range ssn.SortedJobs() {
		min := minResources(j)
		if min == nil {
			continue
		}
		switch {
		case j.Phase == api.JobInqueue:
			p.inqueue.Add(min)
		case j.Phase == api.JobRunning && allocatedTaskNum(j) >= j.MinAvailable:
			p.inqueue.Add(runningInqueue(min, j.Allocated))
		}
	}
	ssn.AddJobEnqueueableFn(Name, p.enqueueable)
	ssn.AddJobEnqueuedFn(Name, func(j *api.JobInfo) {
		if min := minResources(j); min != nil {
			p.inqueue.Add(min)
		}
	})
}

func (*plugin) OnSessionClose(*framework.Session) {}

// scale multiplies each dimension of r by its factor, in place.
func (p *plugin) scale(r *api.Resource) *api.Resource {
	r.MilliCPU *= p.factorOf(api.ResourceCPU)
	r.Memory *= p.factorOf(api.ResourceMemory)
	for _, k := range r.ScalarNames() {
		r.Scalars[k] *= p.factorOf(k)
	}
	return r
}

func (p *plugin) factorOf(name string) float64 {
	if f, ok := p.factors[name]; ok {
		return f
	}
	return p.factor
}

func (p *plugin) enqueueable(j *api.JobInfo) framework.Vote {
	min := minResources(j)
	if min == nil {
		return framework.Permit
	}
	need := p.inqueue.Clone().Add(min)
	over := exceededIn(need, p.idle, min)
	if len(over) == 0 {
		return framework.Permit
	}
	if j.JobFitErrors == "" {
		parts := make([]string, 0, len(over))
		for _, n := range over {
			parts = append(parts, fmt.Sprintf("%s %s > idle %s", n, format(n, need.Get(n)), format(n, p.idle.Get(n))))
		}
		j.JobFitErrors = "not enqueued: minResources of enqueued jobs would exceed the cluster's idle resources with overcommit: " + strings.Join(parts, ", ")
	}
	return framework.Reject
}

// minResources is the job's minResources, nil when the job sets none.
func minResources(j *api.JobInfo) *api.Resource {
	m := j.MinResources
	if m == nil || (m.MilliCPU == 0 && m.Memory == 0 && len(m.Scalars) == 0 && m.MaxTaskNum == 0) {
		return nil
	}
	return m
}

func allocatedTaskNum(j *api.JobInfo) int32 {
	n := int32(0)
	for s, idx := range j.TaskStatusIndex {
		if api.AllocatedStatus(s) {
			n += int32(len(idx))
		}
	}
	return n
}

// runningInqueue is Volcano's util.GetInqueueResource: what a running job's minResources still
// reserve beyond what its tasks hold. As in Volcano, a scalar's minimum is taken in whole units
// while allocated scalars are in milli-units; "count/" quotas are skipped.
func runningInqueue(min, allocated *api.Resource) *api.Resource {
	out := api.EmptyResource()
	if v := min.MilliCPU - allocated.MilliCPU; v > 0 {
		out.MilliCPU = v
	}
	if v := min.Memory - allocated.Memory; v > 0 {
		out.Memory = v
	}
	for _, k := range min.ScalarNames() {
		if strings.HasPrefix(k, "count/") {
			continue
		}
		units := math.Ceil(min.Scalars[k] / 1000)
		a, ok := allocated.Scalars[k]
		if !ok {
			out.SetScalar(k, units)
			continue
		}
		if v := units - a; v > 0 {
			out.SetScalar(k, v)
		}
	}
	return out
}

// exceededIn returns the dimensions req asks for (a positive amount) in which l exceeds r
// beyond the tolerance; a scalar r lacks counts as 0. It is empty when Volcano's
// LessEqualWithDimension(l, r, req) holds.
func exceededIn(l, r, req *api.Resource) []string {
	var names []string
	if req.MilliCPU > 0 {
		names = append(names, api.ResourceCPU)
	}
	if req.Memory > 0 {
		names = append(names, api.ResourceMemory)
	}
	for _, k := range req.ScalarNames() {
		if req.Scalars[k] > 0 {
			names = append(names, k)
		}
	}
	var out []string
	for _, n := range names {
		lv, rv := l.Get(n), r.Get(n)
		if !(lv < rv || math.Abs(lv-rv) < api.MinResource) {
			out = append(out, n)
		}
	}
	return out
}

func format(name string, v float64) string {
	if name == api.ResourceMemory {
		return api.FormatBytes(v)
	}
	return api.FormatMilli(v)
}

package overcommit

import (
	"fmt"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/resutil"
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
	used, inqueue := openKept(ssn)
	p.idle = p.scale(ssn.TotalResource.Clone()).Sub(used)
	p.inqueue = inqueue
	ssn.AddJobEnqueueableFn(Name, p.enqueueable)
	ssn.AddJobEnqueuedFn(Name, func(j *api.JobInfo) {
		if min := resutil.JobMinResources(j); min != nil {
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
	min := resutil.JobMinResources(j)
	if min == nil {
		return framework.Permit
	}
	need := p.inqueue.Clone().Add(min)
	over := need.ExceededIn(p.idle, min)
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

func format(name string, v float64) string {
	if name == api.ResourceMemory {
		return api.FormatBytes(v)
	}
	return api.FormatMilli(v)
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

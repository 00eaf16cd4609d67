package resourcestrategyfit

import (
	"sync"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "resource-strategy-fit"

// maxNodeScore is Kubernetes' framework.MaxNodeScore.
const maxNodeScore = 100

type plugin struct {
	settings
	// plans caches, per task UID, what the task requests; a task's request does not change
	// within a session. Guarded by mu so that scoring may run concurrently.
	mu    sync.Mutex
	plans map[string]*plan
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	s, err := parseSettings(args)
	if err != nil {
		return nil, err
	}
	return &plugin{settings: s}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.plans = map[string]*plan{}
	if p.proportional != nil {
		ssn.AddPredicateFn(Name, p.predicate)
	}
	if p.weight > 0 || p.sra.weight > 0 {
		ssn.AddNodeOrderFn(Name, p.nodeOrder)
	}
	// Scores and the proportional check read only the task's requests and the node.
	ssn.AddClassKeyFn(Name, func(*api.TaskInfo) (string, bool) { return "", true })
}

func (p *plugin) OnSessionClose(*framework.Session) { p.plans = nil }

// plan is what a task requests, resolved against the configuration once.
type plan struct {
	// names are the dimensions the task requests (cpu, memory, then scalars by name), with
	// their amounts.
	names  []string
	amount []float64
	// scored indexes names that have a strategy, with it.
	scored []scoredDim
	// scarce: the task requests a proportional resource.
	wantsProportional bool
}

type scoredDim struct {
	i int
	strategy
}

func (p *plugin) planOf(t *api.TaskInfo) *plan {
	p.mu.Lock()
	defer p.mu.Unlock()
	if pl, ok := p.plans[t.UID]; ok {
		return pl
	}
	pl := &plan{names: t.Resreq.Names()}
	for i, n := range pl.names {
		pl.amount = append(pl.amount, t.Resreq.Get(n))
		if st, ok := p.strategies.lookup(n); ok {
			pl.scored = append(pl.scored, scoredDim{i: i, strategy: st})
		}
	}
	if p.proportional != nil {
		for _, r := range p.proportional.resources {
			if t.Resreq.Scalars[r] > 0 {
				pl.wantsProportional = true
			}
		}
	}
	if p.plans != nil {
		p.plans[t.UID] = pl
	}
	return pl
}

func (p *plugin) nodeOrder(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
	pl := p.planOf(task)
	s := 0.0
	if p.weight > 0 {
		s += p.strategyScore(pl, node)
	}
	if p.sra.weight > 0 {
		s += p.sraScore(pl, node)
	}
	return s, nil
}

// strategyScore is Volcano's Score: the weighted mean of the per-resource scores, times 100
// and the plugin weight; 0 when any scored resource would overflow the node.
func (p *plugin) strategyScore(pl *plan, node *api.NodeInfo) float64 {
	score, weights := 0.0, 0
	for _, d := range pl.scored {
		name := pl.names[d.i]
		capacity := node.Allocatable.Get(name)
		if capacity != 0 && d.weight != 0 {
			final := pl.amount[d.i] + node.Used.Get(name)
			if final > capacity {
				return 0
			}
			if d.most {
				score += final * float64(d.weight) / capacity
			} else {
				score += (capacity - final) * float64(d.weight) / capacity
			}
		}
		weights += d.weight
	}
	if weights > 0 {
		score /= float64(weights)
	}
	return score * maxNodeScore * float64(p.weight)
}

// sraScore is Volcano's scarce-resource-avoidance score.
func (p *plugin) sraScore(pl *plan, node *api.NodeInfo) float64 {
	for _, n := range pl.names {
		if node.Allocatable.Get(n) == 0 {
			return 0
		}
	}
	score := 0.0
	for i, r := range p.sra.resources {
		if node.Allocatable.Get(r) > 0 {
			score += float64(p.sra.weights[i])
		}
	}
	if p.sra.weightSum > 0 {
		score = 1 - score/float64(p.sra.weightSum)
	}
	return score * maxNodeScore * float64(p.sra.weight)
}

// predicate is Volcano's proportional check: a task that needs none of the proportional
// resources must leave enough cpu and memory idle for what the node has of them.
func (p *plugin) predicate(task *api.TaskInfo, node *api.NodeInfo) error {
	if p.planOf(task).wantsProportional {
		return nil
	}
	idle, req := node.Idle, task.Resreq
	for i, r := range p.proportional.resources {
		v, ok := idle.Scalars[r]
		if !ok {
			continue
		}
		rt := p.proportional.ratios[i]
		if idle.MilliCPU-req.MilliCPU < v*rt.cpu || idle.Memory-req.Memory < v*rt.memory*1e6 {
			return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, "proportional of resource "+r+" check failed")
		}
	}
	return nil
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

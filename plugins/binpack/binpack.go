package binpack

import (
	"strings"
	"sync/atomic"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "binpack"

// Argument names, as Volcano spells them.
const (
	ArgWeight    = "binpack.weight"
	ArgCPU       = "binpack.cpu"
	ArgMemory    = "binpack.memory"
	ArgResources = "binpack.resources"
)

// maxNodeScore is Kubernetes' framework.MaxNodeScore, which Volcano scales the score by.
const maxNodeScore = 100

// New builds the plugin from its arguments; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	p := &plugin{weights: map[string]int{}}
	var err error
	if p.weight, err = args.Int(ArgWeight, 1); err != nil {
		return nil, err
	}
	list, err := args.String(ArgResources, "")
	if err != nil {
		return nil, err
	}
	for _, r := range strings.Split(list, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		w, err := args.Int(ArgResources+"."+r, 1)
		if err != nil {
			return nil, err
		}
		p.weights[r] = nonNegative(w)
	}
	// cpu and memory take their own arguments, even when binpack.resources names them.
	for _, a := range []struct{ key, name string }{{ArgCPU, api.ResourceCPU}, {ArgMemory, api.ResourceMemory}} {
		w, err := args.Int(a.key, 1)
		if err != nil {
			return nil, err
		}
		p.weights[a.name] = nonNegative(w)
	}
	return p, nil
}

// nonNegative is Volcano's fallback: a negative weight counts as 1.
func nonNegative(w int) int {
	if w < 0 {
		return 1
	}
	return w
}

// plugin is one session's binpack.
type plugin struct {
	weight  int
	weights map[string]int
	// cur caches the terms of the last task scored.
	cur atomic.Pointer[taskTerms]
}

var _ framework.Plugin = (*plugin)(nil)

// term is one requested resource that binpack weighs.
type term struct {
	name    string
	request float64
	weight  int
}

// taskTerms are a request's weighed terms, cpu and memory first, then scalars by name.
type taskTerms struct {
	resreq    *api.Resource
	terms     []term
	weightSum int
}

// Name returns "binpack".
func (p *plugin) Name() string { return Name }

// OnSessionOpen registers the score, unless binpack.weight is 0.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	if p.weight != 0 {
		ssn.AddNodeOrderFn(Name, p.score)
		// The score depends only on the task's request (part of every class) and the node.
		ssn.AddClassKeyFn(Name, func(*api.TaskInfo) (string, bool) { return "", true })
	}
}

// OnSessionClose does nothing.
func (p *plugin) OnSessionClose(*framework.Session) {}

// terms returns the task's weighed requests. They depend only on the request, so the last
// ones computed serve every task with an equal request (the tasks of a job, usually).
func (p *plugin) terms(task *api.TaskInfo) *taskTerms {
	if tt := p.cur.Load(); tt != nil && (tt.resreq == task.Resreq || sameRequest(tt.resreq, task.Resreq)) {
		return tt
	}
	tt := &taskTerms{resreq: task.Resreq}
	for _, name := range task.Resreq.Names() {
		w, ok := p.weights[name]
		if !ok {
			continue
		}
		tt.terms = append(tt.terms, term{name: name, request: task.Resreq.Get(name), weight: w})
		tt.weightSum += w
	}
	p.cur.Store(tt)
	return tt
}

// score is Volcano's BinPackingScore.
func (p *plugin) score(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
	tt := p.terms(task)
	score := 0.0
	for _, t := range tt.terms {
		score += resourceScore(t.request, node.Allocatable.Get(t.name), node.Used.Get(t.name), t.weight)
	}
	if tt.weightSum > 0 {
		score /= float64(tt.weightSum)
	}
	return score * float64(maxNodeScore*p.weight), nil
}

// resourceScore is Volcano's ResourceBinPackingScore.
func resourceScore(request, capacity, used float64, weight int) float64 {
	if capacity == 0 || weight == 0 {
		return 0
	}
	final := request + used
	if final > capacity {
		return 0
	}
	return final * float64(weight) / capacity
}

// sameRequest reports whether two requests are equal in every dimension binpack reads.
func sameRequest(a, b *api.Resource) bool {
	if a.MilliCPU != b.MilliCPU || a.Memory != b.Memory || len(a.Scalars) != len(b.Scalars) {
		return false
	}
	for name, v := range a.Scalars {
		if w, ok := b.Scalars[name]; !ok || w != v {
			return false
		}
	}
	return true
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

// KeptPlacements says that the score depends only on the task's request, the weights and the
// node's sums, so that it may be kept between cycles for unchanged nodes.
func (*plugin) KeptPlacements() {}

var _ framework.KeptPlacements = (*plugin)(nil)

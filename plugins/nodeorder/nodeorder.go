package nodeorder

import (
	"sync/atomic"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/k8sutil"
)

// Name is the plugin's configuration name.
const Name = "nodeorder"

// Argument names, as Volcano spells them.
const (
	ArgLeastRequested    = "leastrequested.weight"
	ArgMostRequested     = "mostrequested.weight"
	ArgBalancedResource  = "balancedresource.weight"
	ArgNodeAffinity      = "nodeaffinity.weight"
	ArgPodAffinity       = "podaffinity.weight"
	ArgTaintToleration   = "tainttoleration.weight"
	ArgImageLocality     = "imagelocality.weight"
	ArgPodTopologySpread = "podtopologyspread.weight"
	ArgSelectorSpread    = "selectorspread.weight"
)

// maxNodeScore is Kubernetes' framework.MaxNodeScore.
const maxNodeScore = 100

type weights struct {
	least, most, balanced, nodeAffinity, podAffinity, taint, image, spread, selectorSpread int64
}

// New builds the plugin from its arguments; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	w := weights{}
	for _, a := range []struct {
		key  string
		dst  *int64
		dflt int
	}{
		{ArgLeastRequested, &w.least, 1},
		{ArgMostRequested, &w.most, 0},
		{ArgBalancedResource, &w.balanced, 1},
		{ArgNodeAffinity, &w.nodeAffinity, 2},
		{ArgPodAffinity, &w.podAffinity, 2},
		{ArgTaintToleration, &w.taint, 3},
		{ArgImageLocality, &w.image, 1},
		{ArgPodTopologySpread, &w.spread, 2},
		{ArgSelectorSpread, &w.selectorSpread, 0},
	} {
		v, err := args.Int(a.key, a.dflt)
		if err != nil {
			return nil, err
		}
		*a.dst = int64(v)
	}
	return &plugin{w: w}, nil
}

// plugin is one session's nodeorder.
type plugin struct {
	// specKeys remembers each task spec's class key.
	specKeys k8sutil.SpecKeys
	w        weights
	ssn      *framework.Session
	view     *k8sutil.View
	// statics holds each task's compiled scoring inputs, by spec; filled at session open and
	// read-only afterwards. cur caches the last one used.
	statics map[*api.Task]*taskStatic
	cur     atomic.Pointer[taskStatic]
	// preferNoSchedule is whether any node has a PreferNoSchedule taint.
	preferNoSchedule bool
	consts           constMaps
}

var _ framework.Plugin = (*plugin)(nil)

// Name returns "nodeorder".
func (p *plugin) Name() string { return Name }

// OnSessionOpen compiles every task's scoring inputs and registers the scores.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.view = k8sutil.NewView(ssn)
	p.statics = map[*api.Task]*taskStatic{}
	for _, j := range ssn.Jobs {
		for _, t := range j.Tasks {
			if t.Spec != nil {
				p.statics[t.Spec] = newTaskStatic(t)
			}
		}
	}
	for _, n := range ssn.NodeList {
		for _, t := range n.Node.Taints {
			if t.Effect == k8sutil.EffectPreferNoSchedule {
				p.preferNoSchedule = true
			}
		}
	}
	ssn.AddNodeOrderFn(Name, p.nodeOrder)
	ssn.AddBatchNodeOrderFn(Name, p.batchNodeOrder)
	ssn.AddClassKeyFn(Name, p.classKey)
}

// classKey declares the task's scores reusable across tasks with the same requests and node
// constraints when the batch scores are the same for every node: no task affinity or spread
// (the task's or placed tasks'), and no PreferNoSchedule taint to normalise.
func (p *plugin) classKey(task *api.TaskInfo) (string, bool) {
	if k8sutil.HasTaskConstraints(task.Spec) || len(p.view.WithAffinity()) > 0 {
		return "", false
	}
	if p.w.taint != 0 && p.preferNoSchedule {
		return "", false
	}
	return p.specKeys.Key(task.Spec), true
}

// OnSessionClose does nothing.
func (p *plugin) OnSessionClose(*framework.Session) {}

// static returns the task's compiled inputs. Safe for concurrent calls.
func (p *plugin) static(task *api.TaskInfo) *taskStatic {
	if s := p.cur.Load(); s != nil && s.spec == task.Spec && s.spec != nil {
		return s
	}
	s, ok := p.statics[task.Spec]
	if !ok {
		s = newTaskStatic(task)
	}
	p.cur.Store(s)
	return s
}

// nodeOrder is the per-node score: resource scores and preferred node affinity.
func (p *plugin) nodeOrder(task *api.TaskInfo, node *api.NodeInfo) (float64, error) {
	st := p.static(task)
	var score int64
	// Image locality would come first; without images it scores 0.
	if p.w.least != 0 || p.w.most != 0 || p.w.balanced != 0 {
		r := p.requested(node, p.w.balanced != 0 && st.gpu != 0)
		if p.w.least != 0 {
			score += leastAllocated(st, node, &r) * p.w.least
		}
		if p.w.most != 0 {
			score += mostAllocated(st, node, &r) * p.w.most
		}
		if p.w.balanced != 0 {
			score += balancedAllocation(st, node, &r) * p.w.balanced
		}
	}
	if p.w.nodeAffinity != 0 {
		score += st.preferred.Score(node.Node) * p.w.nodeAffinity
	}
	return float64(score), nil
}

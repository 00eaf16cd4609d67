package nodeorder

import (
	"sync"
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
	// statics holds the compiled scoring inputs of the session's tasks, by spec, each
	// compiled at its first use (mu guards the map). cur caches the last one used.
	statics map[*api.Task]*taskStatic
	mu      sync.Mutex
	cur     atomic.Pointer[taskStatic]
	// preferNoSchedule is whether any node has a PreferNoSchedule taint, worked out at the
	// first need (preferOnce): a cycle that scores nothing never walks the nodes.
	preferNoSchedule bool
	preferOnce       sync.Once
	consts           constMaps
}

var _ framework.Plugin = (*plugin)(nil)

// Name returns "nodeorder".
func (p *plugin) Name() string { return Name }

// OnSessionOpen registers the scores. Tasks' scoring inputs are compiled when first needed.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.view = k8sutil.SessionView(ssn)
	p.statics = map[*api.Task]*taskStatic{}
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
	if p.w.taint != 0 && p.hasPreferNoSchedule() {
		return "", false
	}
	return p.specKeys.Key(task.Spec), true
}

// hasPreferNoSchedule reports whether any node of the session has a PreferNoSchedule taint.
// Nodes' specs do not change during a session, so the answer is the same at any call. Safe
// for concurrent calls.
func (p *plugin) hasPreferNoSchedule() bool {
	p.preferOnce.Do(func() {
		for _, n := range p.ssn.NodeList {
			for _, t := range n.Node.Taints {
				if t.Effect == k8sutil.EffectPreferNoSchedule {
					p.preferNoSchedule = true
					return
				}
			}
		}
	})
	return p.preferNoSchedule
}

// OnSessionClose does nothing.
func (p *plugin) OnSessionClose(*framework.Session) {}

// static returns the task's compiled inputs. Safe for concurrent calls.
func (p *plugin) static(task *api.TaskInfo) *taskStatic {
	if s := p.cur.Load(); s != nil && s.spec == task.Spec && s.spec != nil {
		return s
	}
	s := p.sessionStatic(task.Spec, task.Job, task.UID)
	if s == nil {
		s = newTaskStatic(task)
	}
	p.cur.Store(s)
	return s
}

// sessionStatic returns the compiled inputs of the session's task with this spec (the task uid
// of job), compiled from that task (not from a stand-in that shares its spec) at the first
// call; nil when the session holds no task with the spec. Safe for concurrent calls.
func (p *plugin) sessionStatic(spec *api.Task, job, uid string) *taskStatic {
	if spec == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s, ok := p.statics[spec]; ok {
		return s
	}
	j := p.ssn.Jobs[job]
	if j == nil {
		return nil
	}
	t := j.Tasks[uid]
	if t == nil || t.Spec != spec {
		return nil
	}
	s := newTaskStatic(t)
	p.statics[spec] = s
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

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

// KeptPlacements says that a classed task's scores depend only on the class key, the weights
// and the node's view (its spec, its sums, the placement view's counts for it), so that they
// may be kept between cycles for unchanged nodes. Whether PreferNoSchedule taints exist, the
// one thing read across nodes, decides whether a task has a class at all.
func (*plugin) KeptPlacements() {}

var _ framework.KeptPlacements = (*plugin)(nil)

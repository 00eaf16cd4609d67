package numaaware

import (
	"fmt"
	"sync"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name, as Volcano spells it.
const Name = "numa-aware"

// ArgWeight multiplies the node score (default 1), as Volcano names it.
const ArgWeight = "weight"

// maxNodeScore is the score of the best node before the weight (Volcano's
// DefaultMaxNodeScore).
const maxNodeScore = 100

// Reasons a node does not fit.
const (
	reasonNoTopology   = "no numa topology"
	reasonNotStatic    = "cpu manager policy is not static"
	reasonNoFreeCPUs   = "no free cpus"
	reasonInsufficient = "insufficient exclusive cpus"
)

// New builds the plugin; a weight that is not an integer is an error.
func New(args conf.Arguments) (framework.Plugin, error) {
	w, err := args.Int(ArgWeight, 1)
	if err != nil {
		return nil, err
	}
	return &plugin{weight: w}, nil
}

// plugin is one session's numa-aware.
type plugin struct {
	weight int
	ssn    *framework.Session
	// nodes holds the state of every node with a NUMA topology, by name.
	nodes map[string]*nodeState
	// held is what each task placed on a node holds (accounted at open or allocated in this
	// session), by task UID.
	held map[string]holding

	mu sync.Mutex
	// memo remembers assignments by task and node, for the node's generation.
	memo map[memoKey]memoEntry
}

var _ framework.Plugin = (*plugin)(nil)

// nodeState is a node's topology and its CPUs free for exclusive assignment.
type nodeState struct {
	name string
	spec *api.NumaTopology
	topo *topology
	free cpuSet
	// gen changes whenever free does.
	gen uint64
	// holders are the tasks the node's topology reports holding CPUs.
	holders map[string]bool
}

func newNodeState(name string, spec *api.NumaTopology) *nodeState {
	ns := &nodeState{name: name, spec: spec, topo: newTopology(spec), holders: map[string]bool{}}
	for _, cell := range spec.Cells {
		for _, c := range cell.CPUs {
			if c.Holder == "" {
				ns.free = ns.free.with(c.ID)
			} else {
				ns.holders[c.Holder] = true
			}
		}
	}
	return ns
}

func (ns *nodeState) take(s cpuSet) { ns.free, ns.gen = ns.free.minus(s), ns.gen+1 }
func (ns *nodeState) give(s cpuSet) { ns.free, ns.gen = ns.free.union(s), ns.gen+1 }

// holding is the CPUs a task holds on a node.
type holding struct {
	node string
	cpus cpuSet
}

type memoKey struct{ task, node string }

type memoEntry struct {
	gen  uint64
	cpus cpuSet
	err  error
}

// needs is what a task asks of the plugin.
type needs struct {
	// guaranteed: the task is in the Guaranteed QoS class; others are not the plugin's.
	guaranteed bool
	// policy is the topology policy the task needs its node to have; "" for none.
	policy string
	// cpus is the number of whole CPUs requested; 0 when the request is not whole.
	cpus int
}

// Name returns "numa-aware".
func (p *plugin) Name() string { return Name }

// OnSessionOpen indexes the nodes' topologies, accounts the CPUs of tasks already placed and
// registers the callbacks. With its predicate disabled the plugin does nothing, as in Volcano,
// where only the predicate records the assignments that events and scores use.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	if !predicateEnabled(ssn.Tiers) {
		return
	}
	p.ssn = ssn
	p.nodes = map[string]*nodeState{}
	p.held = map[string]holding{}
	p.memo = map[memoKey]memoEntry{}
	for _, n := range ssn.NodeList {
		if n.Node.NumaTopology != nil {
			p.nodes[n.Name] = newNodeState(n.Name, n.Node.NumaTopology)
		}
	}
	p.accountPlaced()
	ssn.AddPredicateFn(Name, p.predicate)
	ssn.AddBatchNodeOrderFn(Name, p.score)
	ssn.AddClassKeyFn(Name, p.classKey)
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: p.allocated, DeallocateFunc: p.deallocated})
}

// predicateEnabled reports whether the configuration enables the plugin's predicate.
func predicateEnabled(tiers []conf.Tier) bool {
	for _, t := range tiers {
		for _, o := range t.Plugins {
			if o.Name == Name && o.Enabled(conf.FlagPredicate) {
				return true
			}
		}
	}
	return false
}

// OnSessionClose does nothing: the next session derives what tasks hold from the snapshot.
func (p *plugin) OnSessionClose(*framework.Session) {}

// needsOf reads what a task asks: its QoS class, its policy (the task's annotation, else its
// job's) and its whole CPUs.
func (p *plugin) needsOf(t *api.TaskInfo) needs {
	var n needs
	if t.Spec == nil || !t.Spec.Guaranteed {
		return n
	}
	n.guaranteed = true
	policy, ok := t.Spec.Annotations[api.NumaPolicyAnnotation]
	if j := p.ssn.Jobs[t.Job]; !ok && j != nil && j.Spec != nil {
		policy = j.Spec.Annotations[api.NumaPolicyAnnotation]
	}
	if policy != api.TopologyPolicyNone {
		n.policy = policy
	}
	if m := int64(t.Resreq.MilliCPU); m > 0 && m%1000 == 0 {
		n.cpus = int(m / 1000)
	}
	return n
}

// engaged says whether the plugin chooses the task's CPUs on the node (Volcano's
// filterNodeByPolicy). A task with a policy needs a node with a topology, a static CPU
// manager, the same policy and some free CPU, and fails the node otherwise; a task without
// one is the plugin's only on a node with a static CPU manager and a policy other than none.
func engaged(n needs, ns *nodeState, node string) (bool, error) {
	if n.policy == "" {
		return ns != nil && ns.spec.CPUManagerPolicy == api.CPUManagerPolicyStatic &&
			ns.spec.TopologyManagerPolicy != api.TopologyPolicyNone, nil
	}
	var reason string
	switch {
	case ns == nil:
		reason = reasonNoTopology
	case ns.spec.CPUManagerPolicy != api.CPUManagerPolicyStatic:
		reason = reasonNotStatic
	case n.policy != ns.spec.TopologyManagerPolicy:
		reason = fmt.Sprintf("numa policy %s differs from the node's %s", n.policy, ns.spec.TopologyManagerPolicy)
	case ns.free.empty():
		reason = reasonNoFreeCPUs
	default:
		return true, nil
	}
	return false, api.NewFitError(node, api.Unschedulable, reason)
}

// bestHint returns the node policy's choice for n's CPUs among the node's free CPUs, and
// whether the policy admits it.
func bestHint(n needs, ns *nodeState) (hint, bool, cpuSet) {
	avail := ns.free.minus(ns.topo.reserved)
	pol, ok := policies[ns.spec.TopologyManagerPolicy]
	if !ok {
		pol = policies[api.TopologyPolicyNone]
	}
	best, admit := pol(ns.topo.numa, [][]hint{cpuHints(ns.topo, avail, n.cpus)})
	return best, admit, avail
}

// allocate chooses n's CPUs as the CPU manager does for the best hint: as many as it needs
// from the hint's NUMA nodes, the rest from anywhere. ok is false when too few are free.
func allocate(n needs, ns *nodeState, best hint, avail cpuSet) (cpuSet, bool) {
	var result cpuSet
	if best.mask != 0 {
		aligned := avail.intersect(ns.topo.inNuma(best.mask))
		r, ok := ns.topo.take(aligned, min(n.cpus, aligned.size()))
		if !ok {
			return cpuSet{}, false
		}
		result = r
	}
	rest, ok := ns.topo.take(avail.minus(result), n.cpus-result.size())
	if !ok {
		return cpuSet{}, false
	}
	return result.union(rest), true
}

// assign returns the CPUs the task would get on an engaged node, or why the node does not
// admit it. Answers are remembered until the node's free CPUs change.
func (p *plugin) assign(t *api.TaskInfo, n needs, ns *nodeState) (cpuSet, error) {
	k := memoKey{t.UID, ns.name}
	p.mu.Lock()
	e, ok := p.memo[k]
	p.mu.Unlock()
	if ok && e.gen == ns.gen {
		return e.cpus, e.err
	}
	e = memoEntry{gen: ns.gen}
	best, admit, avail := bestHint(n, ns)
	switch cpus, ok := allocate(n, ns, best, avail); {
	case !admit:
		e.err = api.NewFitError(ns.name, api.UnschedulableAndUnresolvable,
			fmt.Sprintf("no cpu alignment for numa policy %s", ns.spec.TopologyManagerPolicy))
	case !ok:
		// Volcano admits the task and assigns nothing; the node's CPU manager would refuse it.
		e.err = api.NewFitError(ns.name, api.Unschedulable, reasonInsufficient)
	default:
		e.cpus = cpus
	}
	p.mu.Lock()
	p.memo[k] = e
	p.mu.Unlock()
	return e.cpus, e.err
}

// predicate fails a node that cannot give a guaranteed task its CPUs as the task's and the
// node's policies want.
func (p *plugin) predicate(t *api.TaskInfo, node *api.NodeInfo) error {
	n := p.needsOf(t)
	if !n.guaranteed {
		return nil
	}
	ns := p.nodes[node.Name]
	if ok, err := engaged(n, ns, node.Name); !ok {
		return err
	}
	_, err := p.assign(t, n, ns)
	return err
}

// score ranks nodes for a guaranteed task with a policy by how few NUMA nodes its CPUs would
// span there, with Volcano's reversed NormalizeScore: maxNodeScore * (1 - count/most) in
// integer arithmetic, most being the largest count among the candidates (so the most spread
// candidates score 0), or maxNodeScore everywhere when most is 0; times the weight. A node
// that would not admit the task counts as spanning none, as in Volcano; when no node admits
// it nothing is scored.
func (p *plugin) score(t *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error) {
	n := p.needsOf(t)
	if !n.guaranteed || n.policy == "" {
		return nil, nil
	}
	counts := make([]int, len(nodes))
	most, admitted := 0, false
	for i, node := range nodes {
		ns := p.nodes[node.Name]
		if ok, _ := engaged(n, ns, node.Name); !ok {
			continue
		}
		cpus, err := p.assign(t, n, ns)
		if err != nil {
			continue
		}
		admitted = true
		counts[i] = ns.topo.numaCount(cpus)
		most = max(most, counts[i])
	}
	if !admitted {
		return nil, nil
	}
	out := make(map[string]float64, len(nodes))
	for i, node := range nodes {
		s := maxNodeScore
		if most > 0 {
			s = maxNodeScore - maxNodeScore*counts[i]/most
		}
		out[node.Name] = float64(s * p.weight)
	}
	return out, nil
}

// classKey: a guaranteed task's answers depend on its needs and on the node's free CPUs,
// which change only when tasks are placed on or removed from the node. A task with a policy
// has a score normalized over the candidate nodes, so it has no class.
func (p *plugin) classKey(t *api.TaskInfo) (string, bool) {
	n := p.needsOf(t)
	switch {
	case !n.guaranteed:
		return "", true
	case n.policy != "":
		return "", false
	}
	return "guaranteed", true
}

// allocated takes the CPUs of a task allocated or pipelined on an engaged node.
func (p *plugin) allocated(e *framework.Event) {
	t := e.Task
	if _, ok := p.held[t.UID]; ok {
		return // a discarded eviction: the task never gave its CPUs back
	}
	n := p.needsOf(t)
	ns := p.nodes[t.NodeName]
	if !n.guaranteed {
		return
	}
	if ok, _ := engaged(n, ns, t.NodeName); !ok {
		return
	}
	cpus, err := p.assign(t, n, ns)
	if err != nil {
		p.ssn.Log.Warn("numa-aware: a task was placed where its cpus do not fit", "task", t.UID, "node", t.NodeName, "reason", err)
		return
	}
	ns.take(cpus)
	p.held[t.UID] = holding{node: ns.name, cpus: cpus}
}

// deallocated gives back the CPUs of a task whose allocation or pipeline was undone. An
// evicted task (Releasing) keeps them until it is gone.
func (p *plugin) deallocated(e *framework.Event) {
	t := e.Task
	h, ok := p.held[t.UID]
	if !ok || t.Status == api.Releasing {
		return
	}
	p.nodes[h.node].give(h.cpus)
	delete(p.held, t.UID)
}

// accountPlaced takes, at session open, the CPUs of the tasks the snapshot places on nodes
// that the node's topology does not already show them holding (Volcano's unassigned NUMA
// pods: the node has not reported the CPUs it gave them yet): each gets the CPUs its node's
// policy would choose now, admitted or not. Nodes go in name order, tasks in UID order.
func (p *plugin) accountPlaced() {
	for _, node := range p.ssn.NodeList {
		ns := p.nodes[node.Name]
		if ns == nil {
			continue
		}
		for _, t := range node.SortedTasks() {
			n := p.needsOf(t)
			if !api.OccupiesNode(t.Status) || ns.holders[t.UID] || !n.guaranteed {
				continue
			}
			if ok, _ := engaged(n, ns, node.Name); !ok {
				continue
			}
			best, _, avail := bestHint(n, ns)
			cpus, ok := allocate(n, ns, best, avail)
			if !ok {
				p.ssn.Log.Warn("numa-aware: cannot account the cpus of a placed task", "task", t.UID, "node", node.Name)
				continue
			}
			ns.take(cpus)
			p.held[t.UID] = holding{node: ns.name, cpus: cpus}
		}
	}
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

package predicates

import (
	"fmt"
	"math"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins/internal/k8sutil"
)

// taskStatic is what a task's spec says about placement, compiled once per session.
type taskStatic struct {
	required               k8sutil.RequiredNodeAffinity
	tolerations            []api.Toleration
	toleratesUnschedulable bool
	ports                  []int32
	affinity               k8sutil.TaskAffinity
	spread                 []spreadConstraint // DoNotSchedule constraints only
	// invalid says why the constraints cannot be applied ("" when they can).
	invalid string
}

// spreadConstraint is one compiled DoNotSchedule topology spread constraint.
type spreadConstraint struct {
	maxSkew  int
	key      string
	selector k8sutil.Selector
	// selfMatch is whether the task itself matches the selector.
	selfMatch bool
}

var emptyStatic = &taskStatic{}

// bareState is the state of a task without constraints while no placed task has task
// affinity: no counts, nothing compiled.
var bareState = &taskState{st: emptyStatic}

func newTaskStatic(t *api.Task) *taskStatic {
	if bare(t) {
		return emptyStatic
	}
	st := &taskStatic{
		required:               k8sutil.NewRequiredNodeAffinity(t),
		tolerations:            t.Tolerations,
		toleratesUnschedulable: k8sutil.ToleratesUnschedulable(t.Tolerations),
		affinity:               k8sutil.NewTaskAffinity(t),
	}
	for _, port := range t.Ports {
		if port > 0 { // Kubernetes ignores a host port of 0
			st.ports = append(st.ports, port)
		}
	}
	for _, c := range t.TopologySpread {
		switch c.WhenUnsatisfiable {
		case "DoNotSchedule":
		case "ScheduleAnyway":
			continue
		default:
			st.invalid = fmt.Sprintf("topology spread on %s: whenUnsatisfiable %q is neither DoNotSchedule nor ScheduleAnyway", c.TopologyKey, c.WhenUnsatisfiable)
			continue
		}
		if c.MaxSkew < 1 && st.invalid == "" {
			st.invalid = fmt.Sprintf("topology spread on %s: maxSkew %d is below 1", c.TopologyKey, c.MaxSkew)
		}
		sel := k8sutil.NewSelector(c.Selector)
		st.spread = append(st.spread, spreadConstraint{
			maxSkew: int(c.MaxSkew), key: c.TopologyKey, selector: sel, selfMatch: sel.Matches(t.Labels),
		})
	}
	return st
}

// taskState is a task's Kubernetes PreFilter state: its compiled constraints and what the
// tasks placed so far (the view at generation gen) mean for them.
type taskState struct {
	spec *api.Task
	gen  uint64
	st   *taskStatic

	// Task affinity, per topology pair: tasks matching all the task's required affinity
	// terms, tasks matching one of its anti-affinity terms, and placed tasks whose own
	// required anti-affinity the task matches.
	affinityCounts     map[k8sutil.Pair]int
	antiAffinityCounts map[k8sutil.Pair]int
	existingAntiCounts map[k8sutil.Pair]int

	// spread holds, per DoNotSchedule constraint, the matching tasks per domain.
	spread []spreadState
}

type spreadState struct {
	// counts maps each eligible domain (topology value) to its matching tasks.
	counts map[string]int
	// min is the fewest matching tasks in an eligible domain.
	min int
}

// state returns the task's state for the current placement, building it when the task or the
// placement changed since the last call. Safe for concurrent calls.
func (p *plugin) state(task *api.TaskInfo) *taskState {
	gen := p.view.Gen()
	if s := p.cur.Load(); s != nil && s.spec == task.Spec && s.gen == gen {
		return s
	}
	if bare(task.Spec) && len(p.view.WithAffinity()) == 0 {
		// A spec without constraints, and no placed task's anti-affinity to match: every
		// such task has the same, empty, state at any generation (what buildState would
		// build, spec aside).
		return bareState
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.cur.Load(); s != nil && s.spec == task.Spec && s.gen == gen {
		return s
	}
	s := p.buildState(task.Spec, gen)
	p.cur.Store(s)
	return s
}

// bare reports whether a spec has none of the parts a taskStatic compiles: node selector,
// affinity, tolerations, host ports, topology spread. newTaskStatic gives it emptyStatic.
func bare(t *api.Task) bool {
	return t == nil || (len(t.NodeSelector) == 0 && t.Affinity == nil && len(t.Tolerations) == 0 &&
		len(t.Ports) == 0 && len(t.TopologySpread) == 0)
}

// static returns the spec's compiled constraints, compiling them at the first call. The caller
// holds p.mu.
func (p *plugin) static(spec *api.Task) *taskStatic {
	if st, ok := p.statics[spec]; ok {
		return st
	}
	st := newTaskStatic(spec)
	if st != emptyStatic {
		p.statics[spec] = st
	}
	return st
}

func (p *plugin) buildState(spec *api.Task, gen uint64) *taskState {
	st := p.static(spec)
	s := &taskState{spec: spec, gen: gen, st: st}
	if p.opts.podAffinity {
		p.buildAffinity(s)
	}
	if p.opts.podTopologySpread && len(st.spread) > 0 {
		p.buildSpread(s)
	}
	return s
}

// addPair counts one task for the node's domain of key.
func addPair(m map[k8sutil.Pair]int, n *api.Node, key string) map[k8sutil.Pair]int {
	v, ok := k8sutil.NodeLabel(n, key)
	if !ok {
		return m
	}
	if m == nil {
		m = map[k8sutil.Pair]int{}
	}
	m[k8sutil.Pair{Key: key, Value: v}]++
	return m
}

// buildAffinity is Kubernetes' InterPodAffinity PreFilter over the view.
func (p *plugin) buildAffinity(s *taskState) {
	spec, a := s.spec, &s.st.affinity
	for _, placed := range p.view.WithAffinity() {
		for _, t := range p.static(placed.Task).affinity.RequiredAntiAffinity {
			if t.Matches(spec) {
				s.existingAntiCounts = addPair(s.existingAntiCounts, placed.Node.Node, t.TopologyKey)
			}
		}
	}
	if len(a.RequiredAffinity) == 0 && len(a.RequiredAntiAffinity) == 0 {
		return
	}
	for _, n := range p.ssn.NodeList {
		for _, t := range n.Tasks {
			if p.view.Gone(t.UID) {
				continue
			}
			if k8sutil.MatchesAll(a.RequiredAffinity, t.Spec) {
				for _, term := range a.RequiredAffinity {
					s.affinityCounts = addPair(s.affinityCounts, n.Node, term.TopologyKey)
				}
			}
			for _, term := range a.RequiredAntiAffinity {
				if term.Matches(t.Spec) {
					s.antiAffinityCounts = addPair(s.antiAffinityCounts, n.Node, term.TopologyKey)
				}
			}
		}
	}
}

// affinityReason is Kubernetes' InterPodAffinity Filter: "" when the node passes.
func (s *taskState) affinityReason(n *api.Node) string {
	a := &s.st.affinity
	if len(a.RequiredAffinity) == 0 && len(s.antiAffinityCounts) == 0 && len(s.existingAntiCounts) == 0 {
		return ""
	}
	if len(a.RequiredAffinity) > 0 {
		exist := true
		for _, t := range a.RequiredAffinity {
			v, ok := k8sutil.NodeLabel(n, t.TopologyKey)
			if !ok {
				return "task affinity mismatch"
			}
			if s.affinityCounts[k8sutil.Pair{Key: t.TopologyKey, Value: v}] <= 0 {
				exist = false
			}
		}
		// The first of a group of tasks with affinity to each other may go anywhere its
		// topology keys exist, if no task matches yet.
		if !exist && !(len(s.affinityCounts) == 0 && k8sutil.MatchesAll(a.RequiredAffinity, s.spec)) {
			return "task affinity mismatch"
		}
	}
	if len(s.antiAffinityCounts) > 0 {
		for _, t := range a.RequiredAntiAffinity {
			if v, ok := k8sutil.NodeLabel(n, t.TopologyKey); ok && s.antiAffinityCounts[k8sutil.Pair{Key: t.TopologyKey, Value: v}] > 0 {
				return "task anti-affinity conflict"
			}
		}
	}
	if len(s.existingAntiCounts) == 0 {
		return ""
	}
	for pair := range s.existingAntiCounts {
		if v, ok := k8sutil.NodeLabel(n, pair.Key); ok && v == pair.Value {
			return "anti-affinity of a placed task"
		}
	}
	return ""
}

// buildSpread is Kubernetes' PodTopologySpread PreFilter over the view: the eligible nodes
// (those matching the task's node selector and affinity and carrying every constraint's
// key) and, per constraint, the matching tasks of the task's namespace per domain. Releasing
// tasks are left out, as Kubernetes leaves out terminating pods.
func (p *plugin) buildSpread(s *taskState) {
	st := s.st
	s.spread = make([]spreadState, len(st.spread))
	for i := range s.spread {
		s.spread[i].counts = map[string]int{}
	}
	for _, n := range p.ssn.NodeList {
		if !st.required.Match(n.Node) || !hasKeys(n.Node, st.spread) {
			continue
		}
		for i, c := range st.spread {
			v, _ := k8sutil.NodeLabel(n.Node, c.key)
			s.spread[i].counts[v] += p.countMatching(n, c.selector, s.spec.Namespace)
		}
	}
	for i := range s.spread {
		s.spread[i].min = math.MaxInt
		for _, c := range s.spread[i].counts {
			s.spread[i].min = min(s.spread[i].min, c)
		}
	}
}

func hasKeys(n *api.Node, cs []spreadConstraint) bool {
	for _, c := range cs {
		if _, ok := k8sutil.NodeLabel(n, c.key); !ok {
			return false
		}
	}
	return true
}

// countMatching counts the node's tasks in the view, of the namespace and not releasing, that
// the selector matches; an empty selector counts none.
func (p *plugin) countMatching(n *api.NodeInfo, sel k8sutil.Selector, ns string) int {
	if sel.Empty() {
		return 0
	}
	c := 0
	for _, t := range n.Tasks {
		if t.Status == api.Releasing || t.Spec == nil || t.Spec.Namespace != ns || p.view.Gone(t.UID) {
			continue
		}
		if sel.Matches(t.Spec.Labels) {
			c++
		}
	}
	return c
}

// spreadReason is Kubernetes' PodTopologySpread Filter: the first constraint the node breaks.
func (s *taskState) spreadReason(n *api.Node) (api.FitCode, string) {
	for i, c := range s.st.spread {
		v, ok := k8sutil.NodeLabel(n, c.key)
		if !ok {
			return api.UnschedulableAndUnresolvable, "missing topology label " + c.key
		}
		ss := &s.spread[i]
		if len(ss.counts) == 0 {
			continue // no eligible domain: Kubernetes skips the constraint
		}
		self := 0
		if c.selfMatch {
			self = 1
		}
		if ss.counts[v]+self-ss.min > c.maxSkew {
			return api.Unschedulable, "topology spread maxSkew exceeded on " + c.key
		}
	}
	return 0, ""
}

package nodeorder

import (
	"math"
	"sync"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins/internal/k8sutil"
)

// spreadConstraint is one compiled ScheduleAnyway topology spread constraint.
type spreadConstraint struct {
	maxSkew  int64
	key      string
	selector k8sutil.Selector
}

// batchNodeOrder scores the candidate nodes together: task affinity, taint toleration,
// topology spread and selector spread, each normalised over the candidates as Kubernetes
// does, times its weight.
func (p *plugin) batchNodeOrder(task *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error) {
	st := p.static(task)
	var total []int64 // nil while every node has the same total, base
	var base int64
	add := func(scores []int64, w int64) {
		if total == nil {
			total = make([]int64, len(nodes))
			for i := range total {
				total[i] = base
			}
		}
		for i, s := range scores {
			total[i] += s * w
		}
	}
	if p.w.podAffinity != 0 {
		if scores := p.taskAffinityScores(st, nodes); scores != nil {
			add(scores, p.w.podAffinity)
		}
	}
	if p.w.taint != 0 {
		if scores := p.taintScores(st, nodes); scores != nil {
			add(scores, p.w.taint)
		} else if total == nil {
			base += maxNodeScore * p.w.taint // nothing to reverse: every node scores 100
		} else {
			for i := range total {
				total[i] += maxNodeScore * p.w.taint
			}
		}
	}
	if p.w.spread != 0 && len(st.softSpread) > 0 && len(nodes) > 0 {
		add(p.spreadScores(st, nodes), p.w.spread)
	}
	if p.w.selectorSpread != 0 && !st.hasSpread {
		// No service or replica set selects the task: every node scores 100.
		if total == nil {
			base += maxNodeScore * p.w.selectorSpread
		} else {
			for i := range total {
				total[i] += maxNodeScore * p.w.selectorSpread
			}
		}
	}
	if total == nil {
		return p.consts.get(p.ssn.NodeList, float64(base)), nil
	}
	out := make(map[string]float64, len(nodes))
	for i, n := range nodes {
		out[n.Name] = float64(total[i])
	}
	return out, nil
}

// constMaps caches, per value, a read-only map giving every node of the session that value,
// so that a batch score that is the same for every node allocates nothing.
type constMaps struct {
	mu sync.Mutex
	m  map[float64]map[string]float64
}

func (c *constMaps) get(nodes []*api.NodeInfo, v float64) map[string]float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if out, ok := c.m[v]; ok {
		return out
	}
	out := make(map[string]float64, len(nodes))
	if v != 0 {
		for _, n := range nodes {
			out[n.Name] = v
		}
	}
	if c.m == nil {
		c.m = map[float64]map[string]float64{}
	}
	c.m[v] = out
	return out
}

// taintScores is Kubernetes' TaintToleration score: the PreferNoSchedule taints the task does
// not tolerate, normalised over the candidates and reversed. nil means every node scores 100.
func (p *plugin) taintScores(st *taskStatic, nodes []*api.NodeInfo) []int64 {
	if !p.hasPreferNoSchedule() {
		return nil
	}
	var counts []int64
	var most int64
	for i, n := range nodes {
		var c int64
		for _, t := range n.Node.Taints {
			if t.Effect == k8sutil.EffectPreferNoSchedule && !k8sutil.Tolerated(t, st.preferNoScheduleTols) {
				c++
			}
		}
		if c > 0 && counts == nil {
			counts = make([]int64, len(nodes))
		}
		if counts != nil {
			counts[i] = c
		}
		most = max(most, c)
	}
	if most == 0 {
		return nil
	}
	for i := range counts {
		counts[i] = maxNodeScore - maxNodeScore*counts[i]/most
	}
	return counts
}

// taskAffinityScores is Kubernetes' InterPodAffinity score: per topology domain, the weights
// of the task's preferred terms that tasks in the view match (anti-affinity negative), and of
// those tasks' required (weight 1) and preferred terms that the task matches; a node scores
// the sum over its domains, normalised between the lowest and highest candidate. nil means
// every node scores 0.
func (p *plugin) taskAffinityScores(st *taskStatic, nodes []*api.NodeInfo) []int64 {
	a := &st.affinity
	hasPreferred := len(a.PreferredAffinity) > 0 || len(a.PreferredAntiAffinity) > 0
	if !hasPreferred && len(p.view.WithAffinity()) == 0 {
		return nil
	}
	topo := map[k8sutil.Pair]int64{}
	var keys []string
	addTerm := func(t *k8sutil.AffinityTerm, weight int64, target *api.Task, n *api.Node) {
		if !t.Matches(target) {
			return
		}
		v, ok := k8sutil.NodeLabel(n, t.TopologyKey)
		if !ok {
			return
		}
		pair := k8sutil.Pair{Key: t.TopologyKey, Value: v}
		if _, seen := topo[pair]; !seen {
			keys = appendKey(keys, t.TopologyKey)
		}
		topo[pair] += weight
	}
	process := func(existing *api.Task, n *api.Node) {
		for i := range a.PreferredAffinity {
			addTerm(&a.PreferredAffinity[i], a.PreferredAffinity[i].Weight, existing, n)
		}
		for i := range a.PreferredAntiAffinity {
			addTerm(&a.PreferredAntiAffinity[i], -a.PreferredAntiAffinity[i].Weight, existing, n)
		}
		if !k8sutil.HasTaskAffinity(existing) {
			return
		}
		ea := &p.staticOf(existing).affinity
		for i := range ea.RequiredAffinity {
			addTerm(&ea.RequiredAffinity[i], 1, st.spec, n) // Kubernetes' hardPodAffinityWeight
		}
		for i := range ea.PreferredAffinity {
			addTerm(&ea.PreferredAffinity[i], ea.PreferredAffinity[i].Weight, st.spec, n)
		}
		for i := range ea.PreferredAntiAffinity {
			addTerm(&ea.PreferredAntiAffinity[i], -ea.PreferredAntiAffinity[i].Weight, st.spec, n)
		}
	}
	if hasPreferred {
		for _, n := range p.ssn.NodeList {
			for _, t := range n.Tasks {
				if t.Spec != nil && !p.view.Gone(t.UID) {
					process(t.Spec, n.Node)
				}
			}
		}
	} else {
		for _, placed := range p.view.WithAffinity() {
			process(placed.Task, placed.Node.Node)
		}
	}
	if len(topo) == 0 {
		return nil
	}
	scores := make([]int64, len(nodes))
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for i, n := range nodes {
		var s int64
		for _, k := range keys {
			if v, ok := k8sutil.NodeLabel(n.Node, k); ok {
				s += topo[k8sutil.Pair{Key: k, Value: v}]
			}
		}
		scores[i] = s
		lo, hi = min(lo, s), max(hi, s)
	}
	for i, s := range scores {
		if hi > lo {
			scores[i] = int64(float64(maxNodeScore) * (float64(s-lo) / float64(hi-lo)))
		} else {
			scores[i] = 0
		}
	}
	return scores
}

func appendKey(keys []string, k string) []string {
	for _, x := range keys {
		if x == k {
			return keys
		}
	}
	return append(keys, k)
}

// staticOf returns the compiled inputs of a task spec (read-only, safe for concurrent calls).
func (p *plugin) staticOf(spec *api.Task) *taskStatic {
	if s := p.sessionStatic(spec, spec.JobKey(), spec.Key()); s != nil {
		return s
	}
	return newTaskStatic(&api.TaskInfo{Spec: spec, Resreq: &api.Resource{}})
}

// spreadScores is Kubernetes' PodTopologySpread score for ScheduleAnyway constraints.
// Candidates lacking a constraint's key are ignored (score 0); the others score, per
// constraint, the matching tasks of their domain weighted by log(domains + 2) plus
// maxSkew - 1, and fewer is better after normalisation.
func (p *plugin) spreadScores(st *taskStatic, nodes []*api.NodeInfo) []int64 {
	cs := st.softSpread
	ignored := make([]bool, len(nodes))
	counts := make([]map[string]int64, len(cs)) // per constraint: domain -> matching tasks
	for i := range counts {
		counts[i] = map[string]int64{}
	}
	candidates := 0
	for ni, n := range nodes {
		if !hasKeys(n.Node, cs) {
			ignored[ni] = true
			continue
		}
		candidates++
		for i, c := range cs {
			if c.key == k8sutil.LabelHostname {
				continue // counted per node when scoring
			}
			v, _ := k8sutil.NodeLabel(n.Node, c.key)
			counts[i][v] = 0
		}
	}
	weights := make([]float64, len(cs))
	for i, c := range cs {
		size := len(counts[i])
		if c.key == k8sutil.LabelHostname {
			size = candidates
		}
		weights[i] = math.Log(float64(size + 2))
	}
	for _, n := range p.ssn.NodeList {
		if !st.required.Match(n.Node) || !hasKeys(n.Node, cs) {
			continue
		}
		for i, c := range cs {
			if c.key == k8sutil.LabelHostname {
				continue
			}
			v, _ := k8sutil.NodeLabel(n.Node, c.key)
			if cur, ok := counts[i][v]; ok {
				counts[i][v] = cur + p.countMatching(n, c.selector, st.spec.Namespace)
			}
		}
	}
	scores := make([]int64, len(nodes))
	var lo, hi int64 = math.MaxInt64, 0
	for ni, n := range nodes {
		if ignored[ni] {
			continue
		}
		var f float64
		for i, c := range cs {
			v, _ := k8sutil.NodeLabel(n.Node, c.key)
			var cnt int64
			if c.key == k8sutil.LabelHostname {
				cnt = p.countMatching(n, c.selector, st.spec.Namespace)
			} else {
				cnt = counts[i][v]
			}
			f += float64(cnt)*weights[i] + float64(c.maxSkew-1)
		}
		s := int64(math.Round(f))
		scores[ni] = s
		lo, hi = min(lo, s), max(hi, s)
	}
	for ni := range scores {
		switch {
		case ignored[ni]:
			scores[ni] = 0
		case hi == 0:
			scores[ni] = maxNodeScore
		default:
			scores[ni] = maxNodeScore * (hi + lo - scores[ni]) / hi
		}
	}
	return scores
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
func (p *plugin) countMatching(n *api.NodeInfo, sel k8sutil.Selector, ns string) int64 {
	if sel.Empty() {
		return 0
	}
	var c int64
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

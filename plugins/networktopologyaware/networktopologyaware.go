// Package networktopologyaware is Volcano's network-topology-aware plugin: it scores
// hypernodes (for jobs placed whole inside one hypernode, hard mode) and nodes (soft mode) by
// how close they are, in the hypernode tree, to where the job's tasks already run: the same
// hypernode scores 100, a lower common ancestor scores more than a higher one, and among equals
// the hypernode holding more of the job's tasks wins.
package networktopologyaware

import (
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "network-topology-aware"

// ArgWeight is the weight argument.
const ArgWeight = "weight"

const baseScore = 100.0

// New builds the plugin; weight defaults to 1.
func New(args conf.Arguments) (framework.Plugin, error) {
	w, err := args.Int(ArgWeight, 1)
	if err != nil {
		return nil, err
	}
	return &plugin{weight: float64(w)}, nil
}

type plugin struct {
	weight           float64
	tree             *framework.HyperNodeTree
	minTier, maxTier int
}

var _ framework.Plugin = (*plugin)(nil)

// Name returns "network-topology-aware".
func (p *plugin) Name() string { return Name }

// OnSessionOpen registers the hypernode and node scores.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.tree = ssn.Topology
	if n := len(p.tree.Tiers); n > 0 {
		p.minTier, p.maxTier = p.tree.Tiers[0], p.tree.Tiers[n-1]
	}
	ssn.AddHyperNodeOrderFn(Name, p.hyperNodeOrder)
	ssn.AddBatchNodeOrderFn(Name, func(task *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error) {
		return p.nodeOrder(ssn, task, nodes), nil
	})
	// Nodes score alike (nothing) until the job has a placed task; after that the score
	// depends on the other nodes, so no reuse.
	ssn.AddClassKeyFn(Name, func(t *api.TaskInfo) (string, bool) {
		j, ok := ssn.Jobs[t.Job]
		return "", ok && j.AllocatedHyperNode == ""
	})
}

// OnSessionClose does nothing.
func (p *plugin) OnSessionClose(*framework.Session) {}

// tierScore is 100 for the job's own hypernode, else 100 x (maxTier - tier of the lowest common
// ancestor) / (maxTier - minTier).
func (p *plugin) tierScore(hn, jobHN string) float64 {
	if hn == jobHN {
		return baseScore
	}
	lca := p.tree.LCA(hn, jobHN)
	if lca == "" || p.minTier == p.maxTier {
		return 0
	}
	return baseScore * float64(p.maxTier-p.tree.Tier[lca]) / float64(p.maxTier-p.minTier)
}

// taskNumScore is 100 x the share of the job's tasks placed under the hypernode.
func (p *plugin) taskNumScore(hn string, job *api.JobInfo) float64 {
	if len(job.Tasks) == 0 {
		return 0
	}
	return baseScore * float64(p.tree.JobTaskCount(hn, job)) / float64(len(job.Tasks))
}

// scoreAll scores keys (hypernode names, or nodes via their hypernode), adding the task-count
// score to the keys that tie at the top.
func (p *plugin) scoreAll(keys []string, hnOf func(string) string, job *api.JobInfo) map[string]float64 {
	out := make(map[string]float64, len(keys))
	best := -1.0
	var top []string
	for _, k := range keys {
		s := p.tierScore(hnOf(k), job.AllocatedHyperNode) * p.weight
		out[k] = s
		switch {
		case s > best:
			best, top = s, []string{k}
		case s == best:
			top = append(top, k)
		}
	}
	if len(top) > 1 {
		for _, k := range top {
			out[k] += p.taskNumScore(hnOf(k), job) * p.weight
		}
	}
	return out
}

func (p *plugin) hyperNodeOrder(job *api.JobInfo, hns map[string][]*api.NodeInfo) (map[string]float64, error) {
	if job.AllocatedHyperNode == "" {
		return map[string]float64{}, nil
	}
	keys := make([]string, 0, len(hns))
	for k := range hns {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return p.scoreAll(keys, func(k string) string { return k }, job), nil
}

func (p *plugin) nodeOrder(ssn *framework.Session, task *api.TaskInfo, nodes []*api.NodeInfo) map[string]float64 {
	job, ok := ssn.Jobs[task.Job]
	if !ok || job.AllocatedHyperNode == "" {
		return map[string]float64{}
	}
	keys := make([]string, len(nodes))
	for i, n := range nodes {
		keys[i] = n.Name
	}
	return p.scoreAll(keys, p.tree.HyperNodeOf, job)
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

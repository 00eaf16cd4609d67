package framework

import (
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
)

// HyperNodeTree is the session's network topology: hypernodes by tier, each hypernode's
// parent, and the real nodes under each hypernode. Tier 1 hypernodes hold nodes; higher tiers
// hold hypernodes.
type HyperNodeTree struct {
	// Tiers lists the tiers that exist, lowest first.
	Tiers []int
	// ByTier lists each tier's hypernodes by name.
	ByTier map[int][]string
	// Tier gives a hypernode's tier.
	Tier map[string]int
	// Parent gives a hypernode's parent hypernode ("" at the top).
	Parent map[string]string
	// NodeParent gives a node's tier-1 hypernode.
	NodeParent map[string]string
	// RealNodes lists the nodes under each hypernode, sorted by name.
	RealNodes map[string][]*api.NodeInfo
}

// buildHyperNodeTree derives the tree from the snapshot's hypernodes; members that are
// neither nodes nor hypernodes are ignored (the store refuses them anyway).
func buildHyperNodeTree(hns []*api.HyperNode, nodes map[string]*api.NodeInfo) *HyperNodeTree {
	t := &HyperNodeTree{
		ByTier:     map[int][]string{},
		Tier:       map[string]int{},
		Parent:     map[string]string{},
		NodeParent: map[string]string{},
		RealNodes:  map[string][]*api.NodeInfo{},
	}
	for _, h := range hns {
		t.Tier[h.Name] = int(h.Tier)
		t.ByTier[int(h.Tier)] = append(t.ByTier[int(h.Tier)], h.Name)
	}
	for tier, names := range t.ByTier {
		sort.Strings(names)
		t.Tiers = append(t.Tiers, tier)
	}
	sort.Ints(t.Tiers)
	for _, h := range hns {
		for _, m := range h.Members {
			if _, isHN := t.Tier[m]; isHN {
				t.Parent[m] = h.Name
			} else if _, isNode := nodes[m]; isNode {
				t.NodeParent[m] = h.Name
			}
		}
	}
	var leaves func(name string, seen map[string]bool) []*api.NodeInfo
	byName := map[string]*api.HyperNode{}
	for _, h := range hns {
		byName[h.Name] = h
	}
	leaves = func(name string, seen map[string]bool) []*api.NodeInfo {
		if seen[name] {
			return nil
		}
		seen[name] = true
		var out []*api.NodeInfo
		for _, m := range byName[name].Members {
			if _, isHN := t.Tier[m]; isHN {
				out = append(out, leaves(m, seen)...)
			} else if n, ok := nodes[m]; ok {
				out = append(out, n)
			}
		}
		return out
	}
	for _, h := range hns {
		ns := leaves(h.Name, map[string]bool{})
		sort.Slice(ns, func(i, j int) bool { return ns[i].Name < ns[j].Name })
		t.RealNodes[h.Name] = ns
	}
	return t
}

// ancestors returns the hypernode and its ancestors, lowest first.
func (t *HyperNodeTree) ancestors(hn string) []string {
	var out []string
	for cur, n := hn, 0; cur != "" && n <= len(t.Tier); cur, n = t.Parent[cur], n+1 {
		out = append(out, cur)
	}
	return out
}

// LCA returns the lowest common ancestor of two hypernodes ("" when they share none).
func (t *HyperNodeTree) LCA(a, b string) string {
	if a == b {
		return a
	}
	up := map[string]bool{}
	for _, x := range t.ancestors(a) {
		up[x] = true
	}
	for _, y := range t.ancestors(b) {
		if up[y] {
			return y
		}
	}
	return ""
}

// HyperNodeOf returns the tier-1 hypernode of a node ("" when it has none).
func (t *HyperNodeTree) HyperNodeOf(node string) string { return t.NodeParent[node] }

// JobTaskCount counts the job's placed tasks on nodes under the hypernode.
func (t *HyperNodeTree) JobTaskCount(hn string, job *api.JobInfo) int {
	under := map[string]bool{}
	for _, n := range t.RealNodes[hn] {
		under[n.Name] = true
	}
	count := 0
	for _, task := range job.Tasks {
		if task.NodeName != "" && under[task.NodeName] && (api.AllocatedStatus(task.Status) || task.Status == api.Pipelined) {
			count++
		}
	}
	return count
}

// JobHyperNode returns the lowest hypernode that holds every node where the job's tasks are
// placed, or "" when none are placed (or no hypernode holds them all).
func (t *HyperNodeTree) JobHyperNode(job *api.JobInfo) string {
	cur := ""
	first := true
	for _, task := range job.SortedTasks() {
		if task.NodeName == "" || !(api.AllocatedStatus(task.Status) || task.Status == api.Pipelined) {
			continue
		}
		hn := t.NodeParent[task.NodeName]
		if hn == "" {
			return ""
		}
		if first {
			cur, first = hn, false
			continue
		}
		if cur = t.LCA(cur, hn); cur == "" {
			return ""
		}
	}
	return cur
}

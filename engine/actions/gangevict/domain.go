package gangevict

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// MaxEvictionHyperNodes caps the hypernodes an eviction search visits per job (the default of
// Volcano's network-topology-aware `hypernode.gradient.evict.max-hypernodes`).
const MaxEvictionHyperNodes = 8

// Domain is where one attempt looks for victims and places the job.
type Domain struct {
	// HyperNode names the domain; "" is the whole cluster.
	HyperNode string
	// Nodes are the domain's nodes, by name.
	Nodes []*api.NodeInfo
}

// Domains returns the domains to try for the job, at most max of them. A job without a hard
// network-topology constraint (or a cluster without hypernodes) has one domain, the whole
// cluster. A hard-topology job gets the hypernodes it may use (see Gradient), widest first.
func Domains(ssn *framework.Session, job *api.JobInfo, max int) []Domain {
	hard, highest := job.IsHardTopologyMode()
	if !hard || len(ssn.Topology.Tiers) == 0 {
		return []Domain{{Nodes: ssn.NodeList}}
	}
	out := Gradient(ssn, job, "", highest)
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// Gradient lists the hypernodes a hard-topology job may use within root ("" for the whole
// cluster), as Volcano's network-topology-aware plugin does for an eviction search: those of
// a tier up to highest inside the subtree the job is confined to (below its highest allowed
// ancestor when some of its tasks are placed), which, when none is placed, offer at least the
// job's minimum resources. They come widest first (tier by tier from the highest; by name
// within a tier), at most MaxEvictionHyperNodes of them, the last ones of a tier that does not
// fit whole.
func Gradient(ssn *framework.Session, job *api.JobInfo, root string, highest int) []Domain {
	topo := ssn.Topology
	if job.AllocatedHyperNode != "" {
		allowed := highestAllowed(topo, job.AllocatedHyperNode, highest)
		switch {
		case allowed == "":
			return nil
		case root == "":
			root = allowed
		default:
			switch topo.LCA(root, allowed) {
			case allowed:
			case root:
				root = allowed
			default:
				return nil
			}
		}
	}
	byTier := map[int][]string{}
	for _, tier := range topo.Tiers {
		if tier > highest {
			continue
		}
		for _, hn := range topo.ByTier[tier] {
			if root != "" && topo.LCA(hn, root) != root {
				continue
			}
			if job.AllocatedHyperNode == "" && !job.MinResources.LessEqual(allocatable(topo.RealNodes[hn]), api.Zero) {
				continue
			}
			byTier[tier] = append(byTier[tier], hn)
		}
	}
	var out []Domain
	left := MaxEvictionHyperNodes
	for i := len(topo.Tiers) - 1; i >= 0 && left > 0; i-- {
		names := byTier[topo.Tiers[i]]
		if len(names) > left {
			names = names[len(names)-left:]
		}
		for _, hn := range names {
			out = append(out, Domain{HyperNode: hn, Nodes: topo.RealNodes[hn]})
		}
		left -= len(names)
	}
	return out
}

// highestAllowed returns the highest ancestor of hn (hn included) whose tier is at most
// highest, "" when hn's own tier is above it.
func highestAllowed(topo *framework.HyperNodeTree, hn string, highest int) string {
	out := ""
	for cur, steps := hn, 0; cur != "" && steps <= len(topo.Tier); cur, steps = topo.Parent[cur], steps+1 {
		if topo.Tier[cur] > highest {
			break
		}
		out = cur
	}
	return out
}

func allocatable(nodes []*api.NodeInfo) *api.Resource {
	return sum(nodes, func(n *api.NodeInfo) *api.Resource { return n.Allocatable })
}

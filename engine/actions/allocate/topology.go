package allocate

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// allocateInHyperNode places a job with a hard network-topology constraint inside one
// hypernode, as Volcano does: tier by tier from the lowest up to the highest the job allows,
// it tries the job in every hypernode of the tier (by name), keeps the hypernodes where the
// job could be placed, and stops at the first tier with any. Among those, the hypernode
// scorers and the summed scores of the chosen nodes pick one; its placements are replayed.
// It returns the statement to commit (nil when none) and the tasks left to place later.
func (c *cycle) allocateInHyperNode(queue *api.QueueInfo, job *api.JobInfo, tasks *util.PriorityQueue[*api.TaskInfo],
	highestTier int) (*framework.Statement, *util.PriorityQueue[*api.TaskInfo]) {
	ssn := c.ssn
	topo := ssn.Topology
	type attempt struct {
		saved framework.Saved
		left  *util.PriorityQueue[*api.TaskInfo]
		lca   string
	}
	var found map[string]attempt
	var order []string
	for _, tier := range topo.Tiers {
		if tier > highestTier || len(found) > 0 {
			break
		}
		for _, hn := range topo.ByTier[tier] {
			nodes := topo.RealNodes[hn]
			if len(nodes) == 0 {
				continue
			}
			lca := hn
			if job.AllocatedHyperNode != "" {
				// Tasks already placed: the hypernode must stay within the allowed tier together
				// with where they are.
				lca = topo.LCA(hn, job.AllocatedHyperNode)
				if lca == "" || topo.Tier[lca] > highestTier {
					continue
				}
			}
			left := tasks.Clone()
			job.ResetFitErr()
			stmt := c.allocateTasks(queue, job, left, nodes, hn)
			if stmt == nil || stmt.Operations() == 0 {
				continue
			}
			if found == nil {
				found = map[string]attempt{}
			}
			a := attempt{saved: stmt.Save(), lca: lca}
			stmt.Discard()
			if !left.Empty() {
				a.left = left
			}
			found[hn] = a
			order = append(order, hn)
		}
	}
	if len(found) == 0 {
		job.JobFitErrors = "network topology: no hypernode up to tier " + itoa(highestTier) + " can hold the job"
		return nil, nil
	}
	best := order[0]
	if len(order) > 1 {
		candidates := make(map[string][]*api.NodeInfo, len(order))
		for _, hn := range order {
			candidates[hn] = topo.RealNodes[hn]
		}
		scores, err := ssn.HyperNodeOrderFn(job, candidates)
		if err != nil {
			ssn.Log.Error("hypernode scoring failed", "job", job.UID, "err", err)
			return nil, nil
		}
		bestScore := 0.0
		for i, hn := range order {
			s := scores[hn] + c.hyperNodeScores[job.UID][hn]
			if i == 0 || s > bestScore {
				best, bestScore = hn, s
			}
		}
	}
	stmt := ssn.NewStatement()
	if err := stmt.Recover(found[best].saved); err != nil {
		ssn.Log.Error("replaying the chosen hypernode failed", "job", job.UID, "hypernode", best, "err", err)
		stmt.Discard()
		return nil, nil
	}
	if lca := found[best].lca; lca != "" && lca != job.AllocatedHyperNode {
		job.AllocatedHyperNode = lca
	}
	return stmt, found[best].left
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	neg := n < 0
	if neg {
		n = -n
	}
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	if neg {
		i--
		b[i] = '-'
	}
	return string(b[i:])
}

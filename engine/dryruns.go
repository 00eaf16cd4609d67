package engine

import (
	"sync"
	"time"
)

// The engine keeps at most maxDryRuns dry runs' plans, across clusters, for GetPlan, holding
// at most maxDryRunDecisions decisions between them (see dryRunCache.add for which go first).
const (
	maxDryRuns         = 16
	maxDryRunDecisions = 200000
)

// dryRunCache keeps the newest dry runs' plans in memory for a plan TTL, so that a caller can
// page through a dry run's decisions. Dry runs are never stored: the cache is this member's,
// bounded in count, and forgets a plan once its TTL passed.
type dryRunCache struct {
	mu    sync.Mutex
	plans []*Plan // oldest first
}

// add keeps a dry run's plan, dropping plans beyond the bounds (a plan larger than the
// decision bound alone is not kept). The plan dropped is the oldest of the cluster that holds
// the most, so that one cluster's flood of dry runs pushes out its own plans before a quieter
// cluster's.
func (c *dryRunCache) add(p *Plan) {
	n := len(p.Result.Decisions)
	if n > maxDryRunDecisions {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plans = append(c.plans, p)
	total := 0
	for _, q := range c.plans {
		total += len(q.Result.Decisions)
	}
	for len(c.plans) > maxDryRuns || total > maxDryRunDecisions {
		i := c.victim()
		total -= len(c.plans[i].Result.Decisions)
		c.plans = append(c.plans[:i], c.plans[i+1:]...)
	}
}

// victim returns the index of the plan add drops: the oldest plan of the cluster with the
// most plans (of those, the one whose oldest plan is oldest).
func (c *dryRunCache) victim() int {
	count := make(map[string]int, len(c.plans))
	most := 0
	for _, q := range c.plans {
		count[q.Cluster]++
		most = max(most, count[q.Cluster])
	}
	for i, q := range c.plans {
		if count[q.Cluster] == most {
			return i
		}
	}
	return 0
}

// get returns a kept dry run's plan that has not expired at now, or nil.
func (c *dryRunCache) get(cluster, id string, now time.Time) *Plan {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.plans {
		if p.ID == id && p.Cluster == cluster && !now.After(p.ExpiresAt) {
			return p
		}
	}
	return nil
}

// forget drops a cluster's dry runs.
func (c *dryRunCache) forget(cluster string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.plans[:0]
	for _, p := range c.plans {
		if p.Cluster != cluster {
			kept = append(kept, p)
		}
	}
	c.plans = kept
}

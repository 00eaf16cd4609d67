package engine

import (
	"sync"
	"time"
)

// The engine keeps at most maxDryRuns dry runs' plans, across clusters, for GetPlan, holding
// at most maxDryRunDecisions decisions between them.
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

// add keeps a dry run's plan, dropping the oldest beyond the bounds (a plan larger than the
// decision bound alone is not kept).
func (c *dryRunCache) add(p *Plan) {
	n := len(p.Result.Decisions)
	if n > maxDryRunDecisions {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	total := n
	for _, q := range c.plans {
		total += len(q.Result.Decisions)
	}
	for len(c.plans) > 0 && (len(c.plans) >= maxDryRuns || total > maxDryRunDecisions) {
		total -= len(c.plans[0].Result.Decisions)
		c.plans = c.plans[1:]
	}
	c.plans = append(c.plans, p)
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

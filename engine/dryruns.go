package engine

import (
	"sync"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
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
	plans []*keptDryRun // oldest first
}

// keptDryRun is a dry run's plan as the cache holds it: the plan without its decisions, and
// the decisions in a compact form (half the size: a bind has no devices, action or reason).
// At W2's size the cache holds four plans of 50,000 decisions, about a tenth of the heap.
type keptDryRun struct {
	*Plan     // Result.Decisions is nil: see decisions
	decisions []keptDecision
}

// keptDecision is a framework.Decision whose rarely set fields sit behind a pointer.
type keptDecision struct {
	Task, Job, Node string
	Kind            api.DecisionKind
	more            *api.Decision // DeviceIDs, Action, ForTask and Reason, when any is set
}

// keep returns the plan as the cache holds it; p itself is left as it is (the caller's).
func keep(p *Plan) *keptDryRun {
	k := &keptDryRun{Plan: p}
	if p.Result == nil {
		return k
	}
	plan, res := *p, *p.Result
	res.Decisions = nil
	plan.Result = &res
	k.Plan = &plan
	if p.Result.Decisions == nil {
		return k
	}
	k.decisions = make([]keptDecision, len(p.Result.Decisions))
	for i := range p.Result.Decisions {
		d, kd := &p.Result.Decisions[i], &k.decisions[i]
		kd.Task, kd.Job, kd.Node, kd.Kind = d.Task, d.Job, d.Node, d.Kind
		if d.DeviceIDs != nil || d.Action != "" || d.ForTask != "" || d.Reason != "" {
			kd.more = &api.Decision{DeviceIDs: d.DeviceIDs, Action: d.Action, ForTask: d.ForTask, Reason: d.Reason}
		}
	}
	return k
}

// plan returns the kept plan with its decisions, rebuilt in a Result of its own.
func (k *keptDryRun) plan() *Plan {
	if k.Result == nil {
		return k.Plan
	}
	plan, res := *k.Plan, *k.Result
	if k.decisions != nil {
		res.Decisions = make([]framework.Decision, len(k.decisions))
		for i, d := range k.decisions {
			out := &res.Decisions[i]
			if d.more != nil {
				*out = *d.more
			}
			out.Kind, out.Task, out.Job, out.Node = d.Kind, d.Task, d.Job, d.Node
		}
	}
	plan.Result = &res
	return &plan
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
	k := keep(p)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.plans = append(c.plans, k)
	total := 0
	for _, q := range c.plans {
		total += len(q.decisions)
	}
	for len(c.plans) > maxDryRuns || total > maxDryRunDecisions {
		i := c.victim()
		total -= len(c.plans[i].decisions)
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
	var found *keptDryRun
	for _, p := range c.plans {
		if p.ID == id && p.Cluster == cluster && !now.After(p.ExpiresAt) {
			found = p
			break
		}
	}
	c.mu.Unlock()
	if found == nil {
		return nil
	}
	return found.plan() // a kept plan never changes: rebuilt outside the lock
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

package rescheduling

import (
	"fmt"
	"sort"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// lnuConfig holds the lowNodeUtilization thresholds, in percent by resource. A node is
// under-used when every usage is below its threshold, over-used when some usage is above its
// target threshold.
type lnuConfig struct {
	thresholds, targets map[string]float64
}

// defaultLNU is Volcano's default: 100% everywhere, which never finds an over-used node.
func defaultLNU() *lnuConfig {
	return &lnuConfig{
		thresholds: map[string]float64{api.ResourceCPU: 100, api.ResourceMemory: 100, api.ResourcePods: 100},
		targets:    map[string]float64{api.ResourceCPU: 100, api.ResourceMemory: 100, api.ResourcePods: 100},
	}
}

// parseLNU reads params.thresholds and params.targetThresholds over the defaults. As in
// Volcano only cpu, memory and pod are read; each must be a number.
func parseLNU(params map[string]any) (*lnuConfig, error) {
	c := defaultLNU()
	for _, kv := range []struct {
		key  string
		into map[string]float64
	}{{"thresholds", c.thresholds}, {"targetThresholds", c.targets}} {
		key, into := kv.key, kv.into
		v, ok := params[key]
		if !ok || v == nil {
			continue
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("argument %q: want a mapping of resource to percent, got %v", key, v)
		}
		for _, r := range []string{api.ResourceCPU, api.ResourceMemory, "pod"} {
			raw, ok := m[r]
			if !ok {
				continue
			}
			f, ok := number(raw)
			if !ok {
				return nil, fmt.Errorf("argument %q: %s: want a number, got %v", key, r, raw)
			}
			into[r] = f
		}
	}
	return c, nil
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// nodeUsage is one node's utilisation as the strategy sees and updates it.
type nodeUsage struct {
	node     *api.NodeInfo
	cpu, mem float64 // percent
}

func (u *nodeUsage) get(r string) float64 {
	if r == api.ResourceCPU {
		return u.cpu
	}
	return u.mem
}

// usageResources are the dimensions Volcano measures.
var usageResources = []string{api.ResourceCPU, api.ResourceMemory}

// low: schedulable, and every usage below its threshold.
func (c *lnuConfig) low(u *nodeUsage) bool {
	if u.node.Node.Unschedulable {
		return false
	}
	for _, r := range usageResources {
		if th, ok := c.thresholds[r]; ok && u.get(r) >= th {
			return false
		}
	}
	return true
}

// high: some usage above its target threshold.
func (c *lnuConfig) high(u *nodeUsage) bool {
	for _, r := range usageResources {
		if th, ok := c.targets[r]; ok && u.get(r) > th {
			return true
		}
	}
	return false
}

// victims is Volcano's lowNodeUtilization strategy. Nodes are split into under-used and
// over-used ones; when there are both (and not every node is under-used) the room the
// under-used nodes have up to their target thresholds is summed, and tasks are taken from the
// over-used nodes, busiest first (cpu + memory percent), in eviction order (lower priority,
// best-effort, then the most recently started first), each lowering its node's usage and the
// room left, while the node is still at or above a target threshold and no room dimension is
// exactly used up. Only offered tasks can be chosen.
func (c *lnuConfig) victims(ssn *framework.Session, tasks []*api.TaskInfo) []*api.TaskInfo {
	var low, high []*nodeUsage
	for _, n := range ssn.NodeList {
		u := &nodeUsage{node: n, cpu: n.Node.Usage[api.ResourceCPU], mem: n.Node.Usage[api.ResourceMemory]}
		switch {
		case c.low(u):
			low = append(low, u)
		case c.high(u):
			high = append(high, u)
		}
	}
	if len(low) == 0 || len(low) == len(ssn.NodeList) || len(high) == 0 {
		return nil
	}
	// room is what the under-used nodes may still take: milli-cpu and bytes, whole numbers as
	// Volcano's quantities are.
	room := map[string]int64{}
	for _, u := range low {
		for _, r := range usageResources {
			capacity := u.node.Allocatable.Get(r)
			room[r] += int64(c.targets[r] * capacity * 0.01)
			room[r] -= int64(u.get(r) * capacity * 0.01)
		}
	}
	sort.SliceStable(high, func(i, j int) bool { return high[i].cpu+high[i].mem > high[j].cpu+high[j].mem })
	offered := make(map[string]*api.TaskInfo, len(tasks))
	for _, t := range tasks {
		offered[t.UID] = t
	}
	var out []*api.TaskInfo
	for _, u := range high {
		onNode := u.node.SortedTasks()
		if len(onNode) == 0 {
			continue
		}
		sortForEviction(onNode)
		for _, t := range onNode {
			if !c.keepEvicting(u, room) {
				break
			}
			v, ok := offered[t.UID]
			if !ok {
				continue
			}
			usedCPU, usedMem := int64(v.Resreq.MilliCPU), int64(v.Resreq.Memory)
			room[api.ResourceCPU] -= usedCPU
			room[api.ResourceMemory] -= usedMem
			u.cpu -= percentOf(float64(usedCPU)/1000, u.node.Allocatable.MilliCPU/1000)
			u.mem -= percentOf(float64(usedMem), u.node.Allocatable.Memory)
			out = append(out, v)
		}
	}
	return out
}

// keepEvicting is Volcano's isContinueEvictPods: the node is still at or above a target
// threshold and no room dimension is exactly zero (Volcano goes on when room is negative).
func (c *lnuConfig) keepEvicting(u *nodeUsage, room map[string]int64) bool {
	over := false
	for _, r := range usageResources {
		if th, ok := c.targets[r]; ok && u.get(r) >= th {
			over = true
			break
		}
	}
	if !over {
		return false
	}
	for _, r := range usageResources {
		if room[r] == 0 {
			return false
		}
	}
	return true
}

func percentOf(amount, capacity float64) float64 {
	if capacity == 0 {
		return 0
	}
	return amount * 100 / capacity
}

// sortForEviction orders a node's tasks as Volcano's sortPods: lower priority first; on equal
// priority best-effort tasks (requesting nothing) first; then the most recently started
// first; ties by name. (Kubernetes also tells Burstable from Guaranteed pods by their limits;
// Sluice tasks have requests only, so every task that requests something is one class.)
func sortForEviction(ts []*api.TaskInfo) {
	sort.SliceStable(ts, func(i, j int) bool {
		a, b := ts[i], ts[j]
		if a.Priority != b.Priority {
			return a.Priority < b.Priority
		}
		if a.BestEffort != b.BestEffort {
			return a.BestEffort
		}
		if !a.StartedAt.Equal(b.StartedAt) {
			return a.StartedAt.After(b.StartedAt)
		}
		return a.UID < b.UID
	})
}

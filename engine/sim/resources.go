package sim

import (
	"math"
	"slices"

	"github.com/sluice-sched/sluice/engine/api"
)

// Runs count resources as integers, so that sums never drift: milli-CPU, bytes of memory and
// milli-units of other resources (api.Resource's units, rounded).

// capacity returns the resources a run measures (cpu, memory, then the nodes' other
// resources, sorted) and the nodes' allocatable total of each.
func capacity(nodes []*api.Node) ([]string, []int64) {
	var scalars []string
	for _, n := range nodes {
		for name := range n.Allocatable.Scalars {
			if !slices.Contains(scalars, name) {
				scalars = append(scalars, name)
			}
		}
	}
	slices.Sort(scalars)
	names := append([]string{api.ResourceCPU, api.ResourceMemory}, scalars...)
	total := make([]int64, len(names))
	for _, n := range nodes {
		addVec(total, vectorOf(names, &n.Allocatable), 1)
	}
	return names, total
}

// vectorOf converts a resource to amounts over names.
func vectorOf(names []string, r *api.Resource) []int64 {
	out := make([]int64, len(names))
	for i, name := range names {
		switch name {
		case api.ResourceCPU:
			out[i] = int64(math.Round(r.MilliCPU))
		case api.ResourceMemory:
			out[i] = int64(math.Round(r.Memory))
		default:
			out[i] = int64(math.Round(r.Scalars[name]))
		}
	}
	return out
}

// Unit is the factor from a run's integer amount of a resource to its natural unit: 1000
// for cpu (cores) and other resources (units), 1 for memory (bytes).
func Unit(resource string) float64 {
	if resource == api.ResourceMemory {
		return 1
	}
	return 1000
}

func (s *runState) vector(r *api.Resource) []int64 { return vectorOf(s.resources, r) }

// addVec adds sign times v to dst.
func addVec(dst, v []int64, sign int64) {
	for i := range dst {
		dst[i] += sign * v[i]
	}
}

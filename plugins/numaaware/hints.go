package numaaware

import (
	"math/bits"

	"github.com/sluice-sched/sluice/engine/api"
)

// numaMask is a set of NUMA node ids (0 to 63), as the kubelet's bitmask.
type numaMask uint64

// maskOf returns the mask of the given NUMA ids.
func maskOf(ids ...int) numaMask {
	var m numaMask
	for _, id := range ids {
		m |= 1 << id
	}
	return m
}

func (m numaMask) count() int { return bits.OnesCount64(uint64(m)) }

// ids returns the NUMA ids of m, ascending.
func (m numaMask) ids() []int {
	var out []int
	for w := uint64(m); w != 0; w &= w - 1 {
		out = append(out, bits.TrailingZeros64(w))
	}
	return out
}

// narrower reports whether m is narrower than o: fewer NUMA nodes, or as many and a lower
// value (the kubelet's IsNarrowerThan).
func (m numaMask) narrower(o numaMask) bool {
	if m.count() != o.count() {
		return m.count() < o.count()
	}
	return m < o
}

// subMasks returns every non-empty subset of m in the kubelet's IterateBitMasks order: by
// size, then lexicographically by ids.
func subMasks(m numaMask) []numaMask {
	ids := m.ids()
	var out []numaMask
	var walk func(start, left int, acc numaMask)
	walk = func(start, left int, acc numaMask) {
		if left == 0 {
			out = append(out, acc)
			return
		}
		for i := start; i <= len(ids)-left; i++ {
			walk(i+1, left-1, acc|maskOf(ids[i]))
		}
	}
	for k := 1; k <= len(ids); k++ {
		walk(0, k, 0)
	}
	return out
}

// hint is a topology hint: NUMA nodes a resource could be aligned to, and whether that
// alignment is preferred. A zero mask means any NUMA node (the kubelet's nil affinity).
type hint struct {
	mask      numaMask
	preferred bool
}

// Whole hint lists a resource gives instead of masks.
var (
	// anyNuma: the resource has no NUMA preference.
	anyNuma = []hint{{preferred: true}}
	// noNuma: no NUMA placement can serve the resource.
	noNuma = []hint{{preferred: false}}
)

// cpuHints returns the CPU manager's hints for request exclusive CPUs among avail: every set
// of NUMA nodes whose available CPUs are enough, preferred when it has as few NUMA nodes as
// the smallest set whose CPUs (available or not) could ever be enough. A request of 0 (not a
// whole number of CPUs) has no preference.
func cpuHints(t *topology, avail cpuSet, request int) []hint {
	if request == 0 {
		return anyNuma
	}
	masks := subMasks(t.numa)
	minSize := t.numa.count()
	var hints []hint
	for _, m := range masks {
		cpus := t.inNuma(m)
		if cpus.size() >= request && m.count() < minSize {
			minSize = m.count()
		}
		if cpus.intersect(avail).size() >= request {
			hints = append(hints, hint{mask: m})
		}
	}
	if len(hints) == 0 {
		return noNuma
	}
	for i := range hints {
		hints[i].preferred = hints[i].mask.count() == minSize
	}
	return hints
}

// mergeHints is the topology manager's merge: over every combination of one hint per
// resource, the AND of the masks (a zero mask counts as all of all), preferred when every
// hint of the combination is. The best merged hint is a preferred one if any, then the
// narrowest; empty merges never win. Without any winner it is all NUMA nodes, not preferred.
func mergeHints(all numaMask, resources [][]hint) hint {
	best := hint{mask: all}
	var walk func(i int, mask numaMask, preferred bool)
	walk = func(i int, mask numaMask, preferred bool) {
		if i == len(resources) {
			merged := hint{mask: mask, preferred: preferred}
			switch {
			case merged.mask == 0:
			case merged.preferred && !best.preferred:
				best = merged
			case merged.preferred == best.preferred && merged.mask.narrower(best.mask):
				best = merged
			}
			return
		}
		for _, h := range resources[i] {
			m := h.mask
			if m == 0 {
				m = all
			}
			walk(i+1, mask&m, preferred && h.preferred)
		}
	}
	walk(0, all, true)
	return best
}

// A policy picks the best hint for a task from its resources' hints and says whether the
// node admits the task.
type policy func(all numaMask, resources [][]hint) (best hint, admit bool)

// policies are the topology manager's policies by name.
var policies = map[string]policy{
	// none: no alignment; any NUMA node will do.
	api.TopologyPolicyNone: func(numaMask, [][]hint) (hint, bool) { return hint{}, true },
	// best-effort: align as well as possible, admit in any case.
	api.TopologyPolicyBestEffort: func(all numaMask, resources [][]hint) (hint, bool) {
		return mergeHints(all, resources), true
	},
	// restricted: admit only a preferred alignment.
	api.TopologyPolicyRestricted: func(all numaMask, resources [][]hint) (hint, bool) {
		best := mergeHints(all, resources)
		return best, best.preferred
	},
	// single-numa-node: admit only a preferred alignment on one NUMA node.
	api.TopologyPolicySingleNumaNode: func(all numaMask, resources [][]hint) (hint, bool) {
		best := mergeHints(all, singleNumaHints(resources))
		return best, best.preferred
	},
}

// singleNumaHints keeps, per resource, the preferred hints of one NUMA node or of none in
// particular.
func singleNumaHints(resources [][]hint) [][]hint {
	out := make([][]hint, len(resources))
	for i, hs := range resources {
		out[i] = []hint{}
		for _, h := range hs {
			if h.preferred && h.mask.count() <= 1 {
				out[i] = append(out[i], h)
			}
		}
	}
	return out
}

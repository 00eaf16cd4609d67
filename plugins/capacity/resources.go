package capacity

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// The helpers in this file reproduce the Volcano resource comparisons the capacity plugin uses
// where Sluice's api package has no exact equivalent. Their quirks (strict or tolerant
// comparison, which dimensions take part) decide admission and victims, so they are kept in
// behaviour. Dimensions are visited cpu, memory, then scalars by name, so results and the
// names they report never depend on map order.

// infiniteResource is Volcano's InfiniteResource with every scalar of total set to MaxInt64:
// what the root queue may hold when it sets no capability.
func infiniteResource(total *api.Resource) *api.Resource {
	out := &api.Resource{MilliCPU: math.MaxFloat64, Memory: math.MaxFloat64, MaxTaskNum: math.MaxInt}
	for _, k := range total.ScalarNames() {
		out.SetScalar(k, math.MaxInt64)
	}
	return out
}

func lessEqualTol(l, r float64) bool { return l < r || math.Abs(l-r) < api.MinResource }

// somewhereWithin is Volcano's LessEqualPartlyWithDimensionZeroFiltered(l, r, req): among the
// dimensions req asks for in which l or r holds at least MinResource, is there one where l is
// at most r (within the tolerance)? It reports false when no dimension takes part.
func somewhereWithin(l, r, req *api.Resource) bool {
	for _, n := range req.RequestedNames() {
		lv, rv := l.Get(n), r.Get(n)
		if lv < api.MinResource && rv < api.MinResource {
			continue
		}
		if lessEqualTol(lv, rv) {
			return true
		}
	}
	return false
}

// aboveInRelevant is Volcano's GreaterPartlyWithRelevantDimensions(l, r, req): among the
// dimensions req asks for that r holds (cpu and memory at least MinResource; a scalar named in
// r at all), is l strictly above r in one of them?
func aboveInRelevant(l, r, req *api.Resource) bool {
	for _, n := range req.RequestedNames() {
		switch n {
		case api.ResourceCPU, api.ResourceMemory:
			if r.Get(n) < api.MinResource {
				continue
			}
		default:
			if _, ok := r.Scalars[n]; !ok {
				continue
			}
		}
		if l.Get(n) > r.Get(n) {
			return true
		}
	}
	return false
}

// intersects is Volcano's len(Intersection(a, b)) > 0: some dimension holds at least
// MinResource in both.
func intersects(a, b *api.Resource) bool {
	bn := map[string]bool{}
	for _, n := range b.Names() {
		bn[n] = true
	}
	for _, n := range a.Names() {
		if bn[n] {
			return true
		}
	}
	return false
}

// formatAmount formats one dimension's amount in human units.
func formatAmount(name string, v float64) string {
	if v >= math.MaxFloat64/2 {
		return "unlimited"
	}
	if name == api.ResourceMemory {
		return api.FormatBytes(v)
	}
	return api.FormatMilli(v)
}

// describe lists, for the given dimensions, "name l op rName r".
func describe(names []string, l *api.Resource, op string, r *api.Resource, rName string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %s %s %s %s", n, formatAmount(n, l.Get(n)), op, rName, formatAmount(n, r.Get(n))))
	}
	return strings.Join(parts, ", ")
}

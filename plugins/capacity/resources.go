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

// isSet reports whether a queue's resource field was given (Volcano: a non-empty ResourceList).
func isSet(r api.Resource) bool {
	return r.MilliCPU != 0 || r.Memory != 0 || len(r.Scalars) != 0 || r.MaxTaskNum != 0
}

// maxResource is Volcano's helpers.Max: the larger of l and r per dimension; scalars that are
// not positive on either side are dropped.
func maxResource(l, r *api.Resource) *api.Resource {
	out := &api.Resource{MilliCPU: math.Max(l.MilliCPU, r.MilliCPU), Memory: math.Max(l.Memory, r.Memory)}
	if l.Scalars == nil && r.Scalars == nil {
		return out
	}
	out.Scalars = map[string]float64{}
	for _, k := range l.ScalarNames() {
		if v := l.Scalars[k]; v > 0 {
			out.Scalars[k] = v
		}
	}
	for _, k := range r.ScalarNames() {
		if v := r.Scalars[k]; v > 0 {
			out.Scalars[k] = math.Max(v, out.Scalars[k])
		}
	}
	return out
}

// infiniteResource is Volcano's InfiniteResource with every scalar of total set to MaxInt64:
// what the root queue may hold when it sets no capability.
func infiniteResource(total *api.Resource) *api.Resource {
	out := &api.Resource{MilliCPU: math.MaxFloat64, Memory: math.MaxFloat64, MaxTaskNum: math.MaxInt}
	for _, k := range total.ScalarNames() {
		out.SetScalar(k, math.MaxInt64)
	}
	return out
}

// share is Volcano's helpers.Share: l/r, with 0/0 = 0 and x/0 = 1.
func share(l, r float64) float64 {
	if r == 0 {
		if l == 0 {
			return 0
		}
		return 1
	}
	return l / r
}

func lessEqualTol(l, r float64) bool { return l < r || math.Abs(l-r) < api.MinResource }

// requested returns the dimensions req asks for (a positive amount): cpu, memory, then
// scalars by name.
func requested(req *api.Resource) []string {
	var out []string
	if req.MilliCPU > 0 {
		out = append(out, api.ResourceCPU)
	}
	if req.Memory > 0 {
		out = append(out, api.ResourceMemory)
	}
	for _, k := range req.ScalarNames() {
		if req.Scalars[k] > 0 {
			out = append(out, k)
		}
	}
	return out
}

// exceededIn returns the dimensions req asks for in which l is strictly above r (a scalar r
// lacks counts as 0). It is empty exactly when Volcano's
// LessEqualWithDimensionAndResourcesName(l, r, req) holds.
func exceededIn(l, r, req *api.Resource) []string {
	var out []string
	for _, n := range requested(req) {
		if l.Get(n) > r.Get(n) {
			out = append(out, n)
		}
	}
	return out
}

// somewhereWithin is Volcano's LessEqualPartlyWithDimensionZeroFiltered(l, r, req): among the
// dimensions req asks for in which l or r holds at least MinResource, is there one where l is
// at most r (within the tolerance)? It reports false when no dimension takes part.
func somewhereWithin(l, r, req *api.Resource) bool {
	for _, n := range requested(req) {
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
	for _, n := range requested(req) {
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

// jobMinResources is the job's minResources, nil when the job sets none.
func jobMinResources(j *api.JobInfo) *api.Resource {
	if j.MinResources == nil || !isSet(*j.MinResources) {
		return nil
	}
	return j.MinResources
}

// inqueueResource is Volcano's util.GetInqueueResource: what a job's minResources still
// reserves beyond what its tasks hold. As in Volcano, a scalar's minimum is taken in whole
// units (Quantity.Value) while allocated scalars are in milli-units; "count/" quotas are
// skipped.
func inqueueResource(min, allocated *api.Resource) *api.Resource {
	out := api.EmptyResource()
	if v := min.MilliCPU - allocated.MilliCPU; v > 0 {
		out.MilliCPU = v
	}
	if v := min.Memory - allocated.Memory; v > 0 {
		out.Memory = v
	}
	for _, k := range min.ScalarNames() {
		if strings.HasPrefix(k, "count/") {
			continue
		}
		units := math.Ceil(min.Scalars[k] / 1000)
		a, ok := allocated.Scalars[k]
		if !ok {
			out.SetScalar(k, units)
			continue
		}
		if v := units - a; v > 0 {
			out.SetScalar(k, v)
		}
	}
	return out
}

// allocatedTaskNum counts the job's tasks in an allocated status.
func allocatedTaskNum(j *api.JobInfo) int32 {
	n := int32(0)
	for s, idx := range j.TaskStatusIndex {
		if api.AllocatedStatus(s) {
			n += int32(len(idx))
		}
	}
	return n
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

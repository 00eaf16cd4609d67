package proportion

import (
	"fmt"
	"math"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// The helpers in this file reproduce Volcano's resource helpers where Sluice's api package has
// no exact equivalent; their quirks (which scalar keys are present, how a missing dimension
// compares) decide when the water-filling stops, so they are copied in behaviour.

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
	for k, v := range l.Scalars {
		if v > 0 {
			out.Scalars[k] = v
		}
	}
	for k, v := range r.Scalars {
		if v > 0 {
			out.Scalars[k] = math.Max(v, out.Scalars[k])
		}
	}
	return out
}

// diff is Volcano's Resource.Diff with the Zero default: per dimension, how much l exceeds r
// (increased) and how much r exceeds or equals l (decreased). Every scalar named on either side
// is present in one of the results, possibly as 0.
func diff(l, r *api.Resource) (inc, dec *api.Resource) {
	inc, dec = &api.Resource{Scalars: map[string]float64{}}, &api.Resource{Scalars: map[string]float64{}}
	if l.MilliCPU > r.MilliCPU {
		inc.MilliCPU = l.MilliCPU - r.MilliCPU
	} else {
		dec.MilliCPU = r.MilliCPU - l.MilliCPU
	}
	if l.Memory > r.Memory {
		inc.Memory = l.Memory - r.Memory
	} else {
		dec.Memory = r.Memory - l.Memory
	}
	for _, k := range scalarUnion(l, r) {
		lv, rv := l.Scalars[k], r.Scalars[k]
		if lv > rv {
			inc.Scalars[k] += lv - rv
		} else {
			dec.Scalars[k] += rv - lv
		}
	}
	return inc, dec
}

func scalarUnion(l, r *api.Resource) []string {
	seen := map[string]bool{}
	var out []string
	for _, res := range []*api.Resource{l, r} {
		for _, k := range res.ScalarNames() {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	return out
}

// sameResource is Kubernetes' semantic deep equality of two resources: equal amounts and the
// same scalar keys (a nil map equals an empty one).
func sameResource(a, b *api.Resource) bool {
	if a.MilliCPU != b.MilliCPU || a.Memory != b.Memory || a.MaxTaskNum != b.MaxTaskNum || len(a.Scalars) != len(b.Scalars) {
		return false
	}
	for k, v := range a.Scalars {
		if bv, ok := b.Scalars[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

func lessEqualTol(l, r float64) bool { return l < r || math.Abs(l-r) < api.MinResource }

// requestedNames returns the dimensions req asks for (a positive amount): cpu, memory, then
// scalars by name.
func requestedNames(req *api.Resource) []string {
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

// exceededIn returns the dimensions req asks for in which l exceeds r (beyond the tolerance); a
// scalar r lacks counts as 0. It is empty when Volcano's LessEqualWithDimension(l, r, req) holds.
func exceededIn(l, r, req *api.Resource) []string {
	var out []string
	for _, n := range requestedNames(req) {
		if !lessEqualTol(l.Get(n), r.Get(n)) {
			out = append(out, n)
		}
	}
	return out
}

// jobMinResources is the job's minResources, nil when the job sets none.
func jobMinResources(j *api.JobInfo) *api.Resource {
	if j.MinResources == nil || !isSet(*j.MinResources) {
		return nil
	}
	return j.MinResources
}

// runningInqueue is Volcano's util.GetInqueueResource: what a running job's minResources still
// reserves beyond what its tasks hold. As in Volcano, a scalar's minimum is taken in whole
// units (Quantity.Value) while allocated scalars are in milli-units; "count/" quotas are
// skipped.
func runningInqueue(min, allocated *api.Resource) *api.Resource {
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

// formatAmount formats one dimension's amount in human units.
func formatAmount(name string, v float64) string {
	if name == api.ResourceMemory {
		return api.FormatBytes(v)
	}
	return api.FormatMilli(v)
}

// describe lists, for the given dimensions, "name l op r".
func describe(names []string, l *api.Resource, op string, r *api.Resource, rName string) string {
	parts := make([]string, 0, len(names))
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %s %s %s %s", n, formatAmount(n, l.Get(n)), op, rName, formatAmount(n, r.Get(n))))
	}
	return strings.Join(parts, ", ")
}

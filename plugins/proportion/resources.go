package proportion

import (
	"fmt"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// The helpers in this file reproduce Volcano's resource helpers where Sluice's api package has
// no exact equivalent; their quirks (which scalar keys are present, how a missing dimension
// compares) decide when the water-filling stops, so they are copied in behaviour.

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

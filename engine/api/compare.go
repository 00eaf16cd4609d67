package api

import "math"

// The functions in this file reproduce Volcano resource helpers that plugins compare queue and
// job amounts with, where the comparisons in resource.go do not fit: they look only at the
// dimensions a request asks for, or drop zero scalars. Dimensions are visited cpu, memory, then
// scalars by name, so results and the names they report never depend on map order.

// MaxResource is Volcano's helpers.Max: a new resource holding the larger of l and r in each
// dimension. Scalars that are not positive on either side are dropped; the result has nil
// Scalars when both l and r do. MaxTaskNum is left 0.
func MaxResource(l, r *Resource) *Resource {
	out := &Resource{MilliCPU: math.Max(l.MilliCPU, r.MilliCPU), Memory: math.Max(l.Memory, r.Memory)}
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

// RequestedNames returns the dimensions r asks for, that is holds a positive amount of: cpu,
// memory, then scalars by name. Unlike Names it applies no MinResource threshold.
func (r *Resource) RequestedNames() []string {
	var out []string
	if r.MilliCPU > 0 {
		out = append(out, ResourceCPU)
	}
	if r.Memory > 0 {
		out = append(out, ResourceMemory)
	}
	for _, k := range r.ScalarNames() {
		if r.Scalars[k] > 0 {
			out = append(out, k)
		}
	}
	return out
}

// ExceededIn returns the dimensions req asks for (see RequestedNames) in which r exceeds rr by
// at least MinResource; a scalar rr lacks counts as 0. It is empty exactly when Volcano's
// LessEqualWithDimension(r, rr, req) holds.
func (r *Resource) ExceededIn(rr, req *Resource) []string {
	var out []string
	for _, n := range req.RequestedNames() {
		if !lessEqualTol(r.Get(n), rr.Get(n)) {
			out = append(out, n)
		}
	}
	return out
}

// SumWithin reports whether r + add stays within limit, to MinResource, in every dimension add
// asks for (see RequestedNames): len(r.Clone().Add(add).ExceededIn(limit, add)) == 0, with the
// same arithmetic, without building either.
func (r *Resource) SumWithin(add, limit *Resource) bool {
	if add.MilliCPU > 0 && !lessEqualTol(r.MilliCPU+add.MilliCPU, limit.MilliCPU) {
		return false
	}
	if add.Memory > 0 && !lessEqualTol(r.Memory+add.Memory, limit.Memory) {
		return false
	}
	for k, v := range add.Scalars {
		if v > 0 && !lessEqualTol(r.Scalars[k]+v, limit.Scalars[k]) {
			return false
		}
	}
	return true
}

// StrictlyAboveIn returns the dimensions req asks for (see RequestedNames) in which r is
// strictly above rr, with no tolerance; a scalar rr lacks counts as 0. It is empty exactly when
// Volcano's LessEqualWithDimensionAndResourcesName(r, rr, req) holds.
func (r *Resource) StrictlyAboveIn(rr, req *Resource) []string {
	var out []string
	for _, n := range req.RequestedNames() {
		if r.Get(n) > rr.Get(n) {
			out = append(out, n)
		}
	}
	return out
}

package api

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// MinResource is the tolerance Volcano uses when comparing resource amounts: two amounts
// closer than this are equal.
const MinResource float64 = 0.1

// Well-known resource names.
const (
	ResourceCPU    = "cpu"
	ResourceMemory = "memory"
	ResourcePods   = "pods"
	ResourceGPU    = "nvidia.com/gpu"
)

// DimensionDefault says how a dimension that one side of a comparison lacks is treated.
type DimensionDefault int

const (
	// Zero treats a missing scalar dimension as zero.
	Zero DimensionDefault = iota
	// Infinity treats a missing scalar dimension as unlimited.
	Infinity
)

// Resource is an amount of resources: milli-CPU, memory in bytes, and scalar resources
// (anything else, e.g. nvidia.com/gpu) in milli-units, as Volcano counts them. MaxTaskNum
// carries a node's pod capacity; only predicates read it and arithmetic ignores it.
type Resource struct {
	MilliCPU float64
	Memory   float64
	// Scalars maps a scalar resource name to its amount in milli-units.
	Scalars map[string]float64
	// MaxTaskNum is the number of tasks a node accepts ("pods"); 0 means unset.
	MaxTaskNum int
}

// EmptyResource returns a new zero resource.
func EmptyResource() *Resource { return &Resource{} }

// NewResource builds a resource from already-parsed amounts in base units: cpu in cores,
// memory in bytes, pods in tasks, any other name in units (stored as milli-units).
func NewResource(amounts map[string]float64) *Resource {
	r := EmptyResource()
	for name, v := range amounts {
		switch name {
		case ResourceCPU:
			r.MilliCPU += v * 1000
		case ResourceMemory:
			r.Memory += v
		case ResourcePods:
			r.MaxTaskNum += int(v)
		default:
			r.AddScalar(name, v*1000)
		}
	}
	return r
}

// Clone returns a deep copy.
func (r *Resource) Clone() *Resource {
	c := &Resource{MilliCPU: r.MilliCPU, Memory: r.Memory, MaxTaskNum: r.MaxTaskNum}
	if r.Scalars != nil {
		c.Scalars = make(map[string]float64, len(r.Scalars))
		for k, v := range r.Scalars {
			c.Scalars[k] = v
		}
	}
	return c
}

// ScalarNames returns the scalar resource names in sorted order.
func (r *Resource) ScalarNames() []string {
	names := make([]string, 0, len(r.Scalars))
	for k := range r.Scalars {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

// Names returns the names of every dimension at least MinResource, cpu and memory first, then
// scalars by name.
func (r *Resource) Names() []string {
	var names []string
	if r.MilliCPU >= MinResource {
		names = append(names, ResourceCPU)
	}
	if r.Memory >= MinResource {
		names = append(names, ResourceMemory)
	}
	for _, n := range r.ScalarNames() {
		if r.Scalars[n] >= MinResource {
			names = append(names, n)
		}
	}
	return names
}

// Get returns one dimension's amount (milli-CPU for cpu, bytes for memory, milli-units for
// scalars).
func (r *Resource) Get(name string) float64 {
	switch name {
	case ResourceCPU:
		return r.MilliCPU
	case ResourceMemory:
		return r.Memory
	case ResourcePods:
		return float64(r.MaxTaskNum)
	default:
		return r.Scalars[name]
	}
}

// Set sets one dimension's amount, in the units Get returns.
func (r *Resource) Set(name string, v float64) {
	switch name {
	case ResourceCPU:
		r.MilliCPU = v
	case ResourceMemory:
		r.Memory = v
	case ResourcePods:
		r.MaxTaskNum = int(v)
	default:
		r.SetScalar(name, v)
	}
}

// IsEmpty reports whether every dimension is below MinResource.
func (r *Resource) IsEmpty() bool {
	if r.MilliCPU >= MinResource || r.Memory >= MinResource {
		return false
	}
	for _, v := range r.Scalars {
		if v >= MinResource {
			return false
		}
	}
	return true
}

// IsZero reports whether the named dimension is below MinResource.
func (r *Resource) IsZero(name string) bool { return r.Get(name) < MinResource }

// Add adds rr to r in place and returns r.
func (r *Resource) Add(rr *Resource) *Resource {
	r.MilliCPU += rr.MilliCPU
	r.Memory += rr.Memory
	for k, v := range rr.Scalars {
		if r.Scalars == nil {
			r.Scalars = make(map[string]float64, len(rr.Scalars))
		}
		r.Scalars[k] += v
	}
	return r
}

// Sub subtracts rr from r in place and returns r. Unlike Volcano it does not assert that rr
// fits; amounts may go negative and callers that care check first.
func (r *Resource) Sub(rr *Resource) *Resource {
	r.MilliCPU -= rr.MilliCPU
	r.Memory -= rr.Memory
	for k, v := range rr.Scalars {
		if r.Scalars == nil {
			r.Scalars = make(map[string]float64, len(rr.Scalars))
		}
		r.Scalars[k] -= v
	}
	return r
}

// SubWithoutAssert is Sub; it exists to mirror Volcano's vocabulary where a negative result
// is expected.
func (r *Resource) SubWithoutAssert(rr *Resource) *Resource { return r.Sub(rr) }

// Multi multiplies every dimension by ratio in place and returns r.
func (r *Resource) Multi(ratio float64) *Resource {
	r.MilliCPU *= ratio
	r.Memory *= ratio
	for k, v := range r.Scalars {
		r.Scalars[k] = v * ratio
	}
	return r
}

// AddScalar adds v to a scalar dimension.
func (r *Resource) AddScalar(name string, v float64) { r.SetScalar(name, r.Scalars[name]+v) }

// SetScalar sets a scalar dimension.
func (r *Resource) SetScalar(name string, v float64) {
	if r.Scalars == nil {
		r.Scalars = map[string]float64{}
	}
	r.Scalars[name] = v
}

// SetMax raises each dimension of r to at least rr's.
func (r *Resource) SetMax(rr *Resource) *Resource {
	r.MilliCPU = math.Max(r.MilliCPU, rr.MilliCPU)
	r.Memory = math.Max(r.Memory, rr.Memory)
	for k, v := range rr.Scalars {
		if cur, ok := r.Scalars[k]; !ok || v > cur {
			r.SetScalar(k, v)
		}
	}
	return r
}

// MinDimension lowers each dimension of r to at most rr's; a scalar that rr lacks counts as
// dflt (Zero: set to 0; Infinity: left alone).
func (r *Resource) MinDimension(rr *Resource, dflt DimensionDefault) *Resource {
	r.MilliCPU = math.Min(r.MilliCPU, rr.MilliCPU)
	r.Memory = math.Min(r.Memory, rr.Memory)
	for k, v := range r.Scalars {
		rv, ok := rr.Scalars[k]
		if !ok {
			if dflt == Zero {
				r.Scalars[k] = 0
			}
			continue
		}
		if rv < v {
			r.Scalars[k] = rv
		}
	}
	return r
}

// scalarPair calls f for every scalar name on either side, in sorted order, with each side's
// value; a side that lacks the name gets its default (0 for Zero, -1 meaning unlimited for
// Infinity).
func scalarPair(l, rr *Resource, dflt DimensionDefault, f func(name string, lv, rv float64) bool) bool {
	missing := 0.0
	if dflt == Infinity {
		missing = -1
	}
	seen := make(map[string]struct{}, len(l.Scalars)+len(rr.Scalars))
	names := make([]string, 0, len(l.Scalars)+len(rr.Scalars))
	for k := range l.Scalars {
		seen[k] = struct{}{}
		names = append(names, k)
	}
	for k := range rr.Scalars {
		if _, ok := seen[k]; !ok {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	for _, k := range names {
		lv, ok := l.Scalars[k]
		if !ok {
			lv = missing
		}
		rv, ok := rr.Scalars[k]
		if !ok {
			rv = missing
		}
		if !f(k, lv, rv) {
			return false
		}
	}
	return true
}

func lessEqualTol(l, r float64) bool { return l < r || math.Abs(l-r) < MinResource }

// LessEqual reports whether every dimension of r is at most rr's (within MinResource).
// A scalar missing on one side counts as dflt; with Infinity a missing right side always
// fits and a missing left side never fits unless the right is missing too.
func (r *Resource) LessEqual(rr *Resource, dflt DimensionDefault) bool {
	if !lessEqualTol(r.MilliCPU, rr.MilliCPU) || !lessEqualTol(r.Memory, rr.Memory) {
		return false
	}
	if len(r.Scalars) == 0 && len(rr.Scalars) == 0 {
		return true
	}
	return scalarPair(r, rr, dflt, func(_ string, lv, rv float64) bool {
		if rv == -1 {
			return true
		}
		if lv == -1 {
			return false
		}
		return lessEqualTol(lv, rv)
	})
}

// Less reports whether every dimension of r is strictly below rr's.
func (r *Resource) Less(rr *Resource, dflt DimensionDefault) bool {
	if !(r.MilliCPU < rr.MilliCPU) || !(r.Memory < rr.Memory) {
		return false
	}
	return scalarPair(r, rr, dflt, func(_ string, lv, rv float64) bool {
		if rv == -1 {
			return true
		}
		if lv == -1 {
			return false
		}
		return lv < rv
	})
}

// LessPartly reports whether some dimension of r is strictly below rr's.
func (r *Resource) LessPartly(rr *Resource, dflt DimensionDefault) bool {
	if r.MilliCPU < rr.MilliCPU || r.Memory < rr.Memory {
		return true
	}
	found := false
	scalarPair(r, rr, dflt, func(_ string, lv, rv float64) bool {
		if lv == -1 {
			return true
		}
		if rv == -1 || lv < rv {
			found = true
			return false
		}
		return true
	})
	return found
}

// LessEqualPartly reports whether some dimension of r is at most rr's.
func (r *Resource) LessEqualPartly(rr *Resource, dflt DimensionDefault) bool {
	if lessEqualTol(r.MilliCPU, rr.MilliCPU) || lessEqualTol(r.Memory, rr.Memory) {
		return true
	}
	found := false
	scalarPair(r, rr, dflt, func(_ string, lv, rv float64) bool {
		if lv == -1 {
			return true
		}
		if rv == -1 || lessEqualTol(lv, rv) {
			found = true
			return false
		}
		return true
	})
	return found
}

// Equal reports whether every dimension matches within MinResource.
func (r *Resource) Equal(rr *Resource, dflt DimensionDefault) bool {
	eq := func(a, b float64) bool { return a == b || math.Abs(a-b) < MinResource }
	if !eq(r.MilliCPU, rr.MilliCPU) || !eq(r.Memory, rr.Memory) {
		return false
	}
	return scalarPair(r, rr, dflt, func(_ string, lv, rv float64) bool { return eq(lv, rv) })
}

// FitDelta subtracts rr plus the tolerance from r for each dimension rr asks for; a negative
// dimension of the result is a shortfall.
func (r *Resource) FitDelta(rr *Resource) *Resource {
	if rr.MilliCPU > 0 {
		r.MilliCPU -= rr.MilliCPU + MinResource
	}
	if rr.Memory > 0 {
		r.Memory -= rr.Memory + MinResource
	}
	for k, v := range rr.Scalars {
		if v > 0 {
			r.SetScalar(k, r.Scalars[k]-v-MinResource)
		}
	}
	return r
}

// ExceededPart returns the part of r that exceeds rr, per dimension (zero where it does not).
func (r *Resource) ExceededPart(rr *Resource) *Resource {
	out := EmptyResource()
	if r.MilliCPU > rr.MilliCPU {
		out.MilliCPU = r.MilliCPU - rr.MilliCPU
	}
	if r.Memory > rr.Memory {
		out.Memory = r.Memory - rr.Memory
	}
	for k, v := range r.Scalars {
		if rv := rr.Scalars[k]; v > rv {
			out.SetScalar(k, v-rv)
		}
	}
	return out
}

// Insufficient returns the names of the dimensions of req that exceed r (the free amount),
// in the order cpu, memory, pods-free scalars by name. It is what a "does not fit" reason
// names.
func (r *Resource) Insufficient(req *Resource) []string {
	var out []string
	if req.MilliCPU > 0 && !lessEqualTol(req.MilliCPU, r.MilliCPU) {
		out = append(out, ResourceCPU)
	}
	if req.Memory > 0 && !lessEqualTol(req.Memory, r.Memory) {
		out = append(out, ResourceMemory)
	}
	for _, k := range req.ScalarNames() {
		if v := req.Scalars[k]; v > 0 && !lessEqualTol(v, r.Scalars[k]) {
			out = append(out, k)
		}
	}
	return out
}

// String formats the resource for logs and explanations, in human units, dimensions sorted.
func (r *Resource) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cpu %s, memory %s", FormatMilli(r.MilliCPU), FormatBytes(r.Memory))
	for _, k := range r.ScalarNames() {
		fmt.Fprintf(&b, ", %s %s", k, FormatMilli(r.Scalars[k]))
	}
	return b.String()
}

// FormatMilli formats a milli-unit amount as units ("2", "0.5").
func FormatMilli(v float64) string {
	return trimFloat(v / 1000)
}

// FormatBytes formats bytes with a binary suffix when exact ("8Gi"), else as a number.
func FormatBytes(v float64) string {
	for _, u := range []struct {
		s string
		f float64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if v >= u.f && math.Mod(v, u.f) == 0 {
			return trimFloat(v/u.f) + u.s
		}
	}
	return trimFloat(v)
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

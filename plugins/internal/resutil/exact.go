package resutil

import (
	"maps"
	"math"

	"github.com/sluice-sched/sluice/engine/api"
)

// ExactBound is the largest magnitude below which every sum of integers is exact in a
// float64, in any order. Plugins that keep sums between cycles (framework.KeptState) add and
// take off amounts in another order than a fresh sum adds them, and float addition depends on
// order: kept sums are a fresh sum's bit for bit only while every amount is an integer and the
// magnitudes of all of them add up to less than ExactBound (Magnitude tells both).
const ExactBound = 1 << 53

// ExactSum is a sum of resources kept with, for each scalar, how many terms name it: a fresh
// sum (api.Resource.Add from empty) names a scalar only when one of its terms does. Its zero
// value is an empty sum.
type ExactSum struct {
	cpu, mem float64
	scalars  map[string]float64
	names    map[string]int
}

// Add adds r to the sum (sign 1) or takes a term added before off it (sign -1).
func (s *ExactSum) Add(r *api.Resource, sign float64) {
	s.cpu += sign * r.MilliCPU
	s.mem += sign * r.Memory
	for k, v := range r.Scalars {
		if s.scalars == nil {
			s.scalars, s.names = map[string]float64{}, map[string]int{}
		}
		s.scalars[k] += sign * v
		if sign > 0 {
			s.names[k]++
		} else if s.names[k]--; s.names[k] == 0 {
			delete(s.names, k)
			delete(s.scalars, k)
		}
	}
	if len(s.names) == 0 {
		s.scalars, s.names = nil, nil
	}
}

// Resource returns the sum as a resource of the caller's.
func (s *ExactSum) Resource() *api.Resource {
	r := &api.Resource{MilliCPU: s.cpu, Memory: s.mem}
	if len(s.scalars) > 0 {
		r.Scalars = maps.Clone(s.scalars)
	}
	return r
}

// Magnitude returns the sum of the magnitudes of r's amounts, and whether each is an
// integer.
func Magnitude(r *api.Resource) (float64, bool) {
	integral := func(v float64) bool { return v == math.Trunc(v) && !math.IsInf(v, 0) }
	m := math.Abs(r.MilliCPU) + math.Abs(r.Memory)
	ok := integral(r.MilliCPU) && integral(r.Memory)
	for _, v := range r.Scalars {
		m += math.Abs(v)
		ok = ok && integral(v)
	}
	return m, ok && !math.IsNaN(m)
}

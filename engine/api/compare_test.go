package api

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

func cmpRes(milliCPU, mem float64, scalars map[string]float64) *Resource {
	return &Resource{MilliCPU: milliCPU, Memory: mem, Scalars: scalars}
}

func TestMaxResource(t *testing.T) {
	tests := []struct {
		name    string
		l, r    *Resource
		want    *Resource
		nilScal bool
	}{
		{
			name: "larger per dimension, zero scalars dropped",
			l:    cmpRes(1, 5, map[string]float64{"a": 0, "b": 2}),
			r:    cmpRes(3, 2, map[string]float64{"b": 1, "c": 4, "d": 0}),
			want: cmpRes(3, 5, map[string]float64{"b": 2, "c": 4}),
		},
		{
			name:    "no scalars on either side",
			l:       cmpRes(1, 1, nil),
			r:       cmpRes(2, 0, nil),
			want:    cmpRes(2, 1, nil),
			nilScal: true,
		},
		{
			name: "scalars on one side only, negative dropped",
			l:    cmpRes(0, 0, nil),
			r:    cmpRes(0, 0, map[string]float64{"a": -1, "b": 3}),
			want: cmpRes(0, 0, map[string]float64{"b": 3}),
		},
		{
			name: "all scalars dropped leaves an empty map",
			l:    cmpRes(0, 0, map[string]float64{"a": 0}),
			r:    cmpRes(0, 0, nil),
			want: cmpRes(0, 0, map[string]float64{}),
		},
	}
	for _, tc := range tests {
		got := MaxResource(tc.l, tc.r)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: MaxResource = %+v, want %+v", tc.name, got, tc.want)
		}
		if (got.Scalars == nil) != tc.nilScal {
			t.Errorf("%s: MaxResource scalars nil = %v, want %v", tc.name, got.Scalars == nil, tc.nilScal)
		}
	}
}

func TestRequestedNames(t *testing.T) {
	tests := []struct {
		req  *Resource
		want []string
	}{
		{cmpRes(0, 0, nil), nil},
		{cmpRes(0.01, 0, nil), []string{ResourceCPU}},
		{cmpRes(1, 1, map[string]float64{"b": 1, "a": 1, "z": 0, "n": -1}), []string{ResourceCPU, ResourceMemory, "a", "b"}},
		{cmpRes(0, 0, map[string]float64{"gpu": 1}), []string{"gpu"}},
	}
	for i, tc := range tests {
		if got := tc.req.RequestedNames(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%d: RequestedNames = %v, want %v", i, got, tc.want)
		}
	}
}

func TestExceededInAndStrictlyAboveIn(t *testing.T) {
	l := cmpRes(3000, 10, map[string]float64{"gpu": 2000})
	r := cmpRes(2000, 5, nil)
	tests := []struct {
		name         string
		l, r, req    *Resource
		want, strict []string
	}{
		{"cpu requested", l, r, cmpRes(1000, 0, nil), []string{ResourceCPU}, []string{ResourceCPU}},
		{"nothing requested", l, r, cmpRes(0, 0, nil), nil, nil},
		{"memory and a scalar r lacks", l, r, cmpRes(0, 1, map[string]float64{"gpu": 1000}), []string{ResourceMemory, "gpu"}, []string{ResourceMemory, "gpu"}},
		{"within the tolerance", cmpRes(2000.05, 0, nil), r, cmpRes(1, 0, nil), nil, []string{ResourceCPU}},
		{"equal", r, r, cmpRes(1, 1, nil), nil, nil},
		{"beyond the tolerance", cmpRes(2000.2, 0, nil), r, cmpRes(1, 0, nil), []string{ResourceCPU}, []string{ResourceCPU}},
		{"below", r, l, cmpRes(1, 1, map[string]float64{"gpu": 1}), nil, nil},
	}
	for _, tc := range tests {
		if got := tc.l.ExceededIn(tc.r, tc.req); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: ExceededIn = %v, want %v", tc.name, got, tc.want)
		}
		if got := tc.l.StrictlyAboveIn(tc.r, tc.req); !reflect.DeepEqual(got, tc.strict) {
			t.Errorf("%s: StrictlyAboveIn = %v, want %v", tc.name, got, tc.strict)
		}
	}
}

// TestSumWithinMatchesExceededIn compares SumWithin with the sum built and checked by
// ExceededIn on random resources with cpu, memory and scalars, some missing on either side.
func TestSumWithinMatchesExceededIn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	random := func() *Resource {
		m := map[string]float64{}
		for _, n := range []string{"cpu", "memory", "nvidia.com/gpu", "example.com/fpga"} {
			if rng.IntN(3) > 0 {
				m[n] = float64(rng.IntN(5)) + []float64{0, 0.1, 0.0001, 1e-9}[rng.IntN(4)]
			}
		}
		return NewResource(m)
	}
	for i := 0; i < 20000; i++ {
		r, add, limit := random(), random(), random()
		want := len(r.Clone().Add(add).ExceededIn(limit, add)) == 0
		if got := r.SumWithin(add, limit); got != want {
			t.Fatalf("%v + %v within %v: SumWithin %v, ExceededIn says %v", r, add, limit, got, want)
		}
	}
}

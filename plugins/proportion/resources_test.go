package proportion

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

func res(cpuMilli, mem float64, scalars map[string]float64) *api.Resource {
	return &api.Resource{MilliCPU: cpuMilli, Memory: mem, Scalars: scalars}
}

func TestMaxResource(t *testing.T) {
	got := maxResource(res(1, 5, map[string]float64{"a": 0, "b": 2}), res(3, 2, map[string]float64{"b": 1, "c": 4, "d": 0}))
	want := res(3, 5, map[string]float64{"b": 2, "c": 4})
	if !sameResource(got, want) {
		t.Errorf("maxResource = %+v, want %+v (zero scalars dropped)", got, want)
	}
	if got := maxResource(res(1, 1, nil), res(2, 0, nil)); got.Scalars != nil {
		t.Errorf("maxResource without scalars = %+v, want nil scalars", got)
	}
}

func TestDiff(t *testing.T) {
	inc, dec := diff(res(5, 1, map[string]float64{"a": 2}), res(3, 4, map[string]float64{"a": 2, "b": 1}))
	if !sameResource(inc, res(2, 0, map[string]float64{})) {
		t.Errorf("increased = %+v", inc)
	}
	if !sameResource(dec, res(0, 3, map[string]float64{"a": 0, "b": 1})) {
		t.Errorf("decreased = %+v", dec)
	}
}

func TestSameResource(t *testing.T) {
	tests := []struct {
		a, b *api.Resource
		want bool
	}{
		{res(1, 2, nil), res(1, 2, map[string]float64{}), true},
		{res(1, 2, map[string]float64{"a": 0}), res(1, 2, nil), false},
		{res(1, 2, map[string]float64{"a": 1}), res(1, 2, map[string]float64{"a": 1}), true},
		{res(1, 2, map[string]float64{"a": 1}), res(1, 2, map[string]float64{"b": 1}), false},
		{res(1, 2, nil), res(1, 3, nil), false},
	}
	for i, tc := range tests {
		if got := sameResource(tc.a, tc.b); got != tc.want {
			t.Errorf("%d: sameResource = %v, want %v", i, got, tc.want)
		}
	}
}

func TestExceededIn(t *testing.T) {
	l := res(3000, 10, map[string]float64{"gpu": 2000})
	r := res(2000, 5, nil)
	if got := exceededIn(l, r, res(1000, 0, nil)); len(got) != 1 || got[0] != "cpu" {
		t.Errorf("exceededIn(cpu) = %v", got)
	}
	if got := exceededIn(l, r, res(0, 0, nil)); len(got) != 0 {
		t.Errorf("exceededIn(nothing requested) = %v", got)
	}
	if got := exceededIn(l, r, res(0, 1, map[string]float64{"gpu": 1000})); len(got) != 2 || got[0] != "memory" || got[1] != "gpu" {
		t.Errorf("exceededIn(memory, gpu) = %v", got)
	}
	if got := exceededIn(res(2000.05, 0, nil), r, res(1, 0, nil)); len(got) != 0 {
		t.Errorf("within tolerance = %v", got)
	}
}

func TestRunningInqueue(t *testing.T) {
	min := res(3000, 100, map[string]float64{"nvidia.com/gpu": 2000, "count/pods": 5000, "x": 1000})
	alloc := res(1000, 100, map[string]float64{"x": 0.5})
	got := runningInqueue(min, alloc)
	// cpu 3-1; memory fully held; gpu not held: 2 whole units (Volcano's unit quirk); x: 1
	// unit - 0.5 milli.
	want := res(2000, 0, map[string]float64{"nvidia.com/gpu": 2, "x": 0.5})
	if !sameResource(got, want) {
		t.Errorf("runningInqueue = %+v, want %+v", got, want)
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct{ l, r, want float64 }{{0, 0, 0}, {2, 0, 1}, {1, 4, 0.25}} {
		if got := share(tc.l, tc.r); got != tc.want {
			t.Errorf("share(%v, %v) = %v, want %v", tc.l, tc.r, got, tc.want)
		}
	}
}

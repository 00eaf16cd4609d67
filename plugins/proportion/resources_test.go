package proportion

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

func res(cpuMilli, mem float64, scalars map[string]float64) *api.Resource {
	return &api.Resource{MilliCPU: cpuMilli, Memory: mem, Scalars: scalars}
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

package resutil

import (
	"math"
	"reflect"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

func res(milliCPU, mem float64, scalars map[string]float64) *api.Resource {
	return &api.Resource{MilliCPU: milliCPU, Memory: mem, Scalars: scalars}
}

func TestIsSet(t *testing.T) {
	tests := []struct {
		r    api.Resource
		want bool
	}{
		{api.Resource{}, false},
		{api.Resource{Scalars: map[string]float64{}}, false},
		{api.Resource{Scalars: map[string]float64{"a": 0}}, true},
		{api.Resource{MilliCPU: 1}, true},
		{api.Resource{Memory: -1}, true},
		{api.Resource{MaxTaskNum: 1}, true},
	}
	for i, tc := range tests {
		if got := IsSet(tc.r); got != tc.want {
			t.Errorf("%d: IsSet(%+v) = %v, want %v", i, tc.r, got, tc.want)
		}
	}
}

func TestJobMinResources(t *testing.T) {
	set := res(1, 0, nil)
	tests := []struct {
		min  *api.Resource
		want *api.Resource
	}{
		{nil, nil},
		{res(0, 0, nil), nil},
		{set, set},
	}
	for i, tc := range tests {
		if got := JobMinResources(&api.JobInfo{MinResources: tc.min}); got != tc.want {
			t.Errorf("%d: JobMinResources = %v, want %v", i, got, tc.want)
		}
	}
}

func TestInqueueResource(t *testing.T) {
	tests := []struct {
		name           string
		min, allocated *api.Resource
		want           *api.Resource
	}{
		{
			// cpu 3-1; memory fully held; gpu not held: 2 whole units (Volcano's unit quirk);
			// x: 1 unit - 0.5 milli; count/ quotas skipped.
			name:      "mixed",
			min:       res(3000, 100, map[string]float64{"nvidia.com/gpu": 2000, "count/pods": 5000, "x": 1000}),
			allocated: res(1000, 100, map[string]float64{"x": 0.5}),
			want:      res(2000, 0, map[string]float64{"nvidia.com/gpu": 2, "x": 0.5}),
		},
		{
			name:      "fully held",
			min:       res(1000, 10, map[string]float64{"x": 1000}),
			allocated: res(2000, 10, map[string]float64{"x": 5}),
			want:      res(0, 0, nil),
		},
		{
			name:      "scalar minimum rounded up to whole units",
			min:       res(0, 0, map[string]float64{"x": 1500}),
			allocated: res(0, 0, nil),
			want:      res(0, 0, map[string]float64{"x": 2}),
		},
	}
	for _, tc := range tests {
		if got := InqueueResource(tc.min, tc.allocated); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: InqueueResource = %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

func TestAllocatedTaskNum(t *testing.T) {
	j := &api.JobInfo{TaskStatusIndex: map[api.TaskStatus]map[string]*api.TaskInfo{
		api.Pending:   {"p": nil},
		api.Allocated: {"a1": nil, "a2": nil},
		api.Running:   {"r": nil},
	}}
	if got := AllocatedTaskNum(j); got != 3 {
		t.Errorf("AllocatedTaskNum = %d, want 3", got)
	}
}

func TestShare(t *testing.T) {
	for _, tc := range []struct{ l, r, want float64 }{{0, 0, 0}, {2, 0, 1}, {1, 4, 0.25}} {
		if got := Share(tc.l, tc.r); got != tc.want {
			t.Errorf("Share(%v, %v) = %v, want %v", tc.l, tc.r, got, tc.want)
		}
	}
}

func TestDominantShare(t *testing.T) {
	base := api.NewResource(map[string]float64{"cpu": 10, "memory": 100, "nvidia.com/gpu": 4})
	tests := []struct {
		name      string
		allocated *api.Resource
		base      *api.Resource
		wantName  string
		wantShare float64
	}{
		{"empty", api.EmptyResource(), base, "", 0},
		{"cpu dominant", api.NewResource(map[string]float64{"cpu": 5, "memory": 10}), base, "cpu", 0.5},
		{"memory dominant", api.NewResource(map[string]float64{"cpu": 1, "memory": 60}), base, "memory", 0.6},
		{"scalar dominant", api.NewResource(map[string]float64{"cpu": 1, "nvidia.com/gpu": 3}), base, "nvidia.com/gpu", 0.75},
		{"tie: the first dimension wins", api.NewResource(map[string]float64{"cpu": 5, "memory": 50}), base, "cpu", 0.5},
		{"a dimension the base lacks is ignored", api.NewResource(map[string]float64{"example.com/fpga": 1}), base, "", 0},
		{"above the base", api.NewResource(map[string]float64{"memory": 150}), base, "memory", 1.5},
		{"empty base", api.NewResource(map[string]float64{"cpu": 1}), api.EmptyResource(), "", 0},
		// Names skips dimensions below MinResource, so a base of 0.05 milli-CPU is no base.
		{"base below MinResource", res(1, 0, nil), res(0.05, 0, nil), "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			name, s := DominantShare(tc.allocated, tc.base)
			if name != tc.wantName || math.Abs(s-tc.wantShare) > 1e-9 {
				t.Errorf("DominantShare = %s %v, want %s %v", name, s, tc.wantName, tc.wantShare)
			}
		})
	}
}

package gangevict

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// job builds a job view with minAvailable, per-role minimums and tasks "role-i" of the given
// statuses, 1 cpu each and priority i.
func job(name string, min int32, roleMin map[string]int32, roles map[string][]api.TaskStatus) *api.JobInfo {
	j := api.NewJobInfo(&api.Job{Name: name, Namespace: "ns", MinAvailable: min, MinAvailableByRole: roleMin}, 0)
	for role, statuses := range roles {
		for i, s := range statuses {
			t := &api.Task{Name: fmt.Sprintf("%s-%s-%d", name, role, i), Namespace: "ns", Job: name, Role: role,
				Resources: *api.NewResource(map[string]float64{"cpu": 1}), Status: s}
			j.AddTaskInfo(api.NewTaskInfo(t, int32(i)))
		}
	}
	return j
}

func running(n int) []api.TaskStatus { return slices.Repeat([]api.TaskStatus{api.Running}, n) }

func uids(ts []*api.TaskInfo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.UID)
	}
	return out
}

// describe renders bundles as "kind:uid,uid kind:uid".
func describe(bs []*Bundle) []string {
	var out []string
	for _, b := range bs {
		out = append(out, fmt.Sprint(b.Kind, ":", uids(b.Tasks)))
	}
	return out
}

// TestBundles follows Volcano's utils/bundle_test.go TestCreateJobBundles_* cases (those
// without sub-jobs, which Sluice does not have).
func TestBundles(t *testing.T) {
	tests := []struct {
		name string
		job  *api.JobInfo
		// local picks the candidates among the job's tasks (nil: all of them).
		local []string
		want  []string
	}{
		{
			name: "SafeAndWhole: surplus of two over minAvailable 3",
			job:  job("j", 3, map[string]int32{"w": 3}, map[string][]api.TaskStatus{"w": running(5)}),
			want: []string{"safe:[ns/j-w-0 ns/j-w-1]", "whole:[ns/j-w-2 ns/j-w-3 ns/j-w-4]"},
		},
		{
			name: "NoTaskMinAvailable: roles are unconstrained",
			job:  job("j", 2, nil, map[string][]api.TaskStatus{"w": running(4)}),
			want: []string{"safe:[ns/j-w-0 ns/j-w-1]", "whole:[ns/j-w-2 ns/j-w-3]"},
		},
		{
			name: "JobNotReady: a broken gang is all safe",
			job:  job("j", 10, nil, map[string][]api.TaskStatus{"w": running(2)}),
			want: []string{"safe:[ns/j-w-0 ns/j-w-1]"},
		},
		{
			name: "tight gang: all whole",
			job:  job("j", 2, nil, map[string][]api.TaskStatus{"w": running(2)}),
			want: []string{"whole:[ns/j-w-0 ns/j-w-1]"},
		},
		{
			name: "role-tight tasks are whole",
			job:  job("j", 3, map[string]int32{"ps": 1, "w": 2}, map[string][]api.TaskStatus{"ps": running(1), "w": running(3)}),
			// ps-0 and w-0 have priority 0 and go first; ps has no surplus.
			want: []string{"safe:[ns/j-w-0]", "whole:[ns/j-ps-0 ns/j-w-1 ns/j-w-2]"},
		},
		{
			name: "role minimums are ignored when they exceed minAvailable",
			job:  job("j", 1, map[string]int32{"ps": 1, "w": 2}, map[string][]api.TaskStatus{"ps": running(1), "w": running(2)}),
			want: []string{"safe:[ns/j-ps-0 ns/j-w-0]", "whole:[ns/j-w-1]"},
		},
		{
			name:  "only the local candidates are bundled, against the whole job's surplus",
			job:   job("j", 2, nil, map[string][]api.TaskStatus{"w": running(4)}),
			local: []string{"ns/j-w-3", "ns/j-w-2", "ns/j-w-1"},
			want:  []string{"safe:[ns/j-w-1 ns/j-w-2]", "whole:[ns/j-w-3]"},
		},
		{
			name:  "pending tasks do not count as ready",
			job:   job("j", 2, nil, map[string][]api.TaskStatus{"w": {api.Running, api.Running, api.Pending}}),
			local: []string{"ns/j-w-0", "ns/j-w-1"},
			want:  []string{"whole:[ns/j-w-0 ns/j-w-1]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var local []*api.TaskInfo
			if tc.local == nil {
				local = tc.job.SortedTasks()
			}
			for _, uid := range tc.local {
				local = append(local, tc.job.Tasks[uid])
			}
			got := Bundles(tc.job, local)
			if !slices.Equal(describe(got), tc.want) {
				t.Errorf("bundles %v, want %v", describe(got), tc.want)
			}
			for _, b := range got {
				wantGlobal := 0.0
				if b.Kind == Whole {
					wantGlobal = tc.job.TotalRequest.MilliCPU
				}
				if b.Local.MilliCPU != float64(1000*len(b.Tasks)) || b.Global.MilliCPU != wantGlobal {
					t.Errorf("%s bundle local %s global %s", b.Kind, b.Local, b.Global)
				}
			}
		})
	}
	if Bundles(nil, nil) != nil {
		t.Error("Bundles(nil) is not nil")
	}
}

func bundle(kind BundleKind, j *api.JobInfo, global float64, uids ...string) *Bundle {
	var ts []*api.TaskInfo
	for _, u := range uids {
		ts = append(ts, &api.TaskInfo{UID: u, Resreq: api.NewResource(map[string]float64{"cpu": 1})})
	}
	return &Bundle{Kind: kind, Job: j, Tasks: ts, Local: sumResreq(ts), Global: api.NewResource(map[string]float64{"cpu": global})}
}

// TestKeepAllowed follows TestApplyAllowedTasks_WholeAtomicAndSafeShrink.
func TestKeepAllowed(t *testing.T) {
	j := &api.JobInfo{UID: "ns/j"}
	bundles := []*Bundle{bundle(Safe, j, 0, "t1", "t2"), bundle(Whole, j, 3, "t3"), bundle(Whole, j, 3, "t4", "t5")}
	allowed := []*api.TaskInfo{{UID: "t1"}, {UID: "t4"}, {UID: "t3x"}}
	got := KeepAllowed(bundles, allowed)
	if want := []string{"safe:[t1]"}; !slices.Equal(describe(got), want) {
		t.Fatalf("kept %v, want %v", describe(got), want)
	}
	if got[0].Local.MilliCPU != 1000 || len(bundles[0].Tasks) != 2 {
		t.Errorf("shrunk bundle local %s (want 1 cpu); original has %d tasks (want 2)", got[0].Local, len(bundles[0].Tasks))
	}
	allowed = append(allowed, &api.TaskInfo{UID: "t5"}, &api.TaskInfo{UID: "t3"})
	if got, want := describe(KeepAllowed(bundles, allowed)), []string{"safe:[t1]", "whole:[t3]", "whole:[t4 t5]"}; !slices.Equal(got, want) {
		t.Errorf("kept %v, want %v", got, want)
	}
}

// TestSortBundles follows TestSortBundlesForPreempt_TypePriorityAndROI,
// TestSortBundlesForPreempt_UsesVictimJobOrder and TestSortBundlesForReclaim_*.
func TestSortBundles(t *testing.T) {
	low := &api.JobInfo{UID: "ns/low", Priority: 1}
	high := &api.JobInfo{UID: "ns/high", Priority: 10}
	lowFirst := func(l, r *api.JobInfo) bool { return l.Priority < r.Priority }
	need := api.NewResource(map[string]float64{"cpu": 1})
	tests := []struct {
		name    string
		bundles []*Bundle
		first   func(l, r *api.JobInfo) bool
		want    []string
	}{
		{
			name:    "safe first, then the better return on investment",
			bundles: []*Bundle{bundle(Whole, low, 4, "w1"), bundle(Safe, high, 0, "s1"), bundle(Whole, low, 2, "w2")},
			first:   lowFirst,
			want:    []string{"safe:[s1]", "whole:[w2]", "whole:[w1]"},
		},
		{
			name:    "victim job order before return on investment",
			bundles: []*Bundle{bundle(Whole, high, 2, "h"), bundle(Whole, low, 4, "l")},
			first:   lowFirst,
			want:    []string{"whole:[l]", "whole:[h]"},
		},
		{
			name:    "no order: return on investment, then job name",
			bundles: []*Bundle{bundle(Whole, low, 2, "l"), bundle(Whole, high, 4, "h"), bundle(Whole, high, 2, "h2")},
			want:    []string{"whole:[h2]", "whole:[l]", "whole:[h]"},
		},
		{
			name:    "one job: first task, then size",
			bundles: []*Bundle{bundle(Safe, low, 0, "b", "c"), bundle(Safe, low, 0, "a"), bundle(Safe, low, 0, "b")},
			first:   lowFirst,
			want:    []string{"safe:[a]", "safe:[b]", "safe:[b c]"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			SortBundles(tc.bundles, need, tc.first)
			if got := describe(tc.bundles); !slices.Equal(got, tc.want) {
				t.Errorf("order %v, want %v", got, tc.want)
			}
		})
	}
}

func TestROI(t *testing.T) {
	need := api.NewResource(map[string]float64{"cpu": 2, "memory": 4})
	b := &Bundle{
		Local:  api.NewResource(map[string]float64{"cpu": 4, "memory": 1}),
		Global: api.NewResource(map[string]float64{"cpu": 8, "memory": 8}),
	}
	// Local capped at need: 2/2 + 1/4 = 1.25; global uncapped: 8/2 + 8/4 = 6.
	if got := roi(b, need); math.Abs(got-1.25/6) > 1e-9 {
		t.Errorf("roi %v, want %v", got, 1.25/6)
	}
	b.Global = api.EmptyResource()
	if got := roi(b, need); !math.IsInf(got, 1) {
		t.Errorf("roi of a bundle that costs nothing %v, want +Inf", got)
	}
}

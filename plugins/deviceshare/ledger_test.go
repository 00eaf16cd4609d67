package deviceshare

import (
	"reflect"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

func TestSnapshotAccounting(t *testing.T) {
	tests := []struct {
		name  string
		build func(c *cluster, j *api.Job)
		want  []devState
	}{
		{
			name: "shares by device ids",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", []string{"g1"}, share(10, 20))
				c.running(j, "b", "n", []string{"g1"}, share(30, 0))
			},
			want: []devState{{ID: "g0"}, {ID: "g1", UsedMemGi: 40, UsedCores: 20, HolderUIDs: "a,b"}, {ID: "g2"}},
		},
		{
			name: "whole devices by ids, in any order",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", []string{"g2", "g0"}, whole(2))
			},
			want: []devState{{ID: "g0", Whole: true, HolderUIDs: "a"}, {ID: "g1"}, {ID: "g2", Whole: true, HolderUIDs: "a"}},
		},
		{
			name: "ids serve the first matching request",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", []string{"g0", "g2"}, model(whole(1), "A100"), model(share(5, 0), "H100"))
			},
			want: []devState{{ID: "g0", UsedMemGi: 5, HolderUIDs: "a"}, {ID: "g1"}, {ID: "g2", Whole: true, HolderUIDs: "a"}},
		},
		{
			name: "ids without requests are held whole",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", []string{"g1"})
			},
			want: []devState{{ID: "g0"}, {ID: "g1", Whole: true, HolderUIDs: "a"}, {ID: "g2"}},
		},
		{
			name: "unknown ids are skipped",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", []string{"gone", "g1"}, share(10, 0))
			},
			want: []devState{{ID: "g0"}, {ID: "g1", UsedMemGi: 10, HolderUIDs: "a"}, {ID: "g2"}},
		},
		{
			name: "tasks without ids get devices after those with ids",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", nil, whole(1))     // takes g1: g0 is used by z
				c.running(j, "b", "n", nil, share(10, 0)) // fullest fitting: g0
				c.running(j, "z", "n", []string{"g0"}, share(20, 0))
			},
			want: []devState{{ID: "g0", UsedMemGi: 30, HolderUIDs: "b,z"}, {ID: "g1", Whole: true, HolderUIDs: "a"}, {ID: "g2"}},
		},
		{
			name: "releasing tasks still hold their devices",
			build: func(c *cluster, j *api.Job) {
				c.running(j, "a", "n", []string{"g2"}, whole(1)).Status = api.Releasing
			},
			want: []devState{{ID: "g0"}, {ID: "g1"}, {ID: "g2", Whole: true, HolderUIDs: "a"}},
		},
		{
			name: "pending and finished tasks hold nothing",
			build: func(c *cluster, j *api.Job) {
				c.task(j, "p", api.Pending, "", whole(1)).DeviceIDs = []string{"g0"}
				c.task(j, "s", api.Succeeded, "n", whole(1)).DeviceIDs = []string{"g1"}
			},
			want: []devState{{ID: "g0"}, {ID: "g1"}, {ID: "g2"}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80), gpu("g2", "A100", 40))
			tc.build(c, c.job("j", 1))
			ssn, _ := c.open(t, config("allocate"))
			if got := usage(ssn.Nodes["n"]); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("usage = %v\nwant    %v", got, tc.want)
			}
		})
	}
}

// TestAllocateChoosesDevices allocates task t on node n through a statement and checks the
// devices it gets. n has g0, g1 (80Gi H100), g2 (40Gi A100), g3 (80Gi H100); running tasks
// hold what held says.
func TestAllocateChoosesDevices(t *testing.T) {
	type holder struct {
		ids []string
		req api.DeviceRequest
	}
	tests := []struct {
		name string
		held []holder
		reqs []api.DeviceRequest
		want []string
	}{
		{name: "no requests, no devices", want: nil},
		{name: "whole devices take the lowest free ids", held: []holder{{[]string{"g0"}, share(1, 0)}},
			reqs: []api.DeviceRequest{whole(2)}, want: []string{"g1", "g2"}},
		{name: "whole by model", reqs: []api.DeviceRequest{model(whole(1), "A100")}, want: []string{"g2"}},
		{name: "share on idle devices goes to the lowest id", reqs: []api.DeviceRequest{share(10, 0)}, want: []string{"g0"}},
		{name: "share goes to the fullest device", held: []holder{{[]string{"g1"}, share(10, 0)}, {[]string{"g3"}, share(30, 0)}},
			reqs: []api.DeviceRequest{share(10, 0)}, want: []string{"g3"}},
		{name: "fullest by memory, then cores", held: []holder{{[]string{"g1"}, share(30, 50)}, {[]string{"g3"}, share(30, 10)}},
			reqs: []api.DeviceRequest{share(10, 10)}, want: []string{"g1"}},
		{name: "equal fullness ties by id", held: []holder{{[]string{"g3"}, share(30, 10)}, {[]string{"g1"}, share(30, 10)}},
			reqs: []api.DeviceRequest{share(10, 10)}, want: []string{"g1"}},
		{name: "the fullest device that fits", held: []holder{{[]string{"g1"}, share(75, 0)}, {[]string{"g3"}, share(30, 0)}},
			reqs: []api.DeviceRequest{share(10, 0)}, want: []string{"g3"}},
		{name: "fullness is absolute memory across models", held: []holder{{[]string{"g2"}, share(35, 0)}, {[]string{"g0"}, share(36, 0)}},
			reqs: []api.DeviceRequest{share(4, 0)}, want: []string{"g0"}},
		{name: "share by model", held: []holder{{[]string{"g0"}, share(30, 0)}},
			reqs: []api.DeviceRequest{model(share(10, 0), "A100")}, want: []string{"g2"}},
		{name: "share on several devices, fullest first", held: []holder{{[]string{"g3"}, share(30, 0)}, {[]string{"g1"}, share(20, 0)}},
			reqs: []api.DeviceRequest{{Type: api.ResourceGPU, Count: 2, Memory: 10 * gib}}, want: []string{"g3", "g1"}},
		{name: "requests in order on distinct devices", held: []holder{{[]string{"g3"}, share(30, 0)}},
			reqs: []api.DeviceRequest{share(10, 0), whole(1), share(10, 0)}, want: []string{"g3", "g0", "g1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80), gpu("g2", "A100", 40), gpu("g3", "H100", 80))
			j := c.job("j", 1)
			for i, h := range tc.held {
				c.running(j, "run"+string(rune('a'+i)), "n", h.ids, h.req)
			}
			c.task(j, "t", api.Pending, "", tc.reqs...)
			ssn, _ := c.open(t, config("allocate"))
			task := taskOf(t, ssn, "j", "t")
			node := ssn.Nodes["n"]
			if err := ssn.NewStatement().Allocate(task, node); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(task.DeviceIDs, tc.want) {
				t.Errorf("DeviceIDs = %v, want %v", task.DeviceIDs, tc.want)
			}
			if got := node.Tasks[task.UID].DeviceIDs; !slices.Equal(got, tc.want) {
				t.Errorf("node copy DeviceIDs = %v, want %v", got, tc.want)
			}
			for _, id := range tc.want {
				if _, ok := device(node, id).Holders[task.UID]; !ok {
					t.Errorf("device %s does not list %s as a holder", id, task.UID)
				}
			}
		})
	}
}

// TestDiscardRestoresUsage allocates, pipelines and evicts through one statement, then
// discards it: device usage and device ids must be exactly as before.
func TestDiscardRestoresUsage(t *testing.T) {
	c := newCluster()
	c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
	c.node("m", gpu("g0", "H100", 80))
	j := c.job("j", 1)
	c.running(j, "r0", "n", []string{"g0"}, share(30, 40))
	c.running(j, "r1", "n", []string{"g1"}, whole(1))
	c.running(j, "r2", "m", []string{"g0"}, share(20, 0))
	c.task(j, "a", api.Pending, "", share(10, 10))
	c.task(j, "b", api.Pending, "", share(50, 0))
	c.task(j, "p", api.Pending, "", whole(1))
	ssn, _ := c.open(t, config("allocate"))
	before := usageOf(ssn)
	r1 := taskOf(t, ssn, "j", "r1")
	idsBefore := slices.Clone(r1.DeviceIDs)

	st := ssn.NewStatement()
	a, b, p := taskOf(t, ssn, "j", "a"), taskOf(t, ssn, "j", "b"), taskOf(t, ssn, "j", "p")
	if err := st.Allocate(a, ssn.Nodes["n"]); err != nil {
		t.Fatal(err)
	}
	if err := st.Allocate(b, ssn.Nodes["m"]); err != nil {
		t.Fatal(err)
	}
	if err := st.Evict(r1, framework.EvictReason{Action: "preempt", ForTask: p.UID}); err != nil {
		t.Fatal(err)
	}
	if err := st.Pipeline(p, "n"); err != nil {
		t.Fatal(err)
	}
	wantMid := map[string][]devState{
		"n": {{ID: "g0", UsedMemGi: 40, UsedCores: 50, HolderUIDs: "a,r0"}, {ID: "g1", Whole: true, HolderUIDs: "p"}},
		"m": {{ID: "g0", UsedMemGi: 70, HolderUIDs: "b,r2"}},
	}
	if got := usageOf(ssn); !reflect.DeepEqual(got, wantMid) {
		t.Fatalf("usage after the statement = %v\nwant %v", got, wantMid)
	}
	if !slices.Equal(a.DeviceIDs, []string{"g0"}) || !slices.Equal(b.DeviceIDs, []string{"g0"}) ||
		!slices.Equal(p.DeviceIDs, []string{"g1"}) || r1.DeviceIDs != nil {
		t.Fatalf("device ids a %v, b %v, p %v, evicted r1 %v", a.DeviceIDs, b.DeviceIDs, p.DeviceIDs, r1.DeviceIDs)
	}

	st.Discard()
	if got := usageOf(ssn); !reflect.DeepEqual(got, before) {
		t.Errorf("usage after discard = %v\nwant %v", got, before)
	}
	if a.DeviceIDs != nil || b.DeviceIDs != nil || p.DeviceIDs != nil {
		t.Errorf("discarded tasks keep device ids: a %v, b %v, p %v", a.DeviceIDs, b.DeviceIDs, p.DeviceIDs)
	}
	if !slices.Equal(r1.DeviceIDs, idsBefore) || r1.Status != api.Running {
		t.Errorf("restored r1: status %s, ids %v; want Running, %v", r1.Status, r1.DeviceIDs, idsBefore)
	}
	if got := ssn.Nodes["n"].Tasks[r1.UID].DeviceIDs; !slices.Equal(got, idsBefore) {
		t.Errorf("node copy of r1 has ids %v, want %v", got, idsBefore)
	}

	// The same placements again give the same devices: nothing leaked.
	st = ssn.NewStatement()
	if err := st.Allocate(a, ssn.Nodes["n"]); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a.DeviceIDs, []string{"g0"}) {
		t.Errorf("after discard, a gets %v, want [g0]", a.DeviceIDs)
	}
}

// TestCommitKeepsUsage commits an eviction and a pipeline and an allocation: the evicted
// task's devices stay free for the preemptor, and the bind carries the device ids.
func TestCommitKeepsUsage(t *testing.T) {
	c := newCluster()
	c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
	j := c.job("j", 1)
	c.running(j, "victim", "n", []string{"g1"}, whole(1))
	c.running(j, "r", "n", []string{"g0"}, share(40, 0))
	c.task(j, "p", api.Pending, "", whole(1))
	c.task(j, "a", api.Pending, "", share(40, 0))
	ssn, _ := c.open(t, config("allocate"))
	victim, p, a := taskOf(t, ssn, "j", "victim"), taskOf(t, ssn, "j", "p"), taskOf(t, ssn, "j", "a")

	st := ssn.NewStatement()
	if err := ssn.PredicateFn(p, ssn.Nodes["n"]); err == nil || !api.AsFitError("n", err).Resolvable() {
		t.Fatalf("before eviction, p: %v, want a resolvable fit error", err)
	}
	if err := st.Evict(victim, framework.EvictReason{Action: "preempt", ForTask: p.UID}); err != nil {
		t.Fatal(err)
	}
	if err := ssn.PredicateFn(p, ssn.Nodes["n"]); err != nil {
		t.Fatalf("after eviction, p does not fit: %v", err)
	}
	if err := st.Pipeline(p, "n"); err != nil {
		t.Fatal(err)
	}
	if err := st.Allocate(a, ssn.Nodes["n"]); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	want := []devState{{ID: "g0", UsedMemGi: 80, HolderUIDs: "a,r"}, {ID: "g1", Whole: true, HolderUIDs: "p"}}
	if got := usage(ssn.Nodes["n"]); !reflect.DeepEqual(got, want) {
		t.Errorf("usage after commit = %v\nwant %v", got, want)
	}
	res := ssn.Close()
	if got := binds(res); !reflect.DeepEqual(got, map[string]string{"a": "n:g0"}) {
		t.Errorf("binds = %v, want a on n:g0", got)
	}
}

// TestNoDevicesForPlacedTask: a task placed on a node that cannot serve its requests (an
// action that did not ask the predicate) gets no device ids and holds nothing.
func TestNoDevicesForPlacedTask(t *testing.T) {
	c := newCluster()
	c.node("n", gpu("g0", "H100", 80))
	j := c.job("j", 1)
	c.running(j, "r", "n", []string{"g0"}, whole(1))
	c.task(j, "t", api.Pending, "", whole(1)).DeviceIDs = []string{"stale"}
	ssn, _ := c.open(t, config("allocate"))
	task := taskOf(t, ssn, "j", "t")
	before := usageOf(ssn)
	st := ssn.NewStatement()
	if err := st.Allocate(task, ssn.Nodes["n"]); err != nil {
		t.Fatal(err)
	}
	if task.DeviceIDs != nil {
		t.Errorf("DeviceIDs = %v, want none", task.DeviceIDs)
	}
	st.Discard()
	if got := usageOf(ssn); !reflect.DeepEqual(got, before) {
		t.Errorf("usage = %v, want %v", got, before)
	}
}

// TestOvercommittedSnapshot: the snapshot may show a device held whole twice, or a task whose
// requests no longer fit; releasing one whole holder keeps the device whole for the other,
// and the task that does not fit holds nothing.
func TestOvercommittedSnapshot(t *testing.T) {
	c := newCluster()
	c.node("n", gpu("g0", "H100", 80))
	j := c.job("j", 1)
	c.running(j, "a", "n", []string{"g0"}, whole(1))
	c.running(j, "b", "n", []string{"g0"}, whole(1))
	c.running(j, "c", "n", nil, share(10, 0))
	ssn, _ := c.open(t, config("allocate"))
	want := []devState{{ID: "g0", Whole: true, HolderUIDs: "a,b"}}
	if got := usage(ssn.Nodes["n"]); !reflect.DeepEqual(got, want) {
		t.Fatalf("usage = %v, want %v", got, want)
	}
	st := ssn.NewStatement()
	if err := st.Evict(taskOf(t, ssn, "j", "a"), framework.EvictReason{Action: "shuffle"}); err != nil {
		t.Fatal(err)
	}
	want = []devState{{ID: "g0", Whole: true, HolderUIDs: "b"}}
	if got := usage(ssn.Nodes["n"]); !reflect.DeepEqual(got, want) {
		t.Errorf("after evicting a: usage = %v, want %v", got, want)
	}
	if err := st.Evict(taskOf(t, ssn, "j", "c"), framework.EvictReason{Action: "shuffle"}); err != nil {
		t.Fatal(err)
	}
	st.Discard()
	want = []devState{{ID: "g0", Whole: true, HolderUIDs: "a,b"}}
	if got := usage(ssn.Nodes["n"]); !reflect.DeepEqual(got, want) {
		t.Errorf("after discard: usage = %v, want %v", got, want)
	}
}

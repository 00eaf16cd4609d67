package deviceshare

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// run runs the configured actions and closes the session.
func run(t *testing.T, ssn *framework.Session, reg *framework.Registry) *framework.Result {
	t.Helper()
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	return ssn.Close()
}

func outcome(r *framework.Result, job string) *framework.JobOutcome {
	for i := range r.Jobs {
		if r.Jobs[i].Job == ns+"/"+job {
			return &r.Jobs[i]
		}
	}
	return nil
}

// TestAllocateEndToEnd runs allocate: shared GPUs fill the fullest device first, a gang that
// does not fit is discarded and gives its devices back to a later job.
func TestAllocateEndToEnd(t *testing.T) {
	c := newCluster()
	c.node("n1", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
	c.node("n2", gpu("g0", "A100", 40))
	c.node("n3", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
	train := c.job("train", 1)
	for _, n := range []string{"t-0", "t-1", "t-2", "t-3"} {
		c.task(train, n, api.Pending, "", share(30, 0))
	}
	c.task(c.job("big", 1), "big-0", api.Pending, "", model(whole(1), "A100"))
	gang := c.job("gang", 2)
	c.task(gang, "gang-0", api.Pending, "", model(whole(2), "H100"))
	c.task(gang, "gang-1", api.Pending, "", model(whole(2), "H100"))
	c.task(c.job("after", 1), "after-0", api.Pending, "", model(whole(1), "H100"))

	ssn, reg := c.open(t, config("allocate"))
	res := run(t, ssn, reg)
	want := map[string]string{
		"t-0": "n1:g0", "t-1": "n1:g0", "t-2": "n1:g1", "t-3": "n1:g1",
		"big-0":   "n2:g0",
		"after-0": "n3:g0",
	}
	if got := binds(res); !reflect.DeepEqual(got, want) {
		t.Errorf("binds = %v\nwant  %v", got, want)
	}
	o := outcome(res, "gang")
	if o == nil || o.Explanation == nil || !strings.Contains(o.Explanation.Summary, "insufficient H100 devices") {
		t.Errorf("gang explanation = %+v, want one naming insufficient H100 devices", o)
	}
	wantUsage := map[string][]devState{
		"n1": {{ID: "g0", UsedMemGi: 60, HolderUIDs: "t-0,t-1"}, {ID: "g1", UsedMemGi: 60, HolderUIDs: "t-2,t-3"}},
		"n2": {{ID: "g0", Whole: true, HolderUIDs: "big-0"}},
		"n3": {{ID: "g0", Whole: true, HolderUIDs: "after-0"}, {ID: "g1"}},
	}
	if got := usageOf(ssn); !reflect.DeepEqual(got, wantUsage) {
		t.Errorf("usage = %v\nwant %v", got, wantUsage)
	}
}

// TestPolicyEndToEnd: with a weight, binpack sends a share to the node whose device is
// already partly used, spread to the idle one.
func TestPolicyEndToEnd(t *testing.T) {
	for _, tc := range []struct{ policy, want string }{
		{"binpack", "b:g0"},
		{"spread", "a:g0"},
		{"", "a:g0"}, // no score: first node by name
	} {
		t.Run(tc.policy, func(t *testing.T) {
			c := newCluster()
			c.node("a", gpu("g0", "H100", 80))
			c.node("b", gpu("g0", "H100", 80))
			j := c.job("j", 1)
			c.running(j, "r", "b", []string{"g0"}, share(20, 0))
			c.task(j, "t", api.Pending, "", share(20, 0))
			args := []string{"deviceshare.ScheduleWeight: 5"}
			if tc.policy != "" {
				args = append(args, "deviceshare.SchedulePolicy: "+tc.policy)
			}
			ssn, reg := c.open(t, config("allocate", args...))
			if got := binds(run(t, ssn, reg))["t"]; got != tc.want {
				t.Errorf("t bound to %s, want %s", got, tc.want)
			}
		})
	}
}

// TestCyclesEndToEnd plays two cycles: the first cycle's binds, applied as the resource
// manager would (Running with the bind's device ids), hold their devices in the second.
func TestCyclesEndToEnd(t *testing.T) {
	c := newCluster()
	c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
	j := c.job("j", 1)
	first := c.task(j, "first", api.Pending, "", share(50, 50))
	ssn, reg := c.open(t, config("allocate"))
	for _, d := range run(t, ssn, reg).Decisions {
		if d.Kind == framework.DecisionBind && d.Task == first.Key() {
			first.Status, first.Node, first.DeviceIDs = api.Running, d.Node, d.DeviceIDs
		}
	}
	if first.Status != api.Running || !reflect.DeepEqual(first.DeviceIDs, []string{"g0"}) {
		t.Fatalf("first cycle: %s with %v, want Running with [g0]", first.Status, first.DeviceIDs)
	}
	c.task(j, "second", api.Pending, "", share(40, 0))
	c.task(j, "third", api.Pending, "", share(20, 60))
	ssn, reg = c.open(t, config("allocate"))
	want := map[string]string{"second": "n:g1", "third": "n:g1"}
	if got := binds(run(t, ssn, reg)); !reflect.DeepEqual(got, want) {
		t.Errorf("second cycle binds = %v, want %v", got, want)
	}
}

// TestPreemptEndToEnd runs preempt: evicting a lower-priority task (the last in task order,
// low-1) frees its GPU share, and the pipelined preemptor takes the now idle GPU whole; the
// plan has the eviction and the pipeline.
func TestPreemptEndToEnd(t *testing.T) {
	c := newCluster()
	n := c.node("n", gpu("g0", "H100", 80), gpu("g1", "H100", 80))
	n.Allocatable = *api.NewResource(map[string]float64{api.ResourceCPU: 2, api.ResourceMemory: 256 * gib})
	low := c.job("low", 1)
	c.running(low, "low-0", "n", []string{"g0"}, whole(1))
	c.running(low, "low-1", "n", []string{"g1"}, share(10, 0))
	high := c.job("high", 1)
	high.Priority, high.HasPriority = 100, true
	c.task(high, "high-0", api.Pending, "", whole(1))

	ssn, reg := c.open(t, config("preempt"))
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	preemptor := taskOf(t, ssn, "high", "high-0")
	wantUsage := []devState{{ID: "g0", Whole: true, HolderUIDs: "low-0"}, {ID: "g1", Whole: true, HolderUIDs: "high-0"}}
	if got := usage(ssn.Nodes["n"]); !reflect.DeepEqual(got, wantUsage) {
		t.Errorf("usage = %v\nwant %v", got, wantUsage)
	}
	if preemptor.Status != api.Pipelined || !reflect.DeepEqual(preemptor.DeviceIDs, []string{"g1"}) {
		t.Errorf("preemptor %s with %v, want Pipelined with [g1]", preemptor.Status, preemptor.DeviceIDs)
	}
	var got []string
	for _, d := range ssn.Close().Decisions {
		got = append(got, d.Kind.String()+" "+strings.TrimPrefix(d.Task, ns+"/")+" "+d.Node)
	}
	want := []string{"evict low-1 n", "pipeline high-0 n"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("decisions = %v, want %v", got, want)
	}
}

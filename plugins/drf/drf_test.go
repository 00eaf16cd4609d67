package drf

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

// cluster: one 4-cpu/16Gi node; job "big" runs 3x1cpu, job "small" runs 1x1cpu, job "none"
// runs nothing; each has one pending task of 1 cpu.
func cluster() *tu.Cluster {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(4, 16))
	for _, j := range []struct {
		name    string
		running int
	}{{"big", 3}, {"small", 1}, {"none", 0}} {
		job := c.Job(j.name, "q", 1)
		c.Tasks(job, j.name+"-run", j.running, api.Running, "n1", tu.CPU(1, 1))
		c.Task(job, j.name+"-wait", api.Pending, "", tu.CPU(1, 1))
	}
	return c
}

func TestJobOrder(t *testing.T) {
	ssn := cluster().Open(t, tu.OneTier(Name), builders)
	big, small, none := tu.JobOf(t, ssn, "big"), tu.JobOf(t, ssn, "small"), tu.JobOf(t, ssn, "none")
	tests := []struct {
		name string
		l, r *api.JobInfo
		want bool
	}{
		{"smaller share first", small, big, true},
		{"larger share last", big, small, false},
		{"no allocation first, though created later", none, big, true},
		{"equal share: creation order", big, big, false},
	}
	for _, tc := range tests {
		if got := ssn.JobOrderFn(tc.l, tc.r); got != tc.want {
			t.Errorf("%s: JobOrderFn = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestEventsUpdateShares(t *testing.T) {
	ssn := cluster().Open(t, tu.OneTier(Name), builders)
	small, none := tu.JobOf(t, ssn, "small"), tu.JobOf(t, ssn, "none")
	if !ssn.JobOrderFn(none, small) {
		t.Fatal("before: none (share 0) should go before small (share 0.25)")
	}
	// Evicting small's only running task brings its share to 0: a tie with none, so creation
	// order (small first) decides.
	st := ssn.NewStatement()
	if err := st.Evict(tu.TaskOf(t, ssn, "small", "small-run-0"), framework.EvictReason{Action: "test"}); err != nil {
		t.Fatal(err)
	}
	if !ssn.JobOrderFn(small, none) {
		t.Error("after evicting small's task both shares are 0: small, created first, should go first")
	}
	if err := st.Pipeline(tu.TaskOf(t, ssn, "none", "none-wait"), "n1"); err != nil {
		t.Fatal(err)
	}
	if !ssn.JobOrderFn(small, none) {
		t.Error("after pipelining none's task, small (share 0) should go before none (0.25)")
	}
	st.Discard()
	if !ssn.JobOrderFn(none, small) {
		t.Error("after discard: none should go before small again")
	}
}

func TestPreemptable(t *testing.T) {
	ssn := cluster().Open(t, tu.OneTier(Name), builders)
	cands := []*api.TaskInfo{
		tu.TaskOf(t, ssn, "big", "big-run-0"),
		tu.TaskOf(t, ssn, "big", "big-run-1"),
		tu.TaskOf(t, ssn, "big", "big-run-2"),
		tu.TaskOf(t, ssn, "small", "small-run-0"),
	}
	tests := []struct {
		name      string
		preemptor *api.TaskInfo
		want      []string
	}{
		// none+1 = 0.25. big: 2/4=0.5, 1/4=0.25 (equal: victim), 0 (not). small: 0 (not).
		{"job without allocation", tu.TaskOf(t, ssn, "none", "none-wait"), []string{"big-run-0", "big-run-1"}},
		// small+1 = 0.5. big: 0.5 (equal), 0.25, 0. small itself: 0.
		{"job with one task", tu.TaskOf(t, ssn, "small", "small-wait"), []string{"big-run-0"}},
		// big+1 = 1: nobody has a larger share after removal.
		{"largest job", tu.TaskOf(t, ssn, "big", "big-wait"), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tu.Names(ssn.Preemptable(tc.preemptor, cands)); !slices.Equal(got, tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("Preemptable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPreemptableUnknownJob(t *testing.T) {
	p, _ := New(nil)
	pl := p.(*plugin)
	got, v := pl.preemptable(&api.TaskInfo{Job: "ns/ghost", Resreq: api.EmptyResource()}, nil)
	if got != nil || v != framework.Permit {
		t.Errorf("preemptable(unknown job) = %v, %v; want no victims, Permit", got, v)
	}
}

func TestFlatRegistersNoQueueOrderOrReclaim(t *testing.T) {
	ssn := cluster().Open(t, tu.OneTier(Name), builders)
	if got := ssn.Reclaimable(tu.TaskOf(t, ssn, "none", "none-wait"), []*api.TaskInfo{tu.TaskOf(t, ssn, "big", "big-run-0")}); got != nil {
		t.Errorf("Reclaimable = %v, want none without enableHierarchy", tu.Names(got))
	}
	if p := ssn.Plugins()[0].(*plugin); p.tree != nil {
		t.Error("flat drf built a hierarchy")
	}
}

package conformance

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

func TestEvictable(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(16, 16))
	p := c.Job("p", "q", 1)
	c.Task(p, "p-0", api.Pending, "", tu.CPU(1, 1))
	v := c.Job("v", "q", 1)
	c.Task(v, "plain", api.Running, "n1", tu.CPU(1, 1))
	c.Task(v, "cluster-critical", api.Running, "n1", tu.CPU(1, 1)).PriorityClass = SystemClusterCritical
	c.Task(v, "node-critical", api.Running, "n1", tu.CPU(1, 1)).PriorityClass = SystemNodeCritical
	c.Task(v, "other-class", api.Running, "n1", tu.CPU(1, 1)).PriorityClass = "high"
	sys := c.Job("sys", "q", 1)
	sys.Namespace = SystemNamespace
	st := c.Task(sys, "dns", api.Running, "n1", tu.CPU(1, 1))
	st.Namespace = SystemNamespace
	ssn := c.Open(t, tu.OneTier(Name), builders)

	cands := []*api.TaskInfo{
		tu.TaskOf(t, ssn, "v", "plain"),
		tu.TaskOf(t, ssn, "v", "cluster-critical"),
		tu.TaskOf(t, ssn, "v", "node-critical"),
		tu.TaskOf(t, ssn, "v", "other-class"),
		ssn.Jobs[SystemNamespace+"/sys"].Tasks[SystemNamespace+"/dns"],
	}
	preemptor := tu.TaskOf(t, ssn, "p", "p-0")
	want := []string{"plain", "other-class"}
	if got := tu.Names(ssn.Preemptable(preemptor, cands)); !slices.Equal(got, want) {
		t.Errorf("Preemptable = %v, want %v", got, want)
	}
	if got := tu.Names(ssn.Reclaimable(preemptor, cands)); !slices.Equal(got, want) {
		t.Errorf("Reclaimable = %v, want %v", got, want)
	}
	if got := ssn.Preemptable(preemptor, cands[1:3]); got != nil {
		t.Errorf("Preemptable(critical only) = %v, want none", tu.Names(got))
	}
}

func TestCriticalWithoutSpec(t *testing.T) {
	if Critical(&api.TaskInfo{Namespace: "ns"}) {
		t.Error("a task without spec in an ordinary namespace is not critical")
	}
	if !Critical(&api.TaskInfo{Namespace: SystemNamespace}) {
		t.Error("a kube-system task is critical")
	}
}

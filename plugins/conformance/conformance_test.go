package conformance

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

// openCandidates opens a session with a pending task p-0 and returns it with candidates: plain,
// cluster-critical, node-critical and other-class of job v, and dns of kube-system.
func openCandidates(t *testing.T) (*framework.Session, []*api.TaskInfo) {
	t.Helper()
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
	return ssn, []*api.TaskInfo{
		tu.TaskOf(t, ssn, "v", "plain"),
		tu.TaskOf(t, ssn, "v", "cluster-critical"),
		tu.TaskOf(t, ssn, "v", "node-critical"),
		tu.TaskOf(t, ssn, "v", "other-class"),
		ssn.Jobs[SystemNamespace+"/sys"].Tasks[SystemNamespace+"/dns"],
	}
}

func TestEvictable(t *testing.T) {
	ssn, cands := openCandidates(t)
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

// TestUnifiedEvictable: the gang-aware callback protects the same tasks, whatever the kind of
// eviction (Volcano's conformance.go).
func TestUnifiedEvictable(t *testing.T) {
	tests := []struct {
		name string
		kind framework.EvictionKind
		// from and to slice the candidates offered.
		from, to int
		want     []string
	}{
		{name: "gang preemption", kind: framework.EvictionKindGangPreempt, to: 5, want: []string{"plain", "other-class"}},
		{name: "gang reclaim", kind: framework.EvictionKindGangReclaim, to: 5, want: []string{"plain", "other-class"}},
		{name: "critical tasks only: nothing", kind: framework.EvictionKindGangReclaim, from: 1, to: 3},
		{name: "kube-system only: nothing", kind: framework.EvictionKindGangPreempt, from: 4, to: 5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, cands := openCandidates(t)
			ctx := &framework.EvictionContext{Kind: tc.kind, Job: tu.JobOf(t, ssn, "p")}
			if got := tu.Names(ssn.UnifiedEvictable(ctx, cands[tc.from:tc.to])); !slices.Equal(got, tc.want) {
				t.Errorf("UnifiedEvictable = %v, want %v", got, tc.want)
			}
		})
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

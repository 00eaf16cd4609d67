package resourcequota

import (
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

const gib = float64(1 << 30)

// pendingJob adds a Pending job with the given minResources and one pending task.
func pendingJob(c *tu.Cluster, name string, min api.Resource) *api.Job {
	j := c.Job(name, "q", 1)
	j.Phase = api.JobPending
	j.MinResources = min
	c.Task(j, name+"-t", api.Pending, "", min)
	return j
}

func TestJobEnqueueable(t *testing.T) {
	gpu := func(n float64) api.Resource { return tu.Res(map[string]float64{"cpu": 1, "nvidia.com/gpu": n}) }
	tests := []struct {
		name string
		// hard is the quota of namespace ns (nil: none).
		hard *api.Resource
		// running and others are what the namespace's tasks in other statuses request.
		running, releasing, pending, succeeded api.Resource
		// jobs are asked in order; want is the vote for each.
		jobs []api.Resource
		want []bool
		// msg is a substring of the first rejected job's explanation.
		msg string
	}{
		{name: "no quota", jobs: []api.Resource{tu.CPU(100, 1)}, want: []bool{true}},
		{name: "fits", hard: ptr(tu.CPU(4, 100)), running: tu.CPU(2, 1), jobs: []api.Resource{tu.CPU(2, 1)}, want: []bool{true}},
		{name: "exceeds counting running tasks", hard: ptr(tu.CPU(4, 100)), running: tu.CPU(3, 1),
			jobs: []api.Resource{tu.CPU(2, 1)}, want: []bool{false},
			msg: "resource quota of namespace ns insufficient: requested cpu 2, used cpu 3, limited cpu 4"},
		{name: "releasing tasks count, pending and finished ones do not", hard: ptr(tu.CPU(4, 100)),
			releasing: tu.CPU(2, 1), pending: tu.CPU(8, 1), succeeded: tu.CPU(8, 1),
			jobs: []api.Resource{tu.CPU(2, 1), tu.CPU(1, 1)}, want: []bool{true, false}},
		{name: "permitted jobs are pending usage", hard: ptr(tu.CPU(4, 100)),
			jobs: []api.Resource{tu.CPU(2, 1), tu.CPU(2, 1), tu.CPU(1, 1)}, want: []bool{true, true, false}},
		{name: "a rejected job is not pending usage", hard: ptr(tu.CPU(4, 100)),
			jobs: []api.Resource{tu.CPU(5, 1), tu.CPU(4, 1)}, want: []bool{false, true}},
		{name: "only dimensions the quota names are checked", hard: ptr(tu.Res(map[string]float64{"nvidia.com/gpu": 2})),
			running: gpu(1), jobs: []api.Resource{tu.CPU(1000, 1000), gpu(1), gpu(1)}, want: []bool{true, true, false},
			msg: "requested nvidia.com/gpu 1, used nvidia.com/gpu 1, enqueued this cycle nvidia.com/gpu 1, limited nvidia.com/gpu 2"},
		{name: "memory", hard: ptr(tu.CPU(100, 8)), running: tu.CPU(1, 6),
			jobs: []api.Resource{tu.CPU(1, 3)}, want: []bool{false}, msg: "requested memory 3Gi, used memory 6Gi, limited memory 8Gi"},
		{name: "exactly at the limit fits", hard: ptr(tu.CPU(4, 8)), running: tu.CPU(1, 4), jobs: []api.Resource{tu.CPU(3, 4)}, want: []bool{true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("q", 1)
			c.Node("n", tu.CPU(1000, 1000))
			if tc.hard != nil {
				c.Snap.Quotas = append(c.Snap.Quotas, &api.NamespaceQuota{Namespace: tu.Namespace, Hard: *tc.hard})
				c.Snap.Quotas = append(c.Snap.Quotas, &api.NamespaceQuota{Namespace: "other", Hard: tu.CPU(0.001, 0.001)})
			}
			other := c.Job("other", "q", 1)
			other.Namespace = "other"
			c.Task(other, "o", api.Running, "n", tu.CPU(50, 50))
			held := c.Job("held", "q", 1)
			c.Task(held, "run", api.Running, "n", tc.running)
			c.Task(held, "rel", api.Releasing, "n", tc.releasing)
			c.Task(held, "pend", api.Pending, "", tc.pending)
			c.Task(held, "done", api.Succeeded, "", tc.succeeded)
			names := []string{}
			for i, r := range tc.jobs {
				name := "j" + string(rune('a'+i))
				pendingJob(c, name, r)
				names = append(names, name)
			}
			ssn := c.Open(t, tu.OneTier(Name), builders)
			msg := ""
			for i, name := range names {
				j := tu.JobOf(t, ssn, name)
				got := ssn.JobEnqueueable(j)
				if got != tc.want[i] {
					t.Errorf("job %s: enqueueable %v, want %v (%s)", name, got, tc.want[i], j.JobFitErrors)
				}
				if got {
					ssn.JobEnqueued(j) // as the enqueue action does
				}
				if !tc.want[i] && msg == "" {
					msg = j.JobFitErrors
				}
			}
			if !strings.Contains(msg, tc.msg) {
				t.Errorf("message %q does not contain %q", msg, tc.msg)
			}
		})
	}
}

func ptr(r api.Resource) *api.Resource { return &r }

func TestEnqueueAction(t *testing.T) {
	// Quota 4 cpu. Jobs a (3 cpu) and b (2 cpu) are Pending; a is older and enqueued, b would
	// exceed the quota with a's pending usage and stays Pending with the quota as its reason.
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n", tu.CPU(16, 16))
	c.Snap.Quotas = []*api.NamespaceQuota{{Namespace: tu.Namespace, Hard: tu.CPU(4, 64)}}
	pendingJob(c, "a", tu.CPU(3, 1))
	pendingJob(c, "b", tu.CPU(2, 1))
	cfg := "actions: \"enqueue, allocate\"\ntiers:\n- plugins:\n  - name: resourcequota\n"
	ssn := c.Open(t, cfg, builders)
	reg := framework.NewRegistry()
	actions.Register(reg)
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	r := ssn.Close()
	phases := map[string]string{}
	var bWhy string
	for _, o := range r.Jobs {
		phases[o.Job] = string(o.Phase)
		if o.Job == tu.Namespace+"/b" && o.Explanation != nil {
			bWhy = o.Explanation.Summary
		}
	}
	if phases["ns/a"] != "Running" || phases["ns/b"] != "Pending" {
		t.Errorf("phases = %v", phases)
	}
	if !strings.Contains(bWhy, "resource quota of namespace ns insufficient: requested cpu 2, used cpu 0, enqueued this cycle cpu 3, limited cpu 4") {
		t.Errorf("b's explanation = %q", bWhy)
	}
}

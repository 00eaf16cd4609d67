package overcommit

import (
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

func cpu(cores float64) api.Resource { return tu.Res(map[string]float64{"cpu": cores}) }

func TestNewArguments(t *testing.T) {
	tests := []struct {
		name        string
		args        conf.Arguments
		wantErr     string
		wantDefault float64
		wantCPU     float64
	}{
		{"defaults", nil, "", 1.2, 1.2},
		{"default factor", conf.Arguments{"overcommit-factor": 2}, "", 2, 2},
		{"per resource", conf.Arguments{"overcommit-factor.cpu": 1.5, "other": "x"}, "", 1.2, 1.5},
		{"string number", conf.Arguments{"overcommit-factor": "1.5"}, "", 1.5, 1.5},
		{"below one falls back to the default", conf.Arguments{"overcommit-factor.cpu": 0.5}, "", 1.2, 1.2},
		{"not a number", conf.Arguments{"overcommit-factor": "lots"}, `"overcommit-factor"`, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := New(tc.args)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("New error = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pl := p.(*plugin)
			if pl.factor != tc.wantDefault || pl.factorOf("cpu") != tc.wantCPU {
				t.Errorf("factors = %v / cpu %v, want %v / %v", pl.factor, pl.factorOf("cpu"), tc.wantDefault, tc.wantCPU)
			}
		})
	}
}

// pendingJobs adds n Pending jobs j1..jn with minResources of cpu cores and one task each.
func pendingJobs(c *tu.Cluster, n int, cores float64) {
	for i := 1; i <= n; i++ {
		name := "j" + string(rune('0'+i))
		j := c.Job(name, "default", 1)
		j.Phase, j.MinResources = api.JobPending, cpu(cores)
		c.Task(j, name+"-0", api.Pending, "", cpu(cores))
	}
}

// enqueue plays the enqueue action's part: ask, and tell the plugins when admitted.
func enqueue(ssn *framework.Session, j *api.JobInfo) bool {
	if !ssn.JobEnqueueable(j) {
		return false
	}
	ssn.JobEnqueued(j)
	return true
}

func TestEnqueueAcceptance(t *testing.T) {
	// One 10-cpu node, three Pending jobs of minResources 5 cpu: idle is 12 cpu.
	c := tu.NewCluster()
	c.Queue("default", 1)
	c.Node("n1", tu.CPU(10, 64))
	pendingJobs(c, 3, 5)
	ssn := c.Open(t, tu.OneTier(Name), builders)
	for _, tc := range []struct {
		job  string
		want bool
	}{{"j1", true}, {"j2", true}, {"j3", false}} {
		j := tu.JobOf(t, ssn, tc.job)
		if got := enqueue(ssn, j); got != tc.want {
			t.Errorf("%s enqueued = %v, want %v", tc.job, got, tc.want)
		}
	}
	want := "not enqueued: minResources of enqueued jobs would exceed the cluster's idle resources with overcommit: cpu 15 > idle 12"
	if got := tu.JobOf(t, ssn, "j3").JobFitErrors; got != want {
		t.Errorf("j3 reason = %q, want %q", got, want)
	}
}

func TestEnqueueable(t *testing.T) {
	tests := []struct {
		name   string
		config string
		setup  func(c *tu.Cluster)
		want   bool
	}{
		{
			name:  "used resources reduce idle",
			setup: func(c *tu.Cluster) { c.Task(c.Job("run", "default", 1), "run-0", api.Running, "n1", cpu(8)) },
			// idle 12 - 8 = 4 < 5
			want: false,
		},
		{
			name: "inqueue jobs reserve their minResources",
			setup: func(c *tu.Cluster) {
				j := c.Job("in", "default", 1)
				j.MinResources = cpu(8)
				c.Task(j, "in-0", api.Pending, "", cpu(8))
			},
			want: false,
		},
		{
			name: "running jobs reserve what they do not hold yet",
			setup: func(c *tu.Cluster) {
				j := c.Job("run", "default", 1)
				j.Phase, j.MinResources = api.JobRunning, cpu(6)
				c.Task(j, "run-0", api.Running, "n1", cpu(2))
			},
			// idle 12 - 2 = 10; reserved 6 - 2 = 4; 4 + 5 = 9 <= 10
			want: true,
		},
		{
			name: "running jobs below minAvailable reserve nothing",
			setup: func(c *tu.Cluster) {
				j := c.Job("run", "default", 2)
				j.Phase, j.MinResources = api.JobRunning, cpu(10)
				c.Task(j, "run-0", api.Running, "n1", cpu(2))
			},
			want: true,
		},
		{
			name:   "per-resource factor",
			config: "actions: \"enqueue\"\ntiers:\n- plugins:\n  - name: overcommit\n    arguments:\n      overcommit-factor.cpu: 1.0\n",
			setup:  func(c *tu.Cluster) { c.Task(c.Job("run", "default", 1), "run-0", api.Running, "n1", cpu(6)) },
			// idle 10 - 6 = 4 < 5
			want: false,
		},
		{
			name:  "memory not asked for is not compared",
			setup: func(c *tu.Cluster) { c.Task(c.Job("run", "default", 1), "run-0", api.Running, "n1", tu.CPU(1, 100)) },
			want:  true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tu.NewCluster()
			c.Queue("default", 1)
			c.Node("n1", tu.CPU(10, 64))
			tc.setup(c)
			pendingJobs(c, 1, 5)
			cfg := tc.config
			if cfg == "" {
				cfg = tu.OneTier(Name)
			}
			ssn := c.Open(t, cfg, builders)
			if got := ssn.JobEnqueueable(tu.JobOf(t, ssn, "j1")); got != tc.want {
				t.Errorf("JobEnqueueable = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestBestEffortJob(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("default", 1)
	c.Node("n1", tu.CPU(1, 1))
	pendingJobs(c, 2, 5)
	be := c.Job("be", "default", 1)
	be.Phase = api.JobPending
	c.Task(be, "be-0", api.Pending, "", cpu(100))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	if enqueue(ssn, tu.JobOf(t, ssn, "j1")) {
		t.Error("j1 needs 5 of 1.2 idle cpu")
	}
	if !enqueue(ssn, tu.JobOf(t, ssn, "be")) {
		t.Error("a job without minResources is always admitted")
	}
}

func TestJobEnqueuedAccounts(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("default", 1)
	c.Node("n1", tu.CPU(10, 64))
	pendingJobs(c, 2, 5)
	ssn := c.Open(t, tu.OneTier(Name), builders)
	j1, j2 := tu.JobOf(t, ssn, "j1"), tu.JobOf(t, ssn, "j2")
	// Asking without enqueuing reserves nothing.
	for range 3 {
		if !ssn.JobEnqueueable(j1) {
			t.Fatal("j1 should fit")
		}
	}
	ssn.JobEnqueued(j1)
	ssn.JobEnqueued(j2)
	if ssn.JobEnqueueable(j1) {
		t.Error("after two 5-cpu jobs are enqueued, 5 more do not fit in 12")
	}
}

package sla

import (
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

// gate is a test plugin that rejects every enqueue and every pipeline.
type gate struct{}

func (gate) Name() string { return "gate" }
func (gate) OnSessionOpen(ssn *framework.Session) {
	no := func(*api.JobInfo) framework.Vote { return framework.Reject }
	ssn.AddJobEnqueueableFn("gate", no)
	ssn.AddJobPipelinedFn("gate", no)
}
func (gate) OnSessionClose(*framework.Session) {}

func registry() *framework.Registry {
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	reg.RegisterPlugin("gate", func(conf.Arguments) (framework.Plugin, error) { return gate{}, nil })
	actions.Register(reg)
	return reg
}

func open(t *testing.T, c *tu.Cluster, config string, now time.Time) (*framework.Session, *framework.Registry) {
	t.Helper()
	cfg, err := conf.Parse([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	reg := registry()
	ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return ssn, reg
}

func config(arg string) string {
	s := "actions: \"enqueue\"\ntiers:\n- plugins:\n  - name: sla\n"
	if arg != "" {
		s += "    arguments:\n      sla-waiting-time: " + arg + "\n"
	}
	return s + "- plugins:\n  - name: gate\n"
}

// cluster: jobs created at the epoch + 0s, 1s, ...: a (own 10m), b (own 5m through the short
// annotation), c (both annotations: 20m wins), d (none), e (malformed: none).
func cluster() *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", tu.CPU(8, 16))
	c.Queue("q", 1)
	for _, j := range []struct {
		name string
		ann  map[string]string
	}{
		{"a", map[string]string{VolcanoJobWaitingTime: "10m"}},
		{"b", map[string]string{JobWaitingTime: "5m"}},
		{"c", map[string]string{VolcanoJobWaitingTime: "20m", JobWaitingTime: "1m"}},
		{"d", nil},
		{"e", map[string]string{JobWaitingTime: "soon"}},
	} {
		job := c.Job(j.name, "q", 1)
		job.Phase, job.Annotations, job.MinResources = api.JobPending, j.ann, tu.CPU(1, 1)
		c.Task(job, j.name+"-0", api.Pending, "", tu.CPU(1, 1))
	}
	return c
}

func TestNewArguments(t *testing.T) {
	hour := time.Hour + 2*time.Minute + 3*time.Second
	tests := []struct {
		args conf.Arguments
		want *time.Duration
	}{
		{nil, nil},
		{conf.Arguments{JobWaitingTime: "1h2m3s"}, &hour},
		// Volcano ignores a waiting time that is not a positive duration; so does Sluice.
		{conf.Arguments{JobWaitingTime: "0s"}, nil},
		{conf.Arguments{JobWaitingTime: "-1m"}, nil},
		{conf.Arguments{JobWaitingTime: 30}, nil},
		{conf.Arguments{JobWaitingTime: "later"}, nil},
	}
	for _, tc := range tests {
		p, err := New(tc.args)
		if err != nil {
			t.Fatalf("New(%v): %v", tc.args, err)
		}
		got := p.(*plugin).global
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("New(%v): global waiting time %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestJobOrder(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		l, r string
		want bool
	}{
		// Deadlines: a 10m (+0s), b 5m (+1s), c 20m (+2s).
		{"earlier deadline first", "", "b", "a", true},
		{"later deadline after", "", "a", "b", false},
		{"annotated before none", "", "c", "d", true},
		{"none after annotated", "", "d", "c", false},
		{"malformed is none: creation order", "", "d", "e", true},
		// With a global 1m, d's deadline is +3s+1m, before a's.
		{"global waiting time", "1m", "d", "a", true},
		{"own waiting time wins over global", "1m", "c", "d", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, _ := open(t, cluster(), config(tc.arg), api.Epoch)
			if got := ssn.JobOrderFn(tu.JobOf(t, ssn, tc.l), tu.JobOf(t, ssn, tc.r)); got != tc.want {
				t.Errorf("JobOrderFn(%s, %s) = %v, want %v", tc.l, tc.r, got, tc.want)
			}
		})
	}
}

func TestVotes(t *testing.T) {
	tests := []struct {
		name  string
		arg   string
		after time.Duration
		job   string
		want  framework.Vote
	}{
		{"within waiting time", "", 9 * time.Minute, "a", framework.Abstain},
		{"waiting time reached", "", 10 * time.Minute, "a", framework.Permit},
		{"short annotation", "", 5*time.Minute + time.Second, "b", framework.Permit},
		{"volcano.sh annotation wins", "", 19 * time.Minute, "c", framework.Abstain},
		{"no waiting time", "", time.Hour, "d", framework.Abstain},
		{"global waiting time", "30m", 31 * time.Minute, "d", framework.Permit},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, _ := open(t, cluster(), config(tc.arg), api.Epoch.Add(tc.after))
			p := ssn.Plugins()[0].(*plugin)
			j := tu.JobOf(t, ssn, tc.job)
			if got := p.permit(ssn, j); got != tc.want {
				t.Errorf("vote = %v, want %v", got, tc.want)
			}
			// The sla tier decides before the gate's rejection when it permits.
			want := tc.want == framework.Permit
			if got := ssn.JobEnqueueable(j); got != want {
				t.Errorf("JobEnqueueable = %v, want %v", got, want)
			}
			if got := ssn.JobPipelined(j); got != want {
				t.Errorf("JobPipelined = %v, want %v", got, want)
			}
		})
	}
}

func TestEnqueueAction(t *testing.T) {
	ssn, reg := open(t, cluster(), config(""), api.Epoch.Add(6*time.Minute))
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	phases := map[string]api.JobPhase{}
	for _, o := range ssn.Close().Jobs {
		phases[o.Job] = o.Phase
	}
	want := map[string]api.JobPhase{
		"ns/a": api.JobPending, "ns/b": api.JobInqueue, "ns/c": api.JobPending,
		"ns/d": api.JobPending, "ns/e": api.JobPending,
	}
	for j, p := range want {
		if phases[j] != p {
			t.Errorf("job %s phase %s, want %s", j, phases[j], p)
		}
	}
}

// TestWakeUp: the wake-up time is the next deadline ahead of the clock, and no vote changes
// before it: walking from one wake-up to the next visits every change of every job's vote.
func TestWakeUp(t *testing.T) {
	for _, arg := range []string{"", "30m"} {
		votes := func(now time.Time) string {
			ssn, _ := open(t, cluster(), config(arg), now)
			p := ssn.Plugins()[0].(*plugin)
			out := ""
			for _, j := range ssn.SortedJobs() {
				out += fmt.Sprintf("%s=%d ", j.Name, p.permit(ssn, j))
			}
			return out
		}
		wake := func(now time.Time) (time.Time, bool) {
			ssn, _ := open(t, cluster(), config(arg), now)
			return ssn.WakeUp()
		}
		now, wakes := api.Epoch, 0
		for {
			at, ok := wake(now)
			if !ok {
				break
			}
			wakes++
			if !at.After(now) {
				t.Fatalf("arg %q: wake-up %v is not after the clock %v", arg, at, now)
			}
			before := votes(now)
			for _, probe := range []time.Time{now.Add(time.Nanosecond), at.Add(-time.Nanosecond)} {
				if probe.Before(at) && votes(probe) != before {
					t.Errorf("arg %q: a vote changed at %v, before the wake-up at %v", arg, probe, at)
				}
			}
			if votes(at) == before {
				t.Errorf("arg %q: nothing changed at the wake-up %v", arg, at)
			}
			now = at
		}
		// Deadlines: b +1s+5m, a +10m, c +2s+20m; with a global 30m also d +3s+30m and e +4s+30m.
		want := 3
		if arg != "" {
			want = 5
		}
		if wakes != want {
			t.Errorf("arg %q: %d wake-ups, want %d", arg, wakes, want)
		}
		if votes(now.Add(24*time.Hour)) != votes(now) {
			t.Errorf("arg %q: a vote changed after the last wake-up", arg)
		}
	}
}

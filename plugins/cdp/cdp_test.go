package cdp

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

// open opens a session with only this plugin at the given clock.
func open(t *testing.T, c *tu.Cluster, now time.Time) *framework.Session {
	t.Helper()
	cfg, err := conf.Parse([]byte(tu.OneTier(Name)))
	if err != nil {
		t.Fatal(err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	return ssn
}

// cluster: tasks started at the epoch; the first five set a cooldown of 600s in different
// ways, the last sets none.
func cluster() *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", tu.CPU(8, 16))
	c.Queue("q", 1)
	j := c.Job("j", "q", 1)
	j.Phase = api.JobRunning
	ts := c.Tasks(j, "t", 6, api.Running, "n1", tu.CPU(1, 1))
	for _, t := range ts {
		t.StartedAt = api.Epoch
	}
	ts[0].Annotations = map[string]string{CooldownTime: "600s"}
	ts[1].Labels = map[string]string{CooldownTime: "10m"}
	// The label wins over the annotation.
	ts[2].Labels = map[string]string{CooldownTime: "60s"}
	ts[2].Annotations = map[string]string{CooldownTime: "600s"}
	ts[3].Annotations = map[string]string{CooldownTime: "ten minutes"} // malformed: no protection
	ts[4].Annotations = map[string]string{CooldownTime: "600s"}
	ts[4].StartedAt = time.Time{} // no start time: no protection
	return c
}

func TestEvictableCallbacks(t *testing.T) {
	tests := []struct {
		name  string
		after time.Duration
		want  []string
	}{
		{"just started", 0, []string{"t-3", "t-4", "t-5"}},
		{"label cooldown over", 2 * time.Minute, []string{"t-2", "t-3", "t-4", "t-5"}},
		{"one second before the end", 599 * time.Second, []string{"t-2", "t-3", "t-4", "t-5"}},
		{"cooldown over exactly", 600 * time.Second, []string{"t-0", "t-1", "t-2", "t-3", "t-4", "t-5"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := open(t, cluster(), api.Epoch.Add(tc.after))
			cands := tu.JobOf(t, ssn, "j").SortedTasks()
			evictor := cands[5]
			for what, got := range map[string][]*api.TaskInfo{
				"Preemptable": ssn.Preemptable(evictor, cands),
				"Reclaimable": ssn.Reclaimable(evictor, cands),
			} {
				if names := tu.Names(got); !slices.Equal(names, tc.want) {
					t.Errorf("%s = %v, want %v", what, names, tc.want)
				}
			}
		})
	}
}

func TestOnlyRunningTasksAreProtected(t *testing.T) {
	ssn := open(t, cluster(), api.Epoch)
	task := tu.TaskOf(t, ssn, "j", "t-0").Clone()
	task.Status = api.Releasing
	if cooling(task, ssn.Now) {
		t.Error("a task that is not running is not protected")
	}
	task.Status = api.Running
	if !cooling(task, ssn.Now) {
		t.Error("a running task within its cooldown is protected")
	}
}

// TestWakeUp: the session wakes at each cooldown's end still ahead (the label's 60s, then the
// 600s ones), and then no more; the victims change exactly there.
func TestWakeUp(t *testing.T) {
	victims := func(now time.Time) []string {
		ssn := open(t, cluster(), now)
		cands := tu.JobOf(t, ssn, "j").SortedTasks()
		return tu.Names(ssn.Preemptable(cands[5], cands))
	}
	var got []time.Duration
	now := api.Epoch
	for {
		at, ok := open(t, cluster(), now).WakeUp()
		if !ok {
			break
		}
		got = append(got, at.Sub(api.Epoch))
		if slices.Equal(victims(at.Add(-time.Nanosecond)), victims(at)) {
			t.Errorf("the victims did not change at the wake-up %v", at.Sub(api.Epoch))
		}
		now = at
	}
	if want := []time.Duration{60 * time.Second, 600 * time.Second}; !slices.Equal(got, want) {
		t.Errorf("wake-ups %v, want %v", got, want)
	}
}

package backfill

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/internal/actiontest"
	"github.com/sluice-sched/sluice/plugins"
)

// TestPendingTasksOrder is Volcano's TestPickUpPendingTasks (backfill_test.go), case "test":
// best-effort tasks only, queue by queue, job by job in job order (pg2 has the higher
// priority class), task by task in task order (higher pod priority first). Volcano's case
// also un-pipelines pipelined best-effort tasks; Sluice's backfill does not (see
// docs/volcano-compatibility.md), so here all are pending.
func TestPendingTasksOrder(t *testing.T) {
	const config = `actions: "backfill"
tiers:
- plugins:
  - {name: priority, enableJobOrder: true, enableTaskOrder: true, enablePreemptable: true}
  - {name: drf, enableJobOrder: false, enablePreemptable: false, enableQueueOrder: true}
`
	job := func(name, class string) actiontest.Job {
		j := actiontest.Job{Name: name, Queue: "q1", MinAvailable: 1, PriorityClass: class}
		for _, p := range []int32{1, 3, 2, 4} {
			j.Tasks = append(j.Tasks,
				actiontest.Task{Name: fmt.Sprintf("%s-besteffort-task-%d", name, p), Priority: p},
				actiontest.Task{Name: fmt.Sprintf("%s-unbesteffort-task-%d", name, p), Priority: p, CPU: 0.5})
		}
		return j
	}
	c := actiontest.Cluster{
		PriorityClasses: map[string]int32{"job-priority-1": 1, "job-priority-2": 2},
		Queues:          []actiontest.Queue{{Name: "q1"}},
		Jobs:            []actiontest.Job{job("pg1", "job-priority-1"), job("pg2", "job-priority-2")},
	}
	ssn := actiontest.Open(t, c, config, actiontest.Registry(Name, New, plugins.Register))
	var got []string
	for _, task := range pendingTasks(ssn) {
		got = append(got, task.Name)
	}
	var want []string
	for _, j := range []string{"pg2", "pg1"} {
		for p := 4; p >= 1; p-- {
			want = append(want, fmt.Sprintf("%s-besteffort-task-%d", j, p))
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("order %v\nwant  %v", got, want)
	}
}

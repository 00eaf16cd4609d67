package backfill_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/backfill"
	"github.com/sluice-sched/sluice/engine/actions/internal/actiontest"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins"
)

const config = `actions: "backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: predicates
`

func TestBackfill(t *testing.T) {
	type tc = actiontest.Task
	nodes := []actiontest.Node{{Name: "n1", CPU: 4, Mem: 4, Pods: 10, Labels: map[string]string{"zone": "a"}}}
	tests := []struct {
		name      string
		jobs      []actiontest.Job
		wantBound map[string]string
		// wantPhase is the job "j"'s phase after the cycle; wantWhy a part of its explanation.
		wantPhase api.JobPhase
		wantWhy   string
	}{
		{
			name:      "a ready job's best-effort task is bound",
			jobs:      []actiontest.Job{{Name: "j", Queue: "q1", MinAvailable: 1, Tasks: []tc{{Name: "be"}}}},
			wantBound: map[string]string{"c1/be": "n1"},
			wantPhase: api.JobRunning,
		},
		{
			// The gang needs the 8-CPU task too, which fits nowhere: Volcano leaves the
			// best-effort task allocated without dispatching it, so it is neither bound nor
			// pipelined.
			name: "an unready gang's best-effort task is neither bound nor pipelined",
			jobs: []actiontest.Job{{Name: "j", Queue: "q1", MinAvailable: 2, Tasks: []tc{
				{Name: "be"},
				{Name: "big", CPU: 8, Mem: 1},
			}}},
			wantBound: map[string]string{},
			wantPhase: api.JobInqueue,
			wantWhy:   "backfill: 1 best-effort task(s) placed but not dispatched: the job is not ready (1 of minAvailable 2 tasks placed)",
		},
		{
			// The first task in task order fits no node; backfill goes on with the next
			// (current Volcano; older versions stopped).
			name: "a task that fits nowhere does not stop the others",
			jobs: []actiontest.Job{{Name: "j", Queue: "q1", MinAvailable: 1, Tasks: []tc{
				{Name: "be-0", Priority: 2, NodeSelector: map[string]string{"zone": "b"}},
				{Name: "be-1", Priority: 1},
			}}},
			wantBound: map[string]string{"c1/be-1": "n1"},
			wantPhase: api.JobRunning,
			wantWhy:   "node selector",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := actiontest.Cluster{Queues: []actiontest.Queue{{Name: "q1"}}, Nodes: nodes, Jobs: tt.jobs}
			out := actiontest.Run(t, c, config, actiontest.Registry(backfill.Name, backfill.New, plugins.Register))
			if got := out.Bound(); fmt.Sprint(got) != fmt.Sprint(tt.wantBound) {
				t.Errorf("bound %v, want %v", got, tt.wantBound)
			}
			if got := out.Pipelined(); len(got) != 0 {
				t.Errorf("pipelined %v, want none", got)
			}
			for _, j := range out.Jobs {
				if j.Job == "c1/j" && j.Phase != tt.wantPhase {
					t.Errorf("phase %s, want %s", j.Phase, tt.wantPhase)
				}
			}
			if why := out.Explanation("j"); !strings.Contains(why, tt.wantWhy) {
				t.Errorf("explanation %q does not say %q", why, tt.wantWhy)
			}
		})
	}
}

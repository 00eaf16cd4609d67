package allocate_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/allocate"
	"github.com/sluice-sched/sluice/engine/actions/internal/actiontest"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins"
)

const config = `actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: proportion
  - name: predicates
`

func TestAllocate(t *testing.T) {
	tests := []struct {
		name                 string
		nodeCPU              float64
		jobs                 []actiontest.Job
		wantBound, wantPiped map[string]string
		// wantWhy is part of job j's explanation.
		wantWhy string
	}{
		{
			name:      "a gang that fits is bound",
			nodeCPU:   4,
			jobs:      []actiontest.Job{actiontest.NewJob("j", "q1", 2, actiontest.Pending("a", 1), actiontest.Pending("b", 1))},
			wantBound: map[string]string{"c1/a": "n1", "c1/b": "n1"},
		},
		{
			name:    "a gang with room for one of two places nothing",
			nodeCPU: 1,
			jobs:    []actiontest.Job{actiontest.NewJob("j", "q1", 2, actiontest.Pending("a", 1), actiontest.Pending("b", 1))},
			wantWhy: "gang: 1 of minAvailable 2 placeable",
		},
		{
			// The only room is the releasing task's: the task is pipelined there, not bound.
			name:    "room that is still being released is pipelined onto",
			nodeCPU: 2,
			jobs: []actiontest.Job{
				actiontest.NewJob("old", "q1", 0, actiontest.Running("leaving", 2, "n1").In(api.Releasing)).Running(),
				actiontest.NewJob("j", "q1", 1, actiontest.Pending("a", 2)),
			},
			wantPiped: map[string]string{"c1/a": "n1"},
		},
		{
			name:    "best-effort tasks are left to backfill",
			nodeCPU: 2,
			jobs:    []actiontest.Job{actiontest.NewJob("j", "q1", 1, actiontest.Task{Name: "be"})},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: tt.nodeCPU, Mem: tt.nodeCPU, Pods: 10}},
				Jobs:   tt.jobs,
			}
			out := actiontest.Run(t, c, config, actiontest.Registry(allocate.Name, allocate.New, plugins.Register))
			if got := out.Bound(); fmt.Sprint(got) != fmt.Sprint(tt.wantBound) {
				t.Errorf("bound %v, want %v", got, tt.wantBound)
			}
			if got := out.Pipelined(); fmt.Sprint(got) != fmt.Sprint(tt.wantPiped) {
				t.Errorf("pipelined %v, want %v", got, tt.wantPiped)
			}
			if why := out.Explanation("j"); !strings.Contains(why, tt.wantWhy) {
				t.Errorf("explanation %q does not say %q", why, tt.wantWhy)
			}
		})
	}
}

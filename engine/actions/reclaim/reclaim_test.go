package reclaim_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/internal/actiontest"
	"github.com/sluice-sched/sluice/engine/actions/reclaim"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins"
)

// volcanoTiers is the tier of Volcano's TestReclaim (reclaim_test.go) with the plugins a case
// registers (Volcano skips the others) and only the callbacks the test enables. Volcano's test
// enables no job-pipelined callback, so every job's statement is committed; pipelined turns
// gang's on.
func volcanoTiers(pipelined bool, withPriority bool) string {
	s := fmt.Sprintf(`actions: "reclaim"
tiers:
- plugins:
  - {name: conformance, enablePreemptable: false, enableReclaimable: true}
  - {name: gang, enableJobOrder: false, enableJobReady: false, enableJobPipelined: %t, enableJobStarving: true, enablePreemptable: false, enableReclaimable: true}
  - {name: proportion, enableQueueOrder: true, enableReclaimable: true, enabledOverused: false, enabledAllocatable: false, enablePreemptive: true, enableJobEnqueued: false, enablePredicate: false}
`, pipelined)
	if withPriority {
		s += `  - {name: priority, enableJobOrder: true, enableTaskOrder: true, enablePreemptable: false, enableReclaimable: true, enableJobPipelined: false, enableJobStarving: false}
`
	}
	return s
}

func TestReclaim(t *testing.T) {
	type tc = actiontest.Task
	tests := []struct {
		name          string
		c             actiontest.Cluster
		pipelined     bool
		priority      bool
		wantEvicted   []string
		wantPipelined map[string]string
	}{
		{
			name: "Two Queue with one Queue overusing resource, should reclaim", // Volcano TestReclaim
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}, {Name: "q2"}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 3, Mem: 3.2, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("preemptee1", 1, "n1").Pinned(),
						actiontest.Running("preemptee2", 1, "n1"),
						actiontest.Running("preemptee3", 1, "n1").Pinned(),
					),
					actiontest.NewJob("pg2", "q2", 1, actiontest.Pending("preemptor1", 1)),
				},
			},
			wantEvicted:   []string{"preemptee2"},
			wantPipelined: map[string]string{"c1/preemptor1": "n1"},
		},
		{
			name: "sort reclaimees when reclaiming from overusing queue", // Volcano TestReclaim
			c: actiontest.Cluster{
				PriorityClasses: map[string]int32{"low-priority": 100, "mid-priority": 500, "high-priority": 1000},
				Queues:          []actiontest.Queue{{Name: "q1"}, {Name: "q2"}, {Name: "q3"}},
				Nodes:           []actiontest.Node{{Name: "n1", CPU: 4, Mem: 4.3, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("preemptee1-1", 1, "n1"),
						actiontest.Running("preemptee1-2", 1, "n1"),
					).Of("mid-priority"),
					actiontest.NewJob("pg2", "q2", 1,
						actiontest.Running("preemptee2-1", 1, "n1"),
						actiontest.Running("preemptee2-2", 1, "n1").Pinned(),
					).Of("low-priority"),
					actiontest.NewJob("pg3", "q3", 1, actiontest.Pending("preemptor1", 1)).Of("high-priority"),
				},
			},
			priority:      true,
			wantEvicted:   []string{"preemptee2-1"},
			wantPipelined: map[string]string{"c1/preemptor1": "n1"},
		},
		{
			name: "can not reclaim resources when queue is not open(proportion plugin)", // Volcano TestReclaim
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}, {Name: "q2", Closed: true}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 3, Mem: 3.2, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("preemptee1", 1, "n1").Pinned(),
						actiontest.Running("preemptee2", 1, "n1"),
						actiontest.Running("preemptee3", 1, "n1").Pinned(),
					).Running(),
					actiontest.NewJob("pg2", "q2", 1, actiontest.Pending("preemptor1", 1)),
				},
			},
			wantPipelined: map[string]string{},
		},
		{
			// The node's idle memory counts towards the preemptor: one eviction is enough.
			name: "Node available resources should be included in reclaimed resources", // Volcano TestReclaim
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1", Priority: 1}, {Name: "q2", Priority: 2}, {Name: "q3", Weight: 3}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 10, Mem: 2 * 1.073741824, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 0,
						actiontest.Running("preemptee1-1", 1, "n1"),
					).Running(),
					actiontest.NewJob("pg2", "q2", 0,
						actiontest.Running("preemptee2-1", 1, "n1"),
					).Running(),
					actiontest.NewJob("pg3", "q3", 1, tc{Name: "preemptor1", CPU: 2, Mem: 1}),
				},
			},
			priority:      true,
			wantEvicted:   []string{"preemptee1-1"},
			wantPipelined: map[string]string{"c1/preemptor1": "n1"},
		},
		{
			// Nothing is evicted. (The test's comment says q1 is overused, but proportion
			// hands q1 the room q2 does not ask for: q1 deserves the 2 CPU it uses and offers
			// no victim, in Volcano as here.)
			name: "only commit evictions on the node where reclaim succeeds", // Volcano TestReclaim
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}, {Name: "q2", Weight: 9}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 10, Mem: 10, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg-victim", "q1", 0,
						actiontest.Running("victim-n1", 2, "n1"),
					).Running(),
					actiontest.NewJob("pg-preemptor", "q2", 1, actiontest.Pending("preemptor1", 3)),
				},
			},
			wantPipelined: map[string]string{},
		},
		{
			// q1 uses 6 CPU of its deserved 5, so its task is a victim; but n1 already has
			// the 3 CPU the first task asks for, and Volcano checks the room before each
			// eviction: the task is pipelined and nothing is evicted.
			name: "no eviction while the node already has room",
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}, {Name: "q2"}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 10, Mem: 10, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg-victim", "q1", 0,
						actiontest.Running("victim", 6, "n1"),
					).Running(),
					actiontest.NewJob("pg-reclaimer", "q2", 1,
						actiontest.Pending("a-small", 3),
						actiontest.Pending("b-big", 5),
					),
				},
			},
			wantPipelined: map[string]string{"c1/a-small": "n1"},
		},
		{
			// Volcano's reclaim takes Running tasks only; a Bound one stays.
			name: "a bound task is no reclaim victim",
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}, {Name: "q2"}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 2, Mem: 2, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 0,
						actiontest.Running("bound-1", 1, "n1").In(api.Bound),
						actiontest.Running("bound-2", 1, "n1").In(api.Bound),
					).Running(),
					actiontest.NewJob("pg2", "q2", 1, actiontest.Pending("preemptor1", 1)),
				},
			},
			wantPipelined: map[string]string{},
		},
		{
			// The gang of two gets room for its first task on n1, but its queue may take no
			// more than its deserved 2 CPU, so the second task cannot reclaim: the job is not
			// pipelined and n1's evictions are discarded with its statement.
			name: "a gang that cannot be pipelined reclaims nothing",
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}, {Name: "q2"}},
				Nodes: []actiontest.Node{
					{Name: "n1", CPU: 2, Mem: 2, Pods: 10},
					{Name: "n2", CPU: 2, Mem: 2, Pods: 10},
				},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("a", 1, "n1"),
						actiontest.Running("b", 1, "n1"),
						actiontest.Running("c", 1, "n2"),
						actiontest.Running("d", 1, "n2"),
					).Running(),
					actiontest.NewJob("pg2", "q2", 2,
						actiontest.Pending("reclaimer-0", 2),
						actiontest.Pending("reclaimer-1", 2),
					),
				},
			},
			pipelined:     true,
			wantPipelined: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg := actiontest.Registry(reclaim.Name, reclaim.New, plugins.Register)
			out := actiontest.Run(t, tt.c, volcanoTiers(tt.pipelined, tt.priority), reg)
			if got, want := out.Evicted(), actiontest.UIDs(tt.wantEvicted...); !slices.Equal(got, want) {
				t.Errorf("evicted %v, want %v", got, want)
			}
			if got := out.Pipelined(); fmt.Sprint(got) != fmt.Sprint(tt.wantPipelined) {
				t.Errorf("pipelined %v, want %v", got, tt.wantPipelined)
			}
		})
	}
}

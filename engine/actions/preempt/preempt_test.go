package preempt_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/internal/actiontest"
	"github.com/sluice-sched/sluice/engine/actions/preempt"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins"
)

// volcanoTiers is the tier of Volcano's TestPreempt (preempt_test.go): conformance, gang,
// priority and proportion with only the callbacks the test enables (Volcano's test leaves the
// others off). extra adds plugin entries to the tier; topologyAware picks the variant.
func volcanoTiers(topologyAware bool, extra ...string) string {
	return fmt.Sprintf(`actions: "preempt"
tiers:
- plugins:
  - {name: conformance, enablePreemptable: true, enableReclaimable: false}
  - {name: gang, enableJobOrder: false, enableJobReady: false, enableJobPipelined: true, enableJobStarving: true, enablePreemptable: true, enableReclaimable: false}
  - {name: priority, enableJobOrder: true, enableTaskOrder: true, enablePreemptable: true, enableReclaimable: false, enableJobPipelined: true, enableJobStarving: true}
  - {name: proportion, enableQueueOrder: true, enableReclaimable: false, enabledOverused: true, enabledAllocatable: true, enablePreemptive: false, enableJobEnqueued: false, enablePredicate: false}
%s
configurations:
- name: preempt
  arguments: {enableTopologyAwarePreemption: %t}
`, strings.Join(extra, "\n"), topologyAware)
}

var prios = map[string]int32{"high-priority": 100000, "low-priority": 10}

func run(t *testing.T, c actiontest.Cluster, config string, register ...func(*framework.Registry)) actiontest.Outcome {
	t.Helper()
	reg := actiontest.Registry(preempt.Name, preempt.New, append([]func(*framework.Registry){plugins.Register}, register...)...)
	return actiontest.Run(t, c, config, reg)
}

func TestPreempt(t *testing.T) {
	tests := []struct {
		name string
		c    actiontest.Cluster
		// wantEvicted and wantPipelined are task names.
		wantEvicted   []string
		wantPipelined []string
	}{
		{
			name: "do not preempt if there are enough idle resources", // Volcano TestPreempt
			c: actiontest.Cluster{
				Queues: []actiontest.Queue{{Name: "q1"}},
				Nodes:  []actiontest.Node{{Name: "n1", CPU: 10, Mem: 10, Pods: 10}},
				Jobs: []actiontest.Job{actiontest.NewJob("pg1", "q1", 3,
					actiontest.Running("preemptee1", 1, "n1"),
					actiontest.Running("preemptee2", 1, "n1"),
					actiontest.Pending("preemptor1", 1),
				)},
			},
			// No victims: placing the preemptor on idle room is allocate's work.
		},
		{
			name: "preempt enough tasks to fit large task of different job", // Volcano TestPreempt
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1"}},
				Nodes:           []actiontest.Node{{Name: "n1", CPU: 6, Mem: 6, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("preemptee1", 1, "n1"),
						actiontest.Running("preemptee2", 1, "n1"),
						actiontest.Running("preemptee3", 1, "n1").Pinned(),
					).Of("low-priority"),
					actiontest.NewJob("pg2", "q1", 1,
						actiontest.Pending("preemptor1", 5),
					).Of("high-priority"),
				},
			},
			wantEvicted:   []string{"preemptee1", "preemptee2"},
			wantPipelined: []string{"preemptor1"},
		},
		{
			name: "preempt low priority job in same queue", // Volcano TestPreempt, #3161
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1", CapCPU: 4, CapMem: 4}},
				Nodes:           []actiontest.Node{{Name: "n1", CPU: 12, Mem: 12, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 0,
						actiontest.Running("preemptee1", 3, "n1"),
					).Of("low-priority"),
					actiontest.NewJob("pg2", "q1", 1,
						actiontest.Pending("preemptor1", 3),
					).Of("high-priority"),
				},
			},
			wantEvicted:   []string{"preemptee1"},
			wantPipelined: []string{"preemptor1"},
		},
		{
			name: "rollback evictions when preemptor exceeds queue capacity after evicting victims", // Volcano TestPreempt
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1", CapCPU: 3, CapMem: 3}},
				Nodes:           []actiontest.Node{{Name: "n1", CPU: 10, Mem: 10, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("preemptee1", 1, "n1"),
						actiontest.Running("preemptee2", 1, "n1"),
					).Of("low-priority"),
					actiontest.NewJob("pg2", "q1", 1,
						actiontest.Pending("preemptor1", 4),
					).Of("high-priority"),
				},
			},
		},
		{
			// n1's victim frees too little for the queue's capability (4 + 3 > 6), so the
			// eviction tried there is undone; n2's victim is enough (1 + 3 <= 6).
			name: "only commit evictions on the node where preemption succeeds", // Volcano TestPreempt
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1", CapCPU: 6, CapMem: 6}},
				Nodes: []actiontest.Node{
					{Name: "n1", CPU: 3, Mem: 3, Pods: 10},
					{Name: "n2", CPU: 4, Mem: 4, Pods: 10},
				},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 0,
						actiontest.Running("preemptee1", 1, "n1"),
					).Of("low-priority"),
					actiontest.NewJob("pg2", "q1", 1,
						actiontest.Pending("preemptor1", 3),
					).Of("high-priority"),
					actiontest.NewJob("pg3", "q1", 0,
						actiontest.Running("preemptee2", 4, "n2"),
					).Of("low-priority"),
				},
			},
			wantEvicted:   []string{"preemptee2"},
			wantPipelined: []string{"preemptor1"},
		},
		{
			name: "multi-queue: preemptorTasks must not be overwritten by intra-job preemption of another queue", // Volcano TestPreempt
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1"}, {Name: "q2", CapCPU: 4, CapMem: 4}},
				Nodes:           []actiontest.Node{{Name: "n1", CPU: 2, Mem: 2, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 1,
						actiontest.Running("q1-runner1", 1, "n1").Pinned(),
					),
					actiontest.NewJob("pg2", "q2", 0,
						actiontest.Running("q2-preemptee1", 1, "n1"),
					).Of("low-priority"),
					actiontest.NewJob("pg3", "q2", 1,
						actiontest.Pending("q2-preemptor1", 1),
					).Of("high-priority"),
				},
			},
			wantEvicted:   []string{"q2-preemptee1"},
			wantPipelined: []string{"q2-preemptor1"},
		},
		{
			// Volcano's victims are Bound or Running (api.PreemptableStatus).
			name: "a bound task is a victim",
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1"}},
				Nodes:           []actiontest.Node{{Name: "n1", CPU: 2, Mem: 2, Pods: 10}},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 0,
						actiontest.Running("bound", 2, "n1").In(api.Bound),
					).Of("low-priority"),
					actiontest.NewJob("pg2", "q1", 1,
						actiontest.Pending("preemptor1", 2),
					).Of("high-priority"),
				},
			},
			wantEvicted:   []string{"bound"},
			wantPipelined: []string{"preemptor1"},
		},
		{
			// The first task of the gang of two preempts on n1; the second finds nothing to
			// evict, so the job is not pipelined and its statement, n1's eviction included,
			// is discarded.
			name: "a gang that cannot be pipelined evicts nothing",
			c: actiontest.Cluster{
				PriorityClasses: prios,
				Queues:          []actiontest.Queue{{Name: "q1"}},
				Nodes: []actiontest.Node{
					{Name: "n1", CPU: 2, Mem: 2, Pods: 10},
					{Name: "n2", CPU: 2, Mem: 2, Pods: 10},
				},
				Jobs: []actiontest.Job{
					actiontest.NewJob("pg1", "q1", 0,
						actiontest.Running("victim", 2, "n1"),
						actiontest.Running("kept", 2, "n2").Pinned(),
					).Of("low-priority"),
					actiontest.NewJob("pg2", "q1", 2,
						actiontest.Pending("preemptor1", 2),
						actiontest.Pending("preemptor2", 2),
					).Of("high-priority"),
				},
			},
		},
	}
	for _, topologyAware := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/topologyAware=%t", tt.name, topologyAware), func(t *testing.T) {
				out := run(t, tt.c, volcanoTiers(topologyAware))
				if got, want := out.Evicted(), actiontest.UIDs(tt.wantEvicted...); !slices.Equal(got, want) {
					t.Errorf("evicted %v, want %v", got, want)
				}
				var piped []string
				for task := range out.Pipelined() {
					piped = append(piped, task)
				}
				slices.Sort(piped)
				if want := actiontest.UIDs(tt.wantPipelined...); !slices.Equal(piped, want) {
					t.Errorf("pipelined %v, want %v", piped, want)
				}
			})
		}
	}
}

// hiddenDevice is Volcano's deviceFitAfterEvictionPlugin (TestNormalPreemptRechecksPredicate
// AfterEviction): the preemptor fails the predicates while the task "preemptee" holds the
// node, although the node's resources would hold both.
type hiddenDevice struct{}

func (hiddenDevice) Name() string { return "hidden-device" }
func (hiddenDevice) OnSessionOpen(ssn *framework.Session) {
	ssn.AddPredicateFn("hidden-device", func(task *api.TaskInfo, node *api.NodeInfo) error {
		if task.Name != "preemptor" {
			return nil
		}
		for _, t := range node.Tasks {
			if t.Name == "preemptee" && t.Status != api.Releasing {
				return api.NewFitError(node.Name, api.Unschedulable, "hidden device capacity is occupied")
			}
		}
		return nil
	})
}
func (hiddenDevice) OnSessionClose(*framework.Session) {}

func TestNormalPreemptRechecksPredicateAfterEviction(t *testing.T) {
	c := actiontest.Cluster{
		PriorityClasses: prios,
		Queues:          []actiontest.Queue{{Name: "q1"}},
		Nodes:           []actiontest.Node{{Name: "n1", CPU: 2, Mem: 2, Pods: 10}},
		Jobs: []actiontest.Job{
			{Name: "pg-low", Queue: "q1", MinAvailable: 1, PriorityClass: "low-priority", Tasks: []actiontest.Task{
				actiontest.Running("preemptee", 1, "n1"),
			}},
			{Name: "pg-high", Queue: "q1", MinAvailable: 1, PriorityClass: "high-priority", Tasks: []actiontest.Task{
				actiontest.Pending("preemptor", 1),
			}},
		},
	}
	// Volcano's case turns gang's preemptable off, so the victim's gang does not protect it.
	config := strings.Replace(volcanoTiers(false, "  - {name: hidden-device, enablePredicate: true}"),
		"enableJobStarving: true, enablePreemptable: true", "enableJobStarving: true, enablePreemptable: false", 1)
	out := run(t, c, config, func(reg *framework.Registry) {
		reg.RegisterPlugin("hidden-device", func(conf.Arguments) (framework.Plugin, error) { return hiddenDevice{}, nil })
	})
	if got, want := out.Evicted(), actiontest.UIDs("preemptee"); !slices.Equal(got, want) {
		t.Errorf("evicted %v, want %v", got, want)
	}
	if got := out.Pipelined()["c1/preemptor"]; got != "n1" {
		t.Errorf("preemptor pipelined on %q, want n1", got)
	}
}

package gangpreempt

import (
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/gangevict"
	"github.com/sluice-sched/sluice/engine/actions/gangevict/evicttest"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

func TestGangPreempt(t *testing.T) {
	annotated := func(value string) evicttest.JobSpec {
		return evicttest.Gang("v", "q1", 10, 1, 1, 0).With(func(j *api.Job, _ []*api.Task) {
			j.Annotations = map[string]string{gangevict.PreemptableKey: value}
		})
	}
	tests := []struct {
		name string
		// source names the Volcano test the case comes from.
		source    string
		snap      *framework.Snapshot
		args      string
		victims   func(*framework.EvictionContext, []*api.TaskInfo) []*api.TaskInfo
		evicted   []string
		pipelined map[string]string
	}{
		{
			name:   "a one-task gang is a whole bundle",
			source: "gangpreempt_test.go TestSelectDomainVictims_RespectAllowWholeBundle (allowWholeBundle true)",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 10, 1, 1, 0),
				evicttest.Starving("p", "q1", 100, 1, 2)),
			// The need (2 cpus) counts n1..n3's idle room, so v-0 alone covers it; the tasks
			// then go to idle nodes first.
			evicted:   []string{"ns/v-0"},
			pipelined: map[string]string{"ns/p-0": "n1", "ns/p-1": "n2"},
		},
		{
			name:   "a bundle is evicted as a unit",
			source: "gangpreempt.go preemptJobInDomains: victims grow bundle by bundle",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 10, 1, 4, 0),
				evicttest.Starving("p", "q1", 100, 1, 1)),
			// v's safe bundle is v-0..v-2 (its surplus over minAvailable 1); all of it goes for
			// one task.
			evicted:   []string{"ns/v-0", "ns/v-1", "ns/v-2"},
			pipelined: map[string]string{"ns/p-0": "n0"},
		},
		{
			name:   "whole bundle refused",
			source: "gangpreempt_test.go TestSelectDomainVictims_RespectAllowWholeBundle (allowWholeBundle false)",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 10, 1, 4, 0),
				evicttest.Starving("p", "q1", 100, 4, 4)),
			args: "{allowWholeBundle: false}",
		},
		{
			name:    "preemptable annotation false protects the job",
			source:  "gangpreempt_test.go TestSelectDomainVictims_RespectVictimJobPreemptable",
			snap:    evicttest.Cluster(annotated("false"), evicttest.Starving("p", "q1", 100, 4, 4)),
			evicted: nil,
		},
		{
			name:      "preemptable annotation true allows it",
			source:    "gangpreempt_test.go TestSelectDomainVictims_AllowVictimJobWhenPreemptableUnset (the annotation set)",
			snap:      evicttest.Cluster(annotated("true"), evicttest.Starving("p", "q1", 100, 4, 4)),
			evicted:   []string{"ns/v-0"},
			pipelined: map[string]string{"ns/p-0": "n1", "ns/p-1": "n2", "ns/p-2": "n3", "ns/p-3": "n0"},
		},
		{
			name:    "preemptable annotation that is not a boolean protects the job",
			source:  "Volcano's JobInfo.extractPreemptable",
			snap:    evicttest.Cluster(annotated("yes please"), evicttest.Starving("p", "q1", 100, 4, 4)),
			evicted: nil,
		},
		{
			name:   "safe surplus first, the victim gang survives",
			source: "test/e2e/gangevict GP-1",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 10, 2, 4, 0),
				evicttest.Starving("p", "q1", 100, 2, 2)),
			evicted:   []string{"ns/v-0", "ns/v-1"},
			pipelined: map[string]string{"ns/p-0": "n0", "ns/p-1": "n1"},
		},
		{
			name:   "safe bundles of several gangs before any gang is broken",
			source: "test/e2e/gangevict GP-2",
			snap: evicttest.Cluster(evicttest.Gang("a", "q1", 10, 1, 2, 0),
				evicttest.Gang("b", "q1", 10, 1, 2, 2),
				evicttest.Starving("p", "q1", 100, 2, 2)),
			evicted:   []string{"ns/a-0", "ns/b-0"},
			pipelined: map[string]string{"ns/p-0": "n0", "ns/p-1": "n2"},
		},
		{
			name:   "one tight gang broken, the one that goes last in job order",
			source: "test/e2e/gangevict GP-3",
			snap: evicttest.Cluster(evicttest.Gang("a", "q1", 10, 2, 2, 0),
				evicttest.Gang("b", "q1", 10, 2, 2, 2),
				evicttest.Starving("p", "q1", 100, 2, 2)),
			evicted:   []string{"ns/b-0", "ns/b-1"},
			pipelined: map[string]string{"ns/p-0": "n2", "ns/p-1": "n3"},
		},
		{
			name:   "a whole bundle the plugins refuse in part is skipped",
			source: "utils/bundle_test.go TestApplyAllowedTasks_WholeAtomicAndSafeShrink, in an action",
			snap: evicttest.Cluster(evicttest.Gang("a", "q1", 10, 2, 2, 0),
				evicttest.Gang("b", "q1", 10, 2, 2, 2),
				evicttest.Starving("p", "q1", 100, 2, 2)),
			victims: func(_ *framework.EvictionContext, c []*api.TaskInfo) []*api.TaskInfo {
				return slices.DeleteFunc(slices.Clone(c), func(t *api.TaskInfo) bool { return t.UID == "ns/b-1" })
			},
			evicted:   []string{"ns/a-0", "ns/a-1"},
			pipelined: map[string]string{"ns/p-0": "n0", "ns/p-1": "n1"},
		},
		{
			name:   "both gangs broken for a large preemptor",
			source: "test/e2e/gangevict GP-4",
			snap: evicttest.Cluster(evicttest.Gang("a", "q1", 10, 2, 2, 0),
				evicttest.Gang("b", "q1", 10, 2, 2, 2),
				evicttest.Starving("p", "q1", 100, 4, 4)),
			evicted:   []string{"ns/a-0", "ns/a-1", "ns/b-0", "ns/b-1"},
			pipelined: map[string]string{"ns/p-0": "n0", "ns/p-1": "n1", "ns/p-2": "n2", "ns/p-3": "n3"},
		},
		{
			name:   "another queue's jobs are not victims",
			source: "test/e2e/gangevict GP-6",
			snap: evicttest.Cluster(evicttest.Gang("v", "q2", 10, 4, 4, 0),
				evicttest.Starving("p", "q1", 100, 2, 2)),
		},
		{
			name:   "equal priority is not preempted",
			source: "test/e2e/gangevict GP-7",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 50, 4, 4, 0),
				evicttest.Starving("p", "q1", 50, 2, 2)),
		},
		{
			name:   "not enough lower-priority room: nothing is evicted",
			source: "test/e2e/gangevict GP-8",
			snap: evicttest.Cluster(evicttest.Gang("a", "q1", 100, 2, 2, 0),
				evicttest.Gang("b", "q1", 10, 2, 2, 2),
				evicttest.Starving("p", "q1", 50, 4, 4)),
		},
		{
			name:      "role minimums keep role-tight tasks",
			source:    "test/e2e/gangevict GP-R1",
			snap:      evicttest.Cluster(evicttest.Roles("v", "q1", 10), evicttest.Starving("p", "q1", 100, 1, 1)),
			evicted:   []string{"ns/worker-0"},
			pipelined: map[string]string{"ns/p-0": "n1"},
		},
		{
			name:   "idle room counts towards the need",
			source: "gangpreempt.go: the domain's idle and releasing resources plus the victims' must cover the job",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 10, 3, 3, 0),
				evicttest.Starving("p", "q1", 100, 2, 2)),
			// n3 is idle and one more cpu is needed, but v's gang is tight: its whole bundle goes.
			evicted:   []string{"ns/v-0", "ns/v-1", "ns/v-2"},
			pipelined: map[string]string{"ns/p-0": "n3", "ns/p-1": "n0"},
		},
		{
			name:   "hard topology: the first tier-1 domain with victims",
			source: "test/e2e/gangevict GP-T1",
			snap: evicttest.Topology(evicttest.Cluster(evicttest.Gang("a", "q1", 100, 2, 2, 0),
				evicttest.Gang("b", "q1", 10, 2, 2, 2),
				evicttest.Starving("p", "q1", 50, 2, 2).Hard(1))),
			evicted:   []string{"ns/b-0", "ns/b-1"},
			pipelined: map[string]string{"ns/p-0": "n2", "ns/p-1": "n3"},
		},
		{
			name:   "hard topology: maxDomains stops the search",
			source: "gangpreempt_test.go TestParseArguments (maxDomains) with GP-T1's cluster",
			snap: evicttest.Topology(evicttest.Cluster(evicttest.Gang("a", "q1", 100, 2, 2, 0),
				evicttest.Gang("b", "q1", 10, 2, 2, 2),
				evicttest.Starving("p", "q1", 50, 2, 2).Hard(1))),
			args: "{maxDomains: 1}",
		},
		{
			name:   "hard topology: a tier-1 domain too small for the job",
			source: "test/e2e/gangevict GP-T2",
			snap: evicttest.Topology(evicttest.Cluster(evicttest.Gang("v", "q1", 10, 4, 4, 0),
				evicttest.Starving("p", "q1", 100, 3, 3).Hard(1))),
		},
		{
			name:   "hard topology: the widest allowed domain first",
			source: "test/e2e/gangevict GP-T3",
			snap: evicttest.Topology(evicttest.Cluster(evicttest.Gang("v", "q1", 10, 2, 4, 0),
				evicttest.Starving("p", "q1", 100, 3, 3).Hard(2))),
			// In s2 (all four nodes) v's safe pair and then its whole pair are needed.
			evicted:   []string{"ns/v-0", "ns/v-1", "ns/v-2", "ns/v-3"},
			pipelined: map[string]string{"ns/p-0": "n0", "ns/p-1": "n1", "ns/p-2": "n2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stub := &evicttest.Stub{Victims: tc.victims}
			got := evicttest.Run(t, tc.snap, evicttest.Config(Name, tc.args), stub, map[string]framework.ActionBuilder{Name: New})
			got.Check(t, tc.evicted, tc.pipelined, tc.source)
			if len(tc.evicted) == 0 && !strings.Contains(got.Summaries["ns/p"], Name+":") {
				t.Errorf("explanation of ns/p = %q, want it to name %s", got.Summaries["ns/p"], Name)
			}
		})
	}
}

// TestEvictionContext checks what the gang-aware victim callbacks are told and offered: a gang
// preemption for the starving job in the whole cluster, and the candidates bundle by bundle,
// safe bundles first.
func TestEvictionContext(t *testing.T) {
	snap := evicttest.Cluster(evicttest.Gang("a", "q1", 10, 1, 2, 0),
		evicttest.Gang("b", "q1", 10, 1, 2, 2),
		evicttest.Starving("p", "q1", 100, 3, 3))
	stub := &evicttest.Stub{}
	evicttest.Run(t, snap, evicttest.Config(Name, ""), stub, map[string]framework.ActionBuilder{Name: New})
	if len(stub.Offered) != 1 {
		t.Fatalf("offered %d times, want once", len(stub.Offered))
	}
	o := stub.Offered[0]
	if ctx := o.Context; ctx.Kind != framework.EvictionKindGangPreempt || ctx.Job == nil || ctx.Job.UID != "ns/p" ||
		ctx.Task != nil || ctx.HyperNode != "" {
		t.Errorf("context %+v, want a gang preemption for ns/p in the whole cluster", ctx)
	}
	if want := []string{"ns/b-0", "ns/a-0", "ns/b-1", "ns/a-1"}; !slices.Equal(o.Candidates, want) {
		t.Errorf("candidates %v, want %v", o.Candidates, want)
	}
}

// TestNew checks the arguments, as Volcano's TestParseArguments and
// TestParseArguments_InvalidMaxDomainsFallsBackToDefault do.
func TestNew(t *testing.T) {
	tests := []struct {
		args    conf.Arguments
		want    gangevict.Options
		wantErr bool
	}{
		{nil, gangevict.Options{MaxDomains: 8, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": 3, "allowWholeBundle": false}, gangevict.Options{MaxDomains: 3}, false},
		{conf.Arguments{"maxDomains": 0}, gangevict.Options{MaxDomains: 8, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": -1}, gangevict.Options{MaxDomains: 8, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": "many"}, gangevict.Options{}, true},
	}
	for _, tc := range tests {
		a, err := New(tc.args)
		if tc.wantErr {
			if err == nil {
				t.Errorf("New(%v) succeeded, want an error", tc.args)
			}
			continue
		}
		if err != nil {
			t.Fatalf("New(%v): %v", tc.args, err)
		}
		if a.Name() != Name {
			t.Errorf("name %q, want %q", a.Name(), Name)
		}
		if got := a.(*gangevict.Action).Options(); got != tc.want {
			t.Errorf("New(%v) options %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

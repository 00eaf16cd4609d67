package gangreclaim

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/gangevict"
	"github.com/sluice-sched/sluice/engine/actions/gangevict/evicttest"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// unreclaimable makes q3 unreclaimable.
func unreclaimable(s *framework.Snapshot) *framework.Snapshot {
	for _, q := range s.Queues {
		if q.Name == "q3" {
			q.Reclaimable = false
		}
	}
	return s
}

func TestGangReclaim(t *testing.T) {
	none := func(*framework.EvictionContext, []*api.TaskInfo) []*api.TaskInfo { return nil }
	tests := []struct {
		name string
		// source names the Volcano test the case comes from.
		source    string
		snap      *framework.Snapshot
		stub      evicttest.Stub
		args      string
		evicted   []string
		pipelined map[string]string
	}{
		{
			name:   "only reclaimable queues give",
			source: "gangreclaim_test.go TestSelectDomainVictims_ReclaimableCrossQueueOnly",
			snap: unreclaimable(evicttest.Cluster(evicttest.Gang("other", "q3", 10, 1, 1, 0),
				evicttest.Gang("v", "q2", 10, 1, 1, 1), evicttest.Gang("own", "q1", 0, 1, 1, 2),
				evicttest.Gang("busy", "q3", 0, 1, 1, 3), evicttest.Starving("r", "q1", 100, 1, 1))),
			evicted:   []string{"ns/v-0"},
			pipelined: map[string]string{"ns/r-0": "n1"},
		},
		{
			name:   "preemptable annotation false protects the job",
			source: "gangreclaim_test.go TestSelectDomainVictims_RespectVictimJobPreemptable",
			snap: evicttest.Cluster(evicttest.Gang("v", "q2", 10, 4, 4, 0).With(func(j *api.Job, _ []*api.Task) {
				j.Labels = map[string]string{gangevict.PreemptableKey: "false"}
			}), evicttest.Starving("r", "q1", 100, 1, 1)),
		},
		{
			name:   "preemptable label true allows it",
			source: "gangreclaim_test.go TestSelectDomainVictims_AllowVictimJobWhenPreemptableUnset (the label set)",
			snap: evicttest.Cluster(evicttest.Gang("v", "q2", 10, 4, 4, 0).With(func(j *api.Job, _ []*api.Task) {
				j.Labels = map[string]string{gangevict.PreemptableKey: "true"}
			}), evicttest.Starving("r", "q1", 100, 1, 1)),
			evicted:   []string{"ns/v-0", "ns/v-1", "ns/v-2", "ns/v-3"},
			pipelined: map[string]string{"ns/r-0": "n0"},
		},
		{
			name:   "safe surplus first, the victim gang survives",
			source: "test/e2e/gangevict GR-1",
			snap: evicttest.Cluster(evicttest.Gang("v", "q2", 10, 2, 4, 0),
				evicttest.Starving("r", "q1", 10, 2, 2)),
			evicted:   []string{"ns/v-0", "ns/v-1"},
			pipelined: map[string]string{"ns/r-0": "n0", "ns/r-1": "n1"},
		},
		{
			name:   "one tight gang broken: in one queue, the first by name",
			source: "test/e2e/gangevict GR-2",
			snap: evicttest.Cluster(evicttest.Gang("a", "q2", 10, 2, 2, 0),
				evicttest.Gang("b", "q2", 10, 2, 2, 2), evicttest.Starving("r", "q1", 10, 2, 2)),
			evicted:   []string{"ns/a-0", "ns/a-1"},
			pipelined: map[string]string{"ns/r-0": "n0", "ns/r-1": "n1"},
		},
		{
			name:   "the queue last in queue order gives first",
			source: "utils/bundle_test.go TestSortBundlesForReclaim_UsesQueueOrderThenROI, in an action",
			snap: evicttest.Cluster(evicttest.Gang("a", "q2", 10, 1, 2, 0),
				evicttest.Gang("b", "q3", 10, 1, 2, 2), evicttest.Starving("r", "q1", 10, 1, 1)),
			evicted:   []string{"ns/b-0"},
			pipelined: map[string]string{"ns/r-0": "n2"},
		},
		{
			name:   "the plugins refuse every victim",
			source: "test/e2e/gangevict GR-4 (queues within their deserved give nothing)",
			snap: evicttest.Cluster(evicttest.Gang("a", "q2", 10, 2, 2, 0),
				evicttest.Gang("b", "q3", 10, 2, 2, 2), evicttest.Starving("r", "q1", 10, 2, 2)),
			stub: evicttest.Stub{Victims: none},
		},
		{
			name:   "an unreclaimable queue gives nothing",
			source: "test/e2e/gangevict GR-5",
			snap: unreclaimable(evicttest.Cluster(evicttest.Gang("v", "q3", 10, 2, 4, 0),
				evicttest.Starving("r", "q1", 10, 2, 2))),
		},
		{
			name:   "an overused queue does not reclaim",
			source: "test/e2e/gangevict GR-7",
			snap: evicttest.Cluster(evicttest.Gang("v", "q2", 10, 2, 4, 0),
				evicttest.Starving("r", "q1", 10, 2, 2)),
			stub: evicttest.Stub{Overused: map[string]bool{"q1": true}},
		},
		{
			name:   "a queue the preemptive callbacks refuse does not reclaim",
			source: "gangreclaim.go reclaimJobInDomains: ssn.Preemptive",
			snap: evicttest.Cluster(evicttest.Gang("v", "q2", 10, 2, 4, 0),
				evicttest.Starving("r", "q1", 10, 2, 2)),
			stub: evicttest.Stub{NotPreemptive: map[string]bool{"q1": true}},
		},
		{
			name:   "its own queue gives nothing",
			source: "gangreclaim.go selectDomainBundles: victims of other queues only",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 0, 2, 4, 0),
				evicttest.Starving("r", "q1", 10, 2, 2)),
		},
		{
			name:      "role minimums keep role-tight tasks",
			source:    "test/e2e/gangevict GR-R1",
			snap:      evicttest.Cluster(evicttest.Roles("v", "q2", 10), evicttest.Starving("r", "q1", 10, 1, 1)),
			evicted:   []string{"ns/worker-0"},
			pipelined: map[string]string{"ns/r-0": "n1"},
		},
		{
			name:   "hard topology: the first tier-1 domain with victims",
			source: "test/e2e/gangevict GR-T1",
			snap: evicttest.Topology(unreclaimable(evicttest.Cluster(evicttest.Gang("x", "q3", 10, 2, 2, 0),
				evicttest.Gang("v", "q2", 10, 2, 2, 2), evicttest.Starving("r", "q1", 10, 2, 2).Hard(1)))),
			evicted:   []string{"ns/v-0", "ns/v-1"},
			pipelined: map[string]string{"ns/r-0": "n2", "ns/r-1": "n3"},
		},
		{
			name:   "hard topology: without whole bundles nothing fits",
			source: "gangreclaim_test.go TestParseArguments (allowWholeBundle) with GR-T1's cluster",
			snap: evicttest.Topology(unreclaimable(evicttest.Cluster(evicttest.Gang("x", "q3", 10, 2, 2, 0),
				evicttest.Gang("v", "q2", 10, 2, 2, 2), evicttest.Starving("r", "q1", 10, 2, 2).Hard(1)))),
			args: "{allowWholeBundle: false}",
		},
		{
			name:   "hard topology: a tier-1 domain too small for the job",
			source: "test/e2e/gangevict GR-T2",
			snap: evicttest.Topology(evicttest.Cluster(evicttest.Gang("v", "q2", 10, 4, 4, 0),
				evicttest.Starving("r", "q1", 10, 3, 3).Hard(1))),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			stub := tc.stub
			got := evicttest.Run(t, tc.snap, evicttest.Config(Name, tc.args), &stub, map[string]framework.ActionBuilder{Name: New})
			got.Check(t, tc.evicted, tc.pipelined, tc.source)
		})
	}
}

// TestEvictionContext checks what the gang-aware victim callbacks are told: a gang reclaim for
// the starving job, in each hypernode domain the search visits.
func TestEvictionContext(t *testing.T) {
	snap := evicttest.Topology(unreclaimable(evicttest.Cluster(evicttest.Gang("x", "q3", 10, 2, 2, 0),
		evicttest.Gang("v", "q2", 10, 2, 2, 2), evicttest.Starving("r", "q1", 10, 2, 2).Hard(1))))
	stub := &evicttest.Stub{}
	evicttest.Run(t, snap, evicttest.Config(Name, ""), stub, map[string]framework.ActionBuilder{Name: New})
	// s0 holds only x, of unreclaimable q3: no candidate, so the callbacks are asked in s1 alone.
	if len(stub.Offered) != 1 {
		t.Fatalf("offered %d times, want once", len(stub.Offered))
	}
	o := stub.Offered[0]
	if ctx := o.Context; ctx.Kind != framework.EvictionKindGangReclaim || ctx.Job == nil || ctx.Job.UID != "ns/r" ||
		ctx.Task != nil || ctx.HyperNode != "s1" {
		t.Errorf("context %+v, want a gang reclaim for ns/r in s1", ctx)
	}
	if want := []string{"ns/v-0", "ns/v-1"}; !slices.Equal(o.Candidates, want) {
		t.Errorf("candidates %v, want %v", o.Candidates, want)
	}
}

// TestNew checks the arguments, as Volcano's TestParseArguments does.
func TestNew(t *testing.T) {
	a, err := New(conf.Arguments{"maxDomains": 5, "allowWholeBundle": false})
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != Name {
		t.Errorf("name %q, want %q", a.Name(), Name)
	}
	if got, want := a.(*gangevict.Action).Options(), (gangevict.Options{MaxDomains: 5}); got != want {
		t.Errorf("options %+v, want %+v", got, want)
	}
	if _, err := New(conf.Arguments{"allowWholeBundle": "sometimes"}); err == nil {
		t.Error("New accepted allowWholeBundle: sometimes")
	}
}

package engine

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

func dryRunPlan(cluster string, seq, decisions int) *Plan {
	return &Plan{
		ID:        fmt.Sprintf("%s-dry%d", cluster, seq),
		Cluster:   cluster,
		ExpiresAt: time.Unix(1000, 0),
		Result:    &framework.Result{Decisions: make([]framework.Decision, decisions)},
	}
}

// TestDryRunCacheBounds: the cache keeps at most maxDryRuns plans and maxDryRunDecisions
// decisions; a cluster flooding it with dry runs pushes out its own plans, not a quieter
// cluster's; a plan past its expiry is not handed out.
func TestDryRunCacheBounds(t *testing.T) {
	now := time.Unix(500, 0)
	tests := []struct {
		name string
		// adds, in order: cluster and decision count.
		adds       []dryRunAdd
		kept, gone []string
	}{
		{
			name: "one cluster keeps its newest",
			adds: repeat("big", maxDryRuns+3, 1),
			kept: []string{"big-dry3", fmt.Sprintf("big-dry%d", maxDryRuns+2)},
			gone: []string{"big-dry0", "big-dry2"},
		},
		{
			name: "a quiet cluster's plan survives a neighbour's flood",
			adds: append(repeat("quiet", 1, 1), repeat("big", 3*maxDryRuns, 1)...),
			kept: []string{"quiet-dry0", fmt.Sprintf("big-dry%d", 3*maxDryRuns-1)},
			gone: []string{"big-dry0"},
		},
		{
			name: "the decision bound drops the noisiest cluster's oldest",
			adds: append(append(repeat("quiet", 1, 10), repeat("big", 2, maxDryRunDecisions/2)...), repeat("big", 1, 5)...),
			kept: []string{"quiet-dry0", "big-dry1", "big-dry2"},
			gone: []string{"big-dry0"},
		},
		{
			name: "a plan over the decision bound alone is not kept",
			adds: repeat("big", 1, maxDryRunDecisions+1),
			gone: []string{"big-dry0"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c dryRunCache
			seq := map[string]int{}
			for _, a := range tc.adds {
				c.add(dryRunPlan(a.cluster, seq[a.cluster], a.decisions))
				seq[a.cluster]++
			}
			total := 0
			for _, p := range c.plans {
				total += len(p.decisions)
			}
			if len(c.plans) > maxDryRuns || total > maxDryRunDecisions {
				t.Fatalf("kept %d plans, %d decisions: over the bounds", len(c.plans), total)
			}
			for _, id := range tc.kept {
				if p := c.get(clusterOf(id), id, now); p == nil {
					t.Errorf("%s was dropped", id)
				}
			}
			for _, id := range tc.gone {
				if p := c.get(clusterOf(id), id, now); p != nil {
					t.Errorf("%s is still kept", id)
				}
			}
		})
	}
	var c dryRunCache
	c.add(dryRunPlan("a", 0, 1))
	if c.get("a", "a-dry0", time.Unix(1001, 0)) != nil {
		t.Errorf("an expired dry run was handed out")
	}
	if c.get("b", "a-dry0", now) != nil {
		t.Errorf("a dry run was handed out for another cluster")
	}
}

// dryRunAdd is a dry run added to the cache: its cluster and decision count.
type dryRunAdd struct {
	cluster   string
	decisions int
}

// repeat returns n dry runs of a cluster with the same decision count.
func repeat(cluster string, n, decisions int) []dryRunAdd {
	out := make([]dryRunAdd, n)
	for i := range out {
		out[i] = dryRunAdd{cluster, decisions}
	}
	return out
}

// clusterOf returns the cluster of a dry run's id (what precedes its last dash).
func clusterOf(id string) string {
	return id[:strings.LastIndexByte(id, '-')]
}

// TestDryRunCacheKeepsDecisions: a kept dry run hands back the plan it was given, decision
// by decision (binds, pipelines with devices, evictions with their reasons, empty and nil
// device lists), in a Result of its own, and leaves the caller's plan as it was.
func TestDryRunCacheKeepsDecisions(t *testing.T) {
	p := dryRunPlan("a", 0, 0)
	p.Result.Decisions = []framework.Decision{
		{Kind: api.DecisionBind, Task: "ns/t0", Job: "ns/j", Node: "n0"},
		{Kind: api.DecisionBind, Task: "ns/t1", Job: "ns/j", Node: "n1", DeviceIDs: []string{"gpu-0", "gpu-1"}},
		{Kind: api.DecisionPipeline, Task: "ns/t2", Job: "ns/j", Node: "n1", DeviceIDs: []string{}},
		{Kind: api.DecisionEvict, Task: "ns/v", Job: "ns/low", Node: "n2", Action: "preempt", ForTask: "ns/t3", Reason: "priority"},
		{Kind: api.DecisionEvict, Task: "ns/w", Job: "ns/low", Node: "n2", Reason: "reclaimed"},
	}
	p.Result.Jobs = []framework.JobOutcome{{Job: "ns/j", Ready: 2}}
	want := slices.Clone(p.Result.Decisions)
	var c dryRunCache
	c.add(p)
	if !reflect.DeepEqual(p.Result.Decisions, want) {
		t.Fatalf("add changed the caller's decisions: %+v", p.Result.Decisions)
	}
	got := c.get("a", p.ID, time.Unix(500, 0))
	if got == nil || got.Result == p.Result {
		t.Fatalf("get returned %p, the caller's result %p: want a result of its own", got, p.Result)
	}
	if !reflect.DeepEqual(got.Result.Decisions, want) || !reflect.DeepEqual(got.Result.Jobs, p.Result.Jobs) || got.ID != p.ID {
		t.Fatalf("kept plan %+v\nwant decisions %+v", got.Result, want)
	}
	got.Result.Decisions[0].Node = "changed"
	if again := c.get("a", p.ID, time.Unix(500, 0)); !reflect.DeepEqual(again.Result.Decisions, want) {
		t.Fatalf("a change to a handed-out plan reached the cache: %+v", again.Result.Decisions)
	}
	empty := dryRunPlan("a", 1, 0)
	empty.Result.Decisions = nil
	c.add(empty)
	if got := c.get("a", empty.ID, time.Unix(500, 0)); got == nil || got.Result.Decisions != nil {
		t.Fatalf("a plan without decisions came back as %+v", got)
	}
}

// BenchmarkDryRunKeep measures what a dry run of W1's size (10,000 binds) pays to enter the
// cache in its compact form.
func BenchmarkDryRunKeep(b *testing.B) {
	p := dryRunPlan("a", 0, 10000)
	for i := range p.Result.Decisions {
		p.Result.Decisions[i] = framework.Decision{Kind: api.DecisionBind, Task: fmt.Sprintf("ns/t%d", i), Job: "ns/j", Node: "n"}
	}
	for b.Loop() {
		keep(p)
	}
}

package gangevict

import (
	"maps"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/gangevict/evicttest"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// state captures what a dry run must leave as it found it: task statuses and nodes, and the
// nodes' idle and releasing cpu.
func state(ssn *framework.Session) map[string]string {
	out := map[string]string{}
	for _, j := range ssn.Jobs {
		for _, t := range j.Tasks {
			out[t.UID] = t.Status.String() + "@" + t.NodeName
		}
	}
	for _, n := range ssn.NodeList {
		out[n.Name] = n.Idle.String() + "/" + n.Releasing.String() + "/" + n.Pipelined.String()
	}
	return out
}

func tasksOf(ssn *framework.Session, uids ...string) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, u := range uids {
		for _, j := range ssn.Jobs {
			if t, ok := j.Tasks[u]; ok {
				out = append(out, t)
			}
		}
	}
	return out
}

// TestPlan follows Volcano's utils/simulate_test.go TestBuildNominationPlanInDomain_* cases.
func TestPlan(t *testing.T) {
	unresolvable := func(_ *api.TaskInfo, n *api.NodeInfo) error {
		if n.Name == "n0" {
			return api.NewFitError(n.Name, api.UnschedulableAndUnresolvable, "node(s) had untolerated taint")
		}
		return nil
	}
	resolvable := func(_ *api.TaskInfo, n *api.NodeInfo) error {
		return api.NewFitError(n.Name, api.Unschedulable, "too many pods")
	}
	tests := []struct {
		name      string
		snap      *framework.Snapshot
		predicate func(*api.TaskInfo, *api.NodeInfo) error
		victims   []string
		trials    [][]string
		// recorded marks n1 as unresolvable for p-0 in allocate's fit errors.
		recorded bool
		// ops is the number of saved operations, 0 when the dry run fails.
		ops int
		// where maps placed tasks to nodes after replaying the plan.
		where map[string]string
	}{
		{
			name:  "Success: idle room, no victims",
			snap:  evicttest.Cluster(evicttest.Starving("p", "q1", 1, 1, 1)),
			ops:   1,
			where: map[string]string{"ns/p-0": "n0"},
		},
		{
			name:    "WithVictimIncludesEvictAndPipeline",
			snap:    evicttest.Cluster(evicttest.Gang("v", "q1", 1, 4, 4, 0), evicttest.Starving("p", "q1", 1, 1, 1)),
			victims: []string{"ns/v-2"},
			ops:     2,
			where:   map[string]string{"ns/p-0": "n2"},
		},
		{
			name: "NoFeasibleNode",
			snap: evicttest.Cluster(evicttest.Gang("v", "q1", 1, 4, 4, 0), evicttest.Starving("p", "q1", 1, 1, 1)),
		},
		{
			name:    "PipelineFailureRollsBackEviction: all tasks or none",
			snap:    evicttest.Cluster(evicttest.Gang("v", "q1", 1, 4, 4, 0), evicttest.Starving("p", "q1", 1, 2, 2)),
			victims: []string{"ns/v-0"},
		},
		{
			name:    "PrefersIdleNodeOverFutureIdle",
			snap:    evicttest.Cluster(evicttest.Gang("v", "q1", 1, 3, 3, 0), evicttest.Starving("p", "q1", 1, 1, 1)),
			victims: []string{"ns/v-0"},
			ops:     2,
			where:   map[string]string{"ns/p-0": "n3"},
		},
		{
			name:    "the first trial domain where the job fits wins",
			snap:    evicttest.Cluster(evicttest.Gang("v", "q1", 1, 2, 2, 0), evicttest.Starving("p", "q1", 1, 2, 2)),
			trials:  [][]string{{"n0", "n2"}, {"n2", "n3"}, {"n0", "n1"}},
			ops:     2,
			where:   map[string]string{"ns/p-0": "n2", "ns/p-1": "n3"},
			victims: nil,
		},
		{
			name:      "a predicate eviction cannot resolve rules a node out",
			snap:      evicttest.Cluster(evicttest.Starving("p", "q1", 1, 1, 1)),
			predicate: unresolvable,
			ops:       1,
			where:     map[string]string{"ns/p-0": "n1"},
		},
		{
			name:      "a predicate eviction can resolve does not",
			snap:      evicttest.Cluster(evicttest.Starving("p", "q1", 1, 1, 1)),
			predicate: resolvable,
			ops:       1,
			where:     map[string]string{"ns/p-0": "n0"},
		},
		{
			name:     "nodes allocate found unresolvable stay out",
			snap:     evicttest.Cluster(evicttest.Starving("p", "q1", 1, 1, 1)),
			trials:   [][]string{{"n1"}, {"n1", "n2"}},
			recorded: true,
			ops:      1,
			where:    map[string]string{"ns/p-0": "n2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := open(t, tc.snap, &evicttest.Stub{Predicate: tc.predicate})
			job := ssn.Jobs["ns/p"]
			if tc.recorded {
				fe := api.NewFitErrors()
				fe.SetNodeError("n1", api.NewFitError("n1", api.UnschedulableAndUnresolvable, "node selector"))
				job.NodesFitErrors["ns/p-0"] = fe
			}
			trials := []Domain{{Nodes: ssn.NodeList}}
			if tc.trials != nil {
				trials = nil
				for _, names := range tc.trials {
					var d Domain
					for _, n := range names {
						d.Nodes = append(d.Nodes, ssn.Nodes[n])
					}
					trials = append(trials, d)
				}
			}
			before := state(ssn)
			reason := func(*api.TaskInfo) framework.EvictReason { return framework.EvictReason{Action: "test"} }
			saved, ok := Plan(ssn, ssn.Queues["q1"], job, PendingTasks(ssn, job), trials, tasksOf(ssn, tc.victims...), reason)
			if after := state(ssn); !maps.Equal(before, after) {
				t.Fatalf("the dry run changed the session:\nbefore %v\nafter  %v", before, after)
			}
			if ok != (tc.ops > 0) || saved.Len() != tc.ops {
				t.Fatalf("ok %v with %d operations, want %d", ok, saved.Len(), tc.ops)
			}
			if !ok {
				return
			}
			stmt := ssn.NewStatement()
			if err := stmt.Recover(saved); err != nil {
				t.Fatal(err)
			}
			for task, node := range tc.where {
				if got := tasksOf(ssn, task)[0]; got.Status != api.Pipelined || got.NodeName != node {
					t.Errorf("%s is %s on %q, want pipelined on %s", task, got.Status, got.NodeName, node)
				}
			}
			for _, v := range tasksOf(ssn, tc.victims...) {
				if v.Status != api.Releasing {
					t.Errorf("victim %s is %s, want Releasing", v.UID, v.Status)
				}
			}
		})
	}
}

func TestPendingTasks(t *testing.T) {
	snap := evicttest.Cluster(evicttest.Starving("p", "q1", 1, 1, 3).With(func(_ *api.Job, ts []*api.Task) {
		ts[0].Resources = api.Resource{} // best effort: backfill's, not eviction's
		ts[1].Status, ts[1].Node = api.Running, "n0"
	}))
	ssn := open(t, snap, nil)
	var got []string
	for _, task := range PendingTasks(ssn, ssn.Jobs["ns/p"]) {
		got = append(got, task.UID)
	}
	if want := []string{"ns/p-2"}; !slices.Equal(got, want) {
		t.Errorf("pending %v, want %v", got, want)
	}
}

package plugins_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// TestEvictionNodesMatchAFreshEvaluation opens sessions on contended clusters and, between
// random evictions, pipelines, allocations and discards made through statements, requires the
// nodes util.EvictionNodes offers a task (best score first, and in name order) to be exactly
// those a fresh evaluation gives (EvictionCandidates, PrioritizeNodes, SortByScore), in the
// same order.
func TestEvictionNodesMatchAFreshEvaluation(t *testing.T) {
	cfg := conf.Default()
	reg := registry()
	for seed := uint64(1); seed <= 4; seed++ {
		snap := contendedCluster(t, seed).Snapshot("c")
		fs := &framework.Snapshot{Cluster: "c", Revision: snap.Revision(), Nodes: snap.Nodes(), Queues: snap.Queues(),
			Jobs: snap.Jobs(), Tasks: snap.Tasks(), PriorityClasses: snap.PriorityClasses()}
		ssn, err := framework.OpenSession(fs, cfg, reg, framework.Options{Now: api.Epoch.Add(2 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 99))
		cache := util.NewEvictionNodes(ssn, true)
		var pending, running []*api.TaskInfo
		for _, j := range ssn.SortedJobs() {
			pending = append(pending, j.TasksIn(api.Pending)...)
			running = append(running, j.TasksIn(api.Running)...)
		}
		// As allocate would have: some tasks' fit errors rule some nodes out.
		for i, task := range pending {
			if i%3 != 0 {
				continue
			}
			fe := api.NewFitErrors()
			for _, n := range ssn.NodeList {
				if rng.IntN(4) == 0 {
					fe.SetNodeError(n.Name, api.NewFitError(n.Name, api.UnschedulableAndUnresolvable, "test"))
				}
			}
			ssn.Jobs[task.Job].NodesFitErrors[task.UID] = fe
		}
		classed := 0
		for step := 0; step < 150; step++ {
			task := pending[rng.IntN(len(pending))]
			if task.Status != api.Pending {
				continue
			}
			if _, ok := ssn.TaskClass(task); ok {
				classed++
			}
			var byScore, byName []string
			cache.ByScore(task, func(n *api.NodeInfo) bool { byScore = append(byScore, n.Name); return false })
			cache.ByName(task, func(n *api.NodeInfo) bool { byName = append(byName, n.Name); return false })
			candidates := util.EvictionCandidates(ssn, task)
			var wantScore, wantName []string
			for _, n := range util.SortByScore(candidates, util.PrioritizeNodes(ssn, task, candidates)) {
				wantScore = append(wantScore, n.Name)
			}
			for _, n := range candidates {
				wantName = append(wantName, n.Name)
			}
			if !slices.Equal(byScore, wantScore) {
				t.Fatalf("seed %d step %d, %s: by score\n cache: %v\n fresh: %v", seed, step, task.UID, byScore, wantScore)
			}
			if !slices.Equal(byName, wantName) {
				t.Fatalf("seed %d step %d, %s: by name\n cache: %v\n fresh: %v", seed, step, task.UID, byName, wantName)
			}
			// Change the session: evict a running task, pipeline or allocate a pending one
			// on a node, and sometimes take it back.
			stmt := ssn.NewStatement()
			switch rng.IntN(3) {
			case 0:
				if v := running[rng.IntN(len(running))]; v.Status == api.Running {
					if err := stmt.Evict(v, framework.EvictReason{Action: "test"}); err != nil {
						t.Fatal(err)
					}
				}
			case 1:
				_ = stmt.Pipeline(task, ssn.NodeList[rng.IntN(len(ssn.NodeList))].Name)
			default:
				_ = stmt.Allocate(task, ssn.NodeList[rng.IntN(len(ssn.NodeList))])
			}
			if rng.IntN(4) == 0 {
				stmt.Discard()
			}
		}
		if classed == 0 {
			t.Fatalf("seed %d: no task had a placement class; the test would prove nothing", seed)
		}
	}
}

package plugins_test

import (
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
)

// keptPlacementsConfigs have the same placement plugins (so the same task classes) with
// different scores: answers kept under one must not serve the other.
var keptPlacementsConfigs = []string{
	placementsConfig("{}", "{}"),
	placementsConfig("{leastrequested.weight: 0, mostrequested.weight: 3}", "{binpack.weight: 5}"),
}

// placementsConfig is allocate's configuration with nodeorder's and binpack's arguments.
func placementsConfig(nodeorder, binpack string) string {
	return "actions: \"enqueue, allocate, backfill\"\ntiers:\n" +
		"- plugins: [{name: priority}, {name: gang}]\n" +
		"- plugins: [{name: drf}, {name: predicates}, {name: proportion}, " +
		"{name: nodeorder, arguments: " + nodeorder + "}, {name: binpack, arguments: " + binpack + "}]\n"
}

// placementsTwin drives a twin through cycles in which tasks of one class arrive or stay
// pending while nodes change under the answers kept for that class.
type placementsTwin struct {
	*twin
	nodes []string
}

func (pt *placementsTwin) node(name string, cpu int) *api.Node {
	return &api.Node{Name: name, Allocatable: api.Resource{MilliCPU: float64(cpu), Memory: float64(int64(cpu/1000) << 31), MaxTaskNum: 6}}
}

// gang returns a job of n tasks of the one class, all needed.
func (pt *placementsTwin) gang(name string, n int) []state.Change {
	out := []state.Change{{Job: &api.Job{Name: name, Namespace: "ns", Queue: "default", MinAvailable: int32(n), PriorityClass: "pc0"}}}
	for i := range n {
		out = append(out, state.Change{Task: &api.Task{Name: name + "-" + strconv.Itoa(i), Namespace: "ns", Job: name,
			Role: "worker", Status: api.Pending, Resources: api.Resource{MilliCPU: 1000, Memory: 2 << 30}}})
	}
	return out
}

// nodeChange changes the nodes: one added, one deleted, one replaced by another in the same
// batch (the list keeps its length), one resized or cordoned, or a running task finished.
func (pt *placementsTwin) nodeChange() {
	pick := pt.rng.IntN
	i := pick(len(pt.nodes))
	switch pick(8) {
	case 0:
		name := pt.name("n")
		pt.nodes = append(pt.nodes, name)
		pt.apply(state.Change{Node: pt.node(name, 2000*(1+pick(3)))})
	case 1:
		if len(pt.nodes) > 2 {
			gone := pt.nodes[i]
			pt.nodes = append(pt.nodes[:i], pt.nodes[i+1:]...)
			pt.apply(state.Change{Delete: &state.Ref{Kind: state.KindNode, Name: gone}})
		}
	case 2:
		gone, name := pt.nodes[i], pt.name("n")
		pt.nodes[i] = name
		pt.apply(state.Change{Delete: &state.Ref{Kind: state.KindNode, Name: gone}}, state.Change{Node: pt.node(name, 2000*(1+pick(3)))})
	case 3:
		n := pt.node(pt.nodes[i], 2000*(1+pick(4)))
		n.Unschedulable = pick(3) == 0
		pt.apply(state.Change{Node: n})
	default:
		var running []*api.Task
		for _, t := range pt.sr.Snapshot("c").Tasks() {
			if t.Node != "" && t.Status != api.Succeeded {
				running = append(running, t)
			}
		}
		if len(running) > 0 {
			t := *running[pick(len(running))]
			t.Status = []api.TaskStatus{api.Running, api.Succeeded}[pick(2)]
			pt.apply(state.Change{Task: &t})
		}
	}
}

// TestKeptPlacementsMatchFromScratch checks the placement answers allocate keeps between
// cycles (per task class, for unchanged nodes) against an engine that computes them afresh:
// each cycle has pending tasks of a class kept from the last one, while nodes are added,
// deleted, replaced by others of the same count, resized and cordoned, tasks finish, the
// configuration's weights change and priority classes change (which rebuilds every view).
func TestKeptPlacementsMatchFromScratch(t *testing.T) {
	seeds, steps := 12, 60
	if n, err := strconv.Atoi(os.Getenv("SLUICE_DIFF_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for seed := range uint64(seeds) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			pt := &placementsTwin{twin: newTwin(t, seed+1)}
			start := []state.Change{{Queue: &api.Queue{Name: "default", Weight: 1, State: api.QueueOpen}},
				{PriorityClass: &api.PriorityClass{Name: "pc0", Value: 10}}}
			for range 6 {
				name := pt.name("n")
				pt.nodes = append(pt.nodes, name)
				start = append(start, state.Change{Node: pt.node(name, 2000*(1+pt.rng.IntN(3)))})
			}
			pt.apply(start...)
			pt.setConfig(keptPlacementsConfigs[0])
			for range steps {
				pt.now = pt.now.Add(time.Second)
				for range pt.rng.IntN(3) {
					pt.nodeChange()
				}
				switch pt.rng.IntN(10) {
				case 0:
					pt.setConfig(keptPlacementsConfigs[pt.rng.IntN(len(keptPlacementsConfigs))])
				case 1:
					// Every view is rebuilt, nodes changed with them (and a rebuilt view's
					// Version may be the one its answers were computed at).
					changes := []state.Change{{PriorityClass: &api.PriorityClass{Name: "pc0", Value: int32(pt.rng.IntN(100))}}}
					for _, name := range pt.nodes {
						n := pt.node(name, 2000*(1+pt.rng.IntN(4)))
						n.Unschedulable = pt.rng.IntN(3) == 0
						changes = append(changes, state.Change{Node: n})
					}
					pt.apply(changes...)
				}
				// Gangs of the one class arrive; the larger ones often fit nowhere and stay
				// pending, tried again next cycle.
				pt.apply(pt.gang(pt.name("j"), 1+pt.rng.IntN(5))...)
				if pt.rng.IntN(4) == 0 {
					pt.schedule(engine.DryRun)
				}
				pt.schedule(engine.AutoCommit)
			}
			if pt.kept < steps/2 {
				t.Fatalf("%d of %d cycles on kept views", pt.kept, pt.cycles)
			}
		})
	}
}

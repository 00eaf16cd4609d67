package api

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestFitsFutureIdleMatchesFutureIdle(t *testing.T) {
	gpu := func(cpu, g float64) *Resource {
		return NewResource(map[string]float64{"cpu": cpu, "memory": 1 << 30, ResourceGPU: g})
	}
	cases := []struct {
		name                       string
		idle, releasing, pipelined *Resource
		req                        *Resource
	}{
		{"fits idle", gpu(4, 1), EmptyResource(), EmptyResource(), gpu(2, 1)},
		{"needs releasing", gpu(1, 0), gpu(2, 1), EmptyResource(), gpu(3, 1)},
		{"pipelined takes it", gpu(1, 0), gpu(2, 1), gpu(2, 1), gpu(2, 1)},
		{"overdrawn scalar the request lacks", gpu(4, 0), EmptyResource(), gpu(0, 1), NewResource(map[string]float64{"cpu": 1})},
		{"too big", gpu(1, 1), gpu(1, 0), EmptyResource(), gpu(3, 0)},
	}
	for _, c := range cases {
		n := &NodeInfo{Allocatable: EmptyResource(), Idle: c.idle, Releasing: c.releasing, Pipelined: c.pipelined}
		want := c.req.LessEqual(n.FutureIdle(), Zero)
		if got := n.FitsFutureIdle(c.req); got != want {
			t.Errorf("%s: FitsFutureIdle %v, LessEqual(FutureIdle) %v", c.name, got, want)
		}
	}
}

// TestFutureIdleHoldsMatchesFutureIdle compares the in-place check with LessEqual against a
// built FutureIdle on random resources: scalars on any side or none, missing on either side,
// overdrawn, exactly at the bound, and -1 (LessEqual's "unlimited" marker).
func TestFutureIdleHoldsMatchesFutureIdle(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 6))
	amounts := []float64{-1, 0, 1, 2, 1000, 2000, 2000.5}
	res := func() *Resource {
		r := &Resource{MilliCPU: amounts[rng.IntN(len(amounts))], Memory: amounts[rng.IntN(len(amounts))]}
		for _, name := range []string{ResourceGPU, "example.com/fpga", "hugepages-2Mi"} {
			if rng.IntN(3) == 0 {
				r.SetScalar(name, amounts[rng.IntN(len(amounts))])
			}
		}
		if rng.IntN(8) == 0 {
			r.Scalars = map[string]float64{} // present but empty
		}
		return r
	}
	held, failed := 0, 0
	for i := 0; i < 20000; i++ {
		n := &NodeInfo{Allocatable: EmptyResource(), Idle: res(), Releasing: res(), Pipelined: res()}
		req := res()
		want := req.LessEqual(n.FutureIdle(), Zero)
		if got := n.FutureIdleHolds(req); got != want {
			t.Fatalf("req %+v, idle %+v, releasing %+v, pipelined %+v: FutureIdleHolds %v, LessEqual(FutureIdle) %v",
				req, n.Idle, n.Releasing, n.Pipelined, got, want)
		}
		if want {
			held++
		} else {
			failed++
		}
	}
	if held < 1000 || failed < 1000 {
		t.Fatalf("cases too one-sided: %d hold, %d fail", held, failed)
	}
}

func TestNodeVersionChangesWithTasks(t *testing.T) {
	n := NewNodeInfo(&Node{Name: "n", Allocatable: *NewResource(map[string]float64{"cpu": 4, "memory": 1 << 30})})
	task := NewTaskInfo(&Task{Name: "t", Namespace: "ns", Job: "j", Status: Allocated, Resources: *NewResource(map[string]float64{"cpu": 1})}, 0)
	v := n.Version
	if err := n.AddTask(task); err != nil {
		t.Fatal(err)
	}
	if n.Version == v {
		t.Fatal("AddTask kept the version")
	}
	v = n.Version
	task.Status = Releasing
	n.UpdateTask(task)
	if n.Version == v {
		t.Fatal("UpdateTask kept the version")
	}
	v = n.Version
	n.RemoveTask(task)
	if n.Version == v {
		t.Fatal("RemoveTask kept the version")
	}
}

func TestPodSlots(t *testing.T) {
	n := NewNodeInfo(&Node{Name: "n", Allocatable: *NewResource(map[string]float64{"cpu": 8, "memory": 1 << 30, "pods": 1})})
	none := EmptyResource()
	task := func(name string, s TaskStatus) *TaskInfo {
		return NewTaskInfo(&Task{Name: name, Namespace: "ns", Job: "j", Status: s}, 0)
	}
	if !n.FitsIdle(none) || !n.FitsFutureIdle(none) {
		t.Fatal("an empty node with one pod slot takes a task")
	}
	run := task("a", Running)
	if err := n.AddTask(run); err != nil {
		t.Fatal(err)
	}
	if n.FitsIdle(none) || n.FitsFutureIdle(none) {
		t.Fatal("a node with its only pod slot taken took another task")
	}
	if err := n.AddTask(task("b", Allocated)); err == nil {
		t.Fatal("AddTask beyond the pod capacity succeeded")
	}
	run.Status = Releasing
	n.UpdateTask(run)
	if n.FitsIdle(none) || !n.FitsFutureIdle(none) {
		t.Fatal("a releasing task's slot counts for the future only")
	}
	if err := n.AddTask(task("c", Pipelined)); err != nil {
		t.Fatal(err)
	}
	if n.FitsFutureIdle(none) {
		t.Fatal("a pipelined task's slot is promised")
	}
	unlimited := NewNodeInfo(&Node{Name: "u", Allocatable: *NewResource(map[string]float64{"cpu": 8})})
	for i := 0; i < 3; i++ {
		if err := unlimited.AddTask(task(string(rune('x'+i)), Running)); err != nil {
			t.Fatalf("a node without a pods figure refused task %d: %v", i, err)
		}
	}
}

// nodeState renders a node view's sums bit for bit, its counts, Version and its tasks'
// copies, for comparing two views.
func nodeState(n *NodeInfo) string {
	out := fmt.Sprintf("idle %b %b used %b %b rel %b %b pipe %b %b pods %d %d %d evictable %v version %d exact %v",
		n.Idle.MilliCPU, n.Idle.Memory, n.Used.MilliCPU, n.Used.Memory, n.Releasing.MilliCPU, n.Releasing.Memory,
		n.Pipelined.MilliCPU, n.Pipelined.Memory, n.podsUsed, n.podsReleasing, n.podsPipelined, n.evictable, n.Version, n.SumsExact())
	var tasks []string
	for uid, c := range n.Tasks {
		tasks = append(tasks, fmt.Sprintf("%s=%s %v %s %v", uid, c.UID, c.Status, c.NodeName, c.DeviceIDs))
	}
	slices.Sort(tasks)
	return out + "\n" + strings.Join(tasks, "\n")
}

// TestRestatusOwnTaskMatchesUpdateTask moves tasks placed with AddTask through random
// statuses, on one node with RestatusOwnTask and on an equal one with UpdateTask, and
// requires the two views to stay equal, the first keeping its copies in place.
func TestRestatusOwnTaskMatchesUpdateTask(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 9))
	statuses := []TaskStatus{Allocated, Pipelined, Binding, Bound, Running, Releasing}
	for trial := 0; trial < 100; trial++ {
		spec := &Node{Name: "n", Allocatable: *NewResource(map[string]float64{"cpu": 1000, "memory": 1e12})}
		a, b := NewNodeInfo(spec), NewNodeInfo(spec)
		var tasks []*TaskInfo
		copies := map[string]*TaskInfo{}
		for i := 0; i < 1+rng.IntN(8); i++ {
			res := map[string]float64{"cpu": rng.Float64() * 4, "memory": float64(rng.IntN(1 << 30))}
			ti := NewTaskInfo(&Task{Name: fmt.Sprint("t", i), Namespace: "ns", Job: "j", Status: statuses[rng.IntN(len(statuses))],
				Preemptable: rng.IntN(2) == 0, DeviceIDs: []string{"d"}, Resources: *NewResource(res)}, 0)
			ti.NodeName = ""
			if err := a.AddTask(ti); err != nil {
				t.Fatal(err)
			}
			if err := b.AddTask(ti); err != nil {
				t.Fatal(err)
			}
			tasks, copies[ti.UID] = append(tasks, ti), a.Tasks[ti.UID]
		}
		for step := 0; step < 20; step++ {
			ti := tasks[rng.IntN(len(tasks))]
			ti.Status = statuses[rng.IntN(len(statuses))]
			a.RestatusOwnTask(ti)
			b.UpdateTask(ti)
			if sa, sb := nodeState(a), nodeState(b); sa != sb {
				t.Fatalf("trial %d step %d: RestatusOwnTask left\n%s\nUpdateTask leaves\n%s", trial, step, sa, sb)
			}
			if a.Tasks[ti.UID] != copies[ti.UID] || a.Tasks[ti.UID] == ti {
				t.Fatalf("trial %d step %d: RestatusOwnTask replaced the node's copy", trial, step)
			}
		}
	}
}

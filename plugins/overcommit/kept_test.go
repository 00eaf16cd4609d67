package overcommit

import (
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// history is a small random cluster whose tasks and jobs are replaced step by step.
type history struct {
	rng        *rand.Rand
	fractional bool
	nodes      []*api.Node
	jobs       []*api.Job
	tasks      []*api.Task
}

func (h *history) amount() float64 {
	if h.fractional && h.rng.IntN(2) == 0 {
		return []float64{0.1, 0.2, 0.7, 33.33}[h.rng.IntN(4)]
	}
	return float64(100 * (1 + h.rng.IntN(9)))
}

func (h *history) task(i int) *api.Task {
	return &api.Task{Name: "t" + strconv.Itoa(i), Namespace: "ns", Job: "j" + strconv.Itoa(i%6), Status: api.Running,
		Node: h.nodes[h.rng.IntN(len(h.nodes))].Name, Resources: api.Resource{MilliCPU: h.amount(), Memory: float64(1 << 20)}}
}

func (h *history) job(i int) *api.Job {
	phase := []api.JobPhase{api.JobInqueue, api.JobRunning, api.JobPending}[h.rng.IntN(3)]
	return &api.Job{Name: "j" + strconv.Itoa(i), Namespace: "ns", Queue: "default", MinAvailable: 1, Phase: phase,
		MinResources: api.Resource{MilliCPU: 10 * h.amount(), Memory: float64(1 << 21)}}
}

func newHistory(seed uint64) *history {
	h := &history{rng: rand.New(rand.NewPCG(seed, 3))}
	for i := range 4 {
		h.nodes = append(h.nodes, &api.Node{Name: "n" + strconv.Itoa(i), Allocatable: api.Resource{MilliCPU: 64000, Memory: 1 << 34, MaxTaskNum: 100}})
	}
	for i := range 6 {
		h.jobs = append(h.jobs, h.job(i))
	}
	for i := range 24 {
		h.tasks = append(h.tasks, h.task(i))
	}
	return h
}

// step replaces a task (its node and request) or a job (its phase and minResources).
func (h *history) step() {
	if h.rng.IntN(3) == 0 {
		i := h.rng.IntN(len(h.jobs))
		h.jobs[i] = h.job(i)
		return
	}
	i := h.rng.IntN(len(h.tasks))
	h.tasks[i] = h.task(i)
}

// snapshot lists the cluster as a store does: sorted by key.
func (h *history) snapshot() *framework.Snapshot {
	byKey := func(a, b *api.Task) int { return strings.Compare(a.Key(), b.Key()) }
	tasks := slices.SortedFunc(slices.Values(h.tasks), byKey)
	jobs := slices.SortedFunc(slices.Values(h.jobs), func(a, b *api.Job) int { return strings.Compare(a.Key(), b.Key()) })
	filter := func(keep func(*api.Task) bool) []*api.Task {
		var out []*api.Task
		for _, t := range tasks {
			if keep(t) {
				out = append(out, t)
			}
		}
		return out
	}
	return &framework.Snapshot{
		Cluster: "c", Queues: []*api.Queue{{Name: "default", Weight: 1, State: api.QueueOpen}},
		Nodes: h.nodes, Jobs: jobs, Tasks: tasks,
		TasksOfJob:  func(key string) []*api.Task { return filter(func(t *api.Task) bool { return t.JobKey() == key }) },
		TasksOnNode: func(n string) []*api.Task { return filter(func(t *api.Task) bool { return t.Node == n }) },
	}
}

// TestKeptSumsAreFreshSums opens sessions of random histories on kept views and checks that
// the idle and inqueue amounts overcommit opened with are bit for bit those summed afresh in
// the reference order: with integer amounts (the kept sums are patched), then for odd seeds
// with fractional ones too (whose sums depend on the order: the kept state must fall back to
// fresh sums).
func TestKeptSumsAreFreshSums(t *testing.T) {
	cfg, err := conf.Parse([]byte("actions: \"enqueue\"\ntiers:\n- plugins:\n  - name: overcommit\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	for seed := range uint64(16) {
		h := newHistory(seed)
		var views framework.Views
		for step := range 60 {
			// Odd seeds turn to fractional amounts half way: the kept sums must be let go.
			h.fractional = seed%2 == 1 && step >= 30
			h.step()
			ssn, err := framework.OpenSession(h.snapshot(), cfg, reg, framework.Options{Views: &views})
			if err != nil {
				t.Fatal(err)
			}
			if !ssn.FromKeptViews() {
				t.Fatal("the session did not open on kept views")
			}
			p := ssn.Plugins()[0].(*plugin)
			used, inqueue := openFresh(ssn, &kept{})
			idle := p.scale(ssn.TotalResource.Clone()).Sub(used)
			if !reflect.DeepEqual(p.idle, idle) || !reflect.DeepEqual(p.inqueue, inqueue) {
				t.Fatalf("seed %d step %d: opened with idle %v, inqueue %v; fresh sums give %v, %v", seed, step, p.idle, p.inqueue, idle, inqueue)
			}
			ssn.Close()
		}
	}
}

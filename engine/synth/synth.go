// Package synth generates synthetic clusters from a seed, for benchmarks and load tests:
// nodes, queues, and gang jobs of pending tasks, in uniform or mixed shapes.
package synth

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
)

// Shapes selects the node and task sizes.
type Shapes string

const (
	// Uniform: nodes of 32 cpu / 128Gi / 110 pods; tasks of 2 cpu / 4Gi.
	Uniform Shapes = "uniform"
	// Mixed: several node classes (some with GPUs) and task sizes, 10% GPU tasks.
	Mixed Shapes = "mixed"
)

// Spec describes a cluster to generate.
type Spec struct {
	Seed        uint64
	Nodes       int
	Jobs        int
	TasksPerJob int
	Queues      int
	Shapes      Shapes
}

// Validate checks the spec.
func (s Spec) Validate() error {
	switch {
	case s.Nodes < 1:
		return fmt.Errorf("nodes must be at least 1, got %d", s.Nodes)
	case s.Jobs < 0:
		return fmt.Errorf("jobs must not be negative, got %d", s.Jobs)
	case s.TasksPerJob < 1:
		return fmt.Errorf("tasks per job must be at least 1, got %d", s.TasksPerJob)
	case s.Queues < 1:
		return fmt.Errorf("queues must be at least 1, got %d", s.Queues)
	case s.Shapes != Uniform && s.Shapes != Mixed:
		return fmt.Errorf("shapes must be uniform or mixed, got %q", s.Shapes)
	}
	return nil
}

const gi = float64(1 << 30)

func res(cpu, memGi, pods, gpus float64) api.Resource {
	m := map[string]float64{"cpu": cpu, "memory": memGi * gi}
	if pods > 0 {
		m["pods"] = pods
	}
	if gpus > 0 {
		m[api.ResourceGPU] = gpus
	}
	return *api.NewResource(m)
}

// Cluster is a generated cluster.
type Cluster struct {
	Nodes  []*api.Node
	Queues []*api.Queue
	Jobs   []*api.Job
	Tasks  []*api.Task
}

// Now returns a cycle clock for the cluster: one minute after its last job was created
// (one minute after api.Epoch for a cluster without jobs). Cycles run at the same clock decide the
// same.
func (c *Cluster) Now() time.Time {
	now := api.Epoch
	for _, j := range c.Jobs {
		if j.CreatedAt.After(now) {
			now = j.CreatedAt
		}
	}
	return now.Add(time.Minute)
}

// Objects returns the number of objects.
func (c *Cluster) Objects() int { return len(c.Nodes) + len(c.Queues) + len(c.Jobs) + len(c.Tasks) }

// Generate builds the cluster the spec describes; the same spec gives the same cluster.
func Generate(s Spec) (*Cluster, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, s.Seed^0x9e3779b97f4a7c15))
	c := &Cluster{}
	for q := 0; q < s.Queues; q++ {
		c.Queues = append(c.Queues, &api.Queue{Name: fmt.Sprintf("q%03d", q), Weight: int32(1 + q%4), State: api.QueueOpen, Reclaimable: true})
	}
	for i := 0; i < s.Nodes; i++ {
		n := &api.Node{Name: fmt.Sprintf("node-%05d", i), Labels: map[string]string{"kubernetes.io/hostname": fmt.Sprintf("node-%05d", i)}}
		switch {
		case s.Shapes == Uniform:
			n.Allocatable = res(32, 128, 110, 0)
		case i%10 == 0:
			n.Allocatable = res(64, 512, 110, 8)
			n.Labels["pool"] = "gpu"
		case i%3 == 0:
			n.Allocatable = res(16, 64, 110, 0)
			n.Labels["pool"] = "small"
		default:
			n.Allocatable = res(32, 128, 110, 0)
			n.Labels["pool"] = "general"
		}
		c.Nodes = append(c.Nodes, n)
	}
	epoch := api.Epoch
	for j := 0; j < s.Jobs; j++ {
		job := &api.Job{
			Name:         fmt.Sprintf("job-%05d", j),
			Namespace:    "default",
			Queue:        c.Queues[j%s.Queues].Name,
			MinAvailable: int32(s.TasksPerJob),
			Phase:        api.JobInqueue,
			CreatedAt:    epoch.Add(time.Duration(j) * time.Second),
		}
		req := res(2, 4, 0, 0)
		if s.Shapes == Mixed {
			switch r := rng.IntN(10); {
			case r == 0:
				req = res(4, 16, 0, 1)
			case r < 4:
				req = res(1, 2, 0, 0)
			case r < 7:
				req = res(2, 4, 0, 0)
			default:
				req = res(4, 8, 0, 0)
			}
			job.Priority = int32(rng.IntN(3) * 100)
			job.HasPriority = true
		}
		c.Jobs = append(c.Jobs, job)
		for t := 0; t < s.TasksPerJob; t++ {
			c.Tasks = append(c.Tasks, &api.Task{
				Name:        fmt.Sprintf("%s-%d", job.Name, t),
				Namespace:   "default",
				Job:         job.Name,
				Role:        "worker",
				Resources:   req,
				Status:      api.Pending,
				Preemptable: true,
			})
		}
	}
	return c, nil
}

// Batches splits the cluster into store batches of at most size changes, queues and nodes
// first, each job before its tasks.
func (c *Cluster) Batches(size int) []state.Batch {
	var all []state.Change
	for _, q := range c.Queues {
		all = append(all, state.Change{Queue: q})
	}
	for _, n := range c.Nodes {
		all = append(all, state.Change{Node: n})
	}
	ti := 0
	for _, j := range c.Jobs {
		all = append(all, state.Change{Job: j})
		for ti < len(c.Tasks) && c.Tasks[ti].Job == j.Name {
			all = append(all, state.Change{Task: c.Tasks[ti]})
			ti++
		}
	}
	var out []state.Batch
	for len(all) > 0 {
		n := min(size, len(all))
		out = append(out, state.Batch{Changes: all[:n]})
		all = all[n:]
	}
	return out
}

// Load writes the cluster into the store under the given cluster name.
func (c *Cluster) Load(st *state.Store, cluster string) error {
	for i, b := range c.Batches(1000) {
		if _, err := st.Apply(cluster, b); err != nil {
			return fmt.Errorf("batch %d: %w", i, err)
		}
	}
	return nil
}

// Gangs describes a batch of gang jobs of pending tasks to add to a cluster: the jobs of the
// benchmark workloads that arrive later, or that fill the nodes before the measured cycles.
type Gangs struct {
	// Prefix names the jobs Prefix-00000, Prefix-00001, ... and their tasks job-0, job-1, ...
	Prefix string
	// Count gangs of Size tasks each.
	Count, Size int
	// MinAvailable is each gang's size (0: Size, the whole job).
	MinAvailable int
	// Queues are given to the gangs round-robin.
	Queues []string
	// Priority is the jobs' explicit priority when HasPriority.
	Priority    int32
	HasPriority bool
	// Request is each task's request (zero: 2 cpu / 4Gi, the uniform shape).
	Request api.Resource
	// CreatedAt is the first job's creation time; each next one is a second later.
	CreatedAt time.Time
}

// Generate returns the gangs' jobs and tasks, each job before its tasks; the same Gangs give
// the same objects.
func (g Gangs) Generate() ([]*api.Job, []*api.Task) {
	req := g.Request
	if req.IsEmpty() {
		req = res(2, 4, 0, 0)
	}
	minAvail := g.MinAvailable
	if minAvail <= 0 {
		minAvail = g.Size
	}
	jobs := make([]*api.Job, 0, g.Count)
	tasks := make([]*api.Task, 0, g.Count*g.Size)
	for j := 0; j < g.Count; j++ {
		job := &api.Job{
			Name:         fmt.Sprintf("%s-%05d", g.Prefix, j),
			Namespace:    "default",
			Queue:        g.Queues[j%len(g.Queues)],
			MinAvailable: int32(minAvail),
			Priority:     g.Priority,
			HasPriority:  g.HasPriority,
			Phase:        api.JobInqueue,
			CreatedAt:    g.CreatedAt.Add(time.Duration(j) * time.Second),
		}
		jobs = append(jobs, job)
		for t := 0; t < g.Size; t++ {
			tasks = append(tasks, &api.Task{
				Name:        fmt.Sprintf("%s-%d", job.Name, t),
				Namespace:   "default",
				Job:         job.Name,
				Role:        "worker",
				Resources:   req,
				Status:      api.Pending,
				Preemptable: true,
			})
		}
	}
	return jobs, tasks
}

// Add appends the gangs to the cluster and returns the store batch (at most one) that adds
// them to a store holding the cluster.
func (c *Cluster) Add(g Gangs) state.Batch {
	jobs, tasks := g.Generate()
	c.Jobs = append(c.Jobs, jobs...)
	c.Tasks = append(c.Tasks, tasks...)
	b := state.Batch{Changes: make([]state.Change, 0, len(jobs)+len(tasks))}
	ti := 0
	for _, j := range jobs {
		b.Changes = append(b.Changes, state.Change{Job: j})
		for ti < len(tasks) && tasks[ti].Job == j.Name {
			b.Changes = append(b.Changes, state.Change{Task: tasks[ti]})
			ti++
		}
	}
	return b
}

// Slots returns how many tasks of the given request the cluster's nodes hold when empty, pod
// slots included.
func (c *Cluster) Slots(req api.Resource) int {
	if req.IsEmpty() {
		req = res(2, 4, 0, 0)
	}
	total := 0
	for _, n := range c.Nodes {
		fit := math.MaxInt
		if p := n.Allocatable.MaxTaskNum; p > 0 {
			fit = p
		}
		for _, d := range []struct{ have, want float64 }{
			{n.Allocatable.MilliCPU, req.MilliCPU}, {n.Allocatable.Memory, req.Memory},
		} {
			if d.want > 0 {
				fit = min(fit, int(d.have/d.want))
			}
		}
		for name, want := range req.Scalars {
			if want > 0 {
				fit = min(fit, int(n.Allocatable.Scalars[name]/want))
			}
		}
		total += fit
	}
	return total
}

// Package evicttest helps test the gang-aware eviction actions: a stub plugin whose victim,
// preemptive and overused answers each test sets (its gang answers are Volcano's gang
// plugin's), small builders of snapshot objects, and a runner that plays one cycle and
// sums up the decisions. Only tests import it.
package evicttest

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// StubName is the stub plugin's configuration name.
const StubName = "stub"

// Stub is a plugin for tests. Its job ready, pipelined and starving answers follow the gang
// rules (minAvailable and per-role minimums); the rest are the fields'.
type Stub struct {
	// Victims picks the victims among candidates, as the stub's gang-aware victim callback;
	// nil permits every candidate.
	Victims func(ctx *framework.EvictionContext, candidates []*api.TaskInfo) []*api.TaskInfo
	// NotPreemptive lists queues that may not reclaim.
	NotPreemptive map[string]bool
	// Overused lists overused queues.
	Overused map[string]bool
	// Predicate, if set, is the stub's node filter.
	Predicate func(task *api.TaskInfo, node *api.NodeInfo) error
	// Offered records what the victim callback was offered at each call: the eviction and the
	// candidates' UIDs in order.
	Offered []Offer
}

// Offer is one call of the stub's victim callback.
type Offer struct {
	Context    *framework.EvictionContext
	Candidates []string
}

var _ framework.Plugin = (*Stub)(nil)

// Name returns StubName.
func (s *Stub) Name() string { return StubName }

// OnSessionOpen registers the stub's callbacks.
func (s *Stub) OnSessionOpen(ssn *framework.Session) {
	ssn.AddUnifiedEvictableFn(StubName, func(ctx *framework.EvictionContext, cands []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		o := Offer{Context: ctx}
		for _, c := range cands {
			o.Candidates = append(o.Candidates, c.UID)
		}
		s.Offered = append(s.Offered, o)
		if s.Victims == nil {
			return cands, framework.Permit
		}
		return s.Victims(ctx, cands), framework.Permit
	})
	ssn.AddPreemptiveFn(StubName, func(q *api.QueueInfo, _ *api.TaskInfo) bool { return !s.NotPreemptive[q.Name] })
	ssn.AddOverusedFn(StubName, func(q *api.QueueInfo) bool { return s.Overused[q.Name] })
	ssn.AddJobReadyFn(StubName, func(j *api.JobInfo) bool { return j.CheckTaskReady() && j.IsReady() })
	ssn.AddJobPipelinedFn(StubName, func(j *api.JobInfo) framework.Vote {
		if j.CheckTaskPipelined() && j.IsPipelined() {
			return framework.Permit
		}
		return framework.Reject
	})
	ssn.AddJobStarvingFn(StubName, func(j *api.JobInfo) bool { return j.IsStarving() })
	if s.Predicate != nil {
		ssn.AddPredicateFn(StubName, s.Predicate)
	}
}

// OnSessionClose does nothing.
func (s *Stub) OnSessionClose(*framework.Session) {}

// CPU is a request of that many cpus.
func CPU(cpus float64) api.Resource {
	return *api.NewResource(map[string]float64{api.ResourceCPU: cpus})
}

// Node is a node with that many cpus.
func Node(name string, cpus float64) *api.Node { return &api.Node{Name: name, Allocatable: CPU(cpus)} }

// Queue is a reclaimable queue of weight 1.
func Queue(name string) *api.Queue { return &api.Queue{Name: name, Weight: 1, Reclaimable: true} }

// Job is a running job of namespace "ns" with a priority and a gang size.
func Job(name, queue string, priority, minAvailable int32) *api.Job {
	return &api.Job{Name: name, Namespace: "ns", Queue: queue, Priority: priority, HasPriority: true,
		MinAvailable: minAvailable, Phase: api.JobRunning}
}

// Running is a preemptable task of the job running on node.
func Running(job, name, node string, cpus float64) *api.Task {
	return &api.Task{Name: name, Namespace: "ns", Job: job, Role: job, Resources: CPU(cpus),
		Status: api.Running, Node: node, Preemptable: true}
}

// Pending is a pending task of the job.
func Pending(job, name string, cpus float64) *api.Task {
	return &api.Task{Name: name, Namespace: "ns", Job: job, Role: job, Resources: CPU(cpus),
		Status: api.Pending, Preemptable: true}
}

// JobSpec makes a job and its tasks.
type JobSpec func() (*api.Job, []*api.Task)

// Gang is a job of replicas 1-cpu tasks running one per node, from n<firstNode> on.
func Gang(name, queue string, priority, minAvailable int32, replicas, firstNode int) JobSpec {
	return func() (*api.Job, []*api.Task) {
		var tasks []*api.Task
		for i := range replicas {
			tasks = append(tasks, Running(name, fmt.Sprintf("%s-%d", name, i), fmt.Sprintf("n%d", firstNode+i), 1))
		}
		return Job(name, queue, priority, minAvailable), tasks
	}
}

// Starving is a job of replicas pending 1-cpu tasks.
func Starving(name, queue string, priority, minAvailable int32, replicas int) JobSpec {
	return func() (*api.Job, []*api.Task) {
		var tasks []*api.Task
		for i := range replicas {
			tasks = append(tasks, Pending(name, fmt.Sprintf("%s-%d", name, i), 1))
		}
		return Job(name, queue, priority, minAvailable), tasks
	}
}

// With changes the job spec's output with edit.
func (s JobSpec) With(edit func(*api.Job, []*api.Task)) JobSpec {
	return func() (*api.Job, []*api.Task) {
		j, ts := s()
		edit(j, ts)
		return j, ts
	}
}

// Roles is a running job of four 1-cpu tasks on n0..n3 with minAvailable 3: ps-0 (role ps,
// minimum 1) and worker-0..2 (role worker, minimum 2), as in Volcano's GP-R1 and GR-R1.
func Roles(name, queue string, priority int32) JobSpec {
	return Gang(name, queue, priority, 3, 4, 0).With(func(j *api.Job, ts []*api.Task) {
		j.MinAvailableByRole = map[string]int32{"ps": 1, "worker": 2}
		ts[0].Name, ts[0].Role = "ps-0", "ps"
		for i, t := range ts[1:] {
			t.Name, t.Role = fmt.Sprintf("worker-%d", i), "worker"
		}
	})
}

// Hard gives the job a hard network-topology constraint up to the tier.
func (s JobSpec) Hard(tier int32) JobSpec {
	return s.With(func(j *api.Job, _ []*api.Task) {
		j.NetworkTopology = &api.NetworkTopology{Mode: "hard", HighestTierAllowed: tier}
	})
}

// Cluster is four 1-cpu nodes n0..n3 and reclaimable queues q1, q2 and q3, with the jobs.
func Cluster(jobs ...JobSpec) *framework.Snapshot {
	s := &framework.Snapshot{Queues: []*api.Queue{Queue("q1"), Queue("q2"), Queue("q3")}}
	for i := range 4 {
		s.Nodes = append(s.Nodes, Node(fmt.Sprintf("n%d", i), 1))
	}
	for _, j := range jobs {
		job, tasks := j()
		s.Jobs = append(s.Jobs, job)
		s.Tasks = append(s.Tasks, tasks...)
	}
	return s
}

// Topology adds hypernodes s0 = {n0, n1}, s1 = {n2, n3} and s2 = {s0, s1} to the snapshot.
func Topology(s *framework.Snapshot) *framework.Snapshot {
	s.HyperNodes = []*api.HyperNode{
		{Name: "s0", Tier: 1, Members: []string{"n0", "n1"}},
		{Name: "s1", Tier: 1, Members: []string{"n2", "n3"}},
		{Name: "s2", Tier: 2, Members: []string{"s0", "s1"}},
	}
	return s
}

// Config runs the action alone with the stub plugin; args are its arguments as a YAML flow
// map ("" for none).
func Config(action, args string) string {
	c := "actions: \"" + action + "\"\ntiers:\n- plugins:\n  - name: " + StubName + "\n"
	if args != "" {
		c += "configurations:\n- name: " + action + "\n  arguments: " + args + "\n"
	}
	return c
}

// Outcome sums up a cycle: the evicted tasks (sorted) and where tasks were pipelined.
type Outcome struct {
	Evicted   []string
	Pipelined map[string]string
	// Rules are the eviction rules, by task.
	Rules map[string]string
	// Summaries are the jobs' explanation summaries, for jobs with one.
	Summaries map[string]string
}

// Check reports, as errors naming source, where the outcome differs from the evicted tasks
// (sorted) and the pipelined tasks expected (nil: none).
func (o Outcome) Check(t testing.TB, evicted []string, pipelined map[string]string, source string) {
	t.Helper()
	if !slices.Equal(o.Evicted, evicted) {
		t.Errorf("evicted %v, want %v (from %s)", o.Evicted, evicted, source)
	}
	if pipelined == nil {
		pipelined = map[string]string{}
	}
	if !maps.Equal(o.Pipelined, pipelined) {
		t.Errorf("pipelined %v, want %v (from %s)", o.Pipelined, pipelined, source)
	}
}

// Open opens a session of the configuration (Volcano's scheduler-conf YAML, plugin "stub"
// available, and the actions given) on the snapshot.
func Open(t testing.TB, snap *framework.Snapshot, config string, stub *Stub, actions map[string]framework.ActionBuilder) (*framework.Session, *framework.Registry) {
	t.Helper()
	cfg, err := conf.Parse([]byte(config))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(StubName, func(conf.Arguments) (framework.Plugin, error) { return stub, nil })
	names := make([]string, 0, len(actions))
	for n := range actions {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		reg.RegisterAction(n, actions[n])
	}
	if err := reg.Validate(cfg); err != nil {
		t.Fatalf("config: %v", err)
	}
	if snap.Cluster == "" {
		snap.Cluster = "c"
	}
	ssn, err := framework.OpenSession(snap, cfg, reg, framework.Options{Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	return ssn, reg
}

// Run plays one cycle of the configuration on the snapshot (see Open) and sums up what it
// decided.
func Run(t testing.TB, snap *framework.Snapshot, config string, stub *Stub, actions map[string]framework.ActionBuilder) Outcome {
	t.Helper()
	ssn, reg := Open(t, snap, config, stub, actions)
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	r := ssn.Close()
	o := Outcome{Pipelined: map[string]string{}, Rules: map[string]string{}, Summaries: map[string]string{}}
	for _, d := range r.Decisions {
		switch d.Kind {
		case framework.DecisionEvict:
			o.Evicted = append(o.Evicted, d.Task)
			o.Rules[d.Task] = d.Reason
		case framework.DecisionPipeline:
			o.Pipelined[d.Task] = d.Node
		}
	}
	sort.Strings(o.Evicted)
	for _, j := range r.Jobs {
		if j.Explanation != nil {
			o.Summaries[j.Job] = j.Explanation.Summary
		}
	}
	return o
}

// Package actiontest describes small clusters as plain values and runs actions on them, for
// the actions' table tests. It imports no plugin (the engine may not): a test brings the
// plugins it needs through the registry it passes, from a _test package when they are the
// real ones.
package actiontest

import (
	"sort"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Namespace holds every job and task; a task's UID is "c1/<name>", as in Volcano's tests.
const Namespace = "c1"

// Cluster is a cluster as a table row states it.
type Cluster struct {
	PriorityClasses map[string]int32
	Queues          []Queue
	Nodes           []Node
	Jobs            []Job
}

// Node is a node offering CPU cores, Mem gigabytes (10^9 bytes) and Pods task slots (0:
// unlimited).
type Node struct {
	Name     string
	CPU, Mem float64
	Pods     int
	Labels   map[string]string
}

// Queue is an open, reclaimable queue unless Closed or Unreclaimable say otherwise. Weight 0
// means 1; CapCPU and CapMem (cores, gigabytes) bound it when set.
type Queue struct {
	Name           string
	Weight         int32
	Priority       int32
	CapCPU, CapMem float64
	Closed         bool
	Unreclaimable  bool
}

// Job is a gang of tasks in Namespace, Inqueue unless Phase says otherwise.
type Job struct {
	Name, Queue   string
	PriorityClass string
	MinAvailable  int32
	Phase         api.JobPhase
	Tasks         []Task
}

// NewJob is an Inqueue job of queue with a gang of minAvailable and the given tasks.
func NewJob(name, queue string, minAvailable int32, tasks ...Task) Job {
	return Job{Name: name, Queue: queue, MinAvailable: minAvailable, Tasks: tasks}
}

// Of returns the job with the given priority class.
func (j Job) Of(class string) Job {
	j.PriorityClass = class
	return j
}

// Running returns the job in phase Running.
func (j Job) Running() Job {
	j.Phase = api.JobRunning
	return j
}

// Task requests CPU cores and Mem gigabytes (none: best-effort). It is Pending unless Status
// says otherwise, and preemptable unless Unpreemptable. Priority 0 leaves the job's priority.
type Task struct {
	Name          string
	CPU, Mem      float64
	Status        api.TaskStatus
	Node          string
	Priority      int32
	Unpreemptable bool
	NodeSelector  map[string]string
}

// Running is a running task on node requesting cpu cores and as many gigabytes.
func Running(name string, cpu float64, node string) Task {
	return Task{Name: name, CPU: cpu, Mem: cpu, Status: api.Running, Node: node}
}

// Pending is a pending task requesting cpu cores and as many gigabytes.
func Pending(name string, cpu float64) Task { return Task{Name: name, CPU: cpu, Mem: cpu} }

// Pinned returns the task marked not preemptable.
func (t Task) Pinned() Task {
	t.Unpreemptable = true
	return t
}

// In returns the task with the given status.
func (t Task) In(status api.TaskStatus) Task {
	t.Status = status
	return t
}

// res is cpu cores and mem gigabytes, with pods slots when pods > 0.
func res(cpu, mem float64, pods int) api.Resource {
	r := api.NewResource(map[string]float64{api.ResourceCPU: cpu, api.ResourceMemory: mem * 1e9})
	r.MaxTaskNum = pods
	return *r
}

// Snapshot turns the cluster into a session snapshot.
func (c Cluster) Snapshot() *framework.Snapshot {
	snap := &framework.Snapshot{Cluster: "test", Revision: 1}
	for name, v := range c.PriorityClasses {
		snap.PriorityClasses = append(snap.PriorityClasses, &api.PriorityClass{Name: name, Value: v})
	}
	sort.Slice(snap.PriorityClasses, func(i, j int) bool { return snap.PriorityClasses[i].Name < snap.PriorityClasses[j].Name })
	for _, q := range c.Queues {
		aq := &api.Queue{Name: q.Name, Weight: max(q.Weight, 1), Priority: q.Priority, State: api.QueueOpen, Reclaimable: !q.Unreclaimable}
		if q.Closed {
			aq.State = api.QueueClosed
		}
		if q.CapCPU > 0 || q.CapMem > 0 {
			aq.Capability = res(q.CapCPU, q.CapMem, 0)
		}
		snap.Queues = append(snap.Queues, aq)
	}
	for _, n := range c.Nodes {
		snap.Nodes = append(snap.Nodes, &api.Node{Name: n.Name, Allocatable: res(n.CPU, n.Mem, n.Pods), Labels: n.Labels})
	}
	for _, j := range c.Jobs {
		phase := j.Phase
		if phase == "" {
			phase = api.JobInqueue
		}
		snap.Jobs = append(snap.Jobs, &api.Job{Name: j.Name, Namespace: Namespace, Queue: j.Queue, PriorityClass: j.PriorityClass,
			MinAvailable: j.MinAvailable, Phase: phase})
		for _, t := range j.Tasks {
			status := t.Status
			if status == 0 {
				status = api.Pending
			}
			snap.Tasks = append(snap.Tasks, &api.Task{Name: t.Name, Namespace: Namespace, Job: j.Name, Role: j.Name,
				Resources: res(t.CPU, t.Mem, 0), Status: status, Node: t.Node, Priority: t.Priority, HasPriority: t.Priority != 0,
				Preemptable: !t.Unpreemptable, NodeSelector: t.NodeSelector})
		}
	}
	return snap
}

// Registry returns a registry holding the action under its name and whatever each register
// function adds (the plugins a test needs).
func Registry(name string, action framework.ActionBuilder, register ...func(*framework.Registry)) *framework.Registry {
	reg := framework.NewRegistry()
	reg.RegisterAction(name, action)
	for _, r := range register {
		r(reg)
	}
	return reg
}

// Open parses config (Volcano's YAML) and opens a session on the cluster, failing the test on
// any error.
func Open(t testing.TB, c Cluster, config string, reg *framework.Registry) *framework.Session {
	t.Helper()
	cfg, err := conf.Parse([]byte(config))
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	if err := reg.Validate(cfg); err != nil {
		t.Fatalf("config: %v", err)
	}
	// Jobs carry no creation time (they tie by name) and the clock stands at the Unix epoch.
	ssn, err := framework.OpenSession(c.Snapshot(), cfg, reg, framework.Options{Now: time.Unix(0, 0).UTC()})
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	return ssn
}

// Run opens a session as Open does, runs the configured actions and closes the session.
func Run(t testing.TB, c Cluster, config string, reg *framework.Registry) Outcome {
	t.Helper()
	ssn := Open(t, c, config, reg)
	if err := ssn.RunActions(reg); err != nil {
		t.Fatalf("run actions: %v", err)
	}
	return Outcome{ssn.Close()}
}

// Outcome is what a cycle decided, with views that tests compare.
type Outcome struct{ *framework.Result }

// Evicted returns the evicted tasks' UIDs, sorted.
func (o Outcome) Evicted() []string {
	var out []string
	for _, d := range o.Decisions {
		if d.Kind == framework.DecisionEvict {
			out = append(out, d.Task)
		}
	}
	sort.Strings(out)
	return out
}

// Bound maps each bound task's UID to its node.
func (o Outcome) Bound() map[string]string { return o.nodes(framework.DecisionBind) }

// Pipelined maps each pipelined task's UID to its node.
func (o Outcome) Pipelined() map[string]string { return o.nodes(framework.DecisionPipeline) }

func (o Outcome) nodes(kind framework.DecisionKind) map[string]string {
	out := map[string]string{}
	for _, d := range o.Decisions {
		if d.Kind == kind {
			out[d.Task] = d.Node
		}
	}
	return out
}

// Explanation returns the summary of the job's explanation ("" when it has none).
func (o Outcome) Explanation(job string) string {
	for _, j := range o.Jobs {
		if j.Job == Namespace+"/"+job && j.Explanation != nil {
			return j.Explanation.Summary
		}
	}
	return ""
}

// UIDs returns the UIDs of the named tasks, sorted, for comparing with Evicted.
func UIDs(names ...string) []string {
	out := make([]string, 0, len(names))
	for _, n := range names {
		out = append(out, Namespace+"/"+n)
	}
	sort.Strings(out)
	return out
}

// Package testutil builds small clusters and opens sessions on them for the plugins' unit
// tests. It is internal to the plugins tree and imported only by tests.
package testutil

import (
	"strconv"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Namespace is the namespace every job and task built here lives in.
const Namespace = "ns"

// Res builds a resource from amounts in base units: cpu in cores, memory in bytes, any other
// name in units (see api.NewResource).
func Res(amounts map[string]float64) api.Resource {
	return *api.NewResource(amounts)
}

// CPU builds a resource of cpu cores and memory in GiB.
func CPU(cores, memGiB float64) api.Resource {
	return Res(map[string]float64{api.ResourceCPU: cores, api.ResourceMemory: memGiB * (1 << 30)})
}

// Cluster is a snapshot under construction. The builders return the objects they add so a test
// can adjust them before Open.
type Cluster struct {
	Snap framework.Snapshot
}

// NewCluster returns an empty cluster.
func NewCluster() *Cluster {
	return &Cluster{Snap: framework.Snapshot{Cluster: "test", Revision: 1}}
}

// Node adds a node offering res.
func (c *Cluster) Node(name string, res api.Resource) *api.Node {
	n := &api.Node{Name: name, Allocatable: res}
	c.Snap.Nodes = append(c.Snap.Nodes, n)
	return n
}

// Queue adds an open, reclaimable queue.
func (c *Cluster) Queue(name string, weight int32) *api.Queue {
	q := &api.Queue{Name: name, Weight: weight, State: api.QueueOpen, Reclaimable: true}
	c.Snap.Queues = append(c.Snap.Queues, q)
	return q
}

// Job adds an Inqueue job in Namespace, created at api.Epoch and each later one a second after
// the one before.
func (c *Cluster) Job(name, queue string, minAvailable int32) *api.Job {
	j := &api.Job{
		Name: name, Namespace: Namespace, Queue: queue, MinAvailable: minAvailable,
		Phase: api.JobInqueue, CreatedAt: api.Epoch.Add(time.Duration(len(c.Snap.Jobs)) * time.Second),
	}
	c.Snap.Jobs = append(c.Snap.Jobs, j)
	return j
}

// Task adds a task of job j in the given status, on node (empty for none), requesting res. Its
// role is the job's name unless changed.
func (c *Cluster) Task(j *api.Job, name string, status api.TaskStatus, node string, res api.Resource) *api.Task {
	t := &api.Task{
		Name: name, Namespace: j.Namespace, Job: j.Name, Role: j.Name,
		Resources: res, Status: status, Node: node, Preemptable: true,
	}
	c.Snap.Tasks = append(c.Snap.Tasks, t)
	return t
}

// Tasks adds n tasks named <prefix>-0 .. <prefix>-(n-1), as Task does.
func (c *Cluster) Tasks(j *api.Job, prefix string, n int, status api.TaskStatus, node string, res api.Resource) []*api.Task {
	out := make([]*api.Task, 0, n)
	for i := range n {
		out = append(out, c.Task(j, prefix+"-"+strconv.Itoa(i), status, node, res))
	}
	return out
}

// PriorityClass adds a priority class.
func (c *Cluster) PriorityClass(name string, value int32) {
	c.Snap.PriorityClasses = append(c.Snap.PriorityClasses, &api.PriorityClass{Name: name, Value: value})
}

// Open parses config (Volcano YAML), registers the given plugins and opens a session on the
// cluster. It fails the test on any error.
func (c *Cluster) Open(t testing.TB, config string, plugins map[string]framework.PluginBuilder) *framework.Session {
	t.Helper()
	cfg, err := conf.Parse([]byte(config))
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	reg := framework.NewRegistry()
	for name, b := range plugins {
		reg.RegisterPlugin(name, b)
	}
	ssn, err := framework.OpenSession(&c.Snap, cfg, reg, framework.Options{Now: api.Epoch})
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	return ssn
}

// OneTier returns a configuration with a single tier holding the named plugins.
func OneTier(plugins ...string) string {
	s := "actions: \"allocate\"\ntiers:\n- plugins:\n"
	for _, p := range plugins {
		s += "  - name: " + p + "\n"
	}
	return s
}

// JobOf returns the session view of job name in Namespace, failing the test if missing.
func JobOf(t testing.TB, ssn *framework.Session, name string) *api.JobInfo {
	t.Helper()
	j, ok := ssn.Jobs[Namespace+"/"+name]
	if !ok {
		t.Fatalf("job %s not in session", name)
	}
	return j
}

// TaskOf returns the session view of task name of job, failing the test if missing.
func TaskOf(t testing.TB, ssn *framework.Session, job, name string) *api.TaskInfo {
	t.Helper()
	j := JobOf(t, ssn, job)
	ti, ok := j.Tasks[Namespace+"/"+name]
	if !ok {
		t.Fatalf("task %s not in job %s", name, job)
	}
	return ti
}

// UIDs returns the UIDs of tasks, in order.
func UIDs(tasks []*api.TaskInfo) []string {
	out := make([]string, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, t.UID)
	}
	return out
}

// Names returns the names of tasks, in order.
func Names(tasks []*api.TaskInfo) []string {
	out := make([]string, 0, len(tasks))
	for _, t := range tasks {
		out = append(out, t.Name)
	}
	return out
}

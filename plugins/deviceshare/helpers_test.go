package deviceshare

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

const (
	ns  = "ns"
	gib = float64(1 << 30)
)

// cluster is a snapshot under construction.
type cluster struct{ snap framework.Snapshot }

func newCluster() *cluster {
	c := &cluster{snap: framework.Snapshot{Cluster: "test", Revision: 1}}
	c.snap.Queues = append(c.snap.Queues, &api.Queue{Name: "q", Weight: 1, State: api.QueueOpen, Reclaimable: true})
	return c
}

// node adds a node with plenty of cpu and memory and the given devices.
func (c *cluster) node(name string, devs ...api.Device) *api.Node {
	n := &api.Node{Name: name, Allocatable: *api.NewResource(map[string]float64{
		api.ResourceCPU: 64, api.ResourceMemory: 256 * gib, api.ResourcePods: 110,
	}), Devices: devs}
	c.snap.Nodes = append(c.snap.Nodes, n)
	return n
}

// job adds an Inqueue job of queue q.
func (c *cluster) job(name string, min int32) *api.Job {
	j := &api.Job{Name: name, Namespace: ns, Queue: "q", MinAvailable: min, Phase: api.JobInqueue,
		CreatedAt: api.Epoch.Add(time.Duration(len(c.snap.Jobs)) * time.Second)}
	c.snap.Jobs = append(c.snap.Jobs, j)
	return j
}

// task adds a task of j asking for 1 cpu, 1Gi and the given devices.
func (c *cluster) task(j *api.Job, name string, status api.TaskStatus, node string, reqs ...api.DeviceRequest) *api.Task {
	t := &api.Task{Name: name, Namespace: ns, Job: j.Name, Role: "worker", Status: status, Node: node,
		Resources: *api.NewResource(map[string]float64{api.ResourceCPU: 1, api.ResourceMemory: gib}),
		Devices:   reqs, Preemptable: true}
	c.snap.Tasks = append(c.snap.Tasks, t)
	return t
}

// running adds a running task on node holding the given device ids.
func (c *cluster) running(j *api.Job, name, node string, ids []string, reqs ...api.DeviceRequest) *api.Task {
	t := c.task(j, name, api.Running, node, reqs...)
	t.DeviceIDs = ids
	return t
}

func gpu(id, model string, memGi float64) api.Device {
	return api.Device{ID: id, Type: api.ResourceGPU, Model: model, Memory: memGi * gib}
}

// whole asks for n whole GPUs.
func whole(n int32) api.DeviceRequest { return api.DeviceRequest{Type: api.ResourceGPU, Count: n} }

// share asks for memGi GiB and cores percent of one GPU.
func share(memGi float64, cores int32) api.DeviceRequest {
	return api.DeviceRequest{Type: api.ResourceGPU, Count: 1, Memory: memGi * gib, Cores: cores}
}

func model(r api.DeviceRequest, m string) api.DeviceRequest { r.Model = m; return r }

// config returns a one-tier configuration with deviceshare (with args, YAML lines "k: v"),
// the test gang plugin, and the given actions.
func config(actions string, args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "actions: %q\ntiers:\n- plugins:\n  - name: %s\n  - name: %s\n", actions, testGang, Name)
	if len(args) > 0 {
		b.WriteString("    arguments:\n")
		for _, a := range args {
			b.WriteString("      " + a + "\n")
		}
	}
	return b.String()
}

// open opens a session on the cluster with a registry holding deviceshare, the test gang
// plugin and every action.
func (c *cluster) open(t *testing.T, cfgText string) (*framework.Session, *framework.Registry) {
	t.Helper()
	cfg, err := conf.Parse([]byte(cfgText))
	if err != nil {
		t.Fatalf("parse config: %v", err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin(Name, New)
	reg.RegisterPlugin(testGang, newTestGang)
	actions.Register(reg)
	ssn, err := framework.OpenSession(&c.snap, cfg, reg, framework.Options{Now: api.Epoch})
	if err != nil {
		t.Fatalf("open session: %v", err)
	}
	return ssn, reg
}

// testGang is a minimal gang and priority: a job is ready when minAvailable of its tasks are
// placed and pipelined when they are placed or pipelined (so allocate discards the statements
// of jobs that do not fit), starving below that, and may preempt tasks of lower-priority jobs.
const testGang = "testgang"

type gangPlugin struct{}

func newTestGang(conf.Arguments) (framework.Plugin, error) { return gangPlugin{}, nil }

func (gangPlugin) Name() string { return testGang }

func (gangPlugin) OnSessionOpen(ssn *framework.Session) {
	ssn.AddJobReadyFn(testGang, func(j *api.JobInfo) bool { return j.ReadyTaskNum() >= j.MinAvailable })
	ssn.AddJobPipelinedFn(testGang, func(j *api.JobInfo) framework.Vote {
		if j.ReadyTaskNum()+j.WaitingTaskNum() >= j.MinAvailable {
			return framework.Permit
		}
		return framework.Reject
	})
	ssn.AddJobStarvingFn(testGang, func(j *api.JobInfo) bool { return j.IsStarving() })
	ssn.AddPreemptableFn(testGang, func(p *api.TaskInfo, cands []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		var out []*api.TaskInfo
		for _, c := range cands {
			if ssn.Jobs[c.Job].Priority < ssn.Jobs[p.Job].Priority {
				out = append(out, c)
			}
		}
		return out, framework.Permit
	})
}

func (gangPlugin) OnSessionClose(*framework.Session) {}

// taskOf returns the session view of task name.
func taskOf(t *testing.T, ssn *framework.Session, job, name string) *api.TaskInfo {
	t.Helper()
	j, ok := ssn.Jobs[ns+"/"+job]
	if !ok {
		t.Fatalf("job %s not in session", job)
	}
	ti, ok := j.Tasks[ns+"/"+name]
	if !ok {
		t.Fatalf("task %s not in job %s", name, job)
	}
	return ti
}

// devState is one device's usage, for comparisons.
type devState struct {
	ID         string
	UsedMemGi  float64
	UsedCores  int32
	Whole      bool
	HolderUIDs string
}

func (d devState) String() string {
	return fmt.Sprintf("%s{mem %gGi cores %d whole %t holders [%s]}", d.ID, d.UsedMemGi, d.UsedCores, d.Whole, d.HolderUIDs)
}

// usage returns the device usage of a node.
func usage(n *api.NodeInfo) []devState {
	out := make([]devState, 0, len(n.Devices))
	for _, d := range n.Devices {
		hs := make([]string, 0, len(d.Holders))
		for h := range d.Holders {
			hs = append(hs, strings.TrimPrefix(h, ns+"/"))
		}
		slices.Sort(hs)
		out = append(out, devState{ID: d.ID, UsedMemGi: d.UsedMemory / gib, UsedCores: d.UsedCores, Whole: d.Whole, HolderUIDs: strings.Join(hs, ",")})
	}
	return out
}

func usageOf(ssn *framework.Session) map[string][]devState {
	out := map[string][]devState{}
	for name, n := range ssn.Nodes {
		out[name] = usage(n)
	}
	return out
}

// binds returns the bind decisions of a closed session: task name -> "node:id,id".
func binds(r *framework.Result) map[string]string {
	out := map[string]string{}
	for _, d := range r.Decisions {
		if d.Kind == framework.DecisionBind {
			out[strings.TrimPrefix(d.Task, ns+"/")] = d.Node + ":" + strings.Join(d.DeviceIDs, ",")
		}
	}
	return out
}

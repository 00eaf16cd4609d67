package extender

import (
	"sort"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// The JSON bodies exchanged with the extender. Requests carry summaries of Sluice's session
// objects; responses follow Volcano's extender (pkg/scheduler/plugins/extender/argument.go).
// Lists are sorted (nodes, jobs and queues by name, tasks by uid) so a request is the same
// for the same session.

// Quantities are resource amounts by name: cpu in cores, memory in bytes, anything else in
// units (e.g. "nvidia.com/gpu": 2).
type Quantities map[string]float64

// DeviceRequest is a task's request for devices.
type DeviceRequest struct {
	Type   string  `json:"type"`
	Count  int32   `json:"count,omitempty"`
	Memory float64 `json:"memory,omitempty"`
	Cores  int32   `json:"cores,omitempty"`
	Model  string  `json:"model,omitempty"`
}

// Task summarises a task.
type Task struct {
	// UID is namespace/name; Job is the job's namespace/name.
	UID         string            `json:"uid"`
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace"`
	Job         string            `json:"job"`
	Role        string            `json:"role,omitempty"`
	Status      string            `json:"status"`
	Node        string            `json:"node,omitempty"`
	Priority    int32             `json:"priority"`
	Preemptable bool              `json:"preemptable"`
	BestEffort  bool              `json:"bestEffort,omitempty"`
	Resources   Quantities        `json:"resources"`
	Devices     []DeviceRequest   `json:"devices,omitempty"`
	DeviceIDs   []string          `json:"deviceIds,omitempty"`
	StartedAt   string            `json:"startedAt,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// Taint is a node taint.
type Taint struct {
	Key    string `json:"key"`
	Value  string `json:"value,omitempty"`
	Effect string `json:"effect"`
}

// Device is one device of a node with what is allocated on it in the session.
type Device struct {
	ID         string   `json:"id"`
	Type       string   `json:"type"`
	Model      string   `json:"model,omitempty"`
	Memory     float64  `json:"memory,omitempty"`
	Cores      int32    `json:"cores"`
	UsedMemory float64  `json:"usedMemory,omitempty"`
	UsedCores  int32    `json:"usedCores,omitempty"`
	Whole      bool     `json:"whole,omitempty"`
	Holders    []string `json:"holders,omitempty"`
}

// Node summarises a node as the session sees it.
type Node struct {
	Name          string             `json:"name"`
	Labels        map[string]string  `json:"labels,omitempty"`
	Taints        []Taint            `json:"taints,omitempty"`
	Unschedulable bool               `json:"unschedulable,omitempty"`
	Allocatable   Quantities         `json:"allocatable"`
	Idle          Quantities         `json:"idle"`
	Used          Quantities         `json:"used"`
	Releasing     Quantities         `json:"releasing,omitempty"`
	Pipelined     Quantities         `json:"pipelined,omitempty"`
	MaxTasks      int                `json:"maxTasks,omitempty"`
	Usage         map[string]float64 `json:"usage,omitempty"`
	// Tasks are the uids of the tasks on the node.
	Tasks   []string `json:"tasks"`
	Devices []Device `json:"devices,omitempty"`
}

// Job summarises a job (a gang) with its tasks.
type Job struct {
	UID                string            `json:"uid"`
	Name               string            `json:"name"`
	Namespace          string            `json:"namespace"`
	Queue              string            `json:"queue"`
	Priority           int32             `json:"priority"`
	MinAvailable       int32             `json:"minAvailable"`
	MinAvailableByRole map[string]int32  `json:"minAvailableByRole,omitempty"`
	Phase              string            `json:"phase"`
	CreatedAt          string            `json:"createdAt,omitempty"`
	MinResources       Quantities        `json:"minResources,omitempty"`
	Allocated          Quantities        `json:"allocated"`
	TotalRequest       Quantities        `json:"totalRequest"`
	Ready              int32             `json:"ready"`
	Pipelined          int32             `json:"pipelined"`
	Pending            int32             `json:"pending"`
	Tasks              []*Task           `json:"tasks"`
	Labels             map[string]string `json:"labels,omitempty"`
	Annotations        map[string]string `json:"annotations,omitempty"`
}

// Queue summarises a queue.
type Queue struct {
	Name        string            `json:"name"`
	Parent      string            `json:"parent,omitempty"`
	Weight      int32             `json:"weight"`
	Priority    int32             `json:"priority"`
	State       string            `json:"state"`
	Reclaimable bool              `json:"reclaimable"`
	Capability  Quantities        `json:"capability,omitempty"`
	Deserved    Quantities        `json:"deserved,omitempty"`
	Guarantee   Quantities        `json:"guarantee,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// SessionRequest is the body of onSessionOpen (with the cluster's objects) and of
// onSessionClose (without them).
type SessionRequest struct {
	Cluster  string   `json:"cluster"`
	Revision uint64   `json:"revision"`
	Session  string   `json:"session"`
	Now      string   `json:"now,omitempty"`
	Jobs     []*Job   `json:"jobs,omitempty"`
	Nodes    []*Node  `json:"nodes,omitempty"`
	Queues   []*Queue `json:"queues,omitempty"`
}

// PredicateRequest asks whether a task fits a node.
type PredicateRequest struct {
	Task *Task `json:"task"`
	Node *Node `json:"node"`
}

// PredicateResponse rejects the node when ErrorMessage is set. Code is Volcano's status code:
// 2 Unschedulable, 3 UnschedulableAndUnresolvable, 0 or 1 an error.
type PredicateResponse struct {
	ErrorMessage string `json:"errorMessage"`
	Code         int    `json:"code"`
}

// PrioritizeRequest asks for scores of candidate nodes.
type PrioritizeRequest struct {
	Task  *Task   `json:"task"`
	Nodes []*Node `json:"nodes"`
}

// PrioritizeResponse scores nodes by name; ErrorMessage set means failure.
type PrioritizeResponse struct {
	NodeScore    map[string]float64 `json:"nodeScore"`
	ErrorMessage string             `json:"errorMessage"`
}

// EvictableRequest asks which evictees the evictor may evict (preemptable, reclaimable).
type EvictableRequest struct {
	Evictor  *Task   `json:"evictor"`
	Evictees []*Task `json:"evictees"`
}

// TaskRef names a task in a response: by uid, or by namespace and name.
type TaskRef struct {
	UID       string `json:"uid"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func (r TaskRef) key() string {
	if r.UID != "" {
		return r.UID
	}
	return r.Namespace + "/" + r.Name
}

// EvictableResponse lists the victims and votes: Status 1 permit, 0 abstain, -1 reject.
type EvictableResponse struct {
	Status  int       `json:"status"`
	Victims []TaskRef `json:"victims"`
}

// JobRequest carries a job (jobEnqueueable, jobReady).
type JobRequest struct {
	Job *Job `json:"job"`
}

// JobEnqueueableResponse votes: Status 1 permit, 0 abstain, -1 reject.
type JobEnqueueableResponse struct {
	Status int `json:"status"`
}

// JobReadyResponse says whether the job is ready.
type JobReadyResponse struct {
	Status bool `json:"status"`
}

// QueueRequest carries a queue (queueOverused).
type QueueRequest struct {
	Queue *Queue `json:"queue"`
}

// QueueOverusedResponse says whether the queue is overused.
type QueueOverusedResponse struct {
	Overused bool `json:"overused"`
}

// EventRequest tells about an allocated or deallocated task; the response body is ignored.
type EventRequest struct {
	Task *Task `json:"task"`
}

func quantities(r *api.Resource) Quantities {
	q := Quantities{}
	if r == nil {
		return q
	}
	if r.MilliCPU != 0 {
		q[api.ResourceCPU] = r.MilliCPU / 1000
	}
	if r.Memory != 0 {
		q[api.ResourceMemory] = r.Memory
	}
	for _, n := range r.ScalarNames() {
		q[n] = r.Scalars[n] / 1000
	}
	return q
}

func optQuantities(r *api.Resource) Quantities {
	q := quantities(r)
	if len(q) == 0 {
		return nil
	}
	return q
}

func timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func newTask(t *api.TaskInfo) *Task {
	out := &Task{
		UID: t.UID, Name: t.Name, Namespace: t.Namespace, Job: t.Job, Role: t.Role,
		Status: t.Status.String(), Node: t.NodeName, Priority: t.Priority,
		Preemptable: t.Preemptable, BestEffort: t.BestEffort, Resources: quantities(t.Resreq),
		DeviceIDs: t.DeviceIDs, StartedAt: timestamp(t.StartedAt),
		Labels: t.Labels(), Annotations: t.Annotations(),
	}
	if t.Spec != nil {
		for _, d := range t.Spec.Devices {
			out.Devices = append(out.Devices, DeviceRequest{Type: d.Type, Count: d.Count, Memory: d.Memory, Cores: d.Cores, Model: d.Model})
		}
	}
	return out
}

func newNode(n *api.NodeInfo) *Node {
	out := &Node{
		Name: n.Name, Allocatable: quantities(n.Allocatable), Idle: quantities(n.Idle),
		Used: quantities(n.Used), Releasing: optQuantities(n.Releasing), Pipelined: optQuantities(n.Pipelined),
		MaxTasks: n.Allocatable.MaxTaskNum, Tasks: []string{},
	}
	if n.Node != nil {
		out.Labels, out.Unschedulable, out.Usage = n.Node.Labels, n.Node.Unschedulable, n.Node.Usage
		for _, t := range n.Node.Taints {
			out.Taints = append(out.Taints, Taint{Key: t.Key, Value: t.Value, Effect: t.Effect})
		}
	}
	for _, t := range n.SortedTasks() {
		out.Tasks = append(out.Tasks, t.UID)
	}
	for _, d := range n.Devices {
		dev := Device{ID: d.ID, Type: d.Type, Model: d.Model, Memory: d.Memory, Cores: d.Cores,
			UsedMemory: d.UsedMemory, UsedCores: d.UsedCores, Whole: d.Whole}
		for h := range d.Holders {
			dev.Holders = append(dev.Holders, h)
		}
		sort.Strings(dev.Holders)
		out.Devices = append(out.Devices, dev)
	}
	return out
}

func newJob(j *api.JobInfo) *Job {
	out := &Job{
		UID: j.UID, Name: j.Name, Namespace: j.Namespace, Queue: j.Queue, Priority: j.Priority,
		MinAvailable: j.MinAvailable, Phase: string(j.Phase), CreatedAt: timestamp(j.CreationTimestamp),
		MinResources: optQuantities(j.MinResources), Allocated: quantities(j.Allocated),
		TotalRequest: quantities(j.TotalRequest), Ready: j.ReadyTaskNum(), Pipelined: j.WaitingTaskNum(),
		Pending: int32(len(j.TaskStatusIndex[api.Pending])), Tasks: []*Task{},
	}
	if len(j.TaskMinAvailable) > 0 {
		out.MinAvailableByRole = j.TaskMinAvailable
	}
	if j.Spec != nil {
		out.Labels, out.Annotations = j.Spec.Labels, j.Spec.Annotations
	}
	for _, t := range j.SortedTasks() {
		out.Tasks = append(out.Tasks, newTask(t))
	}
	return out
}

func newQueue(q *api.QueueInfo) *Queue {
	out := &Queue{Name: q.Name, Parent: q.Parent, Weight: q.Weight, Priority: q.Priority, State: string(api.QueueOpen), Reclaimable: true}
	if s := q.Queue; s != nil {
		if s.State != "" {
			out.State = string(s.State)
		}
		out.Reclaimable = s.Reclaimable
		out.Capability, out.Deserved, out.Guarantee = optQuantities(&s.Capability), optQuantities(&s.Deserved), optQuantities(&s.Guarantee)
		out.Labels, out.Annotations = s.Labels, s.Annotations
	}
	return out
}

// newSessionRequest summarises the session; with objects, its jobs, nodes and queues too.
func newSessionRequest(ssn *framework.Session, objects bool) *SessionRequest {
	r := &SessionRequest{Cluster: ssn.Cluster, Revision: ssn.Revision, Session: ssn.UID, Now: timestamp(ssn.Now)}
	if !objects {
		return r
	}
	r.Jobs, r.Nodes, r.Queues = []*Job{}, []*Node{}, []*Queue{}
	for _, j := range ssn.SortedJobs() {
		r.Jobs = append(r.Jobs, newJob(j))
	}
	for _, n := range ssn.NodeList {
		r.Nodes = append(r.Nodes, newNode(n))
	}
	for _, q := range ssn.SortedQueues() {
		r.Queues = append(r.Queues, newQueue(q))
	}
	return r
}

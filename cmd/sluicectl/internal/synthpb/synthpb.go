// Package synthpb converts a generated cluster (engine/synth) into sluice.v1 deltas, so that
// benchmarks and load tests can stream the same cluster through ClusterStateService.Sync that
// they load directly into a store. (The engine may not import generated code, and clients may
// not import the engine, hence a package of its own, internal to sluicectl, whose bench is
// its user.)
//
// It converts the fields synth generates: node allocatable and labels; queue weight, state
// and reclaimability; job queue, gang size, phase, priority and creation time; task job, role,
// resources, status and preemptability.
package synthpb

import (
	"math"
	"strconv"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Deltas returns the cluster as upsert deltas in the order of synth.Cluster.Batches: queues,
// nodes, then each job followed by its tasks.
func Deltas(c *synth.Cluster) []*sluicev1.Delta {
	out := make([]*sluicev1.Delta, 0, c.Objects())
	for _, q := range c.Queues {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: Queue(q)}})
	}
	for _, n := range c.Nodes {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: Node(n)}})
	}
	ti := 0
	for _, j := range c.Jobs {
		out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: Job(j)}})
		for ti < len(c.Tasks) && c.Tasks[ti].Job == j.Name {
			out = append(out, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: Task(c.Tasks[ti])}})
			ti++
		}
	}
	return out
}

// Batches returns the cluster as delta batches of at most size deltas (size < 1 means one
// batch), numbered from sequence 1. The first batch replaces the whole cluster (replace_all),
// as a Sync client without prior state starts; the others merge.
func Batches(c *synth.Cluster, size int) []*sluicev1.DeltaBatch {
	all := Deltas(c)
	if size < 1 {
		size = max(len(all), 1)
	}
	var out []*sluicev1.DeltaBatch
	for len(all) > 0 || len(out) == 0 {
		n := min(size, len(all))
		out = append(out, &sluicev1.DeltaBatch{Sequence: uint64(len(out) + 1), Deltas: all[:n:n], ReplaceAll: len(out) == 0})
		all = all[n:]
	}
	return out
}

// Node converts a node.
func Node(n *api.Node) *sluicev1.Node {
	return &sluicev1.Node{
		Name:          n.Name,
		Allocatable:   Resources(n.Allocatable),
		Labels:        cloneMap(n.Labels),
		Unschedulable: n.Unschedulable,
	}
}

var queueStates = map[api.QueueState]sluicev1.QueueState{
	api.QueueOpen:    sluicev1.QueueState_QUEUE_STATE_OPEN,
	api.QueueClosed:  sluicev1.QueueState_QUEUE_STATE_CLOSED,
	api.QueueClosing: sluicev1.QueueState_QUEUE_STATE_CLOSING,
}

// Queue converts a queue.
func Queue(q *api.Queue) *sluicev1.Queue {
	return &sluicev1.Queue{
		Name:        q.Name,
		Parent:      q.Parent,
		Weight:      q.Weight,
		Capability:  Resources(q.Capability),
		Deserved:    Resources(q.Deserved),
		Guarantee:   Resources(q.Guarantee),
		Priority:    q.Priority,
		State:       queueStates[q.State],
		Reclaimable: &q.Reclaimable,
		Labels:      cloneMap(q.Labels),
	}
}

var jobPhases = map[api.JobPhase]sluicev1.JobPhase{
	api.JobPending:   sluicev1.JobPhase_JOB_PHASE_PENDING,
	api.JobInqueue:   sluicev1.JobPhase_JOB_PHASE_INQUEUE,
	api.JobRunning:   sluicev1.JobPhase_JOB_PHASE_RUNNING,
	api.JobCompleted: sluicev1.JobPhase_JOB_PHASE_COMPLETED,
	api.JobUnknown:   sluicev1.JobPhase_JOB_PHASE_UNKNOWN,
}

// Job converts a job.
func Job(j *api.Job) *sluicev1.Job {
	out := &sluicev1.Job{
		Name:          j.Name,
		Namespace:     j.Namespace,
		Queue:         j.Queue,
		PriorityClass: j.PriorityClass,
		MinAvailable:  &j.MinAvailable,
		MinResources:  Resources(j.MinResources),
		Phase:         jobPhases[j.Phase],
		Labels:        cloneMap(j.Labels),
	}
	if !j.CreatedAt.IsZero() {
		out.CreatedAt = timestamppb.New(j.CreatedAt)
	}
	if j.HasPriority {
		p := j.Priority
		out.Priority = &p
	}
	return out
}

var taskStatuses = map[api.TaskStatus]sluicev1.TaskStatus{
	api.Pending:   sluicev1.TaskStatus_TASK_STATUS_PENDING,
	api.Binding:   sluicev1.TaskStatus_TASK_STATUS_BINDING,
	api.Bound:     sluicev1.TaskStatus_TASK_STATUS_BOUND,
	api.Running:   sluicev1.TaskStatus_TASK_STATUS_RUNNING,
	api.Releasing: sluicev1.TaskStatus_TASK_STATUS_RELEASING,
	api.Succeeded: sluicev1.TaskStatus_TASK_STATUS_SUCCEEDED,
	api.Failed:    sluicev1.TaskStatus_TASK_STATUS_FAILED,
	api.Unknown:   sluicev1.TaskStatus_TASK_STATUS_UNKNOWN,
}

// Task converts a task.
func Task(t *api.Task) *sluicev1.Task {
	out := &sluicev1.Task{
		Name:          t.Name,
		Namespace:     t.Namespace,
		Job:           t.Job,
		Role:          t.Role,
		Resources:     Resources(t.Resources),
		Status:        taskStatuses[t.Status],
		Node:          t.Node,
		PriorityClass: t.PriorityClass,
		NodeSelector:  cloneMap(t.NodeSelector),
		Labels:        cloneMap(t.Labels),
		Preemptable:   &t.Preemptable,
	}
	if t.HasPriority {
		p := t.Priority
		out.Priority = &p
	}
	return out
}

// Resources formats a resource as quantities: cpu and scalars from milli-units ("2", "500m"),
// memory in bytes ("4Gi", "1536Mi", "1000"), pods as a count. Zero amounts are left out; an
// empty resource gives nil.
func Resources(r api.Resource) map[string]string {
	out := map[string]string{}
	if r.MilliCPU != 0 {
		out[api.ResourceCPU] = milli(r.MilliCPU)
	}
	if r.Memory != 0 {
		out[api.ResourceMemory] = bytes(r.Memory)
	}
	if r.MaxTaskNum != 0 {
		out[api.ResourcePods] = strconv.Itoa(r.MaxTaskNum)
	}
	for name, v := range r.Scalars {
		if v != 0 {
			out[name] = milli(v)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// milli formats an amount in thousandths: whole units when it is one, else "Nm".
func milli(v float64) string {
	m := int64(math.Round(v))
	if m%1000 == 0 {
		return strconv.FormatInt(m/1000, 10)
	}
	return strconv.FormatInt(m, 10) + "m"
}

// bytes formats a byte count in the largest binary unit that divides it.
func bytes(v float64) string {
	b := int64(math.Round(v))
	for _, u := range []struct {
		suffix string
		size   int64
	}{{"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
		if b != 0 && b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.suffix
		}
	}
	return strconv.FormatInt(b, 10)
}

func cloneMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

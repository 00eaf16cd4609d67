package slurm

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// QueueBy says what becomes a Sluice queue.
type QueueBy string

// The queue mappings.
const (
	// QueueByPartition makes each partition a queue (jobs naming several partitions go to
	// the first).
	QueueByPartition QueueBy = "partition"
	// QueueByAccount makes each account a queue; jobs without an account go to "default".
	QueueByAccount QueueBy = "account"
)

// PriorityFrom says where a job's Sluice priority comes from.
type PriorityFrom string

// The priority sources.
const (
	// PriorityFromNice uses -nice: Slurm's own order between jobs that differ only in
	// nice, and the only priority a held job has (Slurm reports priority 0 while a job is
	// held).
	PriorityFromNice PriorityFrom = "nice"
	// PriorityFromSlurm uses Slurm's job priority, clamped to int32. Held jobs have
	// priority 0 in Slurm, so this suits setups where jobs are not held.
	PriorityFromSlurm PriorityFrom = "slurm"
)

// EvictMode says how an eviction is carried out.
type EvictMode string

// The eviction modes.
const (
	// EvictRequeue requeues the job held (scontrol requeuehold): it goes back to waiting
	// for Sluice. Jobs that cannot be requeued (--no-requeue) are reported as not
	// preemptable.
	EvictRequeue EvictMode = "requeue"
	// EvictCancel cancels the job (scancel).
	EvictCancel EvictMode = "cancel"
)

// Label keys the adapter sets.
const (
	LabelJobID        = "slurm.job-id"
	LabelJobName      = "slurm.job-name"
	LabelUser         = "slurm.user"
	LabelAccount      = "slurm.account"
	LabelPartition    = "slurm.partition"
	LabelPartitionPfx = "slurm.partition/"
	LabelFeaturePfx   = "slurm.feature/"
	hostnameLabel     = "kubernetes.io/hostname"
)

// Options configure how Slurm objects become Sluice objects.
type Options struct {
	// Namespace of the Sluice jobs and tasks. Empty means "slurm".
	Namespace string
	// QueueBy: partitions (the default) or accounts become queues.
	QueueBy QueueBy
	// Partitions limits the adapter to these partitions: their nodes, and their jobs
	// (jobs of other partitions only while they hold the managed nodes). Empty means every
	// partition.
	Partitions []string
	// GPUResource is the Sluice resource name of GRES "gpu". Empty means
	// "nvidia.com/gpu". Other GRES become "gres/NAME".
	GPUResource string
	// PriorityFrom: nice (the default) or slurm.
	PriorityFrom PriorityFrom
	// EvictMode: requeue (the default) or cancel. With requeue, jobs that Slurm cannot
	// requeue are not preemptable.
	EvictMode EvictMode
}

func (o Options) namespace() string { return orDefault(o.Namespace, "slurm") }

func (o Options) gpuResource() string { return orDefault(o.GPUResource, "nvidia.com/gpu") }

// Validate checks the option values.
func (o Options) Validate() error {
	switch o.QueueBy {
	case "", QueueByPartition, QueueByAccount:
	default:
		return fmt.Errorf("queue-by must be %q or %q, got %q", QueueByPartition, QueueByAccount, o.QueueBy)
	}
	switch o.PriorityFrom {
	case "", PriorityFromNice, PriorityFromSlurm:
	default:
		return fmt.Errorf("priority-from must be %q or %q, got %q", PriorityFromNice, PriorityFromSlurm, o.PriorityFrom)
	}
	switch o.EvictMode {
	case "", EvictRequeue, EvictCancel:
	default:
		return fmt.Errorf("evict must be %q or %q, got %q", EvictRequeue, EvictCancel, o.EvictMode)
	}
	if strings.Contains(o.Namespace, "/") {
		return fmt.Errorf("namespace must not contain '/', got %q", o.Namespace)
	}
	return nil
}

// JobKind is how the adapter treats a Slurm job.
type JobKind string

// The job kinds.
const (
	// KindWaiting: held and pending; Sluice places it.
	KindWaiting JobKind = "waiting"
	// KindDispatched: released onto its node list, not yet running (BOUND tasks).
	KindDispatched JobKind = "dispatched"
	// KindRunning: running (or suspended) on its nodes.
	KindRunning JobKind = "running"
	// KindCompleting: ending or being requeued; still holds its remaining nodes
	// (RELEASING tasks).
	KindCompleting JobKind = "completing"
)

// SlurmJob is what the executor needs to know about a mapped job.
type SlurmJob struct {
	ID   int64
	Name string
	Kind JobKind
	// TaskNames are the Sluice task names (without namespace), in order.
	TaskNames []string
	Requeue   bool
}

// ClusterState is the Sluice view of a Slurm snapshot: the objects to sync, by name, and
// the Slurm job behind each Sluice job.
type ClusterState struct {
	Namespace string
	Queues    map[string]*sluicev1.Queue
	Nodes     map[string]*sluicev1.Node
	Jobs      map[string]*sluicev1.Job
	Tasks     map[string]*sluicev1.Task
	// SlurmJobs maps a Sluice job name (without namespace) to its Slurm job.
	SlurmJobs map[string]*SlurmJob
	// Skipped counts Slurm jobs left out, by reason.
	Skipped map[string]int
}

func newClusterState(ns string) *ClusterState {
	return &ClusterState{
		Namespace: ns,
		Queues:    map[string]*sluicev1.Queue{},
		Nodes:     map[string]*sluicev1.Node{},
		Jobs:      map[string]*sluicev1.Job{},
		Tasks:     map[string]*sluicev1.Task{},
		SlurmJobs: map[string]*SlurmJob{},
		Skipped:   map[string]int{},
	}
}

// JobName is the Sluice job name of a Slurm job id.
func JobName(id int64) string { return "job-" + strconv.FormatInt(id, 10) }

// TaskName is the Sluice name of task i of a Slurm job.
func TaskName(id int64, i int) string { return JobName(id) + "-" + strconv.Itoa(i) }

// Map turns a Slurm snapshot into the Sluice objects that describe it.
func Map(snap *Snapshot, opts Options) (*ClusterState, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	st := newClusterState(opts.namespace())
	wanted := map[string]bool{}
	for _, p := range opts.Partitions {
		wanted[p] = true
	}
	inScope := func(parts []string) []string {
		if len(wanted) == 0 {
			return parts
		}
		var out []string
		for _, p := range parts {
			if wanted[p] {
				out = append(out, p)
			}
		}
		return out
	}

	// Queues.
	if opts.QueueBy != QueueByAccount {
		for _, p := range snap.Partitions {
			if len(inScope([]string{p.Name})) == 0 {
				continue
			}
			q := &sluicev1.Queue{Name: p.Name, Weight: 1, Priority: p.PriorityTier}
			if !p.Open() {
				q.State = sluicev1.QueueState_QUEUE_STATE_CLOSED
			}
			st.Queues[p.Name] = q
		}
	}

	// Nodes.
	for i := range snap.Nodes {
		n := &snap.Nodes[i]
		parts := inScope(n.Partitions)
		if n.Name == "" || len(parts) == 0 && len(wanted) > 0 {
			continue
		}
		node, err := mapNode(n, parts, opts)
		if err != nil {
			return nil, err
		}
		st.Nodes[n.Name] = node
	}

	// Jobs and tasks.
	jobs := append([]Job(nil), snap.Jobs...)
	sort.SliceStable(jobs, func(a, b int) bool { return jobs[a].ID() < jobs[b].ID() })
	for i := range jobs {
		if reason := mapJob(st, &jobs[i], snap.Now, inScope, opts); reason != "" {
			st.Skipped[reason]++
		}
	}
	return st, nil
}

func mapNode(n *Node, parts []string, opts Options) (*sluicev1.Node, error) {
	alloc := map[string]string{}
	if n.CPUs.Val > 0 {
		alloc["cpu"] = strconv.FormatInt(n.CPUs.Val, 10)
	}
	if n.RealMemory.Val > 0 {
		alloc["memory"] = strconv.FormatInt(n.RealMemory.Val, 10) + "Mi"
	}
	gres, err := ParseGres(n.Gres)
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", n.Name, err)
	}
	for name, c := range gres {
		if c > 0 {
			alloc[gresResource(name, opts)] = strconv.FormatInt(c, 10)
		}
	}
	unschedulable := n.Unavailable()
	if len(alloc) == 0 {
		// A node that reports nothing (not registered yet): keep it, cordoned, so that
		// tasks still on it stay valid.
		alloc["pods"] = "1"
		unschedulable = true
	}
	labels := map[string]string{}
	for _, p := range parts {
		labels[LabelPartitionPfx+p] = "true"
	}
	for _, f := range n.ActiveFeatures {
		if f = strings.TrimSpace(f); f != "" {
			labels[LabelFeaturePfx+f] = "true"
		}
	}
	return &sluicev1.Node{
		Name:          n.Name,
		Allocatable:   alloc,
		Labels:        labels,
		Unschedulable: unschedulable,
	}, nil
}

func gresResource(name string, opts Options) string {
	if name == "gpu" {
		return opts.gpuResource()
	}
	return "gres/" + name
}

// classify says how the adapter treats a job and on which nodes its tasks are; an empty
// kind means the job is left out, for the reason given.
func classify(j *Job, now time.Time) (JobKind, []string, string) {
	switch j.State() {
	case StateRunning, StateSuspended:
		nodes, err := ExpandHostlist(j.Nodes)
		if err != nil || len(nodes) == 0 {
			return "", nil, "running without a readable node list"
		}
		return KindRunning, nodes, ""
	case StateCompleting:
		nodes, err := ExpandHostlist(j.Nodes)
		if err != nil || len(nodes) == 0 {
			return "", nil, "completing on no node"
		}
		return KindCompleting, nodes, ""
	case StatePending:
		if j.ArrayTasks != "" && !j.ArrayTaskID.Set {
			return "", nil, "pending job array not split into tasks"
		}
		if j.HetJobID.Val != 0 {
			return "", nil, "pending heterogeneous job"
		}
		if j.Held() {
			// A begin time in the future (sbatch --begin) is the user's; a requeued job's
			// is Slurm's requeue delay, which the adapter lifts when it starts the job.
			if e := unixTime(j.EligibleTime); !now.IsZero() && e.After(now) && j.RestartCnt.Val == 0 {
				return "", nil, "held with a begin time in the future"
			}
			return KindWaiting, nil, ""
		}
		req, err := ExpandHostlist(j.RequiredNodes)
		if err == nil && len(req) > 0 && int64(len(req)) == max(j.NodeCount.Val, 1) {
			return KindDispatched, req, ""
		}
		return "", nil, "pending, not held: Slurm schedules it"
	default:
		return "", nil, "finished"
	}
}

// mapJob adds a job and its tasks, or returns why it is left out.
func mapJob(st *ClusterState, j *Job, now time.Time, inScope func([]string) []string, opts Options) string {
	if !j.JobID.Set || j.ID() <= 0 {
		return "no job id"
	}
	kind, nodes, reason := classify(j, now)
	if kind == "" {
		return reason
	}
	allParts := j.PartitionList()
	parts := inScope(allParts)
	if len(parts) == 0 && len(allParts) > 0 {
		if kind == KindWaiting {
			return "partition out of scope"
		}
		// A job of another partition on managed nodes: reported, in its partition's
		// queue, so that Sluice counts what it holds.
		parts = allParts
	}
	for _, n := range nodes {
		if _, ok := st.Nodes[n]; !ok {
			return "on a node out of scope"
		}
	}
	count := len(nodes)
	if kind == KindWaiting {
		count = int(max(j.NodeCount.Val, 1))
	}
	res, err := perNode(j, kind, count, opts)
	if err != nil {
		return "unreadable resources: " + err.Error()
	}

	id := j.ID()
	name := JobName(id)
	queue := "default"
	switch opts.QueueBy {
	case QueueByAccount:
		if j.Account != "" {
			queue = j.Account
		}
		if _, ok := st.Queues[queue]; !ok {
			st.Queues[queue] = &sluicev1.Queue{Name: queue, Weight: 1}
		}
	default:
		if len(parts) > 0 {
			queue = parts[0]
		}
		if _, ok := st.Queues[queue]; !ok {
			st.Queues[queue] = &sluicev1.Queue{Name: queue, Weight: 1}
		}
	}

	labels := map[string]string{LabelJobID: strconv.FormatInt(id, 10)}
	if j.Name != "" {
		labels[LabelJobName] = j.Name
	}
	if j.UserName != "" {
		labels[LabelUser] = j.UserName
	}
	if j.Account != "" {
		labels[LabelAccount] = j.Account
	}
	if j.Partition != "" {
		labels[LabelPartition] = j.Partition
	}
	job := &sluicev1.Job{
		Name:         name,
		Namespace:    st.Namespace,
		Queue:        queue,
		Priority:     proto.Int32(priority(j, opts)),
		MinAvailable: proto.Int32(int32(count)),
		Labels:       labels,
	}
	if t := unixTime(j.SubmitTime); !t.IsZero() {
		job.CreatedAt = timestamppb.New(t)
	}
	if kind != KindWaiting {
		job.Phase = sluicev1.JobPhase_JOB_PHASE_RUNNING
	}
	st.Jobs[name] = job

	var affinity *sluicev1.Affinity
	if kind == KindWaiting {
		affinity = &sluicev1.Affinity{}
		for _, p := range parts {
			affinity.NodeRequired = append(affinity.NodeRequired, &sluicev1.NodeSelectorTerm{
				MatchExpressions: []*sluicev1.NodeSelectorRequirement{{Key: LabelPartitionPfx + p, Operator: "Exists"}},
			})
		}
		if count > 1 {
			affinity.TaskAntiAffinity = []*sluicev1.TaskAffinityTerm{{
				Selector:    map[string]string{LabelJobID: labels[LabelJobID]},
				TopologyKey: hostnameLabel,
				Required:    true,
			}}
		}
		if len(affinity.NodeRequired) == 0 && len(affinity.TaskAntiAffinity) == 0 {
			affinity = nil
		}
	}
	sj := &SlurmJob{ID: id, Name: j.Name, Kind: kind, Requeue: j.Requeue}
	for i := 0; i < count; i++ {
		t := &sluicev1.Task{
			Name:      TaskName(id, i),
			Namespace: st.Namespace,
			Job:       name,
			Role:      "node",
			Resources: res,
			Labels:    map[string]string{LabelJobID: labels[LabelJobID]},
			Affinity:  affinity,
		}
		switch kind {
		case KindWaiting:
			t.Status = sluicev1.TaskStatus_TASK_STATUS_PENDING
		case KindDispatched:
			t.Status, t.Node = sluicev1.TaskStatus_TASK_STATUS_BOUND, nodes[i]
		case KindRunning:
			t.Status, t.Node = sluicev1.TaskStatus_TASK_STATUS_RUNNING, nodes[i]
			if s := unixTime(j.StartTime); !s.IsZero() {
				t.StartedAt = timestamppb.New(s)
			}
		case KindCompleting:
			t.Status, t.Node = sluicev1.TaskStatus_TASK_STATUS_RELEASING, nodes[i]
		}
		if opts.EvictMode != EvictCancel && !j.Requeue {
			t.Preemptable = proto.Bool(false)
		}
		st.Tasks[t.Name] = t
		sj.TaskNames = append(sj.TaskNames, t.Name)
	}
	st.SlurmJobs[name] = sj
	return ""
}

// priority is the job's Sluice priority.
func priority(j *Job, opts Options) int32 {
	if opts.PriorityFrom == PriorityFromSlurm {
		p := j.Priority.Val
		if p > math.MaxInt32 {
			return math.MaxInt32
		}
		if p < 0 {
			return 0
		}
		return int32(p)
	}
	return -j.NiceValue()
}

// perNode is a job's per-node share of its resources, as Sluice quantities. Running and
// completing jobs use what Slurm allocated (tres_alloc_str), waiting jobs what they ask for
// (tres_req_str); GRES come from the TRES string when Slurm tracks them there, otherwise
// from tres_per_node, tres_per_job or tres_per_task.
func perNode(j *Job, kind JobKind, count int, opts Options) (map[string]string, error) {
	src := j.TresReqStr
	if kind == KindRunning || kind == KindCompleting {
		if j.TresAllocStr != "" {
			src = j.TresAllocStr
		}
	}
	t, err := ParseTRES(src)
	if err != nil {
		return nil, err
	}
	// The share: totals divided by the nodes they were counted for (a completing job
	// keeps its allocation's totals while its node list shrinks).
	share := t.Nodes
	if share <= 0 {
		share = int64(count)
	}
	share = max(share, 1)
	res := map[string]string{}
	if t.CPU > 0 {
		res["cpu"] = strconv.FormatInt(ceilDiv(t.CPU, share), 10)
	}
	if t.MemoryBytes > 0 {
		res["memory"] = memQuantity(ceilDiv(t.MemoryBytes, share))
	}
	gres := map[string]int64{}
	for name, c := range t.Gres {
		gres[name] = ceilDiv(c, share)
	}
	perNodeGres, err := ParseGres(j.TresPerNode)
	if err != nil {
		return nil, err
	}
	perJob, err := ParseGres(j.TresPerJob)
	if err != nil {
		return nil, err
	}
	perTask, err := ParseGres(j.TresPerTask)
	if err != nil {
		return nil, err
	}
	tasks := max(j.Tasks.Val, 1)
	for name, c := range perNodeGres {
		if _, ok := gres[name]; !ok {
			gres[name] = c
		}
	}
	for name, c := range perJob {
		if _, ok := gres[name]; !ok {
			gres[name] = ceilDiv(c, share)
		}
	}
	for name, c := range perTask {
		if _, ok := gres[name]; !ok {
			gres[name] = ceilDiv(c*tasks, share)
		}
	}
	for name, c := range gres {
		if c > 0 {
			res[gresResource(name, opts)] = strconv.FormatInt(c, 10)
		}
	}
	return res, nil
}

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// memQuantity writes bytes as a quantity, in Mi when it divides evenly.
func memQuantity(b int64) string {
	if b%(1<<20) == 0 {
		return strconv.FormatInt(b>>20, 10) + "Mi"
	}
	return strconv.FormatInt(b, 10)
}

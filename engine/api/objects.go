package api

import "time"

// The objects in this file are what a resource manager streams in. The state store keeps them
// immutable: a writer replaces an object, never mutates it.

// Taint marks a node so that only tasks tolerating it are placed there.
type Taint struct {
	Key, Value string
	// Effect is NoSchedule, PreferNoSchedule or NoExecute.
	Effect string
}

// Toleration lets a task be placed on nodes with a matching taint.
type Toleration struct {
	Key string
	// Operator is Equal (the default when empty) or Exists.
	Operator string
	Value    string
	// Effect empty matches every effect.
	Effect string
}

// Tolerates reports whether the toleration matches the taint, with Kubernetes' rules.
func (t Toleration) Tolerates(taint Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key == "" {
		return t.Operator == "Exists"
	}
	if t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case "Exists":
		return true
	case "", "Equal":
		return t.Value == taint.Value
	}
	return false
}

// SelectorRequirement is one expression of a node selector term: key, operator (In, NotIn,
// Exists, DoesNotExist, Gt, Lt) and values.
type SelectorRequirement struct {
	Key      string
	Operator string
	Values   []string
}

// NodeSelectorTerm is an AND of requirements.
type NodeSelectorTerm struct {
	MatchExpressions []SelectorRequirement
}

// PreferredTerm is a weighted node selector term.
type PreferredTerm struct {
	Weight int32
	Term   NodeSelectorTerm
}

// TaskAffinityTerm selects other tasks by labels within a topology domain.
type TaskAffinityTerm struct {
	Selector    map[string]string
	TopologyKey string
	Required    bool
	Weight      int32
}

// Affinity holds a task's placement preferences and requirements.
type Affinity struct {
	// NodeRequired is an OR of terms.
	NodeRequired     []NodeSelectorTerm
	NodePreferred    []PreferredTerm
	TaskAffinity     []TaskAffinityTerm
	TaskAntiAffinity []TaskAffinityTerm
}

// TopologySpread limits how unevenly matching tasks spread over a topology key.
type TopologySpread struct {
	MaxSkew     int32
	TopologyKey string
	// WhenUnsatisfiable is DoNotSchedule or ScheduleAnyway.
	WhenUnsatisfiable string
	Selector          map[string]string
}

// Device is one device of a node's inventory, e.g. a GPU.
type Device struct {
	ID, Type, Model string
	// Memory in bytes.
	Memory float64
	// Cores in percent of the device (100 = whole).
	Cores      int32
	Attributes map[string]string
}

// DeviceRequest asks for whole devices (Count) or a share of one (Memory, Cores).
type DeviceRequest struct {
	Type  string
	Count int32
	// Memory in bytes, for a share of one device.
	Memory float64
	// Cores in percent, for a share of one device.
	Cores int32
	Model string
}

// Node is a machine of the cluster.
type Node struct {
	Name          string
	Allocatable   Resource
	Labels        map[string]string
	Taints        []Taint
	Unschedulable bool
	// Usage is recent utilisation in percent by resource name.
	Usage   map[string]float64
	Devices []Device
	// NumaTopology is the node's NUMA layout and exclusive-CPU state; nil when unknown.
	NumaTopology *NumaTopology
}

// Topology manager policies, as the kubelet names them; also the values of
// NumaPolicyAnnotation.
const (
	TopologyPolicyNone           = "none"
	TopologyPolicyBestEffort     = "best-effort"
	TopologyPolicyRestricted     = "restricted"
	TopologyPolicySingleNumaNode = "single-numa-node"
)

// CPU manager policies; only a static CPU manager gives tasks exclusive CPUs.
const (
	CPUManagerPolicyNone   = "none"
	CPUManagerPolicyStatic = "static"
)

// NumaPolicyAnnotation on a task (or, for all its tasks, on its job) names the topology
// manager policy the task needs its node to have, as Volcano's job controller writes it on
// pods.
const NumaPolicyAnnotation = "volcano.sh/numa-topology-policy"

// NumaTopology is a node's NUMA layout and the state of its CPUs, as its CPU and topology
// managers see them (Volcano's Numatopology resource).
type NumaTopology struct {
	// TopologyManagerPolicy is none, best-effort, restricted or single-numa-node.
	TopologyManagerPolicy string
	// CPUManagerPolicy is none or static.
	CPUManagerPolicy string
	// Cells are the NUMA cells with their CPUs.
	Cells []NumaCell
	// ReservedMilliCPU is CPU reserved for the system, in thousandths of a CPU.
	ReservedMilliCPU int64
}

// NumaCell is one NUMA node of a machine.
type NumaCell struct {
	ID   int
	CPUs []NumaCPU
}

// NumaCPU is one logical CPU.
type NumaCPU struct {
	ID int
	// Socket and Core identify the physical core; CPUs sharing both are hardware threads.
	Socket, Core int
	// Holder is who holds the CPU exclusively: "" when free, a task's namespace/name, or
	// anything else for holders Sluice does not schedule.
	Holder string
}

// QueueState is a queue's lifecycle state.
type QueueState string

// Queue states.
const (
	QueueOpen    QueueState = "Open"
	QueueClosed  QueueState = "Closed"
	QueueClosing QueueState = "Closing"
)

// NodeGroupAffinity names node groups a queue must or would like to use.
type NodeGroupAffinity struct {
	Required, Preferred []string
}

// RootQueue is the implicit top of the queue hierarchy: a queue whose parent is "" or
// "root" is top-level, and a queue named "root", if declared, is the top itself.
const RootQueue = "root"

// Queue is a share of the cluster.
type Queue struct {
	Name string
	// Parent is the parent queue ("" means root).
	Parent string
	Weight int32
	// Capability, Deserved and Guarantee are empty when unset.
	Capability, Deserved, Guarantee Resource
	Priority                        int32
	State                           QueueState
	Reclaimable                     bool
	NodeGroupAffinity               NodeGroupAffinity
	NodeGroupAntiAffinity           NodeGroupAffinity
	Labels, Annotations             map[string]string
}

// JobPhase is a job's (Volcano PodGroup's) phase.
type JobPhase string

// Job phases.
const (
	JobPending   JobPhase = "Pending"
	JobInqueue   JobPhase = "Inqueue"
	JobRunning   JobPhase = "Running"
	JobCompleted JobPhase = "Completed"
	JobUnknown   JobPhase = "Unknown"
)

// NetworkTopology asks for placement within one hypernode.
type NetworkTopology struct {
	// Mode is hard or soft.
	Mode               string
	HighestTierAllowed int32
}

// Job is a gang of tasks (Volcano's PodGroup).
type Job struct {
	Name, Namespace, Queue string
	PriorityClass          string
	// Priority is used when HasPriority and no PriorityClass is given.
	Priority           int32
	HasPriority        bool
	MinAvailable       int32
	MinAvailableByRole map[string]int32
	MinResources       Resource
	Phase              JobPhase
	CreatedAt          time.Time
	Labels             map[string]string
	Annotations        map[string]string
	NetworkTopology    *NetworkTopology
}

// Key returns the job's namespace/name.
func (j *Job) Key() string { return j.Namespace + "/" + j.Name }

// Task is one schedulable unit of a job (a pod).
type Task struct {
	Name, Namespace string
	// Job is the job's name, in the task's namespace.
	Job            string
	Role           string
	Resources      Resource
	Status         TaskStatus
	Node           string
	PriorityClass  string
	Priority       int32
	HasPriority    bool
	StartedAt      time.Time
	NodeSelector   map[string]string
	Tolerations    []Toleration
	Affinity       *Affinity
	TopologySpread []TopologySpread
	Ports          []int32
	Devices        []DeviceRequest
	Labels         map[string]string
	Annotations    map[string]string
	Preemptable    bool
	// DeviceIDs are the devices assigned by a committed bind.
	DeviceIDs []string
	// Guaranteed is true for a task of Kubernetes' Guaranteed QoS class (limits equal
	// requests, cpu and memory requested).
	Guaranteed bool
}

// Key returns the task's namespace/name.
func (t *Task) Key() string { return t.Namespace + "/" + t.Name }

// JobKey returns the namespace/name of the task's job.
func (t *Task) JobKey() string { return t.Namespace + "/" + t.Job }

// PriorityClass maps a class name to a priority value.
type PriorityClass struct {
	Name  string
	Value int32
}

// NamespaceQuota bounds what a namespace's tasks may request.
type NamespaceQuota struct {
	Namespace string
	Hard      Resource
}

// DisruptionBudget bounds how many matching tasks may be disrupted at once. MinAvailable and
// MaxUnavailable are an integer or a percentage ("50%"); at most one is set.
type DisruptionBudget struct {
	Name, Namespace              string
	Selector                     map[string]string
	MinAvailable, MaxUnavailable string
}

// HyperNode is a network topology domain: members are nodes (tier 1) or hypernodes.
type HyperNode struct {
	Name    string
	Tier    int32
	Members []string
}

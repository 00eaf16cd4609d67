package scenario

import (
	"math"
	"time"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Epoch is the scenario clock's origin: every time in a scenario file
// (now, createdAt, startedAt) is a number of seconds after it. It is the
// engine's api.Epoch, repeated because clients do not import the engine; a
// test in cmd/sluicectl keeps the two equal.
var Epoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// AnyNode is the node name that, in the binds and pipelined expectations,
// accepts whatever node the task went to.
const AnyNode = "*"

// Scenario is one parsed scenario file.
type Scenario struct {
	// File is the path the scenario was parsed from.
	File string
	// Name is the scenario's unique kebab-case name.
	Name string
	// Description says what the scenario shows; informative only.
	Description string
	// Config is the Volcano scheduler configuration text, used unchanged.
	Config string
	// Now is the clock of the first cycle, in seconds after Epoch.
	Now float64
	// CycleSeconds is how far the clock advances between cycles (default 1).
	CycleSeconds float64
	// Cycles is the number of scheduling cycles to run (default 1).
	Cycles int
	// Cluster is the cluster the scenario starts from.
	Cluster *Cluster
	// Expect is what the run must produce.
	Expect *Expect
}

// CycleTime returns the clock of cycle i (counting from 0):
// Epoch + Now + i*CycleSeconds.
func (s *Scenario) CycleTime(i int) time.Time {
	return Epoch.Add(seconds(s.Now + float64(i)*s.CycleSeconds))
}

// seconds converts a number of seconds to a Duration, rounded to the
// nanosecond.
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * float64(time.Second)))
}

// Cluster is a cluster as API messages, with every default of the scenario
// format applied: nodes and task replicas are expanded, every node carries
// its kubernetes.io/hostname label, and jobs and tasks have their namespace,
// queue, phase, status and creation time set.
//
// Task priorities are left as written: a task without priority or
// priorityClass inherits its job's on the server.
type Cluster struct {
	// PriorityClasses in file order. The built-in classes
	// system-cluster-critical and system-node-critical are added, with their
	// Kubernetes values, when referenced without being declared.
	PriorityClasses []*sluicev1.PriorityClass
	// Queues in file order.
	Queues []*sluicev1.Queue
	// HyperNodes in file order.
	HyperNodes []*sluicev1.HyperNode
	// Quotas in file order.
	Quotas []*sluicev1.NamespaceQuota
	// DisruptionBudgets in file order.
	DisruptionBudgets []*sluicev1.DisruptionBudget
	// Nodes, expanded, in file order.
	Nodes []*sluicev1.Node
	// Jobs in file order.
	Jobs []*sluicev1.Job
	// Tasks of all jobs, expanded, in file order.
	Tasks []*sluicev1.Task
}

// Expect holds a scenario's expectations. A nil map (or slice) means the key
// was absent and is not checked; a non-nil empty one is checked (for
// example "binds: {}" means nothing may be bound). Task and job names are
// "namespace/name"; queue names are plain.
type Expect struct {
	// Binds maps every task bound during the run to its node; AnyNode
	// accepts any node.
	Binds map[string]string
	// BindCounts is the number of tasks bound per job; unlisted jobs must
	// have none.
	BindCounts map[string]int
	// Pipelined maps every task pipelined in the last cycle to its node;
	// AnyNode accepts any node.
	Pipelined map[string]string
	// Evicted lists the tasks evicted during the run, in any order.
	Evicted []string
	// EvictCounts is the number of evictions per job; unlisted jobs must
	// have none.
	EvictCounts map[string]int
	// JobPhases is each listed job's phase after the run: Pending, Inqueue,
	// Running, Completed or Unknown.
	JobPhases map[string]string
	// Queues holds, per queue, resource amounts the API must report after
	// the run. Resources not listed are not checked.
	Queues map[string]QueueAmounts
	// DeviceBinds is, per task, the exact set of device ids its bind
	// assigned.
	DeviceBinds map[string][]string
	// Unschedulable is, per job, a substring its explanation summary must
	// contain.
	Unschedulable map[string]string
}

// QueueAmounts holds a queue's derived resource figures, as quantities by
// resource name. In an Expect a nil map is not checked.
type QueueAmounts struct {
	// Deserved is what the queue deserves.
	Deserved map[string]string
	// Allocated is what the queue's tasks hold.
	Allocated map[string]string
}

// Package numaaware is Volcano's numa-aware plugin: it places tasks that get exclusive CPUs
// where the node's topology manager will admit them, and prefers nodes where their CPUs span
// few NUMA nodes.
//
// Inputs. A node's NumaTopology (Volcano's Numatopology resource) gives its topology manager
// policy (none, best-effort, restricted, single-numa-node), its CPU manager policy (none,
// static), its NUMA cells with their CPUs (socket and core of each) and who already holds
// each CPU; its reserved CPU (rounded up) is chosen by topology among all CPUs, as the
// kubelet does, and never given out. A task is the plugin's when it is guaranteed
// (api.Task.Guaranteed, Kubernetes' Guaranteed QoS class); its policy is the annotation
// volcano.sh/numa-topology-policy of the task, else of its job ("none" is no policy); a
// cpu request that is a whole number of CPUs asks for that many exclusive CPUs, any other
// asks for none in particular.
//
// Registered callbacks (only when the plugin's predicate is enabled, as only Volcano's
// predicate records the assignments the rest uses):
//   - Predicate. A task that is not guaranteed passes. A task with a policy fails a node
//     without a topology ("no numa topology"), whose CPU manager is not static, whose
//     topology policy differs, or with no free CPU. A task without a policy passes nodes
//     whose CPU manager is not static or whose topology policy is none. Otherwise the CPU
//     manager's hints (every set of NUMA nodes with enough free CPUs, preferred when as
//     narrow as the machine allows) go through the node's policy: none takes any CPUs,
//     best-effort the best alignment it finds, restricted only a preferred one and
//     single-numa-node only a preferred one on a single NUMA node; a refusal is
//     UnschedulableAndUnresolvable. The CPUs are then chosen as the kubelet's static policy
//     does (whole sockets, whole cores, then single CPUs); too few free CPUs fail the node
//     ("insufficient exclusive cpus").
//   - BatchNodeOrder, for guaranteed tasks with a policy: with count the number of NUMA nodes
//     the task's CPUs would span on a node and most the largest count among the candidates,
//     100 - 100*count/most in integer arithmetic (100 everywhere when most is 0), times the
//     weight argument: the most spread candidates score 0.
//   - Event handlers. Allocating or pipelining a task takes its CPUs from the node's free
//     CPUs; undoing that gives them back; an evicted task keeps them while it is releasing.
//
// When the session opens, each task already placed on a node (Releasing included) that is
// not among the holders the node's topology reports, and that the plugin would have placed
// there, takes the CPUs the node's policy would choose for it now, in node name then task
// UID order: the resource manager has not yet reported which CPUs it got (Volcano keeps such
// "unassigned NUMA pods" in its cache until the node reports them).
//
// Arguments: weight (integer, default 1), as Volcano names it.
//
// Differences from Volcano (docs/volcano-compatibility.md): the CPU choice uses the
// kubelet's meaning of free sockets and cores, with strict sort orders, and identifies a
// core by socket and core id; a node that cannot give the task its CPUs fails the predicate
// instead of being chosen and assigning nothing.
package numaaware

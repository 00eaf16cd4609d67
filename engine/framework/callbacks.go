package framework

import (
	"encoding/binary"
	"math"
	"sort"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// Callback types. Comparison functions return <0 when l goes first, >0 when r goes first and
// 0 when the plugin has no opinion.
type (
	// JobOrderFn compares two jobs.
	JobOrderFn func(l, r *api.JobInfo) int
	// QueueOrderFn compares two queues.
	QueueOrderFn func(l, r *api.QueueInfo) int
	// VictimQueueOrderFn compares two queues as sources of victims for a preemptor's queue.
	VictimQueueOrderFn func(l, r, preemptor *api.QueueInfo) int
	// TaskOrderFn compares two tasks.
	TaskOrderFn func(l, r *api.TaskInfo) int
	// PredicateFn says why a task cannot go on a node (nil: it can). Return *api.FitError
	// to give a reason and say whether eviction could help.
	PredicateFn func(task *api.TaskInfo, node *api.NodeInfo) error
	// PrePredicateFn rejects a task before any node is tried.
	PrePredicateFn func(task *api.TaskInfo) error
	// NodeOrderFn scores a node for a task; higher is better.
	NodeOrderFn func(task *api.TaskInfo, node *api.NodeInfo) (float64, error)
	// BatchNodeOrderFn scores many nodes at once, by node name.
	BatchNodeOrderFn func(task *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error)
	// BestNodeFn picks a node among scored candidates (scores to nodes); nil: no opinion.
	BestNodeFn func(task *api.TaskInfo, scores map[float64][]*api.NodeInfo) *api.NodeInfo
	// EvictableFn chooses, among candidates, the tasks the evictor may evict, or abstains.
	EvictableFn func(evictor *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, Vote)
	// UnifiedEvictableFn chooses, among candidates offered in the order the eviction would take
	// them, the tasks the eviction ctx describes may evict, or abstains (Volcano's
	// UnifiedEvictableFn, which its gang-aware eviction actions ask instead of EvictableFn).
	UnifiedEvictableFn func(ctx *EvictionContext, candidates []*api.TaskInfo) ([]*api.TaskInfo, Vote)
	// QueueTaskFn answers a yes/no question about a queue and a task (allocatable,
	// preemptive).
	QueueTaskFn func(queue *api.QueueInfo, task *api.TaskInfo) bool
	// QueueFn answers a yes/no question about a queue (overused).
	QueueFn func(queue *api.QueueInfo) bool
	// JobFn answers a yes/no question about a job (ready, starving).
	JobFn func(job *api.JobInfo) bool
	// JobVoteFn votes on a job (pipelined, enqueueable).
	JobVoteFn func(job *api.JobInfo) Vote
	// JobValidFn validates a job; nil or Pass means valid.
	JobValidFn func(job *api.JobInfo) *ValidateResult
	// JobEnqueuedFn is told that a job was enqueued.
	JobEnqueuedFn func(job *api.JobInfo)
	// VictimTasksFn chooses tasks to evict on its own (shuffle, rescheduling).
	VictimTasksFn func(tasks []*api.TaskInfo) []*api.TaskInfo
	// TargetJobFn picks the job to serve first among candidates.
	TargetJobFn func(jobs []*api.JobInfo) *api.JobInfo
	// ReservedNodesFn reserves nodes for the cycle.
	ReservedNodesFn func()
	// SimulateTaskFn updates a plugin's simulated state when a task is added to or removed
	// from a node during preemption planning.
	SimulateTaskFn func(preemptor, task *api.TaskInfo, node *api.NodeInfo) error
	// ClassKeyFn says what a plugin's predicates and node scores for a task depend on besides
	// the node's own state (its NodeInfo and the tasks on it): tasks with equal keys get equal
	// answers from the plugin on a node in the same state. ok is false when the answers for
	// this task may also depend on other nodes or on anything else that can change during the
	// cycle without changing the node; batch scores must then be the same for every node.
	ClassKeyFn func(task *api.TaskInfo) (key string, ok bool)
	// HyperNodeOrderFn scores hypernodes (by name) for a job; higher is better.
	HyperNodeOrderFn func(job *api.JobInfo, hyperNodes map[string][]*api.NodeInfo) (map[string]float64, error)
	// WakeUpFn is asked when the cycle ends: the earliest time after the session's clock at
	// which the plugin may decide differently although the cluster and the configuration stay
	// as they are (a waiting time runs out, a window opens or closes, a cooldown ends, a
	// periodic strategy is due again). ok is false when there is no such time. A time too
	// early only costs a cycle that changes nothing; a time too late delays a decision.
	WakeUpFn func() (at time.Time, ok bool)
)

// EvictionKind says what kind of eviction asks the UnifiedEvictableFn callbacks, so that a
// plugin can judge preemption and reclaim differently.
type EvictionKind int

// Eviction kinds, as Volcano numbers them. Only the gang-aware actions ask the callbacks so
// far (gangpreempt and gangreclaim); the task-level kinds are for preempt and reclaim, which
// ask the preemptable and reclaimable callbacks instead, in Sluice as in Volcano.
const (
	EvictionKindUnknown EvictionKind = iota
	// EvictionKindGangPreempt: gangpreempt, a job evicting lower-priority jobs of its queue.
	EvictionKindGangPreempt
	// EvictionKindGangReclaim: gangreclaim, a job taking room back from other queues.
	EvictionKindGangReclaim
	// EvictionKindTaskPreempt: task-level preemption.
	EvictionKindTaskPreempt
	// EvictionKindTaskReclaim: task-level reclaim.
	EvictionKindTaskReclaim
)

// EvictionContext describes an eviction to the UnifiedEvictableFn callbacks.
type EvictionContext struct {
	Kind EvictionKind
	// Job is the job the eviction makes room for.
	Job *api.JobInfo
	// Task is the evicting task for the task-level kinds; nil for the gang-aware ones, which
	// evict for the whole job.
	Task *api.TaskInfo
	// HyperNode names the domain whose nodes the candidates run on; "" is the whole cluster.
	HyperNode string
}

// ValidateResult is a job validity verdict with a machine reason and a message.
type ValidateResult struct {
	Pass    bool
	Reason  string
	Message string
}

// Event is passed to event handlers when a task is allocated or deallocated. One event goes to
// every handler of a call: handlers must neither change it nor keep it.
type Event struct {
	Task *api.TaskInfo
}

// EventHandler receives allocate and deallocate events so plugins keep their accounting
// (queue shares, dominant shares) right while statements change the session.
type EventHandler struct {
	AllocateFunc   func(*Event)
	DeallocateFunc func(*Event)
}

// callbacks holds every hook of a session.
type callbacks struct {
	jobOrder          *hook[JobOrderFn]
	queueOrder        *hook[QueueOrderFn]
	victimQueueOrder  *hook[VictimQueueOrderFn]
	taskOrder         *hook[TaskOrderFn]
	predicate         *hook[PredicateFn]
	prePredicate      *hook[PrePredicateFn]
	nodeOrder         *hook[NodeOrderFn]
	batchNodeOrder    *hook[BatchNodeOrderFn]
	bestNode          *hook[BestNodeFn]
	preemptable       *hook[EvictableFn]
	reclaimable       *hook[EvictableFn]
	unifiedEvictable  *hook[UnifiedEvictableFn]
	preemptive        *hook[QueueTaskFn]
	allocatable       *hook[QueueTaskFn]
	overused          *hook[QueueFn]
	jobValid          *hook[JobValidFn]
	jobReady          *hook[JobFn]
	jobPipelined      *hook[JobVoteFn]
	jobStarving       *hook[JobFn]
	jobEnqueueable    *hook[JobVoteFn]
	jobEnqueued       *hook[JobEnqueuedFn]
	victimTasks       *hook[VictimTasksFn]
	targetJob         *hook[TargetJobFn]
	reservedNodes     *hook[ReservedNodesFn]
	simulateAdd       *hook[SimulateTaskFn]
	simulateRemove    *hook[SimulateTaskFn]
	simulatePredicate *hook[PredicateFn]
	simulateAlloc     *hook[QueueTaskFn]
	hyperNodeOrder    *hook[HyperNodeOrderFn]
	wakeUp            *hook[WakeUpFn]
	classKey          map[string]ClassKeyFn
	events            []*EventHandler
	// built is set once build grouped the callbacks by tier.
	built bool
}

func newCallbacks() callbacks {
	return callbacks{
		jobOrder:          newHook[JobOrderFn](conf.FlagJobOrder),
		queueOrder:        newHook[QueueOrderFn](conf.FlagQueueOrder),
		victimQueueOrder:  newUngatedHook[VictimQueueOrderFn](),
		taskOrder:         newHook[TaskOrderFn](conf.FlagTaskOrder),
		predicate:         newHook[PredicateFn](conf.FlagPredicate),
		prePredicate:      newHook[PrePredicateFn](conf.FlagPredicate),
		nodeOrder:         newHook[NodeOrderFn](conf.FlagNodeOrder),
		batchNodeOrder:    newHook[BatchNodeOrderFn](conf.FlagNodeOrder),
		bestNode:          newHook[BestNodeFn](conf.FlagBestNode),
		preemptable:       newHook[EvictableFn](conf.FlagPreemptable),
		reclaimable:       newHook[EvictableFn](conf.FlagReclaimable),
		unifiedEvictable:  newUngatedHook[UnifiedEvictableFn](),
		preemptive:        newHook[QueueTaskFn](conf.FlagPreemptive),
		allocatable:       newHook[QueueTaskFn](conf.FlagAllocatable),
		overused:          newHook[QueueFn](conf.FlagOverused),
		jobValid:          newUngatedHook[JobValidFn](),
		jobReady:          newHook[JobFn](conf.FlagJobReady),
		jobPipelined:      newHook[JobVoteFn](conf.FlagJobPipelined),
		jobStarving:       newHook[JobFn](conf.FlagJobStarving),
		jobEnqueueable:    newHook[JobVoteFn](conf.FlagJobEnqueued),
		jobEnqueued:       newHook[JobEnqueuedFn](conf.FlagJobEnqueued),
		victimTasks:       newHook[VictimTasksFn](conf.FlagVictim),
		targetJob:         newHook[TargetJobFn](conf.FlagTargetJob),
		reservedNodes:     newHook[ReservedNodesFn](conf.FlagReservedNodes),
		simulateAdd:       newHook[SimulateTaskFn](conf.FlagPreemptable),
		simulateRemove:    newHook[SimulateTaskFn](conf.FlagPreemptable),
		simulatePredicate: newHook[PredicateFn](conf.FlagPredicate),
		simulateAlloc:     newHook[QueueTaskFn](conf.FlagAllocatable),
		hyperNodeOrder:    newHook[HyperNodeOrderFn](conf.FlagHyperNodeOrder),
		wakeUp:            newUngatedHook[WakeUpFn](),
		classKey:          map[string]ClassKeyFn{},
	}
}

func (c *callbacks) build(tiers []conf.Tier) {
	c.jobOrder.build(tiers)
	c.queueOrder.build(tiers)
	c.victimQueueOrder.build(tiers)
	c.taskOrder.build(tiers)
	c.predicate.build(tiers)
	c.prePredicate.build(tiers)
	c.nodeOrder.build(tiers)
	c.batchNodeOrder.build(tiers)
	c.bestNode.build(tiers)
	c.preemptable.build(tiers)
	c.reclaimable.build(tiers)
	c.unifiedEvictable.build(tiers)
	c.preemptive.build(tiers)
	c.allocatable.build(tiers)
	c.overused.build(tiers)
	c.jobValid.build(tiers)
	c.jobReady.build(tiers)
	c.jobPipelined.build(tiers)
	c.jobStarving.build(tiers)
	c.jobEnqueueable.build(tiers)
	c.jobEnqueued.build(tiers)
	c.victimTasks.build(tiers)
	c.targetJob.build(tiers)
	c.reservedNodes.build(tiers)
	c.simulateAdd.build(tiers)
	c.simulateRemove.build(tiers)
	c.simulatePredicate.build(tiers)
	c.simulateAlloc.build(tiers)
	c.hyperNodeOrder.build(tiers)
	c.wakeUp.build(tiers)
	c.built = true
}

// Registration, called by plugins in OnSessionOpen. name is the plugin's name; a callback is
// used only if that plugin appears in the configuration with the matching flag enabled.

// AddJobOrderFn registers a job comparison.
func (s *Session) AddJobOrderFn(name string, fn JobOrderFn) { s.cb.jobOrder.add(name, fn) }

// AddQueueOrderFn registers a queue comparison.
func (s *Session) AddQueueOrderFn(name string, fn QueueOrderFn) { s.cb.queueOrder.add(name, fn) }

// AddVictimQueueOrderFn registers a comparison of victim queues.
func (s *Session) AddVictimQueueOrderFn(name string, fn VictimQueueOrderFn) {
	s.cb.victimQueueOrder.add(name, fn)
}

// AddTaskOrderFn registers a task comparison.
func (s *Session) AddTaskOrderFn(name string, fn TaskOrderFn) { s.cb.taskOrder.add(name, fn) }

// AddPredicateFn registers a node filter.
func (s *Session) AddPredicateFn(name string, fn PredicateFn) { s.cb.predicate.add(name, fn) }

// AddPrePredicateFn registers a task filter run before nodes are tried.
func (s *Session) AddPrePredicateFn(name string, fn PrePredicateFn) {
	s.cb.prePredicate.add(name, fn)
}

// AddNodeOrderFn registers a node score.
func (s *Session) AddNodeOrderFn(name string, fn NodeOrderFn) { s.cb.nodeOrder.add(name, fn) }

// AddBatchNodeOrderFn registers a score computed over all candidate nodes at once.
func (s *Session) AddBatchNodeOrderFn(name string, fn BatchNodeOrderFn) {
	s.cb.batchNodeOrder.add(name, fn)
}

// AddBestNodeFn registers a best-node chooser.
func (s *Session) AddBestNodeFn(name string, fn BestNodeFn) { s.cb.bestNode.add(name, fn) }

// AddPreemptableFn registers a victim chooser for preemption.
func (s *Session) AddPreemptableFn(name string, fn EvictableFn) { s.cb.preemptable.add(name, fn) }

// AddReclaimableFn registers a victim chooser for reclaim.
func (s *Session) AddReclaimableFn(name string, fn EvictableFn) { s.cb.reclaimable.add(name, fn) }

// AddUnifiedEvictableFn registers a victim chooser for gang-aware eviction. It has no enable
// flag: like Volcano's, it is asked whenever its plugin is in the configuration.
func (s *Session) AddUnifiedEvictableFn(name string, fn UnifiedEvictableFn) {
	s.cb.unifiedEvictable.add(name, fn)
}

// AddPreemptiveFn registers a check that a queue may reclaim for a task.
func (s *Session) AddPreemptiveFn(name string, fn QueueTaskFn) { s.cb.preemptive.add(name, fn) }

// AddAllocatableFn registers a check that a queue may take a task's resources.
func (s *Session) AddAllocatableFn(name string, fn QueueTaskFn) { s.cb.allocatable.add(name, fn) }

// AddOverusedFn registers an overuse check.
func (s *Session) AddOverusedFn(name string, fn QueueFn) { s.cb.overused.add(name, fn) }

// AddJobValidFn registers a job validity check. It must only read the job: ValidIdleJob asks
// it of idle jobs that the walks leave out, and writes nothing on them.
func (s *Session) AddJobValidFn(name string, fn JobValidFn) { s.cb.jobValid.add(name, fn) }

// AddJobReadyFn registers a readiness check.
func (s *Session) AddJobReadyFn(name string, fn JobFn) { s.cb.jobReady.add(name, fn) }

// AddJobPipelinedFn registers a pipelined vote.
func (s *Session) AddJobPipelinedFn(name string, fn JobVoteFn) { s.cb.jobPipelined.add(name, fn) }

// AddJobStarvingFn registers a starving check.
func (s *Session) AddJobStarvingFn(name string, fn JobFn) { s.cb.jobStarving.add(name, fn) }

// AddJobEnqueueableFn registers an enqueue vote.
func (s *Session) AddJobEnqueueableFn(name string, fn JobVoteFn) {
	s.cb.jobEnqueueable.add(name, fn)
}

// AddJobEnqueuedFn registers a hook told about enqueued jobs.
func (s *Session) AddJobEnqueuedFn(name string, fn JobEnqueuedFn) {
	s.cb.jobEnqueued.add(name, fn)
}

// AddVictimTasksFn registers a victim chooser for shuffle.
func (s *Session) AddVictimTasksFn(name string, fn VictimTasksFn) { s.cb.victimTasks.add(name, fn) }

// AddTargetJobFn registers a target-job chooser.
func (s *Session) AddTargetJobFn(name string, fn TargetJobFn) { s.cb.targetJob.add(name, fn) }

// AddReservedNodesFn registers a node reservation hook.
func (s *Session) AddReservedNodesFn(name string, fn ReservedNodesFn) {
	s.cb.reservedNodes.add(name, fn)
}

// AddSimulateAddTaskFn registers a simulated task addition.
func (s *Session) AddSimulateAddTaskFn(name string, fn SimulateTaskFn) {
	s.cb.simulateAdd.add(name, fn)
}

// AddSimulateRemoveTaskFn registers a simulated task removal.
func (s *Session) AddSimulateRemoveTaskFn(name string, fn SimulateTaskFn) {
	s.cb.simulateRemove.add(name, fn)
}

// AddSimulatePredicateFn registers a predicate evaluated on simulated state.
func (s *Session) AddSimulatePredicateFn(name string, fn PredicateFn) {
	s.cb.simulatePredicate.add(name, fn)
}

// AddSimulateAllocatableFn registers an allocatable check on simulated state.
func (s *Session) AddSimulateAllocatableFn(name string, fn QueueTaskFn) {
	s.cb.simulateAlloc.add(name, fn)
}

// AddHyperNodeOrderFn registers a hypernode score.
func (s *Session) AddHyperNodeOrderFn(name string, fn HyperNodeOrderFn) {
	s.cb.hyperNodeOrder.add(name, fn)
}

// AddWakeUpFn registers a time-based plugin's wake-up time (see WakeUpFn). It has no enable
// flag: it is asked whenever its plugin is in the configuration.
func (s *Session) AddWakeUpFn(name string, fn WakeUpFn) { s.cb.wakeUp.add(name, fn) }

// AddClassKeyFn declares what the plugin's predicates and node scores depend on, so that
// actions may reuse them across equivalent tasks (see ClassKeyFn). A plugin with predicates
// or node scores that declares nothing turns that reuse off.
func (s *Session) AddClassKeyFn(name string, fn ClassKeyFn) { s.cb.classKey[name] = fn }

// TaskClass returns the task's equivalence class for placement: tasks of one class get the
// same predicate and node-score answers on a node in the same state. ok is false when some
// enabled predicate, pre-predicate or node-order plugin has not declared a class for the task,
// or a best-node chooser is enabled. The key is the task's requests (exact, in binary) and each
// such plugin's class key, length-prefixed; keys are interned, so that a task of a class seen
// before costs no allocation. TaskClass is not safe for concurrent use.
func (s *Session) TaskClass(t *api.TaskInfo) (string, bool) {
	cp := &s.class
	if !cp.ready {
		s.prepareClasses()
	}
	if !cp.ok {
		return "", false
	}
	b := appendResourceKey(cp.buf[:0], t.Resreq)
	b = appendResourceKey(b, t.InitResreq)
	for _, fn := range cp.fns {
		k, ok := fn(t)
		if !ok {
			cp.buf = b
			return "", false
		}
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	cp.buf = b
	if k, ok := cp.interned[string(b)]; ok {
		return k, true
	}
	k := string(b)
	cp.interned[k] = k
	return k, true
}

// classPlan is what TaskClass needs of the session's callbacks, worked out once they are
// built: whether classes are possible at all, and the class key functions of the distinct
// enabled predicate, pre-predicate and node-order plugins, in order.
type classPlan struct {
	ready, ok bool
	fns       []ClassKeyFn
	buf       []byte
	interned  map[string]string
}

// prepareClasses fills the session's class plan. Before the callbacks are built (while plugins
// open) no task has a class.
func (s *Session) prepareClasses() {
	if !s.cb.built {
		s.class = classPlan{}
		return
	}
	cp := classPlan{ready: true, interned: map[string]string{}}
	defer func() { s.class = cp }()
	if !s.cb.bestNode.empty() {
		return
	}
	seen := map[string]bool{}
	for _, names := range s.placementPlugins() {
		for _, n := range names {
			if seen[n] {
				continue
			}
			seen[n] = true
			fn, ok := s.cb.classKey[n]
			if !ok {
				return
			}
			cp.fns = append(cp.fns, fn)
		}
	}
	cp.ok = true
}

// placementPlugins names the enabled predicate, pre-predicate, node-order and batch
// node-order plugins, by callback.
func (s *Session) placementPlugins() [][]string {
	return [][]string{s.cb.predicate.enabled, s.cb.prePredicate.enabled, s.cb.nodeOrder.enabled, s.cb.batchNodeOrder.enabled}
}

// KeptPlacements is implemented by a plugin whose predicate, pre-predicate and node-order
// answers for a task with a class (Session.TaskClass) depend only on the class key, the
// plugin's arguments and the node's view: not on the time, nor on other nodes, jobs or
// queues. Actions may then keep those answers between cycles for the nodes whose views did
// not change (KeptActionState), under the same configuration.
type KeptPlacements interface {
	// KeptPlacements marks the plugin; it is never called.
	KeptPlacements()
}

// KeepsPlacements reports whether actions may keep task classes' placement answers between
// cycles: the session is on kept views and every enabled predicate, pre-predicate and
// node-order plugin is KeptPlacements. It is false while plugins open.
func (s *Session) KeepsPlacements() bool {
	if s.views == nil || !s.cb.built {
		return false
	}
	byName := make(map[string]Plugin, len(s.plugins))
	for _, p := range s.plugins {
		byName[p.Name()] = p
	}
	for _, names := range s.placementPlugins() {
		for _, n := range names {
			if _, ok := byName[n].(KeptPlacements); !ok {
				return false
			}
		}
	}
	return true
}

// appendResourceKey appends an exact binary description of r: cpu, memory and pod count, then
// its scalars by name (each name length-prefixed), then a terminator.
func appendResourceKey(b []byte, r *api.Resource) []byte {
	if r == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.MilliCPU))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.Memory))
	b = binary.AppendVarint(b, int64(r.MaxTaskNum))
	b = binary.AppendUvarint(b, uint64(len(r.Scalars)))
	switch len(r.Scalars) {
	case 0:
	case 1:
		for name, v := range r.Scalars {
			b = appendScalarKey(b, name, v)
		}
	default:
		for _, name := range r.ScalarNames() {
			b = appendScalarKey(b, name, r.Scalars[name])
		}
	}
	return b
}

func appendScalarKey(b []byte, name string, v float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(name)))
	b = append(b, name...)
	return binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
}

// AddEventHandler registers allocate/deallocate event handlers.
func (s *Session) AddEventHandler(h *EventHandler) { s.cb.events = append(s.cb.events, h) }

// Dispatch, called by actions.

// JobOrderFn reports whether l goes before r; ties fall back to creation time, then name.
func (s *Session) JobOrderFn(l, r *api.JobInfo) bool {
	if c := firstNonZero(s.cb.jobOrder, func(f JobOrderFn) int { return f(l, r) }); c != 0 {
		return c < 0
	}
	if !l.CreationTimestamp.Equal(r.CreationTimestamp) {
		return l.CreationTimestamp.Before(r.CreationTimestamp)
	}
	return l.UID < r.UID
}

// QueueOrderFn reports whether l goes before r; ties fall back to name.
func (s *Session) QueueOrderFn(l, r *api.QueueInfo) bool {
	if c := firstNonZero(s.cb.queueOrder, func(f QueueOrderFn) int { return f(l, r) }); c != 0 {
		return c < 0
	}
	return l.UID < r.UID
}

// VictimQueueOrderFn reports whether queue l should give up victims before r for preemptor;
// without an opinion, the queue that goes last in queue order gives first (Volcano's rule).
func (s *Session) VictimQueueOrderFn(l, r, preemptor *api.QueueInfo) bool {
	if c := firstNonZero(s.cb.victimQueueOrder, func(f VictimQueueOrderFn) int { return f(l, r, preemptor) }); c != 0 {
		return c < 0
	}
	return !s.QueueOrderFn(l, r)
}

// TaskCompare compares tasks with the plugins only (0: no opinion).
func (s *Session) TaskCompare(l, r *api.TaskInfo) int {
	return firstNonZero(s.cb.taskOrder, func(f TaskOrderFn) int { return f(l, r) })
}

// TaskOrderFn reports whether l goes before r; ties fall back to name.
func (s *Session) TaskOrderFn(l, r *api.TaskInfo) bool {
	if c := s.TaskCompare(l, r); c != 0 {
		return c < 0
	}
	return l.UID < r.UID
}

// PrePredicateFn runs the pre-predicates; the first error wins.
func (s *Session) PrePredicateFn(t *api.TaskInfo) error {
	return firstError(s.cb.prePredicate, func(f PrePredicateFn) error { return f(t) })
}

// PredicateFn runs the predicates; the first error wins.
func (s *Session) PredicateFn(t *api.TaskInfo, n *api.NodeInfo) error {
	if s.interrupted.Load() {
		return api.NewFitError(n.Name, api.UnschedulableAndUnresolvable, "scheduling cycle interrupted")
	}
	return firstError(s.cb.predicate, func(f PredicateFn) error { return f(t, n) })
}

// HasPredicates reports whether any predicate is enabled.
func (s *Session) HasPredicates() bool { return !s.cb.predicate.empty() }

// NodeOrderFn sums the node scores.
func (s *Session) NodeOrderFn(t *api.TaskInfo, n *api.NodeInfo) (float64, error) {
	return sumScores(s.cb.nodeOrder, func(f NodeOrderFn) (float64, error) { return f(t, n) })
}

// HasNodeOrder reports whether any per-node or batch score is enabled.
func (s *Session) HasNodeOrder() bool {
	return !s.cb.nodeOrder.empty() || !s.cb.batchNodeOrder.empty()
}

// BatchNodeOrderFn sums the batch scores per node name.
func (s *Session) BatchNodeOrderFn(t *api.TaskInfo, nodes []*api.NodeInfo) (map[string]float64, error) {
	out := map[string]float64{}
	var err error
	each(s.cb.batchNodeOrder, func(f BatchNodeOrderFn) {
		if err != nil {
			return
		}
		var scores map[string]float64
		scores, err = f(t, nodes)
		for _, n := range nodes {
			out[n.Name] += scores[n.Name]
		}
	})
	return out, err
}

// HasBestNode reports whether any best-node chooser is enabled.
func (s *Session) HasBestNode() bool { return !s.cb.bestNode.empty() }

// BestNodeFn asks the best-node choosers; nil means none had an opinion.
func (s *Session) BestNodeFn(t *api.TaskInfo, scores map[float64][]*api.NodeInfo) *api.NodeInfo {
	return firstNonNil(s.cb.bestNode, func(f BestNodeFn) *api.NodeInfo { return f(t, scores) })
}

// Preemptable returns the victims the preemptor may evict among candidates.
func (s *Session) Preemptable(preemptor *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	return victimsIntersect(s.cb.preemptable, func(f EvictableFn) ([]*api.TaskInfo, Vote) { return f(preemptor, candidates) })
}

// Reclaimable returns the victims the reclaimer may evict among candidates.
func (s *Session) Reclaimable(reclaimer *api.TaskInfo, candidates []*api.TaskInfo) []*api.TaskInfo {
	return victimsIntersect(s.cb.reclaimable, func(f EvictableFn) ([]*api.TaskInfo, Vote) { return f(reclaimer, candidates) })
}

// UnifiedEvictable returns the victims the eviction ctx describes may evict among candidates,
// combined across tiers as Preemptable and Reclaimable combine theirs; nil when no plugin
// decides.
func (s *Session) UnifiedEvictable(ctx *EvictionContext, candidates []*api.TaskInfo) []*api.TaskInfo {
	return victimsIntersect(s.cb.unifiedEvictable, func(f UnifiedEvictableFn) ([]*api.TaskInfo, Vote) { return f(ctx, candidates) })
}

// Preemptive reports whether the queue may reclaim for the task.
func (s *Session) Preemptive(q *api.QueueInfo, t *api.TaskInfo) bool {
	return allTrue(s.cb.preemptive, func(f QueueTaskFn) bool { return f(q, t) })
}

// Allocatable reports whether the queue may take the task's resources.
func (s *Session) Allocatable(q *api.QueueInfo, t *api.TaskInfo) bool {
	return allTrue(s.cb.allocatable, func(f QueueTaskFn) bool { return f(q, t) })
}

// Overused reports whether any plugin finds the queue overused.
func (s *Session) Overused(q *api.QueueInfo) bool {
	return anyTrue(s.cb.overused, func(f QueueFn) bool { return f(q) })
}

// JobValid returns the first failing validity verdict, or nil.
func (s *Session) JobValid(j *api.JobInfo) *ValidateResult {
	return firstNonNil(s.cb.jobValid, func(f JobValidFn) *ValidateResult {
		if r := f(j); r != nil && !r.Pass {
			return r
		}
		return nil
	})
}

// JobReady reports whether every plugin finds the job ready.
func (s *Session) JobReady(j *api.JobInfo) bool {
	return allTrue(s.cb.jobReady, func(f JobFn) bool { return f(j) })
}

// JobPipelined combines the pipelined votes.
func (s *Session) JobPipelined(j *api.JobInfo) bool {
	return vote(s.cb.jobPipelined, func(f JobVoteFn) Vote { return f(j) })
}

// JobStarving lets the first tier with a starving check decide; false without any.
func (s *Session) JobStarving(j *api.JobInfo) bool {
	return firstTierDecides(s.cb.jobStarving, false, func(f JobFn) bool { return f(j) })
}

// JobEnqueueable combines the enqueue votes.
func (s *Session) JobEnqueueable(j *api.JobInfo) bool {
	return vote(s.cb.jobEnqueueable, func(f JobVoteFn) Vote { return f(j) })
}

// JobEnqueued tells the plugins that a job was enqueued.
func (s *Session) JobEnqueued(j *api.JobInfo) {
	each(s.cb.jobEnqueued, func(f JobEnqueuedFn) { f(j) })
}

// VictimTasks returns the tasks the victim choosers pick among tasks: the union of the
// choices of a tier's plugins, from the first tier where any plugin picks something (Volcano's
// rule), in the order the plugins chose them.
func (s *Session) VictimTasks(tasks []*api.TaskInfo) []*api.TaskInfo {
	for _, t := range s.cb.victimTasks.tiers {
		seen := map[string]bool{}
		var out []*api.TaskInfo
		for _, fn := range t {
			for _, v := range fn(tasks) {
				if !seen[v.UID] {
					seen[v.UID] = true
					out = append(out, v)
				}
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// TargetJob returns the job a plugin wants served first, or nil.
func (s *Session) TargetJob(jobs []*api.JobInfo) *api.JobInfo {
	return firstNonNil(s.cb.targetJob, func(f TargetJobFn) *api.JobInfo { return f(jobs) })
}

// ReservedNodes runs the reservation hooks.
func (s *Session) ReservedNodes() { each(s.cb.reservedNodes, func(f ReservedNodesFn) { f() }) }

// SimulateAddTask tells plugins that a task is added to a node in a simulation.
func (s *Session) SimulateAddTask(preemptor, t *api.TaskInfo, n *api.NodeInfo) error {
	return firstError(s.cb.simulateAdd, func(f SimulateTaskFn) error { return f(preemptor, t, n) })
}

// SimulateRemoveTask tells plugins that a task is removed from a node in a simulation.
func (s *Session) SimulateRemoveTask(preemptor, t *api.TaskInfo, n *api.NodeInfo) error {
	return firstError(s.cb.simulateRemove, func(f SimulateTaskFn) error { return f(preemptor, t, n) })
}

// SimulatePredicate runs the simulated predicates.
func (s *Session) SimulatePredicate(t *api.TaskInfo, n *api.NodeInfo) error {
	return firstError(s.cb.simulatePredicate, func(f PredicateFn) error { return f(t, n) })
}

// SimulateAllocatable runs the simulated allocatable checks.
func (s *Session) SimulateAllocatable(q *api.QueueInfo, t *api.TaskInfo) bool {
	return allTrue(s.cb.simulateAlloc, func(f QueueTaskFn) bool { return f(q, t) })
}

// WakeUp returns the earliest wake-up time the plugins name (see WakeUpFn) that is after the
// session's clock; ok is false when none names one.
func (s *Session) WakeUp() (time.Time, bool) {
	var at time.Time
	found := false
	each(s.cb.wakeUp, func(f WakeUpFn) {
		t, ok := f()
		if !ok || !t.After(s.Now) {
			return
		}
		if !found || t.Before(at) {
			at, found = t, true
		}
	})
	return at, found
}

// HyperNodeOrderFn sums hypernode scores.
func (s *Session) HyperNodeOrderFn(j *api.JobInfo, hns map[string][]*api.NodeInfo) (map[string]float64, error) {
	out := map[string]float64{}
	var err error
	each(s.cb.hyperNodeOrder, func(f HyperNodeOrderFn) {
		if err != nil {
			return
		}
		var sc map[string]float64
		sc, err = f(j, hns)
		names := make([]string, 0, len(sc))
		for k := range sc {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			out[k] += sc[k]
		}
	})
	return out, err
}

func (s *Session) fireAllocate(t *api.TaskInfo) {
	// The session's one event for every handler (they read it and keep nothing), put back
	// as it was afterwards should a handler's work fire again.
	ev := &s.event
	saved := *ev
	ev.Task = t
	for _, h := range s.cb.events {
		if h.AllocateFunc != nil {
			h.AllocateFunc(ev)
		}
	}
	*ev = saved
}

func (s *Session) fireDeallocate(t *api.TaskInfo) {
	// The session's one event for every handler (they read it and keep nothing), put back
	// as it was afterwards should a handler's work fire again.
	ev := &s.event
	saved := *ev
	ev.Task = t
	for _, h := range s.cb.events {
		if h.DeallocateFunc != nil {
			h.DeallocateFunc(ev)
		}
	}
	*ev = saved
}

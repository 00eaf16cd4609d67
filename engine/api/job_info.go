package api

import (
	"slices"
	"sort"
	"time"
)

// JobInfo is a session's mutable view of one job and its tasks.
type JobInfo struct {
	// UID is the job's namespace/name.
	UID       string
	Name      string
	Namespace string
	Queue     string
	Priority  int32
	// MinAvailable is the gang size.
	MinAvailable int32
	// TaskMinAvailable is the per-role minimum; TaskMinAvailableTotal their sum.
	TaskMinAvailable      map[string]int32
	TaskMinAvailableTotal int32
	Phase                 JobPhase
	CreationTimestamp     time.Time
	Preemptable           bool

	Tasks           map[string]*TaskInfo
	TaskStatusIndex map[TaskStatus]map[string]*TaskInfo
	// Allocated sums the requests of tasks in an allocated status.
	Allocated *Resource
	// TotalRequest sums the requests of every task.
	TotalRequest *Resource
	MinResources *Resource

	// NodesFitErrors records, per task, why no node fit in this cycle.
	NodesFitErrors map[string]*FitErrors
	// JobFitErrors is a job-level reason (gang, queue, enqueue).
	JobFitErrors string
	// AllocatedHyperNode is the lowest hypernode holding every placed task of the job, for
	// network-topology-aware scheduling ("" when none is placed).
	AllocatedHyperNode string
	// WaitingTime is the SLA waiting time, if the job sets one.
	WaitingTime *time.Duration

	// Spec is the immutable job as streamed in.
	Spec *Job

	// pendingBestEffort counts pending tasks that request nothing; roles counts each role's
	// tasks by status. AddTaskInfo and DeleteTaskInfo keep both, so that readiness and role
	// checks cost the number of roles, not of tasks.
	pendingBestEffort int32
	roles             map[string]*roleTally
	// byStatus counts the job's tasks by status (slot 0: statuses out of range), so that
	// readiness and validity checks read counts instead of the status index's maps.
	byStatus [statusSlots]int32
	// order lists the tasks by UID while they were added in that order and none left (the
	// session adds them so), so that SortedTasks need not sort; nil otherwise.
	order    []*TaskInfo
	disorder bool
	// version counts changes to the job's tasks (added, deleted, status moved): see Version.
	version uint64
	// expected is the task count ExpectTasks was given, until that many tasks are in (0:
	// none), so that a job built to its size equals one grown task by task.
	expected int
}

// Version changes whenever a task is added to or deleted from the job or changes status
// through its methods, so that a keeper of the view can tell whether a cycle changed it.
func (ji *JobInfo) Version() uint64 { return ji.version }

// roleTally counts one role's tasks by status, and its pending best-effort tasks.
type roleTally struct {
	byStatus          [statusSlots]int32
	pendingBestEffort int32
}

// statusSlots bounds the TaskStatus values a roleTally counts by; others count in slot 0.
const statusSlots = int(Unknown) + 1

func statusSlot(s TaskStatus) int {
	if s < 0 || int(s) >= statusSlots {
		return 0
	}
	return int(s)
}

// tally adjusts the incremental counts for a task joining (d = 1) or leaving (d = -1) the
// job in its current status.
func (ji *JobInfo) tally(t *TaskInfo, d int32) {
	if ji.roles == nil {
		ji.roles = map[string]*roleTally{}
	}
	rt := ji.roles[t.Role]
	if rt == nil {
		rt = &roleTally{}
		ji.roles[t.Role] = rt
	}
	rt.byStatus[statusSlot(t.Status)] += d
	ji.byStatus[statusSlot(t.Status)] += d
	if t.Status == Pending && t.BestEffort {
		rt.pendingBestEffort += d
		ji.pendingBestEffort += d
	}
}

// NewJobInfo builds an empty session view of a job; add tasks with AddTaskInfo.
func NewJobInfo(j *Job, priority int32) *JobInfo {
	ji := &JobInfo{
		UID:               j.Key(),
		Name:              j.Name,
		Namespace:         j.Namespace,
		Queue:             j.Queue,
		Priority:          priority,
		MinAvailable:      j.MinAvailable,
		TaskMinAvailable:  map[string]int32{},
		Phase:             j.Phase,
		CreationTimestamp: j.CreatedAt,
		Preemptable:       true,
		Tasks:             map[string]*TaskInfo{},
		TaskStatusIndex:   map[TaskStatus]map[string]*TaskInfo{},
		Allocated:         EmptyResource(),
		TotalRequest:      EmptyResource(),
		MinResources:      j.MinResources.Clone(),
		NodesFitErrors:    map[string]*FitErrors{},
		Spec:              j,
	}
	for role, n := range j.MinAvailableByRole {
		ji.TaskMinAvailable[role] = n
		ji.TaskMinAvailableTotal += n
	}
	return ji
}

// ExpectTasks sizes the job's task map and order for the n tasks about to be added; it does
// nothing once the job has tasks.
func (ji *JobInfo) ExpectTasks(n int) {
	if len(ji.Tasks) > 0 || n <= 0 {
		return
	}
	ji.Tasks = make(map[string]*TaskInfo, n)
	ji.order = make([]*TaskInfo, 0, n)
	ji.expected = n
}

// AddTaskInfo adds a task to the job and its indexes.
func (ji *JobInfo) AddTaskInfo(t *TaskInfo) {
	if _, dup := ji.Tasks[t.UID]; dup || ji.disorder || (len(ji.order) > 0 && ji.order[len(ji.order)-1].UID >= t.UID) {
		ji.order, ji.disorder = nil, true
	} else {
		ji.order = append(ji.order, t)
	}
	ji.Tasks[t.UID] = t
	ji.version++
	ji.index(t, nil)
	if len(ji.Tasks) >= ji.expected {
		ji.expected = 0
	}
	ji.TotalRequest.Add(t.Resreq)
	if AllocatedStatus(t.Status) {
		ji.Allocated.Add(t.Resreq)
	}
}

// maxIndexHint bounds the size a new status index is made for.
const maxIndexHint = 64

// IndexPool keeps the status index maps that jobs emptied, for the new indexes of other jobs:
// a session moving gang after gang from Pending to Allocated then reuses the emptied Pending
// maps instead of making one per job. A map is in the pool only while no job holds it (the
// index maps are read where they are found, never kept). The zero value is ready; not safe
// for concurrent use.
type IndexPool struct{ free []map[string]*TaskInfo }

// maxPooledIndexes bounds how many emptied maps a pool keeps.
const maxPooledIndexes = 64

// put keeps an emptied map (a nil pool drops it).
func (p *IndexPool) put(m map[string]*TaskInfo) {
	if p != nil && len(p.free) < maxPooledIndexes {
		p.free = append(p.free, m)
	}
}

// take returns an empty map from the pool, nil when it has none.
func (p *IndexPool) take() map[string]*TaskInfo {
	if p == nil || len(p.free) == 0 {
		return nil
	}
	last := len(p.free) - 1
	m := p.free[last]
	p.free[last] = nil
	p.free = p.free[:last]
	return m
}

// index files the task under its status and counts it, a new index taken from pool (which
// may be nil) when it has one.
func (ji *JobInfo) index(t *TaskInfo, pool *IndexPool) {
	idx := ji.TaskStatusIndex[t.Status]
	if idx == nil {
		if idx = pool.take(); idx == nil {
			// Sized for the job's tasks (up to a bound; those expected, while they are being
			// added): when a gang moves from Pending to Allocated, or its tasks are added, its
			// new index would otherwise grow step by step, per job and cycle.
			idx = make(map[string]*TaskInfo, min(max(len(ji.Tasks), ji.expected), maxIndexHint))
		}
		ji.TaskStatusIndex[t.Status] = idx
	}
	idx[t.UID] = t
	ji.tally(t, 1)
}

// unindex undoes index, an emptied index going to pool (which may be nil).
func (ji *JobInfo) unindex(t *TaskInfo, pool *IndexPool) {
	ji.tally(t, -1)
	if idx := ji.TaskStatusIndex[t.Status]; idx != nil {
		delete(idx, t.UID)
		if len(idx) == 0 {
			delete(ji.TaskStatusIndex, t.Status)
			pool.put(idx)
		}
	}
}

// DeleteTaskInfo removes a task from the job and its indexes.
func (ji *JobInfo) DeleteTaskInfo(t *TaskInfo) {
	cur, ok := ji.Tasks[t.UID]
	if !ok {
		return
	}
	ji.TotalRequest.Sub(cur.Resreq)
	if AllocatedStatus(cur.Status) {
		ji.Allocated.Sub(cur.Resreq)
	}
	delete(ji.Tasks, cur.UID)
	ji.version++
	ji.order, ji.disorder = nil, true
	ji.unindex(cur, nil)
}

// UpdateTaskStatus moves a task to a new status, keeping indexes and sums right: the sums
// change exactly as DeleteTaskInfo and AddTaskInfo would change them, but the task stays in
// the job's order.
func (ji *JobInfo) UpdateTaskStatus(t *TaskInfo, status TaskStatus) {
	ji.UpdateTaskStatusIn(t, status, nil)
}

// UpdateTaskStatusIn is UpdateTaskStatus with the status index maps it empties kept in pool,
// and those it needs taken from there first.
func (ji *JobInfo) UpdateTaskStatusIn(t *TaskInfo, status TaskStatus, pool *IndexPool) {
	if cur, ok := ji.Tasks[t.UID]; !ok || cur != t {
		ji.DeleteTaskInfo(t)
		t.Status = status
		ji.AddTaskInfo(t)
		return
	}
	ji.TotalRequest.Sub(t.Resreq)
	if AllocatedStatus(t.Status) {
		ji.Allocated.Sub(t.Resreq)
	}
	ji.unindex(t, pool)
	t.Status = status
	ji.version++
	ji.index(t, pool)
	ji.TotalRequest.Add(t.Resreq)
	if AllocatedStatus(status) {
		ji.Allocated.Add(t.Resreq)
	}
}

// RestatusAll moves the n tasks task(0) ... task(n-1), which must be distinct, from status
// from to status to, with the sums, counts and version changing as UpdateTaskStatus would
// change them task by task in that order. When they are every task of the job in from, and
// none is in to, from's index becomes to's instead of being emptied into a new one task by
// task (a gang's Allocated tasks all becoming Binding at commit, say). It returns false,
// changing nothing, otherwise.
func (ji *JobInfo) RestatusAll(from, to TaskStatus, n int, task func(i int) *TaskInfo) bool {
	idx := ji.TaskStatusIndex[from]
	if n == 0 || from == to || len(idx) != n || len(ji.TaskStatusIndex[to]) > 0 {
		return false
	}
	for i := 0; i < n; i++ {
		t := task(i)
		if t.Status != from || idx[t.UID] != t || ji.Tasks[t.UID] != t {
			return false
		}
	}
	for i := 0; i < n; i++ {
		t := task(i)
		ji.TotalRequest.Sub(t.Resreq)
		if AllocatedStatus(from) {
			ji.Allocated.Sub(t.Resreq)
		}
		ji.tally(t, -1)
		t.Status = to
		ji.version++
		ji.tally(t, 1)
		ji.TotalRequest.Add(t.Resreq)
		if AllocatedStatus(to) {
			ji.Allocated.Add(t.Resreq)
		}
	}
	delete(ji.TaskStatusIndex, from)
	ji.TaskStatusIndex[to] = idx
	return true
}

// TasksIn returns the job's tasks in the given status, sorted by UID.
func (ji *JobInfo) TasksIn(status TaskStatus) []*TaskInfo {
	idx := ji.TaskStatusIndex[status]
	out := make([]*TaskInfo, 0, len(idx))
	if ji.inOrder() && len(idx) >= len(ji.order)/8 {
		// The tasks are listed in UID order: picking the status's tasks from the list costs
		// less than sorting them, unless they are few of many.
		for _, t := range ji.order {
			if t.Status == status {
				out = append(out, t)
			}
		}
		if len(out) == len(idx) {
			return out
		}
		out = out[:0]
	}
	for _, t := range idx {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

// inOrder reports whether order lists every task of the job (by UID).
func (ji *JobInfo) inOrder() bool {
	return !ji.disorder && len(ji.order) > 0 && len(ji.order) == len(ji.Tasks)
}

// SortedTasks returns every task of the job sorted by UID.
func (ji *JobInfo) SortedTasks() []*TaskInfo {
	if ji.inOrder() {
		return slices.Clone(ji.order)
	}
	out := make([]*TaskInfo, 0, len(ji.Tasks))
	for _, t := range ji.Tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UID < out[j].UID })
	return out
}

func (ji *JobInfo) count(s TaskStatus) int32 {
	if s < 1 || int(s) >= statusSlots {
		return int32(len(ji.TaskStatusIndex[s]))
	}
	return ji.byStatus[s]
}

// ReadyTaskNum counts tasks that hold or held a place: Bound, Binding, Running, Allocated,
// Succeeded.
func (ji *JobInfo) ReadyTaskNum() int32 {
	return ji.count(Bound) + ji.count(Binding) + ji.count(Running) + ji.count(Allocated) + ji.count(Succeeded)
}

// WaitingTaskNum counts pipelined tasks.
func (ji *JobInfo) WaitingTaskNum() int32 { return ji.count(Pipelined) }

// PendingBestEffortTaskNum counts pending tasks that request nothing.
func (ji *JobInfo) PendingBestEffortTaskNum() int32 { return ji.pendingBestEffort }

// ValidTaskNum counts tasks that are pending, pipelined, allocated or succeeded.
func (ji *JobInfo) ValidTaskNum() int32 {
	n := int32(0)
	for s := 1; s < statusSlots; s++ {
		if st := TaskStatus(s); AllocatedStatus(st) || st == Succeeded || st == Pipelined || st == Pending {
			n += ji.byStatus[s]
		}
	}
	return n
}

// IsReady reports whether the gang is satisfied by placed tasks.
func (ji *JobInfo) IsReady() bool {
	return ji.ReadyTaskNum()+ji.PendingBestEffortTaskNum() >= ji.MinAvailable
}

// IsPipelined reports whether the gang is satisfied counting pipelined tasks.
func (ji *JobInfo) IsPipelined() bool {
	return ji.WaitingTaskNum()+ji.ReadyTaskNum()+ji.PendingBestEffortTaskNum() >= ji.MinAvailable
}

// IsStarving reports whether the job has fewer placed or pipelined tasks than its gang.
func (ji *JobInfo) IsStarving() bool {
	return ji.WaitingTaskNum()+ji.ReadyTaskNum() < ji.MinAvailable
}

// IsPending reports whether the job's phase is Pending.
func (ji *JobInfo) IsPending() bool { return ji.Phase == JobPending || ji.Phase == "" }

// HasPendingTasks reports whether any task is pending.
func (ji *JobInfo) HasPendingTasks() bool { return ji.byStatus[Pending] > 0 }

// PendingTaskNum counts pending tasks, best-effort ones included.
func (ji *JobInfo) PendingTaskNum() int32 { return ji.byStatus[Pending] }

// roleCount counts the role's tasks in the statuses accepted by keep; best-effort pending
// tasks count when countBestEffort.
func (ji *JobInfo) roleCount(role string, keep func(TaskStatus) bool, countBestEffort bool) int32 {
	rt := ji.roles[role]
	if rt == nil {
		return 0
	}
	n := int32(0)
	for s := 1; s < statusSlots; s++ {
		if keep(TaskStatus(s)) {
			n += rt.byStatus[s]
		}
	}
	if countBestEffort && !keep(Pending) {
		n += rt.pendingBestEffort
	}
	return n
}

// rolesMeetMin reports whether every role's minimum is met by its tasks in the statuses keep
// accepts (and its pending best-effort tasks when countBestEffort).
func (ji *JobInfo) rolesMeetMin(keep func(TaskStatus) bool, countBestEffort bool) bool {
	for role, min := range ji.TaskMinAvailable {
		if ji.roleCount(role, keep, countBestEffort) < min {
			return false
		}
	}
	return true
}

func readyStatus(s TaskStatus) bool { return AllocatedStatus(s) || s == Succeeded }

func pipelinedStatus(s TaskStatus) bool { return readyStatus(s) || s == Pipelined }

// CheckTaskValid reports whether every role has enough live tasks for its minimum.
func (ji *JobInfo) CheckTaskValid() bool {
	if len(ji.TaskMinAvailable) == 0 || ji.MinAvailable < ji.TaskMinAvailableTotal {
		return true
	}
	return ji.rolesMeetMin(func(s TaskStatus) bool { return pipelinedStatus(s) || s == Pending }, false)
}

// CheckTaskReady reports whether every role's minimum is met by placed tasks.
func (ji *JobInfo) CheckTaskReady() bool {
	if len(ji.TaskMinAvailable) == 0 || ji.MinAvailable < ji.TaskMinAvailableTotal {
		return true
	}
	return ji.rolesMeetMin(readyStatus, true)
}

// CheckTaskPipelined reports whether every role's minimum is met counting pipelined tasks.
func (ji *JobInfo) CheckTaskPipelined() bool {
	if len(ji.TaskMinAvailable) == 0 || ji.MinAvailable < ji.TaskMinAvailableTotal {
		return true
	}
	return ji.rolesMeetMin(pipelinedStatus, true)
}

// CheckTaskStarving reports whether some role is below its minimum.
func (ji *JobInfo) CheckTaskStarving() bool {
	if ji.MinAvailable < ji.TaskMinAvailableTotal {
		return true
	}
	if len(ji.TaskMinAvailable) == 0 {
		return false
	}
	return !ji.rolesMeetMin(pipelinedStatus, false)
}

// FitFailedRoles returns the roles with a recorded fit error this cycle.
func (ji *JobInfo) FitFailedRoles() map[string]struct{} {
	out := map[string]struct{}{}
	for uid := range ji.NodesFitErrors {
		if t := ji.Tasks[uid]; t != nil {
			out[t.Role] = struct{}{}
		}
	}
	return out
}

// NeedContinueAllocating reports whether allocation of the job may go on after one of its
// tasks failed to fit (Volcano's rule).
func (ji *JobInfo) NeedContinueAllocating() bool {
	if int(ji.MinAvailable) == len(ji.Tasks) {
		return false
	}
	failed := ji.FitFailedRoles()
	if ji.MinAvailable < ji.TaskMinAvailableTotal {
		left := int32(0)
		for role, rt := range ji.roles {
			if _, ok := failed[role]; !ok {
				left += rt.byStatus[Pending]
			}
		}
		return ji.ReadyTaskNum()+left >= ji.MinAvailable
	}
	for role := range failed {
		if min := ji.TaskMinAvailable[role]; min > 0 && ji.roleCount(role, readyStatus, true) < min {
			return false
		}
	}
	return true
}

// ResetFitErr clears this cycle's fit errors.
func (ji *JobInfo) ResetFitErr() {
	ji.JobFitErrors = ""
	ji.NodesFitErrors = map[string]*FitErrors{}
}

// IsHardTopologyMode reports whether the job needs hard network topology, and its highest
// allowed tier.
func (ji *JobInfo) IsHardTopologyMode() (bool, int) {
	nt := ji.Spec.NetworkTopology
	if nt == nil {
		return false, 0
	}
	return nt.Mode == "hard", int(nt.HighestTierAllowed)
}

// Clone returns a deep copy (tasks cloned).
func (ji *JobInfo) Clone() *JobInfo {
	c := *ji
	c.TaskMinAvailable = make(map[string]int32, len(ji.TaskMinAvailable))
	for k, v := range ji.TaskMinAvailable {
		c.TaskMinAvailable[k] = v
	}
	c.Tasks = map[string]*TaskInfo{}
	c.TaskStatusIndex = map[TaskStatus]map[string]*TaskInfo{}
	c.Allocated = EmptyResource()
	c.TotalRequest = EmptyResource()
	c.MinResources = ji.MinResources.Clone()
	c.NodesFitErrors = map[string]*FitErrors{}
	c.pendingBestEffort, c.roles, c.order, c.disorder = 0, nil, nil, false
	c.byStatus = [statusSlots]int32{}
	for _, t := range ji.SortedTasks() {
		c.AddTaskInfo(t.Clone())
	}
	return &c
}

// AllocatedTaskNum counts tasks in status Allocated (placed this cycle, not yet bound).
func (ji *JobInfo) AllocatedTaskNum() int32 { return ji.count(Allocated) }

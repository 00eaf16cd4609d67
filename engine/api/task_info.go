package api

import "time"

// TaskInfo is a session's mutable view of one task.
type TaskInfo struct {
	// UID is the task's namespace/name.
	UID       string
	Name      string
	Namespace string
	// Job is the UID (namespace/name) of the task's job.
	Job  string
	Role string
	// Resreq is what the task requests; InitResreq is what it needs to start (the same here).
	// Neither is ever changed in place (replace the pointer instead): clones share them.
	Resreq     *Resource
	InitResreq *Resource
	Status     TaskStatus
	NodeName   string
	Priority   int32
	// BestEffort is true when the task requests no resources and no devices.
	BestEffort  bool
	Preemptable bool
	StartedAt   time.Time
	// DeviceIDs are the devices assigned to the task on its node.
	DeviceIDs []string
	// Spec is the immutable task as streamed in (selectors, tolerations, affinity, labels).
	Spec *Task
}

// NewTaskInfo builds the session view of a task. priority is the resolved priority.
func NewTaskInfo(t *Task, priority int32) *TaskInfo { return NewTaskInfoOf(t, priority, t.JobKey()) }

// NewTaskInfoOf is NewTaskInfo for a task whose job's UID (t.JobKey()) the caller has.
func NewTaskInfoOf(t *Task, priority int32, job string) *TaskInfo {
	return (*TaskInfoArena)(nil).NewTaskInfoOf(t, priority, job)
}

// TaskInfoArena hands out task views allocated in blocks, so that a session making thousands
// of them (its pending tasks' views, its nodes' copies of the tasks it places) makes a few
// allocations instead of one per view. A block lives as long as any view taken from it, so
// an arena suits views that end with the session. A nil arena allocates each view alone. Not
// safe for concurrent use.
type TaskInfoArena struct{ block []TaskInfo }

// taskInfoBlock is how many views an arena allocates at once: 24 KiB, under the size (32
// KiB) beyond which an allocation takes the slower large-object path.
const taskInfoBlock = 128

// alloc returns a zero view.
func (a *TaskInfoArena) alloc() *TaskInfo {
	if a == nil {
		return new(TaskInfo)
	}
	if len(a.block) == 0 {
		a.block = make([]TaskInfo, taskInfoBlock)
	}
	t := &a.block[0]
	a.block = a.block[1:]
	return t
}

// NewTaskInfoOf is the package's NewTaskInfoOf, the view taken from the arena.
func (a *TaskInfoArena) NewTaskInfoOf(t *Task, priority int32, job string) *TaskInfo {
	req := &t.Resources // never changed in place, like the task it belongs to
	if req.MaxTaskNum != 0 {
		req = t.Resources.Clone()
		req.MaxTaskNum = 0
	}
	var devices []string
	if OccupiesNode(t.Status) {
		// A task that is not on a node holds no device, whatever ids it still carries.
		devices = append(devices, t.DeviceIDs...)
	}
	ti := a.alloc()
	*ti = TaskInfo{
		UID:         t.Key(),
		Name:        t.Name,
		Namespace:   t.Namespace,
		Job:         job,
		Role:        t.Role,
		Resreq:      req,
		InitResreq:  req, // never changed in place, so it may be the same
		Status:      t.Status,
		NodeName:    t.Node,
		Priority:    priority,
		BestEffort:  req.IsEmpty() && len(t.Devices) == 0,
		Preemptable: t.Preemptable,
		StartedAt:   t.StartedAt,
		DeviceIDs:   devices,
		Spec:        t,
	}
	return ti
}

// Clone returns a copy that shares the immutable spec and requests.
func (t *TaskInfo) Clone() *TaskInfo { return (*TaskInfoArena)(nil).Clone(t) }

// Clone is TaskInfo.Clone, the copy taken from the arena.
func (a *TaskInfoArena) Clone(t *TaskInfo) *TaskInfo {
	c := a.alloc()
	*c = *t
	c.DeviceIDs = append([]string(nil), t.DeviceIDs...)
	return c
}

// Labels returns the task's labels.
func (t *TaskInfo) Labels() map[string]string {
	if t.Spec == nil {
		return nil
	}
	return t.Spec.Labels
}

// Annotations returns the task's annotations.
func (t *TaskInfo) Annotations() map[string]string {
	if t.Spec == nil {
		return nil
	}
	return t.Spec.Annotations
}

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
	return &TaskInfo{
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
}

// Clone returns a copy that shares the immutable spec and requests.
func (t *TaskInfo) Clone() *TaskInfo {
	c := *t
	c.DeviceIDs = append([]string(nil), t.DeviceIDs...)
	return &c
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

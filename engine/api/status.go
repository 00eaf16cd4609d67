package api

// TaskStatus is a task's lifecycle status, as Volcano's.
type TaskStatus int

// Task statuses.
const (
	Pending TaskStatus = iota + 1
	Allocated
	Pipelined
	Binding
	Bound
	Running
	Releasing
	Succeeded
	Failed
	Unknown
)

var taskStatusNames = map[TaskStatus]string{
	Pending: "Pending", Allocated: "Allocated", Pipelined: "Pipelined", Binding: "Binding",
	Bound: "Bound", Running: "Running", Releasing: "Releasing", Succeeded: "Succeeded",
	Failed: "Failed", Unknown: "Unknown",
}

// String returns the status name.
func (s TaskStatus) String() string {
	if n, ok := taskStatusNames[s]; ok {
		return n
	}
	return "Invalid"
}

// ParseTaskStatus returns the status with the given name.
func ParseTaskStatus(name string) (TaskStatus, bool) {
	for s, n := range taskStatusNames {
		if n == name {
			return s, true
		}
	}
	return 0, false
}

// AllocatedStatus reports whether a task in this status holds resources on a node
// (Volcano's AllocatedStatus).
func AllocatedStatus(s TaskStatus) bool {
	switch s {
	case Bound, Binding, Running, Allocated:
		return true
	}
	return false
}

// OccupiesNode reports whether a task in this status counts against its node's resources.
func OccupiesNode(s TaskStatus) bool {
	switch s {
	case Allocated, Pipelined, Binding, Bound, Running, Releasing:
		return true
	}
	return false
}

// Terminated reports whether the task has finished.
func Terminated(s TaskStatus) bool { return s == Succeeded || s == Failed }

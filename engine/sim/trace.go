package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// Trace is a workload to replay: jobs in submit order.
type Trace struct {
	// Format is "swf" or "native".
	Format string
	// Jobs are sorted by submit time, ties kept in the order of the file.
	Jobs []*Job
	// Header holds what an SWF header says about the machine (zero when absent or for the
	// native format).
	Header SWFHeader
	// Skipped counts the records left out by rule (SWF records without run time or
	// processors, failed or cancelled ones when asked to drop them), by reason.
	Skipped map[string]int
}

// Job is one job of a trace: a gang of tasks submitted at once, running for Duration once
// MinAvailable of its tasks run.
type Job struct {
	// Name is unique in the trace; Namespace defaults to "default".
	Name, Namespace string
	// Line is the job's line in its file (1-based), for messages.
	Line int
	// Submit is the submit time from the start of the trace; Duration the run time.
	Submit, Duration time.Duration
	Queue            string
	PriorityClass    string
	// Priority applies when HasPriority and no PriorityClass is given.
	Priority    int32
	HasPriority bool
	// MinAvailable is the gang's minimum; 0 means every task.
	MinAvailable int32
	Tasks        []TaskGroup
	Labels       map[string]string
	// Processors is the SWF record's processor count (0 for native jobs).
	Processors int
}

// TaskGroup is a number of identical tasks of a job.
type TaskGroup struct {
	// Role names the group; tasks are named JOB-ROLE-i (JOB-i without a role).
	Role      string
	Replicas  int
	Resources api.Resource
	// Preemptable marks the tasks as preemptable.
	Preemptable bool
}

// TaskCount is the number of tasks of the job.
func (j *Job) TaskCount() int {
	n := 0
	for _, g := range j.Tasks {
		n += g.Replicas
	}
	return n
}

// Request is the sum of the job's tasks' resources.
func (j *Job) Request() *api.Resource {
	r := api.EmptyResource()
	for _, g := range j.Tasks {
		r.Add(g.Resources.Clone().Multi(float64(g.Replicas)))
	}
	return r
}

// Gang is the job's minimum number of running tasks: MinAvailable, or every task.
func (j *Job) Gang() int32 {
	if j.MinAvailable > 0 {
		return j.MinAvailable
	}
	return int32(j.TaskCount())
}

// Key is the job's namespace/name.
func (j *Job) Key() string { return j.Namespace + "/" + j.Name }

// Size is the job's size in cores: its processors for SWF jobs, else its total CPU request.
func (j *Job) Size() float64 {
	if j.Processors > 0 {
		return float64(j.Processors)
	}
	return j.Request().MilliCPU / 1000
}

// LineError is a trace line the reader refuses: its file, line and field, and why.
type LineError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error implements error: "FILE:LINE: field FIELD: MSG".
func (e *LineError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: field %s: %s", e.File, e.Line, e.Field, e.Msg)
}

// ScaleSubmits multiplies every submit time by factor (0 < factor): below 1 the same jobs
// arrive faster, a common way to replay a trace at a higher load.
func (t *Trace) ScaleSubmits(factor float64) {
	for _, j := range t.Jobs {
		j.Submit = time.Duration(math.Round(float64(j.Submit)*factor/float64(time.Millisecond))) * time.Millisecond
	}
}

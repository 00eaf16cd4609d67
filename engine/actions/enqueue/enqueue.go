// Package enqueue is Volcano's enqueue action: it admits Pending jobs (moves them to Inqueue)
// queue by queue in queue and job order, when the enqueue votes of the plugins allow it.
package enqueue

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "enqueue"

// Action is one cycle's enqueue action.
type Action struct{}

// New builds the action; it takes no arguments.
func New(conf.Arguments) (framework.Action, error) { return &Action{}, nil }

// Name returns "enqueue".
func (a *Action) Name() string { return Name }

// Execute runs the action. A job without minResources is always admitted, as in Volcano.
func (a *Action) Execute(ssn *framework.Session) {
	queues := util.NewPriorityQueue(ssn.QueueOrderFn)
	seen := map[string]bool{}
	jobsByQueue := map[string]*util.PriorityQueue[*api.JobInfo]{}
	for _, job := range ssn.ActiveJobs() { // only Pending jobs matter: idle ones are not
		q, ok := ssn.Queues[job.Queue]
		if !ok {
			continue
		}
		if !seen[q.Name] {
			seen[q.Name] = true
			queues.Push(q)
		}
		if job.IsPending() {
			jq, ok := jobsByQueue[q.Name]
			if !ok {
				jq = util.NewPriorityQueue(ssn.JobOrderFn)
				jobsByQueue[q.Name] = jq
			}
			jq.Push(job)
		}
	}
	for !queues.Empty() && !ssn.Interrupted() {
		q := queues.Pop()
		jobs := jobsByQueue[q.Name]
		if jobs == nil || jobs.Empty() {
			continue
		}
		job := jobs.Pop()
		if job.MinResources.IsEmpty() || ssn.JobEnqueueable(job) {
			ssn.JobEnqueued(job)
			job.Phase = api.JobInqueue
		} else if job.JobFitErrors == "" {
			job.JobFitErrors = "not enqueued: the cluster or queue cannot admit its minResources (" + job.MinResources.String() + ")"
		}
		queues.Push(q)
	}
}

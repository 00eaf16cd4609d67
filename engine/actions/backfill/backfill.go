// Package backfill is Volcano's backfill action: it places best-effort tasks (tasks that
// request no resources) on any node that passes the predicates.
package backfill

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "backfill"

// Action is one cycle's backfill action.
type Action struct{}

// New builds the action; it takes no arguments.
func New(conf.Arguments) (framework.Action, error) { return &Action{}, nil }

// Name returns "backfill".
func (a *Action) Name() string { return Name }

// Execute runs the action. Jobs and tasks go in name order (Volcano's map order is random).
func (a *Action) Execute(ssn *framework.Session) {
	for _, job := range ssn.SortedJobs() {
		if job.IsPending() {
			continue
		}
		if vr := ssn.JobValid(job); vr != nil {
			continue
		}
		stmt := ssn.NewStatement()
		for _, task := range job.TasksIn(api.Pending) {
			if !task.BestEffort {
				continue
			}
			if err := ssn.PrePredicateFn(task); err != nil {
				fe := api.NewFitErrors()
				fe.Total = len(ssn.NodeList)
				for _, n := range ssn.NodeList {
					fe.SetNodeError(n.Name, err)
				}
				job.NodesFitErrors[task.UID] = fe
				break
			}
			nodes, fe := util.PredicateNodes(task, ssn.NodeList, ssn.PredicateFn)
			if len(nodes) == 0 {
				job.NodesFitErrors[task.UID] = fe
				break
			}
			node := util.BestNode(ssn, task, nodes)
			if err := stmt.Allocate(task, node); err != nil {
				ssn.Log.Error("backfill allocate failed", "task", task.UID, "node", node.Name, "err", err)
				continue
			}
			if ssn.JobReady(job) {
				stmt.Commit()
			}
		}
	}
}

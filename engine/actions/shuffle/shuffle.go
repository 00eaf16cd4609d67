// Package shuffle is Volcano's shuffle action: it offers every running task to the plugins'
// victim-tasks callbacks (rescheduling, pdb, ...) and evicts the tasks they choose, so that
// the next cycles place them again, e.g. on less used nodes.
package shuffle

import (
	"github.com/sluice-sched/sluice/engine/actions/util"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the action's configuration name.
const Name = "shuffle"

// Rule is the eviction rule recorded on every shuffle eviction.
const Rule = "chosen by the victim-tasks plugins"

// Action is one cycle's shuffle action.
type Action struct{}

// New builds the action; it takes no arguments.
func New(conf.Arguments) (framework.Action, error) { return &Action{}, nil }

// Name returns "shuffle".
func (a *Action) Name() string { return Name }

// Execute offers the running tasks, jobs and tasks in name order, to ssn.VictimTasks and
// evicts each chosen task once, in the order chosen, through one statement that it commits.
// A chosen task that is no longer running is skipped.
func (a *Action) Execute(ssn *framework.Session) {
	var running []*api.TaskInfo
	for _, j := range ssn.SortedJobs() {
		running = append(running, j.TasksIn(api.Running)...)
	}
	if len(running) == 0 {
		return
	}
	victims := ssn.VictimTasks(running)
	if len(victims) == 0 {
		return
	}
	stmt := ssn.NewStatement()
	seen := map[string]bool{}
	for _, v := range victims {
		if seen[v.UID] {
			continue
		}
		seen[v.UID] = true
		t := util.JobTask(ssn, v)
		if t == nil || t.Status != api.Running {
			continue
		}
		if err := stmt.Evict(t, framework.EvictReason{Action: Name, Rule: Rule}); err != nil {
			ssn.Log.Error("shuffle evict failed", "victim", t.UID, "err", err)
		}
	}
	stmt.Commit()
}

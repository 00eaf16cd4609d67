package engine

import (
	"errors"

	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// ErrHypotheticalNotDryRun is Schedule's error for hypothetical changes in a cycle whose plan
// could be committed.
var ErrHypotheticalNotDryRun = errors.New("hypothetical changes are allowed only in a dry run")

// HypotheticalMarks says which of a what-if plan's decisions and job outcomes concern its
// hypothetical objects: Decisions[i] for Result.Decisions[i], Jobs[i] for Result.Jobs[i].
type HypotheticalMarks struct {
	Decisions []bool
	Jobs      []bool
}

// snapshot reads the cluster for a cycle: as stored, or with a what-if's batch on top.
func (e *Engine) snapshot(cluster string, hyp *state.Batch) (*state.Snapshot, error) {
	if hyp == nil {
		return e.store.Snapshot(cluster), nil
	}
	return e.store.Hypothetical(cluster, *hyp)
}

// markHypothetical marks what concerns the batch's objects: a decision whose task, job or
// node the batch upserts, or an eviction made for such a task; the outcome of a job the batch
// upserts or one of whose tasks it upserts. The tasks of a node a what-if removes or drains
// come back as upserts (pending), and so are marked too. It returns nil without a batch.
func markHypothetical(res *framework.Result, b *state.Batch) *HypotheticalMarks {
	if b == nil {
		return nil
	}
	tasks, jobs, touched, nodes := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, c := range b.Changes {
		switch {
		case c.Task != nil:
			tasks[c.Task.Key()] = true
			touched[c.Task.JobKey()] = true
		case c.Job != nil:
			jobs[c.Job.Key()] = true
			touched[c.Job.Key()] = true
		case c.Node != nil:
			nodes[c.Node.Name] = true
		}
	}
	m := &HypotheticalMarks{Decisions: make([]bool, len(res.Decisions)), Jobs: make([]bool, len(res.Jobs))}
	for i, d := range res.Decisions {
		m.Decisions[i] = tasks[d.Task] || jobs[d.Job] || nodes[d.Node] || (d.ForTask != "" && tasks[d.ForTask])
	}
	for i, o := range res.Jobs {
		m.Jobs[i] = touched[o.Job]
	}
	return m
}

package state

import (
	"errors"
	"fmt"
	"slices"
)

// Limits bound the size of a cluster. A batch that would take the cluster beyond one fails
// with a *LimitError and changes nothing; a batch that does not grow what is over a limit
// (the limit was lowered) still applies. Zero fields bound nothing.
type Limits struct {
	// MaxObjects bounds the objects of the cluster, every kind together.
	MaxObjects int
	// MaxTasksPerJob bounds the tasks of one job.
	MaxTasksPerJob int
}

// Names of the limits, as a *LimitError gives them.
const (
	LimitObjectsPerCluster = "max_objects_per_cluster"
	LimitTasksPerJob       = "max_tasks_per_job"
)

// ErrLimitExceeded is matched (errors.Is) by every *LimitError.
var ErrLimitExceeded = errors.New("limit exceeded")

// LimitError is a batch the store refuses because it would take the cluster beyond one of its
// Limits. Where says which change went over (Index -1 for the batch as a whole), with the
// same paths as a *ValidationError, and what happened.
type LimitError struct {
	Where ValidationError
	// Limit names the limit (LimitObjectsPerCluster, LimitTasksPerJob), Max is its value.
	Limit string
	Max   int
}

// Error implements error.
func (e *LimitError) Error() string {
	return "state: " + e.Where.Field + ": " + e.Where.Msg
}

// Is makes errors.Is(err, ErrLimitExceeded) true.
func (e *LimitError) Is(target error) bool { return target == ErrLimitExceeded }

// checkLimits checks the transaction's outcome against lim, after the batch's changes and
// checks: the cluster's objects (what it held before, plus what the transaction added), and
// the tasks of every job that gained one.
func (w *writer) checkLimits(lim Limits) error {
	if n := w.base + w.objects; lim.MaxObjects > 0 && w.objects > 0 && n > lim.MaxObjects {
		return &LimitError{Limit: LimitObjectsPerCluster, Max: lim.MaxObjects, Where: ValidationError{
			Index: -1, Field: "changes",
			Msg: fmt.Sprintf("the cluster would hold %d objects, more than the limit of %d (%s)", n, lim.MaxObjects, LimitObjectsPerCluster),
		}}
	}
	if lim.MaxTasksPerJob <= 0 || len(w.grown) == 0 {
		return nil
	}
	// The first change that grew a job beyond the limit, whatever the map's order.
	jobs := make([]string, 0, len(w.grown))
	for j := range w.grown {
		jobs = append(jobs, j)
	}
	slices.SortFunc(jobs, func(a, b string) int { return w.grown[a] - w.grown[b] })
	// grown holds change indexes plus one.
	for _, j := range jobs {
		n, err := w.countUnder(tableTasks, indexJob, lim.MaxTasksPerJob+1, w.cluster, j)
		if err != nil {
			return err
		}
		if n > lim.MaxTasksPerJob {
			where := invalid(w.grown[j]-1, "task.job", "job %q would have more than %d tasks, the limit (%s)", j, lim.MaxTasksPerJob, LimitTasksPerJob)
			return &LimitError{Limit: LimitTasksPerJob, Max: lim.MaxTasksPerJob, Where: *where}
		}
	}
	return nil
}

// countUnder counts the rows of table under a prefix of index, up to stop.
func (w *writer) countUnder(table, index string, stop int, args ...any) (int, error) {
	it, err := w.txn.Get(table, index+"_prefix", args...)
	if err != nil {
		return 0, fmt.Errorf("state: counting %s by %s: %w", table, index, err)
	}
	n := 0
	for o := it.Next(); o != nil && n < stop; o = it.Next() {
		n++
	}
	return n, nil
}

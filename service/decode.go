package service

import (
	"time"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// DecodeBatch checks a delta batch as ApplyDeltas does before the store sees it, and
// converts it for the store, for callers that keep a store of their own in process (the
// simulator). now fills in the times of new objects. Its error lists the field violations
// ("deltas[3].upsert_task.resources[\"cpu\"]: ..."); the store's referential checks run when
// the batch is applied. The limits on one value and on a batch's size are the defaults
// (DefaultLimits); the batch carries no limits on what the cluster may hold, which a store
// of the caller's own need not bound.
func DecodeBatch(b *sluicev1.DeltaBatch, now time.Time) (state.Batch, error) {
	d, err := decodeBatch("", b, now, nil)
	if err != nil {
		return state.Batch{}, err
	}
	d.batch.Limits = state.Limits{}
	return d.batch, nil
}

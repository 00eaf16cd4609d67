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
// the batch is applied.
func DecodeBatch(b *sluicev1.DeltaBatch, now time.Time) (state.Batch, error) {
	d, err := decodeBatch("", b, now)
	if err != nil {
		return state.Batch{}, err
	}
	return d.batch, nil
}

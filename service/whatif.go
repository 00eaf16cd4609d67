package service

import (
	"errors"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// What-if dry runs: Schedule's hypothetical batch is checked and converted exactly as
// ApplyDeltas's, then handed to the engine, which applies it to a private copy of the
// cluster's state for the cycle only (engine.ScheduleRequest.Hypothetical).

// checkHypothetical records what makes a request's hypothetical batch unusable before its
// deltas are looked at.
func checkHypothetical(fe *fieldErrors, req *sluicev1.ScheduleRequest) {
	b := req.GetHypothetical()
	if b == nil {
		return
	}
	if req.GetMode() != sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		fe.add("hypothetical", "only allowed with SCHEDULE_MODE_DRY_RUN: a what-if is never committed")
	}
	if b.GetReplaceAll() {
		fe.add("hypothetical.replace_all", "a what-if adds to the cluster's state: replace_all is not allowed")
	}
}

// decodeHypothetical checks and converts a what-if batch; nil without one.
func (s *Server) decodeHypothetical(b *sluicev1.DeltaBatch) (*decodedBatch, error) {
	if b == nil {
		return nil, nil
	}
	return decodeBatch("hypothetical", b, s.clock().Round(0).UTC(), &s.limits)
}

// hypotheticalError maps the store's refusal of a what-if batch onto the request's field
// paths, as ApplyDeltas maps a refused batch (a what-if is held to the server's limits on
// what a cluster holds, as a batch is); other errors pass unchanged.
func hypotheticalError(err error, d *decodedBatch) error {
	if d == nil {
		return err
	}
	var lerr *state.LimitError
	if errors.As(err, &lerr) {
		field := sub("hypothetical", "deltas")
		if lerr.Where.Index >= 0 {
			field = deltaPath("hypothetical", &lerr.Where, d.deltaOf)
		}
		return &limitError{limit: lerr.Limit, max: lerr.Max, field: field, msg: lerr.Where.Msg}
	}
	var verr *state.ValidationError
	if !errors.As(err, &verr) {
		return err
	}
	return &invalidError{
		reason: ReasonInvalidReference,
		violations: []*errdetails.BadRequest_FieldViolation{{
			Field: deltaPath("hypothetical", verr, d.deltaOf), Description: verr.Msg,
		}},
	}
}

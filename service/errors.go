package service

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/state"
)

// ErrorDomain is the domain of every google.rpc.ErrorInfo the service attaches to an error.
const ErrorDomain = "sluice.sched"

// Reasons carried by the ErrorInfo detail of the service's errors: the names of the
// sluice.v1.ErrorReason values without their prefix (a test keeps the two lists equal).
// Clients may switch on them; the human-readable message may change, these do not.
const (
	// ReasonInvalidField: a request field is malformed (BadRequest lists which).
	ReasonInvalidField = "INVALID_FIELD"
	// ReasonInvalidReference: a batch leaves a reference dangling (a task's job, a job's
	// queue, a deleted node that still has tasks, ...); BadRequest names the delta.
	ReasonInvalidReference = "INVALID_REFERENCE"
	// ReasonInvalidConfig: a scheduler configuration was refused.
	ReasonInvalidConfig = "INVALID_CONFIG"
	// ReasonNotFound: the plan, job, queue, node or task does not exist.
	ReasonNotFound = "NOT_FOUND"
	// ReasonFailedPrecondition: the plan is not in a state that allows the call.
	ReasonFailedPrecondition = "FAILED_PRECONDITION"
	// ReasonResyncRequired: a Sync batch came after ResyncRequired (or after its cluster was
	// deleted) without replace_all.
	ReasonResyncRequired = "RESYNC_REQUIRED"
	// ReasonShuttingDown: the server is stopping; reconnect to another or later.
	ReasonShuttingDown = "SHUTTING_DOWN"
	// ReasonInternal: a bug or an unexpected failure on the server.
	ReasonInternal = "INTERNAL"
	// ReasonNotLeader: this member of a replicated cluster does not lead it; writes and
	// scheduling go to the leader, whose gRPC address is the ErrorInfo metadata "leader"
	// (and its node id "leader_id") when known.
	ReasonNotLeader = "NOT_LEADER"
	// ReasonStoreUnavailable: the replicated state store cannot take writes now (no leader
	// elected yet, a leader catching up, a data directory that cannot be written); the
	// message says which. Retry later.
	ReasonStoreUnavailable = "STORE_UNAVAILABLE"
	// ReasonPlanNotFound: the cluster holds no plan with this id.
	ReasonPlanNotFound = "PLAN_NOT_FOUND"
	// ReasonPlanCommitted: the plan is committed and cannot be discarded.
	ReasonPlanCommitted = "PLAN_COMMITTED"
	// ReasonPlanDiscarded: the plan was discarded and cannot be committed.
	ReasonPlanDiscarded = "PLAN_DISCARDED"
	// ReasonPlanExpired: the plan expired before it was committed.
	ReasonPlanExpired = "PLAN_EXPIRED"
	// ReasonPlanDryRun: the plan is a dry run's, never stored or committed.
	ReasonPlanDryRun = "PLAN_DRY_RUN"
	// ReasonClusterNotFound: the cluster does not exist.
	ReasonClusterNotFound = "CLUSTER_NOT_FOUND"
	// ReasonConfigEtagMismatch: the configuration changed since the update's etag.
	ReasonConfigEtagMismatch = "CONFIG_ETAG_MISMATCH"
	// ReasonRateLimited: the client is over its rate limit (RetryInfo says when to retry).
	ReasonRateLimited = "RATE_LIMITED"
	// ReasonCancelled: the caller cancelled the call.
	ReasonCancelled = "CANCELLED"
	// ReasonDeadlineExceeded: the call's deadline passed.
	ReasonDeadlineExceeded = "DEADLINE_EXCEEDED"
	// ReasonStaleReadRefused: this member cannot answer a stale read within its bounds.
	ReasonStaleReadRefused = "STALE_READ_REFUSED"
	// ReasonResyncTooLarge: a chunked resync is larger than the server takes (sluiced
	// --max-resync-bytes); RESOURCE_EXHAUSTED, with a BadRequest naming the chunk.
	ReasonResyncTooLarge = "RESYNC_TOO_LARGE"
	// ReasonLimitExceeded: a batch would take a cluster beyond one of the server's limits
	// (RESOURCE_EXHAUSTED, ErrorInfo metadata "limit", "max" and "field").
	ReasonLimitExceeded = "LIMIT_EXCEEDED"
)

// planReasons gives the reason of a plan that cannot make a transition, by its state.
var planReasons = map[engine.PlanState]string{
	engine.PlanCommitted: ReasonPlanCommitted,
	engine.PlanDiscarded: ReasonPlanDiscarded,
	engine.PlanExpired:   ReasonPlanExpired,
	engine.PlanDryRun:    ReasonPlanDryRun,
}

// MetadataLeader and MetadataLeaderID are the ErrorInfo metadata keys of a NOT_LEADER error;
// MetadataField names the request field an error that is not INVALID_ARGUMENT is about (the
// etag of a CONFIG_ETAG_MISMATCH).
const (
	MetadataLeader   = "leader"
	MetadataLeaderID = "leader_id"
	MetadataField    = "field"
)

// maxViolations caps the field violations of one error: status details travel in trailers,
// which clients and proxies limit in size.
const maxViolations = 50

// invalidError is a request the service refuses, with the offending fields. It becomes
// INVALID_ARGUMENT with a BadRequest and an ErrorInfo detail.
type invalidError struct {
	reason     string
	violations []*errdetails.BadRequest_FieldViolation
}

// Error implements error: the violations, "; "-separated.
func (e *invalidError) Error() string {
	var b strings.Builder
	for i, v := range e.violations {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(v.GetField())
		b.WriteString(": ")
		b.WriteString(v.GetDescription())
	}
	return b.String()
}

// fieldErrors collects field violations while a request is checked, against lim (the
// server's limits; nil: DefaultLimits).
type fieldErrors struct {
	list    []*errdetails.BadRequest_FieldViolation
	dropped int
	lim     *Limits
}

// add records a violation of field.
func (fe *fieldErrors) add(field, format string, args ...any) {
	if len(fe.list) >= maxViolations {
		fe.dropped++
		return
	}
	fe.list = append(fe.list, &errdetails.BadRequest_FieldViolation{
		Field: field, Description: fmt.Sprintf(format, args...),
	})
}

// reset forgets what was recorded, keeping the limits.
func (fe *fieldErrors) reset() {
	fe.list, fe.dropped = fe.list[:0], 0
}

// ok reports whether nothing was recorded.
func (fe *fieldErrors) ok() bool { return len(fe.list) == 0 }

// err returns the collected violations as an *invalidError, or nil.
func (fe *fieldErrors) err() error {
	if fe.ok() {
		return nil
	}
	list := fe.list
	if fe.dropped > 0 {
		last := list[len(list)-1]
		last.Description += fmt.Sprintf(" (and %d more violations not listed)", fe.dropped)
	}
	return &invalidError{reason: ReasonInvalidField, violations: list}
}

// invalid returns an *invalidError with one violation.
func invalid(field, format string, args ...any) error {
	var fe fieldErrors
	fe.add(field, format, args...)
	return fe.err()
}

// shuttingDown is the error streams end with when the server stops.
var shuttingDown = withInfo(codes.Unavailable, ReasonShuttingDown, "server shutting down")

// toStatus maps any error of the service, the engine or the store to a gRPC status error. It
// is the one place where errors get their codes:
//
//	*invalidError            INVALID_ARGUMENT, BadRequest + ErrorInfo
//	*limitError, *state.LimitError  RESOURCE_EXHAUSTED, ErrorInfo LIMIT_EXCEEDED (limit, max, field)
//	*state.ValidationError   INVALID_ARGUMENT, BadRequest (the store's field path) + ErrorInfo
//	engine.ErrInvalidConfig  INVALID_ARGUMENT, ErrorInfo INVALID_CONFIG
//	state.ErrClusterNotFound NOT_FOUND, ErrorInfo CLUSTER_NOT_FOUND
//	state.ErrConfigEtagMismatch  ABORTED, ErrorInfo CONFIG_ETAG_MISMATCH (metadata field=etag)
//	*engine.PlanError        NOT_FOUND PLAN_NOT_FOUND, or FAILED_PRECONDITION PLAN_COMMITTED,
//	                         PLAN_DISCARDED, PLAN_EXPIRED or PLAN_DRY_RUN
//	engine.ErrNotFound       NOT_FOUND
//	engine.ErrFailedPrecondition  FAILED_PRECONDITION
//	*state.NotLeaderError    UNAVAILABLE, ErrorInfo NOT_LEADER with the leader's address
//	state.ErrUnavailable     UNAVAILABLE, ErrorInfo STORE_UNAVAILABLE
//	context.Canceled         CANCELED, ErrorInfo CANCELLED
//	context.DeadlineExceeded DEADLINE_EXCEEDED, ErrorInfo DEADLINE_EXCEEDED
//	a gRPC status error      unchanged
//	anything else            INTERNAL
//
// Handlers that know a better field path for a store error (the delta it came from) rewrite
// it into an *invalidError first.
func toStatus(err error) error {
	if err == nil {
		return nil
	}
	var inv *invalidError
	var lim *limitError
	var slim *state.LimitError
	var verr *state.ValidationError
	var nle *state.NotLeaderError
	var pe *engine.PlanError
	switch {
	case errors.As(err, &inv):
		return invalidStatus(inv)
	case errors.As(err, &lim):
		return lim.status()
	case errors.As(err, &slim):
		return (&limitError{limit: slim.Limit, max: slim.Max, field: slim.Where.Field, msg: slim.Where.Msg}).status()
	case errors.As(err, &verr):
		return invalidStatus(&invalidError{
			reason: ReasonInvalidReference,
			violations: []*errdetails.BadRequest_FieldViolation{{
				Field: verr.Field, Description: verr.Msg,
			}},
		})
	case errors.As(err, &pe) && pe.State == 0:
		return withInfo(codes.NotFound, ReasonPlanNotFound, err.Error())
	case errors.As(err, &pe) && planReasons[pe.State] != "":
		return withInfo(codes.FailedPrecondition, planReasons[pe.State], err.Error())
	case errors.Is(err, engine.ErrInvalidConfig):
		return withInfo(codes.InvalidArgument, ReasonInvalidConfig, err.Error())
	case errors.Is(err, state.ErrClusterNotFound):
		return withInfo(codes.NotFound, ReasonClusterNotFound, err.Error())
	case errors.Is(err, state.ErrConfigEtagMismatch):
		return withInfoMetadata(codes.Aborted, ReasonConfigEtagMismatch, err.Error(), map[string]string{MetadataField: "etag"})
	case errors.Is(err, engine.ErrNotFound):
		return withInfo(codes.NotFound, ReasonNotFound, err.Error())
	case errors.Is(err, engine.ErrFailedPrecondition):
		return withInfo(codes.FailedPrecondition, ReasonFailedPrecondition, err.Error())
	case errors.As(err, &nle):
		md := map[string]string{}
		if nle.Leader != "" {
			md[MetadataLeader] = nle.Leader
		}
		if nle.LeaderID != "" {
			md[MetadataLeaderID] = nle.LeaderID
		}
		return withInfoMetadata(codes.Unavailable, ReasonNotLeader, nle.Error(), md)
	case errors.Is(err, state.ErrUnavailable):
		return withInfo(codes.Unavailable, ReasonStoreUnavailable, err.Error())
	case errors.Is(err, context.Canceled):
		return withInfo(codes.Canceled, ReasonCancelled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return withInfo(codes.DeadlineExceeded, ReasonDeadlineExceeded, err.Error())
	}
	if st, ok := status.FromError(err); ok {
		return st.Err()
	}
	return withInfo(codes.Internal, ReasonInternal, err.Error())
}

// invalidStatus builds the INVALID_ARGUMENT status of an *invalidError.
func invalidStatus(inv *invalidError) error {
	st := status.New(codes.InvalidArgument, "invalid request: "+inv.Error())
	st, derr := st.WithDetails(
		&errdetails.BadRequest{FieldViolations: inv.violations},
		&errdetails.ErrorInfo{Reason: inv.reason, Domain: ErrorDomain},
	)
	if derr != nil {
		return status.Error(codes.InvalidArgument, "invalid request: "+inv.Error())
	}
	return st.Err()
}

// withInfo builds a status error with an ErrorInfo detail.
func withInfo(code codes.Code, reason, msg string) error {
	return withInfoMetadata(code, reason, msg, nil)
}

// withInfoMetadata builds a status error with an ErrorInfo detail carrying metadata.
func withInfoMetadata(code codes.Code, reason, msg string, md map[string]string) error {
	st := status.New(code, msg)
	if d, err := st.WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: ErrorDomain, Metadata: md}); err == nil {
		st = d
	}
	return st.Err()
}

// isStoreUnavailable reports whether err is the replicated store's: this member cannot
// write (not the leader, no leader, storage failing). A Sync stream ends with it rather than
// rejecting the batch, so that the client sends the batch again, to the leader.
func isStoreUnavailable(err error) bool {
	return errors.Is(err, state.ErrNotLeader) || errors.Is(err, state.ErrUnavailable)
}

// violationsOf returns the BadRequest field violations carried by a status, if any.
func violationsOf(st *status.Status) []*errdetails.BadRequest_FieldViolation {
	var out []*errdetails.BadRequest_FieldViolation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			out = append(out, br.GetFieldViolations()...)
		}
	}
	return out
}

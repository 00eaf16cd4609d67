package service

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// allReasons is every Reason constant of the package.
var allReasons = []string{
	ReasonInvalidField, ReasonInvalidReference, ReasonInvalidConfig, ReasonNotFound,
	ReasonFailedPrecondition, ReasonResyncRequired, ReasonShuttingDown, ReasonInternal,
	ReasonNotLeader, ReasonStoreUnavailable, ReasonUnauthenticated, ReasonPermissionDenied,
	ReasonWatchExists, ReasonTakenOver, ReasonPlanNotFound, ReasonPlanCommitted,
	ReasonPlanDiscarded, ReasonPlanExpired, ReasonPlanDryRun, ReasonClusterNotFound,
	ReasonConfigEtagMismatch, ReasonRateLimited, ReasonCancelled, ReasonDeadlineExceeded,
	ReasonStaleReadRefused, ReasonResyncTooLarge, ReasonLimitExceeded,
}

// TestReasonsAreTheEnum keeps the reasons the server sends and the API's ErrorReason enum the
// same list, so that a client can switch on the enum.
func TestReasonsAreTheEnum(t *testing.T) {
	var enum []string
	for n, name := range sluicev1.ErrorReason_name {
		if n == 0 {
			continue
		}
		enum = append(enum, strings.TrimPrefix(name, "ERROR_REASON_"))
	}
	got := slices.Clone(allReasons)
	slices.Sort(got)
	slices.Sort(enum)
	if !reflect.DeepEqual(got, enum) {
		t.Fatalf("service reasons %v\nenum reasons    %v", got, enum)
	}
}

func TestPlanErrorsHaveTheirReasons(t *testing.T) {
	tests := []struct {
		state  engine.PlanState
		code   codes.Code
		reason string
	}{
		{0, codes.NotFound, ReasonPlanNotFound},
		{engine.PlanCommitted, codes.FailedPrecondition, ReasonPlanCommitted},
		{engine.PlanDiscarded, codes.FailedPrecondition, ReasonPlanDiscarded},
		{engine.PlanExpired, codes.FailedPrecondition, ReasonPlanExpired},
		{engine.PlanDryRun, codes.FailedPrecondition, ReasonPlanDryRun},
	}
	for _, tc := range tests {
		err := toStatus(engine.NewPlanError("c", "p", tc.state, errors.New("m")))
		st := status.Convert(err)
		if _, reason := fieldsOf(st); st.Code() != tc.code || reason != tc.reason {
			t.Errorf("state %s: %s %q, want %s %q", tc.state, st.Code(), reason, tc.code, tc.reason)
		}
	}
	for _, err := range []error{context.Canceled, context.DeadlineExceeded} {
		if _, reason := fieldsOf(status.Convert(toStatus(err))); reason == "" {
			t.Errorf("%v carries no reason", err)
		}
	}
}

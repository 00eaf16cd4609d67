package service

import (
	"context"
	"time"

	"google.golang.org/grpc"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// ReadGate makes the reads of a replicated store consistent; engine/durable's Node is one.
// Without one (a store in memory, one process), every read is linearizable as it is.
type ReadGate interface {
	// LinearizableRead returns nil once this member may answer with state that includes every
	// write acknowledged before the call: it leads (confirmed with a quorum after the call)
	// and applied everything committed by then. Otherwise a *state.NotLeaderError (the
	// caller goes to the leader), an error wrapping state.ErrUnavailable, or ctx's error.
	LinearizableRead(ctx context.Context) error
	// Staleness bounds how far this member's state may be behind; ok is false when it must
	// serve no read at all (it has not caught up since it started, or knows no leader).
	Staleness() (d time.Duration, ok bool)
}

// readMethods are the unary methods that only read: on a replicated store each is answered
// only once the ReadGate allows it (a dry-run Schedule goes through the same gate in
// schedule).
var readMethods = map[string]bool{
	sluicev1.ClusterStateService_GetNode_FullMethodName:         true,
	sluicev1.ClusterStateService_ListNodes_FullMethodName:       true,
	sluicev1.ClusterStateService_GetQueue_FullMethodName:        true,
	sluicev1.ClusterStateService_ListQueues_FullMethodName:      true,
	sluicev1.ClusterStateService_GetJob_FullMethodName:          true,
	sluicev1.ClusterStateService_ListJobs_FullMethodName:        true,
	sluicev1.ClusterStateService_GetTask_FullMethodName:         true,
	sluicev1.ClusterStateService_ListTasks_FullMethodName:       true,
	sluicev1.SchedulerService_ExplainJob_FullMethodName:         true,
	sluicev1.SchedulerService_GetPlan_FullMethodName:            true,
	sluicev1.SchedulerService_GetSchedulerConfig_FullMethodName: true,
}

// readBarrier waits until a read may be answered (see ReadGate.LinearizableRead). With no
// gate, or a store in memory, it returns at once.
func (s *Server) readBarrier(ctx context.Context) error {
	if s.reads == nil || !s.store.Replicated() {
		return nil
	}
	return s.reads.LinearizableRead(ctx)
}

// gateReads is the unary interceptor that holds reads until the gate allows them.
func (s *Server) gateReads(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if readMethods[info.FullMethod] {
		if err := s.readBarrier(ctx); err != nil {
			return nil, toStatus(err)
		}
	}
	return next(ctx, req)
}

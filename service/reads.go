package service

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

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
	// NodeID names the member.
	NodeID() string
}

// Response headers of reads (see sluice.v1.ReadOptions).
const (
	HeaderRevision  = "sluice-revision"
	HeaderStaleness = "sluice-staleness-ms"
	HeaderMember    = "sluice-member"
)

// maxRevisionWait bounds how long a read waits for its min_revision.
const maxRevisionWait = 10 * time.Second

// readRequest is what every read request offers: its cluster and its read options.
type readRequest interface {
	GetCluster() string
	GetRead() *sluicev1.ReadOptions
}

// readMethods are the unary methods that only read: each is answered only once readGate
// lets it through (a dry-run Schedule goes through the same gate in schedule).
var readMethods = map[string]bool{
	sluicev1.ClusterStateService_GetNode_FullMethodName:         true,
	sluicev1.ClusterStateService_ListNodes_FullMethodName:       true,
	sluicev1.ClusterStateService_GetQueue_FullMethodName:        true,
	sluicev1.ClusterStateService_ListQueues_FullMethodName:      true,
	sluicev1.ClusterStateService_GetJob_FullMethodName:          true,
	sluicev1.ClusterStateService_ListJobs_FullMethodName:        true,
	sluicev1.ClusterStateService_GetTask_FullMethodName:         true,
	sluicev1.ClusterStateService_ListTasks_FullMethodName:       true,
	sluicev1.ClusterStateService_ListClusters_FullMethodName:    true,
	sluicev1.ClusterStateService_GetCluster_FullMethodName:      true,
	sluicev1.SchedulerService_ExplainJob_FullMethodName:         true,
	sluicev1.SchedulerService_GetPlan_FullMethodName:            true,
	sluicev1.SchedulerService_GetSchedulerConfig_FullMethodName: true,
}

// readBarrier waits until a linearizable read may be answered (ReadGate.LinearizableRead).
// With no gate, or a store in memory, it returns at once.
func (s *Server) readBarrier(ctx context.Context) error {
	if s.reads == nil || !s.store.Replicated() {
		return nil
	}
	return s.reads.LinearizableRead(ctx)
}

// staleRefused is the error of a stale read this member cannot answer.
func staleRefused(format string, args ...any) error {
	return withInfo(codes.Unavailable, ReasonStaleReadRefused, fmt.Sprintf(format, args...))
}

// readGate lets a read of cluster through once ro's promise can be kept, and sets the read's
// response headers.
func (s *Server) readGate(ctx context.Context, cluster string, ro *sluicev1.ReadOptions) error {
	var staleness time.Duration
	stale := ro.GetConsistency() == sluicev1.ReadConsistency_READ_CONSISTENCY_STALE
	replicated := s.reads != nil && s.store.Replicated()
	switch {
	case !stale:
		if err := s.readBarrier(ctx); err != nil {
			return err
		}
	case replicated:
		d, ok := s.reads.Staleness()
		if !ok {
			return staleRefused("member %s cannot serve stale reads: it has not caught up with a leader since it started, or knows none; try another member", s.reads.NodeID())
		}
		if max := ro.GetMaxStaleness().AsDuration(); max > 0 && d > max {
			return staleRefused("member %s may be %v behind, more than max_staleness %v; try another member", s.reads.NodeID(), d.Round(time.Millisecond), max)
		}
		staleness = d
	}
	if min := ro.GetMinRevision(); min > 0 && cluster != "" {
		if err := s.waitRevision(ctx, cluster, min); err != nil {
			return err
		}
	}
	md := metadata.Pairs(HeaderRevision, strconv.FormatUint(s.store.Revision(cluster), 10))
	if stale {
		md.Append(HeaderStaleness, strconv.FormatInt(staleness.Milliseconds(), 10))
	}
	if replicated {
		md.Append(HeaderMember, s.reads.NodeID())
	}
	_ = grpc.SetHeader(ctx, md) // fails only outside a call (cycles of WatchPlans)
	return nil
}

// waitRevision waits until the member applied revision min of cluster, up to ctx's deadline
// and maxRevisionWait.
func (s *Server) waitRevision(ctx context.Context, cluster string, min uint64) error {
	deadline := time.Now().Add(maxRevisionWait)
	for s.store.Revision(cluster) < min {
		if time.Now().After(deadline) {
			return staleRefused("cluster %q is at revision %d on this member, below min_revision %d after %v; try another member",
				cluster, s.store.Revision(cluster), min, maxRevisionWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// gateReads is the unary interceptor that holds reads until readGate lets them through.
func (s *Server) gateReads(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	if readMethods[info.FullMethod] {
		r, _ := req.(readRequest)
		var cluster string
		var ro *sluicev1.ReadOptions
		if r != nil {
			cluster, ro = r.GetCluster(), r.GetRead()
		}
		if err := checkReadOptions(ro); err != nil {
			return nil, toStatus(err)
		}
		if err := s.readGate(ctx, cluster, ro); err != nil {
			if out, ok, ferr := s.forwardToLeader(ctx, info.FullMethod, req, err); ok {
				return out, ferr
			}
			return nil, toStatus(err)
		}
	}
	if info.FullMethod == sluicev1.SchedulerService_Schedule_FullMethodName && s.reads != nil && s.store.Replicated() {
		// A default dry run on a member that does not lead goes to the leader too.
		if err := s.store.CheckWritable(); err != nil {
			if out, ok, ferr := s.forwardToLeader(ctx, info.FullMethod, req, err); ok {
				return out, ferr
			}
		}
	}
	return next(ctx, req)
}

// checkReadOptions validates a request's read options (field path "read").
func checkReadOptions(ro *sluicev1.ReadOptions) error {
	var fe fieldErrors
	checkEnum(&fe, "read.consistency", int32(ro.GetConsistency()), sluicev1.ReadConsistency_name)
	if ro.GetMaxStaleness() != nil {
		checkDuration(&fe, "read.max_staleness", ro.GetMaxStaleness())
		if ro.GetConsistency() != sluicev1.ReadConsistency_READ_CONSISTENCY_STALE {
			fe.add("read.max_staleness", "only allowed with READ_CONSISTENCY_STALE")
		}
	}
	return fe.err()
}

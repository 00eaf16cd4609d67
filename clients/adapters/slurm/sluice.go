package slurm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Sluice is what the adapter needs from the Sluice service. GRPCSluice implements it on the
// generated stubs; the Go client library (clients/go/sluice: a Syncer for Sync, a Client
// for the rest) can implement it just as well.
type Sluice interface {
	// Sync brings the server's copy of the cluster up to date: deltas are the changes
	// since the last successful Sync. When the server has no usable state (first contact,
	// or ResyncRequired after a restart) Sync sends snapshot() as a resync instead (one
	// replace_all batch, or a chunked resync when it is larger than one chunk), and reports
	// resynced. An error means nothing was applied.
	Sync(ctx context.Context, deltas []*sluicev1.Delta, snapshot func() []*sluicev1.Delta) (resynced bool, err error)
	// SetSchedulerConfig replaces the cluster's scheduler configuration (Volcano YAML).
	SetSchedulerConfig(ctx context.Context, config string) error
	// Schedule runs one cycle; dryRun asks for a plan that is only returned.
	Schedule(ctx context.Context, dryRun bool) (*sluicev1.Plan, error)
	// Commit commits a proposed plan.
	Commit(ctx context.Context, planID string) (*sluicev1.CommitPlanResponse, error)
	// Discard drops a proposed plan.
	Discard(ctx context.Context, planID string) error
}

// RejectedError is a batch the server refused; it had no effect.
type RejectedError struct {
	Code       codes.Code
	Message    string
	Violations []*sluicev1.FieldViolation
}

func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "batch rejected: %s: %s", e.Code, e.Message)
	for i, v := range e.Violations {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "; %s: %s", v.GetField(), v.GetDescription())
	}
	return b.String()
}

// GRPCSluice is a Sluice on a gRPC connection, for one cluster. It keeps one Sync stream
// open and watches it: a goroutine reads every answer, so a stream that breaks (a sluiced
// that restarts, a connection that drops) is noticed at once, even while Slurm is quiet and
// nothing is sent. The next Sync opens a new stream whose hello carries the last
// acknowledged revision; a server that lost that state answers ResyncRequired and gets the
// whole cluster. A call that fails for want of the server (UNAVAILABLE, a deadline) also
// drops the stream, so that a connection that hangs without breaking is replaced too, and a
// proposed plan read at a revision older than the last acknowledged one, or a Schedule that
// finds no cluster at all (a restarted server that has not heard from this adapter yet) fails
// with a StateLostError and does the same.
type GRPCSluice struct {
	cluster string
	state   sluicev1.ClusterStateServiceClient
	sched   sluicev1.SchedulerServiceClient

	mu     sync.Mutex
	stream *syncStream
	seq    uint64
	rev    uint64
	// storeID is the server store's id that rev belongs to; welcomeID the current
	// stream's.
	storeID   string
	welcomeID string
	needFull  bool
}

var _ Sluice = (*GRPCSluice)(nil)

// StateLostError reports a server whose copy of the cluster is older than what it
// acknowledged to this adapter, or that has no copy at all (NOT_FOUND, reason
// CLUSTER_NOT_FOUND): it restarted without state. The plan, if one was made, was discarded;
// the next Sync resends the whole cluster.
type StateLostError struct {
	// PlanID is the discarded plan ("" when the server had no cluster to plan for);
	// PlanRevision the revision it read.
	PlanID       string
	PlanRevision uint64
	// Acknowledged is the last revision the server acknowledged to this adapter.
	Acknowledged uint64
}

func (e *StateLostError) Error() string {
	if e.PlanID == "" {
		return fmt.Sprintf("sluice lost the cluster's state (restarted without --data-dir, or the cluster was deleted): "+
			"it has no such cluster, but had acknowledged revision %d; resyncing", e.Acknowledged)
	}
	return fmt.Sprintf("sluice lost the cluster's state (restarted without --data-dir?): plan %s read revision %d, "+
		"the server had acknowledged %d; resyncing", e.PlanID, e.PlanRevision, e.Acknowledged)
}

// syncStream is one open Sync stream and the goroutine that reads it.
type syncStream struct {
	grpc.BidiStreamingClient[sluicev1.SyncRequest, sluicev1.SyncResponse]
	cancel context.CancelFunc
	// msgs carries the server's messages in order; done is closed, after err is set, when
	// the stream has ended.
	msgs chan *sluicev1.SyncResponse
	done chan struct{}
	err  error
}

// watch reads the stream until it ends.
func (st *syncStream) watch(ctx context.Context) {
	defer close(st.done)
	for {
		m, err := st.Recv()
		if err != nil {
			st.err = err
			return
		}
		select {
		case st.msgs <- m:
		case <-ctx.Done():
			st.err = ctx.Err()
			return
		}
	}
}

// recv returns the next message, or the error that ended the stream.
func (st *syncStream) recv() (*sluicev1.SyncResponse, error) {
	select {
	case m := <-st.msgs:
		return m, nil
	case <-st.done:
		// Messages read before the end come first.
		select {
		case m := <-st.msgs:
			return m, nil
		default:
		}
		if st.err == io.EOF {
			return nil, errors.New("the server ended the stream")
		}
		return nil, st.err
	}
}

// ended reports whether the stream has broken.
func (st *syncStream) ended() bool {
	select {
	case <-st.done:
		return true
	default:
		return false
	}
}

// NewGRPCSluice returns a Sluice for cluster on conn.
func NewGRPCSluice(conn grpc.ClientConnInterface, cluster string) *GRPCSluice {
	return &GRPCSluice{
		cluster: cluster,
		state:   sluicev1.NewClusterStateServiceClient(conn),
		sched:   sluicev1.NewSchedulerServiceClient(conn),
	}
}

// Revision returns the last cluster revision the server acknowledged.
func (s *GRPCSluice) Revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rev
}

// Connected reports whether a Sync stream is open and has not broken.
func (s *GRPCSluice) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stream != nil && !s.stream.ended()
}

// Close ends the Sync stream; the connection is the caller's.
func (s *GRPCSluice) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeStream()
}

func (s *GRPCSluice) closeStream() {
	if s.stream != nil {
		s.stream.cancel()
	}
	s.stream = nil
}

// open starts a Sync stream: hello with the last revision, welcome, and ResyncRequired
// when the server cannot continue from it.
func (s *GRPCSluice) open(ctx context.Context) error {
	streamCtx, cancel := context.WithCancel(context.Background())
	stream, err := s.state.Sync(streamCtx)
	if err != nil {
		cancel()
		return fmt.Errorf("open sync stream: %w", err)
	}
	st := &syncStream{BidiStreamingClient: stream, cancel: cancel, msgs: make(chan *sluicev1.SyncResponse, 4), done: make(chan struct{})}
	go st.watch(streamCtx)
	s.stream = st
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	hello := &sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{
		Cluster: s.cluster, ResumeRevision: s.rev, ResumeStoreId: s.storeID,
	}}}
	if err := st.Send(hello); err != nil {
		err = s.sendErr(err)
		s.closeStream()
		return fmt.Errorf("sync hello: %w", err)
	}
	m, err := st.recv()
	if err != nil {
		s.closeStream()
		return fmt.Errorf("sync welcome: %w", err)
	}
	w := m.GetWelcome()
	if w == nil {
		s.closeStream()
		return fmt.Errorf("sync: expected a welcome, got %T", m.GetMessage())
	}
	s.welcomeID = w.GetStoreId()
	if s.rev == 0 {
		// First contact: this adapter's view replaces whatever the cluster holds.
		s.needFull = true
	} else if s.rev > w.GetRevision() || (s.storeID != "" && s.storeID != w.GetStoreId()) {
		// The server lost state (another store, or a revision behind ours); it says so with
		// ResyncRequired right after the welcome.
		m, err := st.recv()
		if err != nil {
			s.closeStream()
			return fmt.Errorf("sync: %w", err)
		}
		if m.GetResyncRequired() == nil {
			s.closeStream()
			return fmt.Errorf("sync: expected ResyncRequired, got %T", m.GetMessage())
		}
		s.needFull = true
	}
	return nil
}

// sendErr is the error of a failed Send: gRPC reports io.EOF there and keeps the stream's
// status for Recv, which the watching goroutine receives.
func (s *GRPCSluice) sendErr(err error) error {
	if err != io.EOF || s.stream == nil {
		return err
	}
	select {
	case <-s.stream.done:
	case <-time.After(time.Second):
		return err
	}
	if s.stream.err != nil && s.stream.err != io.EOF {
		return s.stream.err
	}
	return err
}

// Sync implements Sluice.
func (s *GRPCSluice) Sync(ctx context.Context, deltas []*sluicev1.Delta, snapshot func() []*sluicev1.Delta) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream != nil && s.stream.ended() {
		// It broke since the last call: a new stream's hello finds out what the server
		// still has.
		s.closeStream()
	}
	if s.stream == nil {
		if err := s.open(ctx); err != nil {
			return false, s.streamErr(ctx, err)
		}
	}
	// The caller's context bounds this call: when it ends, the stream goes with it.
	stop := context.AfterFunc(ctx, s.stream.cancel)
	defer stop()

	// At most two batches: the deltas, and the snapshot when the server turns out to need
	// a resync.
	for attempt := 0; attempt < 2; attempt++ {
		full := s.needFull
		if !full && len(deltas) == 0 {
			return false, nil
		}
		s.seq++
		b := &sluicev1.DeltaBatch{Sequence: s.seq, Deltas: deltas}
		if full {
			b = &sluicev1.DeltaBatch{Sequence: s.seq, Deltas: snapshot(), ReplaceAll: true}
		}
		for _, m := range messages(b) {
			if err := s.stream.Send(m); err != nil {
				err = s.sendErr(err)
				s.closeStream()
				return false, s.streamErr(ctx, fmt.Errorf("sync send: %w", err))
			}
		}
		resync, err := s.await(b)
		if err != nil {
			return false, s.streamErr(ctx, err)
		}
		if !resync {
			return full, nil
		}
	}
	return false, errors.New("sync: the server still asks for a resync after a replace_all batch")
}

// messages returns what carries b: the batch, or for a replace_all batch larger than one
// chunk the chunks of a chunked resync (sluice.ResyncChunks), which the server applies at
// once like the batch, whatever the cluster's size.
func messages(b *sluicev1.DeltaBatch) []*sluicev1.SyncRequest {
	if b.GetReplaceAll() {
		if chunks := sluice.ResyncChunks(b.GetSequence(), b.GetDeltas(), 0); len(chunks) > 1 {
			out := make([]*sluicev1.SyncRequest, len(chunks))
			for i, c := range chunks {
				out[i] = &sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_ResyncChunk{ResyncChunk: c}}
			}
			return out
		}
	}
	return []*sluicev1.SyncRequest{{Message: &sluicev1.SyncRequest_Batch{Batch: b}}}
}

// await reads the answer to batch b. It returns resync when the batch was refused because
// the server waits for a replace_all batch.
func (s *GRPCSluice) await(b *sluicev1.DeltaBatch) (resync bool, err error) {
	for {
		m, err := s.stream.recv()
		if err != nil {
			s.closeStream()
			return false, fmt.Errorf("sync receive: %w", err)
		}
		switch msg := m.GetMessage().(type) {
		case *sluicev1.SyncResponse_ResyncRequired:
			s.needFull = true
		case *sluicev1.SyncResponse_Ack:
			if msg.Ack.GetSequence() != b.GetSequence() {
				continue
			}
			if b.GetReplaceAll() {
				s.rev = msg.Ack.GetRevision()
				s.needFull = false
			} else {
				s.rev = max(s.rev, msg.Ack.GetRevision())
			}
			s.storeID = s.welcomeID
			return false, nil
		case *sluicev1.SyncResponse_Rejected:
			rej := msg.Rejected
			if rej.GetSequence() != b.GetSequence() {
				continue
			}
			// FAILED_PRECONDITION refuses a batch only when the server waits for the whole
			// state: after ResyncRequired, or when the cluster was deleted since the hello.
			if codes.Code(rej.GetCode()) == codes.FailedPrecondition && !b.GetReplaceAll() {
				s.needFull = true
				return true, nil
			}
			return false, &RejectedError{Code: codes.Code(rej.GetCode()), Message: rej.GetMessage(), Violations: rej.GetViolations()}
		}
	}
}

func (s *GRPCSluice) streamErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", err, ctx.Err())
	}
	return err
}

// noteRevision records a revision the server reported (a commit's), so that a resume after
// a reconnect starts from it.
func (s *GRPCSluice) noteRevision(rev uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rev = max(s.rev, rev)
}

// callFailed drops the Sync stream when a call failed for want of the server, so that the
// next Sync starts over with a hello; it returns err.
func (s *GRPCSluice) callFailed(err error) error {
	switch status.Code(err) {
	case codes.Unavailable, codes.DeadlineExceeded:
		s.mu.Lock()
		s.closeStream()
		s.mu.Unlock()
	}
	return err
}

// clusterNotFound reports whether err is the server's NOT_FOUND for a cluster it does not hold
// (reason CLUSTER_NOT_FOUND), rather than for a plan or an object.
func clusterNotFound(err error) bool {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.NotFound {
		return false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetReason() == "CLUSTER_NOT_FOUND" {
			return true
		}
	}
	return false
}

// SetSchedulerConfig implements Sluice.
func (s *GRPCSluice) SetSchedulerConfig(ctx context.Context, config string) error {
	_, err := s.sched.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: s.cluster, Config: config})
	return s.callFailed(err)
}

// Schedule implements Sluice. A proposed plan read at a revision older than the last one
// the server acknowledged, or a proposal the server answers with CLUSTER_NOT_FOUND after it
// acknowledged the cluster, fails with a StateLostError (dry runs may come from a follower
// that lags, and are not checked).
func (s *GRPCSluice) Schedule(ctx context.Context, dryRun bool) (*sluicev1.Plan, error) {
	mode := sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE
	if dryRun {
		mode = sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN
	}
	resp, err := s.sched.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: s.cluster, Mode: mode})
	if acked := s.Revision(); err != nil && !dryRun && acked > 0 && clusterNotFound(err) {
		// The server acknowledged the cluster and now has none: it restarted without state
		// (or the cluster was deleted). No plan was made.
		s.mu.Lock()
		s.closeStream()
		s.mu.Unlock()
		return nil, &StateLostError{Acknowledged: acked}
	}
	if err != nil {
		return nil, s.callFailed(err)
	}
	if base, acked := resp.GetPlan().GetBaseRevision(), s.Revision(); !dryRun && base < acked {
		s.mu.Lock()
		s.closeStream()
		s.mu.Unlock()
		// The plan is of a cluster this adapter never sent; it is not carried out.
		_, _ = s.sched.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: s.cluster, PlanId: resp.GetPlan().GetId()})
		return nil, &StateLostError{PlanID: resp.GetPlan().GetId(), PlanRevision: base, Acknowledged: acked}
	}
	plan, err := sluice.WholePlan(ctx, s.sched, resp.GetPlan(), resp.GetNextPageToken())
	return plan, s.callFailed(err)
}

// Commit implements Sluice.
func (s *GRPCSluice) Commit(ctx context.Context, planID string) (*sluicev1.CommitPlanResponse, error) {
	resp, err := s.sched.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: s.cluster, PlanId: planID})
	if err != nil {
		return nil, s.callFailed(err)
	}
	s.noteRevision(resp.GetRevision())
	if resp.GetNextPageToken() != "" {
		// The lists cover the first page: take every decision's outcome from the record.
		whole, err := sluice.WholePlan(ctx, s.sched, resp.GetPlan(), resp.GetNextPageToken())
		if err != nil {
			return nil, s.callFailed(err)
		}
		resp.Applied, resp.Rejected = sluice.Outcomes(whole)
		resp.Plan, resp.NextPageToken = whole, ""
	}
	return resp, nil
}

// Discard implements Sluice.
func (s *GRPCSluice) Discard(ctx context.Context, planID string) error {
	_, err := s.sched.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: s.cluster, PlanId: planID})
	return s.callFailed(err)
}

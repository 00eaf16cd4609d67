package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"

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
// open and opens a new one after a failure, resuming from the last revision it saw.
type GRPCSluice struct {
	cluster string
	state   sluicev1.ClusterStateServiceClient
	sched   sluicev1.SchedulerServiceClient

	mu     sync.Mutex
	stream grpc.BidiStreamingClient[sluicev1.SyncRequest, sluicev1.SyncResponse]
	cancel context.CancelFunc
	seq    uint64
	rev    uint64
	// storeID is the server store's id that rev belongs to; welcomeID the current
	// stream's.
	storeID   string
	welcomeID string
	needFull  bool
}

var _ Sluice = (*GRPCSluice)(nil)

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

// Close ends the Sync stream; the connection is the caller's.
func (s *GRPCSluice) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeStream()
}

func (s *GRPCSluice) closeStream() {
	if s.cancel != nil {
		s.cancel()
	}
	s.stream, s.cancel = nil, nil
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
	s.stream, s.cancel = stream, cancel
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	hello := &sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{
		Cluster: s.cluster, ResumeRevision: s.rev, ResumeStoreId: s.storeID,
	}}}
	if err := stream.Send(hello); err != nil {
		s.closeStream()
		return fmt.Errorf("sync hello: %w", err)
	}
	m, err := stream.Recv()
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
		m, err := stream.Recv()
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

// Sync implements Sluice.
func (s *GRPCSluice) Sync(ctx context.Context, deltas []*sluicev1.Delta, snapshot func() []*sluicev1.Delta) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stream == nil {
		if err := s.open(ctx); err != nil {
			return false, s.streamErr(ctx, err)
		}
	}
	// The caller's context bounds this call: when it ends, the stream goes with it.
	stop := context.AfterFunc(ctx, s.cancel)
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
		m, err := s.stream.Recv()
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
			if codes.Code(rej.GetCode()) == codes.FailedPrecondition && !b.GetReplaceAll() && s.needFull {
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

// SetSchedulerConfig implements Sluice.
func (s *GRPCSluice) SetSchedulerConfig(ctx context.Context, config string) error {
	_, err := s.sched.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: s.cluster, Config: config})
	return err
}

// Schedule implements Sluice.
func (s *GRPCSluice) Schedule(ctx context.Context, dryRun bool) (*sluicev1.Plan, error) {
	mode := sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE
	if dryRun {
		mode = sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN
	}
	resp, err := s.sched.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: s.cluster, Mode: mode})
	if err != nil {
		return nil, err
	}
	return sluice.WholePlan(ctx, s.sched, resp.GetPlan(), resp.GetNextPageToken())
}

// Commit implements Sluice.
func (s *GRPCSluice) Commit(ctx context.Context, planID string) (*sluicev1.CommitPlanResponse, error) {
	resp, err := s.sched.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: s.cluster, PlanId: planID})
	if err != nil {
		return nil, err
	}
	s.noteRevision(resp.GetRevision())
	if resp.GetNextPageToken() != "" {
		// The lists cover the first page: take every decision's outcome from the record.
		whole, err := sluice.WholePlan(ctx, s.sched, resp.GetPlan(), resp.GetNextPageToken())
		if err != nil {
			return nil, err
		}
		resp.Applied, resp.Rejected = sluice.Outcomes(whole)
		resp.Plan, resp.NextPageToken = whole, ""
	}
	return resp, nil
}

// Discard implements Sluice.
func (s *GRPCSluice) Discard(ctx context.Context, planID string) error {
	_, err := s.sched.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: s.cluster, PlanId: planID})
	return err
}

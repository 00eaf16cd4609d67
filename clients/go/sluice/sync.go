package sluice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// SyncOptions configure a Syncer.
type SyncOptions struct {
	// Cluster the Syncer writes to. Required.
	Cluster string
	// Snapshot returns the RM's whole cluster state as upserts; the Syncer sends it
	// as a resync when it starts without a resume revision and whenever the server
	// asks for one. Required.
	//
	// The snapshot must include every change already given to Send: update your
	// own state first, then call Send. (A change sent after the snapshot was taken
	// is sent again after it, which is harmless: upserts replace and deletes of
	// missing objects succeed.) It is called from the Syncer's goroutine, so it
	// must not block on Flush. A snapshot larger than MaxChunkBytes travels as a
	// chunked resync (several messages that the server applies at once, see
	// ResyncChunks), so a cluster of any size fits gRPC's message limits; a smaller
	// one as one replace_all batch.
	Snapshot func() []*sluicev1.Delta
	// ResumeRevision is the last revision acknowledged to a previous Syncer (see
	// Revision), to resume from without a full resync if the server still has that
	// state. 0 starts with a full resync.
	ResumeRevision uint64
	// ResumeStoreID is the store id that came with ResumeRevision (see StoreID): the
	// server resumes only if its store is that one, so that a revision of a store that
	// started anew (a server restarted without a data directory) is never mistaken for
	// its own. Empty lets the server check the revision alone.
	ResumeStoreID string
	// MaxChunkBytes bounds the messages of a chunked resync. 0 means
	// DefaultMaxChunkBytes (1 MiB).
	MaxChunkBytes int
	// MaxBatchDeltas caps the deltas of one batch (replace_all batches aside,
	// which carry the whole snapshot). 0 means 500.
	MaxBatchDeltas int
	// MaxInFlight caps the batches sent and not yet answered. 0 means 4.
	MaxInFlight int
	// Linger is how long a partial batch waits for more deltas before it is sent.
	// 0 means 10ms; negative sends at once.
	Linger time.Duration
	// Backoff spaces reconnects after a stream fails.
	Backoff Backoff
	// OnAck, if set, is called for every acknowledged batch.
	OnAck func(ack *sluicev1.BatchAck, replaceAll bool)
	// OnReject, if set, is called for every rejected batch, which had no effect and
	// is dropped (Flush reports it too). Batches rejected only because a resync was
	// under way are not reported: the resync covers them.
	OnReject func(rej *sluicev1.BatchRejected, deltas []*sluicev1.Delta)
	// OnResync, if set, is called before each full resync, with the reason.
	OnResync func(reason string)
	// OnError, if set, is called when a stream fails, before the Syncer reconnects.
	OnError func(err error)
}

// Syncer streams a cluster's changes into Sluice over ClusterStateService.Sync. Send
// queues deltas; Run sends them in batches, in order, reconnecting with backoff when
// the stream fails and resuming from the last acknowledged revision; when the server
// cannot continue from that revision (it restarted without state, say) the Syncer
// sends the whole state from SyncOptions.Snapshot (a replace_all batch, or a chunked
// resync when it is larger than SyncOptions.MaxChunkBytes) and goes on from there. A
// resume names the store its revision came from (StoreID), and the server checks it. A batch whose acknowledgement was lost with its stream is sent again on
// the next stream.
//
// Send, Flush, Resync and Revision are safe for concurrent use; Run runs once.
type Syncer struct {
	c    *Client
	opts SyncOptions

	running atomic.Bool
	seq     uint64 // last sequence number sent; used only by Run's goroutine
	wake    chan struct{}

	mu sync.Mutex
	// queue holds deltas not yet sent (or to send again); queue[0] has index qStart.
	queue  []*sluicev1.Delta
	qStart uint64
	// next is the index the next delta given to Send gets.
	next uint64
	// done: every delta with a lower index was acknowledged, rejected, or covered
	// by an acknowledged replace_all.
	done     uint64
	revision uint64
	// storeID is the id of the store revision belongs to.
	storeID string
	// resync is set from when a resync is needed until a replace_all is acknowledged.
	resync       bool
	resyncReason string
	// resyncSent is set once the replace_all of the pending resync is on the wire.
	resyncSent bool
	rejects    []*RejectedError
	progress   chan struct{}
}

// RejectedError is a batch the server rejected; it had no effect. status.FromError
// gives the rejection's status, with its details (google.rpc.ErrorInfo,
// google.rpc.BadRequest).
type RejectedError struct {
	// Rejection is the server's answer (its status; code, message and field
	// violations).
	Rejection *sluicev1.BatchRejected
	// Deltas are the batch's deltas.
	Deltas []*sluicev1.Delta
	end    uint64
}

func (e *RejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sluice: batch %d rejected: %s: %s", e.Rejection.GetSequence(),
		codes.Code(e.Rejection.GetCode()), e.Rejection.GetMessage())
	for _, v := range e.Rejection.GetViolations() {
		fmt.Fprintf(&b, "; %s: %s", v.GetField(), v.GetDescription())
	}
	return b.String()
}

// GRPCStatus returns the rejection's status, for status.FromError and status.Code.
func (e *RejectedError) GRPCStatus() *status.Status {
	if st := e.Rejection.GetStatus(); st != nil {
		return status.FromProto(st)
	}
	return status.New(codes.Code(e.Rejection.GetCode()), e.Rejection.GetMessage())
}

// NewSyncer returns a Syncer for opts; call Run to start it.
func (c *Client) NewSyncer(opts SyncOptions) (*Syncer, error) {
	if opts.Cluster == "" {
		return nil, errors.New("sluice: SyncOptions.Cluster is required")
	}
	if opts.Snapshot == nil {
		return nil, errors.New("sluice: SyncOptions.Snapshot is required")
	}
	if opts.MaxBatchDeltas <= 0 {
		opts.MaxBatchDeltas = 500
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = 4
	}
	if opts.Linger == 0 {
		opts.Linger = 10 * time.Millisecond
	}
	s := &Syncer{
		c:        c,
		opts:     opts,
		wake:     make(chan struct{}, 1),
		revision: opts.ResumeRevision,
		storeID:  opts.ResumeStoreID,
		progress: make(chan struct{}),
	}
	if opts.ResumeRevision == 0 {
		s.resync, s.resyncReason = true, "no resume revision: initial full sync"
	}
	return s, nil
}

// Send queues deltas, to be applied in order after everything sent before. It does
// not block; the queue grows while the server is unreachable.
func (s *Syncer) Send(deltas ...*sluicev1.Delta) {
	if len(deltas) == 0 {
		return
	}
	s.mu.Lock()
	s.queue = append(s.queue, deltas...)
	s.next += uint64(len(deltas))
	s.mu.Unlock()
	s.poke()
}

// Resync asks for a full resync from the snapshot, for an RM that lost track of
// what it sent.
func (s *Syncer) Resync() {
	s.mu.Lock()
	s.requestResync("requested by the client")
	s.mu.Unlock()
	s.poke()
}

// Revision returns the cluster revision of the last acknowledged batch (or the
// resume revision before any). Keep it, with StoreID, to resume a later Syncer with.
func (s *Syncer) Revision() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision
}

// StoreID returns the id of the server's store that Revision belongs to (the
// SyncWelcome's), or the resume store id before any acknowledgement.
func (s *Syncer) StoreID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.storeID
}

// Resume returns the revision and store id to resume a later Syncer from, read
// together.
func (s *Syncer) Resume() (revision uint64, storeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.revision, s.storeID
}

// Flush waits until every delta given to Send before the call has been acknowledged
// or rejected, and any pending full resync has been acknowledged, then returns the
// revision. A rejection of one of those deltas' batches since the previous Flush is
// returned as a *RejectedError (errors.Join of several). Flush needs Run to be
// running; it gives up when ctx ends.
func (s *Syncer) Flush(ctx context.Context) (uint64, error) {
	s.mu.Lock()
	target := s.next
	for s.done < target || s.resync {
		ch := s.progress
		s.mu.Unlock()
		select {
		case <-ctx.Done():
			return s.Revision(), ctx.Err()
		case <-ch:
		}
		s.mu.Lock()
	}
	defer s.mu.Unlock()
	var errs []error
	keep := s.rejects[:0]
	for _, r := range s.rejects {
		if r.end <= target {
			errs = append(errs, r)
		} else {
			keep = append(keep, r)
		}
	}
	s.rejects = keep
	return s.revision, errors.Join(errs...)
}

// Run streams until ctx ends, and returns ctx's error. Stream failures are retried
// with backoff (and reported to SyncOptions.OnError), except those no retry can mend
// (INVALID_ARGUMENT, such as a bad cluster name, and UNIMPLEMENTED), which Run returns.
func (s *Syncer) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("sluice: Syncer.Run is already running")
	}
	defer s.running.Store(false)
	attempt := 0
	for {
		welcomed, err := s.session(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if permanent(err) {
			return err
		}
		if s.opts.OnError != nil && err != nil {
			s.opts.OnError(err)
		}
		if welcomed {
			attempt = 0
		}
		if !sleep(ctx, s.opts.Backoff.Delay(attempt)) {
			return ctx.Err()
		}
		attempt++
	}
}

// sent is a batch on the wire.
type sent struct {
	seq        uint64
	deltas     []*sluicev1.Delta
	from, end  uint64 // indexes of the deltas: [from, end)
	replaceAll bool
	// superseded: a replace_all sent after this batch covers it, so its outcome
	// does not matter.
	superseded bool
}

// session runs one Sync stream until it fails or ctx ends. welcomed reports whether
// the server answered the hello.
func (s *Syncer) session(ctx context.Context) (welcomed bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var inflight []*sent
	defer func() { s.requeue(inflight) }()

	stream, err := s.c.State.Sync(ctx)
	if err != nil {
		return false, err
	}
	s.mu.Lock()
	resume, resumeID := s.revision, s.storeID
	if s.resync {
		// 0 tells the server a resync follows, so it does not ask for one.
		resume, resumeID = 0, ""
	}
	s.mu.Unlock()
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{
		Hello: &sluicev1.SyncHello{Cluster: s.opts.Cluster, ResumeRevision: resume, ResumeStoreId: resumeID},
	}}); err != nil {
		return false, streamError(stream.RecvMsg, err)
	}
	type recvd struct {
		m   *sluicev1.SyncResponse
		err error
	}
	rc := make(chan recvd, 1)
	go func() {
		for {
			m, err := stream.Recv()
			select {
			case rc <- recvd{m, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	// storeID is the id of the server's store, from its welcome.
	var storeID string
	send := func(b *sent) error {
		inflight = append(inflight, b)
		var err error
		for _, m := range s.messages(b) {
			if err = stream.Send(m); err != nil {
				break
			}
		}
		if !errors.Is(err, io.EOF) {
			return err
		}
		// Send reports io.EOF on a broken stream; the reason comes from receiving.
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case r := <-rc:
				if r.err != nil {
					if errors.Is(r.err, io.EOF) {
						return errors.New("sluice: the server ended the Sync stream")
					}
					return r.err
				}
			}
		}
	}
	var linger *time.Timer
	defer func() {
		if linger != nil {
			linger.Stop()
		}
	}()
	var lingerC <-chan time.Time
	var lingerStart time.Time
	for {
		// A resync first: mark what is on the wire as superseded and send the snapshot.
		if b, reason := s.takeResync(); b != nil {
			if s.opts.OnResync != nil {
				s.opts.OnResync(reason)
			}
			for _, f := range inflight {
				f.superseded = true
			}
			b.deltas = s.opts.Snapshot()
			s.seq++
			b.seq = s.seq
			if err := send(b); err != nil {
				return welcomed, err
			}
		}
		// Then batches, while the window allows and a batch is full or has lingered.
		for len(inflight) < s.opts.MaxInFlight {
			s.mu.Lock()
			n := len(s.queue)
			s.mu.Unlock()
			if n == 0 {
				lingerC, lingerStart = nil, time.Time{}
				break
			}
			if n < s.opts.MaxBatchDeltas && s.opts.Linger > 0 {
				if lingerStart.IsZero() {
					lingerStart = time.Now()
				}
				if wait := s.opts.Linger - time.Since(lingerStart); wait > 0 {
					if lingerC == nil {
						if linger == nil {
							linger = time.NewTimer(wait)
						} else {
							linger.Reset(wait)
						}
						lingerC = linger.C
					}
					break
				}
			}
			lingerC, lingerStart = nil, time.Time{}
			b := s.takeBatch()
			s.seq++
			b.seq = s.seq
			if err := send(b); err != nil {
				return welcomed, err
			}
		}

		select {
		case <-ctx.Done():
			return welcomed, ctx.Err()
		case <-s.wake:
		case <-lingerC:
			lingerC = nil
		case r := <-rc:
			if r.err != nil {
				if errors.Is(r.err, io.EOF) {
					r.err = errors.New("sluice: the server ended the Sync stream")
				}
				return welcomed, r.err
			}
			switch m := r.m.GetMessage().(type) {
			case *sluicev1.SyncResponse_Welcome:
				welcomed = true
				storeID = m.Welcome.GetStoreId()
			case *sluicev1.SyncResponse_ResyncRequired:
				s.mu.Lock()
				s.requestResync(fmt.Sprintf("server: %s (revision %d)", m.ResyncRequired.GetReason(), m.ResyncRequired.GetRevision()))
				s.mu.Unlock()
			case *sluicev1.SyncResponse_Ack:
				if len(inflight) == 0 || inflight[0].seq != m.Ack.GetSequence() {
					return welcomed, fmt.Errorf("sluice: ack of batch %d, expected %s", m.Ack.GetSequence(), expected(inflight))
				}
				b := inflight[0]
				inflight = inflight[1:]
				s.acked(b, m.Ack, storeID)
			case *sluicev1.SyncResponse_Rejected:
				if len(inflight) == 0 || inflight[0].seq != m.Rejected.GetSequence() {
					return welcomed, fmt.Errorf("sluice: rejection of batch %d, expected %s", m.Rejected.GetSequence(), expected(inflight))
				}
				b := inflight[0]
				inflight = inflight[1:]
				if err := s.rejected(b, m.Rejected); err != nil {
					return welcomed, err
				}
			}
		}
	}
}

// permanent reports whether err is a status no retry can mend.
func permanent(err error) bool {
	switch status.Code(err) {
	case codes.InvalidArgument, codes.Unimplemented:
		return true
	}
	return false
}

func expected(inflight []*sent) string {
	if len(inflight) == 0 {
		return "none"
	}
	return fmt.Sprint(inflight[0].seq)
}

// streamError returns the status behind a failed Send: Send reports io.EOF and the
// reason comes from receiving.
func streamError(recv func(any) error, err error) error {
	if !errors.Is(err, io.EOF) {
		return err
	}
	for {
		if rerr := recv(new(sluicev1.SyncResponse)); rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return errors.New("sluice: the server ended the Sync stream")
			}
			return rerr
		}
	}
}

func (s *Syncer) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// requestResync marks a full resync as needed. s.mu must be held.
func (s *Syncer) requestResync(reason string) {
	s.resync, s.resyncSent, s.resyncReason = true, false, reason
	s.notify()
}

// notify wakes Flush callers. s.mu must be held.
func (s *Syncer) notify() {
	close(s.progress)
	s.progress = make(chan struct{})
}

// takeResync returns the replace_all batch to send (without its deltas) when a
// resync is needed and not yet sent, after dropping the queue, which the snapshot
// covers.
func (s *Syncer) takeResync() (*sent, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.resync || s.resyncSent {
		return nil, ""
	}
	s.resyncSent = true
	s.queue, s.qStart = nil, s.next
	return &sent{from: s.done, end: s.next, replaceAll: true}, s.resyncReason
}

// takeBatch takes up to MaxBatchDeltas deltas from the queue.
func (s *Syncer) takeBatch() *sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := min(len(s.queue), s.opts.MaxBatchDeltas)
	b := &sent{deltas: s.queue[:n:n], from: s.qStart, end: s.qStart + uint64(n)}
	s.queue = s.queue[n:]
	s.qStart += uint64(n)
	return b
}

// messages returns what carries a batch: one message, or for a resync larger than
// MaxChunkBytes the chunks of a chunked resync.
func (s *Syncer) messages(b *sent) []*sluicev1.SyncRequest {
	if b.replaceAll {
		if chunks := ResyncChunks(b.seq, b.deltas, s.opts.MaxChunkBytes); len(chunks) > 1 {
			out := make([]*sluicev1.SyncRequest, len(chunks))
			for i, c := range chunks {
				out[i] = &sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_ResyncChunk{ResyncChunk: c}}
			}
			return out
		}
	}
	return []*sluicev1.SyncRequest{{Message: &sluicev1.SyncRequest_Batch{
		Batch: &sluicev1.DeltaBatch{Sequence: b.seq, Deltas: b.deltas, ReplaceAll: b.replaceAll},
	}}}
}

// acked records an acknowledged batch; storeID is the id of the store that applied
// it, which the revision now belongs to.
func (s *Syncer) acked(b *sent, ack *sluicev1.BatchAck, storeID string) {
	s.mu.Lock()
	s.storeID = storeID
	if b.replaceAll && !b.superseded {
		// After a restart the server's revisions may start lower: take its word.
		s.revision = ack.GetRevision()
		if s.resyncSent {
			s.resync, s.resyncSent = false, false
		}
	} else {
		s.revision = max(s.revision, ack.GetRevision())
	}
	if !b.superseded {
		s.done = max(s.done, b.end)
	}
	s.notify()
	s.mu.Unlock()
	if s.opts.OnAck != nil {
		s.opts.OnAck(ack, b.replaceAll)
	}
}

// rejected handles a rejection; an error ends the stream.
func (s *Syncer) rejected(b *sent, rej *sluicev1.BatchRejected) error {
	if b.superseded {
		return nil
	}
	if codes.Code(rej.GetCode()) == codes.FailedPrecondition {
		// The server wants the whole state first; the resync covers this batch. A resync
		// refused so (its cluster was deleted before its last chunk) is sent again.
		s.mu.Lock()
		if !s.resync || b.replaceAll {
			s.requestResync("server: " + rej.GetMessage())
		}
		s.mu.Unlock()
		return nil
	}
	rerr := &RejectedError{Rejection: rej, Deltas: b.deltas, end: b.end}
	s.mu.Lock()
	if len(s.rejects) >= 100 {
		s.rejects = s.rejects[1:]
	}
	s.rejects = append(s.rejects, rerr)
	if b.replaceAll {
		// The snapshot itself is bad: try again after a backoff, with a fresh one.
		s.resyncSent = false
		s.notify()
		s.mu.Unlock()
		if s.opts.OnReject != nil {
			s.opts.OnReject(rej, b.deltas)
		}
		return rerr
	}
	s.done = max(s.done, b.end)
	s.notify()
	s.mu.Unlock()
	if s.opts.OnReject != nil {
		s.opts.OnReject(rej, b.deltas)
	}
	return nil
}

// requeue puts the batches left unanswered by a failed stream back at the front of
// the queue, to be sent again on the next one. Batches a replace_all superseded are
// dropped; an unanswered replace_all is sent again (with a fresh snapshot).
func (s *Syncer) requeue(inflight []*sent) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var back []*sluicev1.Delta
	from := s.qStart
	for _, b := range inflight {
		switch {
		case b.superseded:
		case b.replaceAll:
			s.resyncSent = false
		default:
			if len(back) == 0 {
				from = b.from
			}
			back = append(back, b.deltas...)
		}
	}
	if len(back) > 0 {
		s.queue = append(back, s.queue...)
		s.qStart = from
	}
}

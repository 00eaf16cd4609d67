package service

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// syncClient wraps a Sync stream for tests.
type syncClient struct {
	t *testing.T
	s sluicev1.ClusterStateService_SyncClient
}

func (h *harness) openSync(ctx context.Context, cluster string, resume uint64) (*syncClient, *sluicev1.SyncWelcome) {
	h.t.Helper()
	s, err := h.cs.Sync(ctx)
	if err != nil {
		h.t.Fatal(err)
	}
	c := &syncClient{t: h.t, s: s}
	c.send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: cluster, ResumeRevision: resume}}})
	w := c.recv().GetWelcome()
	if w == nil {
		h.t.Fatal("first server message is not a welcome")
	}
	return c, w
}

func (c *syncClient) send(m *sluicev1.SyncRequest) {
	c.t.Helper()
	if err := c.s.Send(m); err != nil {
		c.t.Fatalf("send: %v", err)
	}
}

func (c *syncClient) recv() *sluicev1.SyncResponse {
	c.t.Helper()
	m, err := c.s.Recv()
	if err != nil {
		c.t.Fatalf("recv: %v", err)
	}
	return m
}

// batch sends a batch and returns the server's answer.
func (c *syncClient) batch(seq uint64, replaceAll bool, ds ...*sluicev1.Delta) *sluicev1.SyncResponse {
	c.t.Helper()
	c.send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: &sluicev1.DeltaBatch{
		Sequence: seq, ReplaceAll: replaceAll, Deltas: ds,
	}}})
	return c.recv()
}

func wantAck(t *testing.T, m *sluicev1.SyncResponse, seq uint64) uint64 {
	t.Helper()
	a := m.GetAck()
	if a == nil || a.GetSequence() != seq {
		t.Fatalf("got %v, want an ack of %d", m, seq)
	}
	return a.GetRevision()
}

func wantRejected(t *testing.T, m *sluicev1.SyncResponse, seq uint64, code codes.Code) *sluicev1.BatchRejected {
	t.Helper()
	r := m.GetRejected()
	if r == nil || r.GetSequence() != seq || codes.Code(r.GetCode()) != code {
		t.Fatalf("got %v, want a rejection of %d with %s", m, seq, code)
	}
	return r
}

func TestSync(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	c, w := h.openSync(ctx, "c1", 0)
	if w.GetRevision() != 0 {
		t.Fatalf("welcome revision %d", w.GetRevision())
	}
	r1 := wantAck(t, c.batch(1, true, node("n1", cpu("4")), job("j1", "", 1)), 1)
	r2 := wantAck(t, c.batch(2, false, task("t1", "j1", cpu("1"))), 2)
	if r1 == 0 || r2 <= r1 {
		t.Fatalf("revisions %d then %d", r1, r2)
	}
	// A bad batch is rejected with paths relative to the batch, changes nothing, and the
	// stream goes on.
	rej := wantRejected(t, c.batch(3, false, node("n2", cpu("1")), task("t2", "j1", cpu("lots"))), 3, codes.InvalidArgument)
	if len(rej.GetViolations()) != 1 || rej.GetViolations()[0].GetField() != `deltas[1].upsert_task.resources["cpu"]` {
		t.Fatalf("violations %v", rej.GetViolations())
	}
	rej = wantRejected(t, c.batch(4, false, task("t2", "ghost", nil)), 4, codes.InvalidArgument)
	if rej.GetViolations()[0].GetField() != "deltas[0].upsert_task.job" {
		t.Fatalf("violations %v", rej.GetViolations())
	}
	if rev := h.store.Revision("c1"); rev != r2 {
		t.Fatalf("revision %d after rejections, want %d", rev, r2)
	}
	// Sequence numbers must increase.
	wantRejected(t, c.batch(4, false, node("n2", cpu("1"))), 4, codes.InvalidArgument)
	wantRejected(t, c.batch(2, false, node("n2", cpu("1"))), 2, codes.InvalidArgument)
	r5 := wantAck(t, c.batch(5, false, node("n2", cpu("1"))), 5)
	if r5 != r2+1 {
		t.Fatalf("revision %d, want %d", r5, r2+1)
	}
	// A second hello ends the stream.
	c.send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "c1"}}})
	_, err := c.s.Recv()
	wantCode(t, err, codes.InvalidArgument)

	// Resuming from the current revision needs no resync.
	c2, w2 := h.openSync(ctx, "c1", r5)
	if w2.GetRevision() != r5 {
		t.Fatalf("welcome %d, want %d", w2.GetRevision(), r5)
	}
	wantAck(t, c2.batch(1, false, node("n3", cpu("1"))), 1)
	if err := c2.s.CloseSend(); err != nil {
		t.Fatal(err)
	}
	if _, err := c2.s.Recv(); err != io.EOF {
		t.Fatalf("after CloseSend: %v, want EOF", err)
	}
}

func TestSyncResync(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")), node("n2", cpu("4")))
	// The client claims a revision the server does not have (say it restarted).
	c, w := h.openSync(ctx, "c1", 42)
	rs := c.recv().GetResyncRequired()
	if rs == nil || rs.GetRevision() != w.GetRevision() || rs.GetReason() == "" {
		t.Fatalf("resync %v (welcome %v)", rs, w)
	}
	wantRejected(t, c.batch(1, false, node("n3", cpu("1"))), 1, codes.FailedPrecondition)
	rev := wantAck(t, c.batch(2, true, node("n9", cpu("8"))), 2)
	wantAck(t, c.batch(3, false, node("n10", cpu("8"))), 3)
	resp, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetNodes()) != 2 || resp.GetNodes()[0].GetName() != "n10" || resp.GetNodes()[1].GetName() != "n9" {
		t.Fatalf("nodes after replace_all: %v", resp.GetNodes())
	}
	if rev <= w.GetRevision() {
		t.Fatalf("revision after replace_all %d, before %d", rev, w.GetRevision())
	}
}

func TestSyncResumesFromAnOlderRevision(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	first := h.apply("c1", node("n1", cpu("4")))
	// Another write (a plan commit, say) moves the cluster on; the client saw only first.
	h.apply("c1", node("n2", cpu("4")))
	c, w := h.openSync(ctx, "c1", first)
	if w.GetRevision() <= first {
		t.Fatalf("welcome revision %d, want above %d", w.GetRevision(), first)
	}
	// No resync: the next message answers the batch.
	wantAck(t, c.batch(1, false, node("n3", cpu("1"))), 1)
}

func TestSyncFirstMessageMustBeHello(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	s, err := h.cs.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: &sluicev1.DeltaBatch{}}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Recv()
	wantViolation(t, err, "hello", ReasonInvalidField)

	s, err = h.cs.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "Bad Name"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Recv()
	wantViolation(t, err, "hello.cluster", ReasonInvalidField)
}

func TestSyncEndsOnShutdown(t *testing.T) {
	h := newHarness(t)
	c, _ := h.openSync(ctxT(t), "c1", 0)
	done := make(chan error, 1)
	go func() {
		_, err := c.s.Recv()
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	h.srv.Shutdown()
	select {
	case err := <-done:
		wantCode(t, err, codes.Unavailable)
	case <-time.After(5 * time.Second):
		t.Fatal("Sync did not end on shutdown")
	}
	// GracefulStop now completes at once.
	stopped := make(chan struct{})
	go func() { h.gs.GracefulStop(); close(stopped) }()
	select {
	case <-stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("GracefulStop hangs")
	}
}

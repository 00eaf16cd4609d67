package service

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// chunk sends one chunk of a resync; chunks are answered only as a whole.
func (c *syncClient) chunk(seq uint64, last bool, ds ...*sluicev1.Delta) {
	c.t.Helper()
	c.send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_ResyncChunk{ResyncChunk: &sluicev1.ResyncChunk{
		Sequence: seq, Last: last, Deltas: ds,
	}}})
}

// nodeNames lists the nodes of a cluster.
func (h *harness) nodeNames(cluster string) string {
	h.t.Helper()
	resp, err := h.cs.ListNodes(ctxT(h.t), &sluicev1.ListNodesRequest{Cluster: cluster})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, n := range resp.GetNodes() {
		out = append(out, n.GetName())
	}
	return strings.Join(out, ",")
}

// waitStaged waits until the store stages parts chunks in all (0: nothing staged).
func (h *harness) waitStaged(parts int) {
	h.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := 0
		for _, st := range h.store.StagedResyncs() {
			n += st.Parts
		}
		if n == parts {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("the store stages %d parts, want %d: %+v", n, parts, h.store.StagedResyncs())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// statusOf returns the google.rpc.Status of a rejection as a status, with its ErrorInfo
// reason and BadRequest fields.
func statusOf(t *testing.T, rej *sluicev1.BatchRejected) (*status.Status, string, []string) {
	t.Helper()
	if rej.GetStatus() == nil {
		t.Fatalf("rejection %v has no status", rej)
	}
	st := status.FromProto(rej.GetStatus())
	if int32(st.Code()) != rej.GetCode() || st.Message() != rej.GetMessage() {
		t.Fatalf("status %v does not match the rejection's code and message %v", st, rej)
	}
	fields, reason := fieldsOf(st)
	return st, reason, fields
}

func TestSyncChunkedResyncSwapsAtTheLastChunk(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	old := h.apply("c1", node("n1", cpu("4")), node("n2", cpu("4")), job("j0", "", 1), task("t0", "j0", cpu("1")))
	c, _ := h.openSync(ctx, "c1", 0)
	// References cross chunks: the task comes before its job and node.
	c.chunk(7, false, taskMsg(&sluicev1.Task{Name: "t1", Job: "j1", Node: "n9", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Resources: cpu("1")}))
	c.chunk(7, false, job("j1", "", 1))
	h.waitStaged(2)
	if got := h.nodeNames("c1"); got != "n1,n2" || h.store.Revision("c1") != old {
		t.Fatalf("before the last chunk: nodes %s at revision %d, want the old n1,n2 at %d", got, h.store.Revision("c1"), old)
	}
	c.chunk(7, true, node("n9", cpu("8")))
	rev := wantAck(t, c.recv(), 7)
	if rev != old+1 {
		t.Fatalf("revision %d after the resync, want %d", rev, old+1)
	}
	if got := h.nodeNames("c1"); got != "n9" {
		t.Fatalf("nodes %s after the resync, want n9", got)
	}
	if _, err := h.cs.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: "c1", Name: "t0"}); status.Code(err) != codes.NotFound {
		t.Fatalf("the old task survived the resync: %v", err)
	}
	h.waitStaged(0)
	// The stream goes on with batches.
	wantAck(t, c.batch(8, false, node("n10", cpu("1"))), 8)
}

func TestSyncChunkedResyncRefusals(t *testing.T) {
	tests := []struct {
		name   string
		chunks [][]*sluicev1.Delta // the last one is sent with last set
		code   codes.Code
		reason string
		field  string
	}{
		{"a bad field in a middle chunk",
			[][]*sluicev1.Delta{{node("n9", cpu("8"))}, {job("j1", "", 1), task("t1", "j1", cpu("lots"))}, {node("n10", cpu("1"))}},
			codes.InvalidArgument, ReasonInvalidField, `chunks[1].deltas[1].upsert_task.resources["cpu"]`},
		{"a reference no chunk satisfies",
			[][]*sluicev1.Delta{{node("n9", cpu("8"))}, {job("j1", "", 1)}, {task("t1", "j1", cpu("1")), task("t2", "ghost", cpu("1"))}},
			codes.InvalidArgument, ReasonInvalidReference, "chunks[2].deltas[1].upsert_task.job"},
		{"an object in two chunks",
			[][]*sluicev1.Delta{{node("n9", cpu("8"))}, {node("n8", cpu("1")), node("n9", cpu("1"))}, {}},
			codes.InvalidArgument, ReasonInvalidField, "chunks[1].deltas[1].upsert_node.name"},
		{"a delete",
			[][]*sluicev1.Delta{{node("n9", cpu("8"))}, {{Change: &sluicev1.Delta_Delete{Delete: &sluicev1.ObjectRef{Kind: sluicev1.ObjectKind_OBJECT_KIND_NODE, Name: "n1"}}}}},
			codes.InvalidArgument, ReasonInvalidField, "chunks[1].deltas[0].delete"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			ctx := ctxT(t)
			old := h.apply("c1", node("n1", cpu("4")))
			c, _ := h.openSync(ctx, "c1", 0)
			last := len(tt.chunks) - 1
			for i, ds := range tt.chunks {
				c.chunk(3, i == last, ds...)
			}
			// Chunks after a refused one get no answer: the next answer is the batch's.
			c.send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: &sluicev1.DeltaBatch{Sequence: 4}}})
			rej := wantRejected(t, c.recv(), 3, tt.code)
			_, reason, fields := statusOf(t, rej)
			if reason != tt.reason || len(fields) != 1 || fields[0] != tt.field {
				t.Fatalf("rejection reason %s, fields %v; want %s, [%s]", reason, fields, tt.reason, tt.field)
			}
			if len(rej.GetViolations()) != 1 || rej.GetViolations()[0].GetField() != tt.field {
				t.Fatalf("the old violations field %v does not repeat the status", rej.GetViolations())
			}
			wantAck(t, c.recv(), 4)
			if got := h.nodeNames("c1"); got != "n1" || h.store.Revision("c1") != old+1 {
				t.Fatalf("a refused resync changed the cluster: nodes %s, revision %d", got, h.store.Revision("c1"))
			}
			h.waitStaged(0)
		})
	}
}

// TestSyncChunkedResyncAbandoned: another message before the last chunk abandons the resync,
// which is rejected; the message is then handled.
func TestSyncChunkedResyncAbandoned(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")))
	c, _ := h.openSync(ctx, "c1", 0)
	c.chunk(5, false, node("n9", cpu("1")))
	wantRejected(t, c.batch(6, false, node("n2", cpu("1"))), 5, codes.InvalidArgument)
	wantAck(t, c.recv(), 6)
	c.chunk(7, false, node("n9", cpu("1")))
	c.chunk(8, true, node("n7", cpu("1")))
	wantRejected(t, c.recv(), 7, codes.InvalidArgument)
	wantAck(t, c.recv(), 8)
	if got := h.nodeNames("c1"); got != "n7" {
		t.Fatalf("nodes %s, want n7 alone", got)
	}
	h.waitStaged(0)
}

// TestSyncBrokenResyncLeavesTheOldState breaks a stream halfway through a resync: the
// cluster keeps its old state and revision, and the stage is freed.
func TestSyncBrokenResyncLeavesTheOldState(t *testing.T) {
	h := newHarness(t)
	old := h.apply("c1", node("n1", cpu("4")), node("n2", cpu("4")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, _ := h.openSync(ctx, "c1", 0)
	for i := range 5 {
		c.chunk(1, false, node("n9"+string(rune('a'+i)), cpu("1")))
	}
	h.waitStaged(5)
	cancel()
	h.waitStaged(0)
	if got := h.nodeNames("c1"); got != "n1,n2" || h.store.Revision("c1") != old {
		t.Fatalf("after a broken resync: nodes %s at revision %d, want n1,n2 at %d", got, h.store.Revision("c1"), old)
	}
}

func TestSyncResyncTooLarge(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.MaxResyncBytes = 6000 }})
	h.apply("c1", node("n1", cpu("4")))
	c, _ := h.openSync(ctxT(t), "c1", 0)
	var big []*sluicev1.Delta
	for i := range 100 {
		big = append(big, node(strings.Repeat("n", 20)+string(rune('a'+i%26))+string(rune('a'+i/26)), cpu("1")))
	}
	c.chunk(1, false, big[:30]...)
	c.chunk(1, false, big[30:]...)
	c.chunk(1, true)
	rej := wantRejected(t, c.recv(), 1, codes.ResourceExhausted)
	if _, reason, fields := statusOf(t, rej); len(fields) != 1 || fields[0] != "chunks[1]" || reason != ReasonResyncTooLarge {
		t.Fatalf("fields %v reason %q, want chunks[1] and %s", fields, reason, ReasonResyncTooLarge)
	}
	h.waitStaged(0)
	if got := h.nodeNames("c1"); got != "n1" {
		t.Fatalf("nodes %s", got)
	}
}

// TestSyncResumeChecksTheStoreID: a resume names the store its revision came from; another
// store's revision gets ResyncRequired even when the numbers match.
func TestSyncResumeChecksTheStoreID(t *testing.T) {
	a, b := newHarness(t), newHarness(t) // b is a restarted a: a store started anew
	revA := a.apply("c1", node("n1", cpu("4")))
	revB := b.apply("c1", node("x1", cpu("4")))
	if revA != revB {
		t.Fatalf("the two stores are at %d and %d; the test wants equal revisions", revA, revB)
	}
	ctx := ctxT(t)
	_, w := a.openSync(ctx, "c1", 0)
	if w.GetStoreId() == "" || w.GetStoreId() != a.store.ID() {
		t.Fatalf("welcome store id %q, want the store's %q", w.GetStoreId(), a.store.ID())
	}
	hello := func(h *harness, id string) (*syncClient, *sluicev1.SyncWelcome) {
		s, err := h.cs.Sync(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c := &syncClient{t: t, s: s}
		c.send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{
			Cluster: "c1", ResumeRevision: revA, ResumeStoreId: id,
		}}})
		return c, c.recv().GetWelcome()
	}
	// The same store: the resume holds.
	c, _ := hello(a, w.GetStoreId())
	wantAck(t, c.batch(1, false, node("n2", cpu("1"))), 1)
	// Another store, the same revision: resync.
	c, wb := hello(b, w.GetStoreId())
	if wb.GetStoreId() == w.GetStoreId() {
		t.Fatal("two in-memory stores share a store id")
	}
	rs := c.recv().GetResyncRequired()
	if rs == nil || !strings.Contains(rs.GetReason(), "store id") {
		t.Fatalf("got %v, want ResyncRequired naming the store id", rs)
	}
	rej := wantRejected(t, c.batch(1, false, node("x2", cpu("1"))), 1, codes.FailedPrecondition)
	if _, reason, _ := statusOf(t, rej); reason != ReasonResyncRequired {
		t.Fatalf("reason %s, want %s", reason, ReasonResyncRequired)
	}
}

// TestSyncRejectionCarriesTheApplyDeltasStatus: a Sync rejection's status has the code,
// reason and field violations ApplyDeltas gives for the same batch (paths relative to the
// batch rather than the request).
func TestSyncRejectionCarriesTheApplyDeltasStatus(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")))
	bad := []*sluicev1.Delta{node("n2", cpu("1")), task("t1", "ghost", cpu("1"))}
	_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{Deltas: bad}})
	want := status.Convert(err)
	wantFields, wantReason := fieldsOf(want)
	c, _ := h.openSync(ctx, "c1", 0)
	rej := wantRejected(t, c.batch(1, false, bad...), 1, want.Code())
	got, reason, fields := statusOf(t, rej)
	if reason != wantReason || len(fields) != len(wantFields) {
		t.Fatalf("Sync status %v, ApplyDeltas status %v", got.Proto(), want.Proto())
	}
	for i := range fields {
		if "batch."+fields[i] != wantFields[i] {
			t.Fatalf("Sync field %q, ApplyDeltas field %q", fields[i], wantFields[i])
		}
	}
	var info *errdetails.ErrorInfo
	for _, d := range got.Details() {
		if e, ok := d.(*errdetails.ErrorInfo); ok {
			info = e
		}
	}
	if info == nil || info.GetDomain() != ErrorDomain {
		t.Fatalf("no ErrorInfo of domain %s in %v", ErrorDomain, got.Details())
	}
}

// TestDeleteClusterAbandonsAnOpenResync: a cluster deleted (and written again) while a Sync
// stream has a chunked resync open: the store drops what was staged, the resync's next chunk
// is rejected with RESYNC_REQUIRED and its remaining chunks ignored, nothing of it applies,
// and the stream's next resync does.
func TestDeleteClusterAbandonsAnOpenResync(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")))
	c, _ := h.openSync(ctx, "c1", 0)
	c.chunk(1, false, node("n2", cpu("4")))
	h.waitStaged(1)
	if _, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	h.waitStaged(0)
	h.apply("c1", node("x1", cpu("4"))) // created again by another writer
	c.chunk(1, false, node("n3", cpu("4")))
	c.chunk(1, true, node("n4", cpu("4")))
	rej := wantRejected(t, c.recv(), 1, codes.FailedPrecondition)
	if _, reason, _ := statusOf(t, rej); reason != ReasonResyncRequired || !strings.Contains(rej.GetMessage(), "deleted") {
		t.Fatalf("rejection %q with reason %s, want one saying the cluster was deleted, %s", rej.GetMessage(), reason, ReasonResyncRequired)
	}
	h.waitStaged(0)
	if got := h.nodeNames("c1"); got != "x1" {
		t.Fatalf("nodes after the abandoned resync: %s, want x1", got)
	}
	// The stream sends its whole state again, then deltas on it.
	c.chunk(2, false, node("n5", cpu("4")))
	c.chunk(2, true, node("n6", cpu("4")))
	wantAck(t, c.recv(), 2)
	wantAck(t, c.batch(3, false, node("n7", cpu("4"))), 3)
	if got := h.nodeNames("c1"); got != "n5,n6,n7" {
		t.Fatalf("nodes after the new resync: %s", got)
	}
}

// TestChunkedResyncAppliesAfterADelete: like a replace_all batch, a chunked resync applies to
// a cluster deleted after the stream's hello, and the stream's deltas apply after it.
func TestChunkedResyncAppliesAfterADelete(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	c, _ := h.openSync(ctx, "c1", 0)
	wantAck(t, c.batch(1, true, node("n1", cpu("4"))), 1)
	if _, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	wantRejected(t, c.batch(2, false, node("n2", cpu("4"))), 2, codes.FailedPrecondition)
	c.chunk(3, false, node("n3", cpu("4")))
	c.chunk(3, true, node("n4", cpu("4")))
	if rev := wantAck(t, c.recv(), 3); rev != 1 {
		t.Fatalf("revision of the resync: %d, want 1", rev)
	}
	wantAck(t, c.batch(4, false, node("n5", cpu("4"))), 4)
	if got := h.nodeNames("c1"); got != "n3,n4,n5" {
		t.Fatalf("nodes: %s", got)
	}
}

package sluice_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// syncLog records what a Syncer reports.
type syncLog struct {
	mu       sync.Mutex
	acks     int
	full     int
	resyncs  []string
	rejected []*sluicev1.BatchRejected
	errs     []error
}

func (l *syncLog) options(o sluice.SyncOptions) sluice.SyncOptions {
	o.OnAck = func(_ *sluicev1.BatchAck, replaceAll bool) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.acks++
		if replaceAll {
			l.full++
		}
	}
	o.OnResync = func(reason string) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.resyncs = append(l.resyncs, reason)
	}
	o.OnReject = func(r *sluicev1.BatchRejected, _ []*sluicev1.Delta) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.rejected = append(l.rejected, r)
	}
	o.OnError = func(err error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.errs = append(l.errs, err)
	}
	o.Backoff = sluice.Backoff{Initial: 10 * time.Millisecond, Max: 200 * time.Millisecond}
	return o
}

func (l *syncLog) counts() (acks, full int, resyncs []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acks, l.full, append([]string(nil), l.resyncs...)
}

// TestSyncBatches sends many deltas and checks they arrive in several batches, after
// an initial full sync.
func TestSyncBatches(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	rm := newFakeRM()
	rm.upsert(node("n000", "8"))
	var log syncLog
	s, err := c.NewSyncer(log.options(sluice.SyncOptions{Cluster: "batches", Snapshot: rm.snapshot, MaxBatchDeltas: 100}))
	if err != nil {
		t.Fatal(err)
	}
	runSyncer(t, s)
	flush(t, s) // the initial full sync
	for i := 1; i < 1000; i++ {
		s.Send(rm.upsert(node(fmt.Sprintf("n%03d", i), "8")))
	}
	rev := flush(t, s)
	if got := countNodes(t, c, "batches"); got != 1000 {
		t.Fatalf("server has %d nodes, want 1000", got)
	}
	acks, full, resyncs := log.counts()
	if full != 1 || len(resyncs) != 1 || rm.snapshotCount() != 1 {
		t.Errorf("%d full syncs, %d resyncs, %d snapshots; want 1 each", full, len(resyncs), rm.snapshotCount())
	}
	if acks < 11 || acks > 1000 {
		t.Errorf("%d acks for a full sync and 999 deltas in batches of at most 100", acks)
	}
	if rev == 0 || rev != s.Revision() {
		t.Errorf("Flush revision %d, Revision %d", rev, s.Revision())
	}
	// Flush with nothing new returns at once with the same revision.
	if again := flush(t, s); again != rev {
		t.Errorf("second Flush %d, want %d", again, rev)
	}
}

// TestSyncRejectedBatch reports a bad batch to Flush and OnReject and goes on.
func TestSyncRejectedBatch(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	rm := newFakeRM()
	var log syncLog
	s, _ := c.NewSyncer(log.options(sluice.SyncOptions{Cluster: "rejects", Snapshot: rm.snapshot, Linger: -1}))
	runSyncer(t, s)
	flush(t, s)
	s.Send(node("bad", "lots"))
	ctx := context.Background()
	_, err := s.Flush(ctx)
	var rej *sluice.RejectedError
	if !errors.As(err, &rej) || !strings.Contains(err.Error(), "allocatable") {
		t.Fatalf("Flush after a bad node: %v, want a *RejectedError naming allocatable", err)
	}
	s.Send(rm.upsert(node("good", "4")))
	if _, err := s.Flush(ctx); err != nil {
		t.Fatalf("Flush after a good node: %v", err)
	}
	if got := countNodes(t, c, "rejects"); got != 1 {
		t.Fatalf("%d nodes, want 1", got)
	}
	if len(log.rejected) != 1 {
		t.Fatalf("OnReject called %d times, want 1", len(log.rejected))
	}
}

// TestSyncResumeAndResyncAfterRestart resumes a second Syncer from the first one's
// revision without a resync, then restarts the server (losing its state): the Syncer
// reconnects, resumes with the old store's id, is told to resync, and sends the whole
// state.
func TestSyncResumeAndResyncAfterRestart(t *testing.T) {
	addr1, stop1 := startServer(t)
	var d switchDialer
	d.set(addr1)
	c := dial(t, "passthrough:///sluice", d.option())
	rm := newFakeRM()
	for i := range 5 {
		rm.upsert(node(fmt.Sprintf("n%d", i), "8"))
	}
	var log1 syncLog
	s1, _ := c.NewSyncer(log1.options(sluice.SyncOptions{Cluster: "restart", Snapshot: rm.snapshot}))
	stopRun1 := runSyncer(t, s1)
	s1.Send(rm.upsert(job("j", 2)), rm.upsert(task("j-0", "j")), rm.upsert(task("j-1", "j")))
	rev1 := flush(t, s1)
	stopRun1()

	// A new Syncer (a restarted RM) resumes from rev1: the server still has that
	// state, so there is no full sync.
	var log2 syncLog
	s2, _ := c.NewSyncer(log2.options(sluice.SyncOptions{Cluster: "restart", Snapshot: rm.snapshot,
		ResumeRevision: rev1, ResumeStoreID: s1.StoreID()}))
	runSyncer(t, s2)
	s2.Send(rm.upsert(node("n5", "8")))
	rev2 := flush(t, s2)
	if _, full, resyncs := log2.counts(); full != 0 || len(resyncs) != 0 || rev2 <= rev1 {
		t.Fatalf("resume: %d full syncs, resyncs %q, revision %d after %d", full, resyncs, rev2, rev1)
	}

	// The server restarts empty on another port.
	addr2, _ := startServer(t)
	d.set(addr2)
	stop1()
	s2.Send(rm.upsert(node("n6", "8")))
	flush(t, s2)
	_, full, resyncs := log2.counts()
	if full != 1 || len(resyncs) != 1 || !strings.Contains(resyncs[0], "store id") {
		t.Fatalf("after the restart: %d full syncs, resyncs %q; want one, for another store's id", full, resyncs)
	}
	if got := countNodes(t, c, "restart"); got != 7 {
		t.Fatalf("restarted server has %d nodes, want 7", got)
	}
	tasks, err := c.State.ListTasks(context.Background(), &sluicev1.ListTasksRequest{Cluster: "restart"})
	if err != nil || len(tasks.GetTasks()) != 2 {
		t.Fatalf("restarted server: tasks %v, %v", tasks.GetTasks(), err)
	}
	// The resynced state schedules.
	res, err := c.ScheduleAndCommit(context.Background(), "restart")
	if err != nil || len(binds(res.Applied)) != 2 {
		t.Fatalf("schedule after the resync: %v, %v", err, res)
	}
	// Later deltas go on over the same Syncer.
	s2.Send(rm.upsert(node("n7", "8")))
	flush(t, s2)
	if got := countNodes(t, c, "restart"); got != 8 {
		t.Fatalf("%d nodes, want 8", got)
	}
}

// TestSyncRequestedResync resends the whole state on request, deleting what the RM
// no longer has.
func TestSyncRequestedResync(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	rm := newFakeRM()
	rm.upsert(node("keep", "8"))
	s, _ := c.NewSyncer(sluice.SyncOptions{Cluster: "manual", Snapshot: rm.snapshot})
	runSyncer(t, s)
	flush(t, s)
	s.Send(node("stray", "8")) // sent but not in the RM's state
	flush(t, s)
	if got := countNodes(t, c, "manual"); got != 2 {
		t.Fatalf("%d nodes, want 2", got)
	}
	s.Resync()
	flush(t, s)
	if got := countNodes(t, c, "manual"); got != 1 {
		t.Fatalf("after the resync: %d nodes, want 1", got)
	}
}

// TestSyncWaitsForTheServer queues deltas while the server is down and delivers them
// once it is up.
func TestSyncWaitsForTheServer(t *testing.T) {
	var d switchDialer
	d.set("127.0.0.1:1") // nothing listens there
	c := dial(t, "passthrough:///sluice", d.option())
	rm := newFakeRM()
	var log syncLog
	s, _ := c.NewSyncer(log.options(sluice.SyncOptions{Cluster: "late", Snapshot: rm.snapshot}))
	runSyncer(t, s)
	s.Send(rm.upsert(node("n1", "8")))
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	_, err := s.Flush(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Flush with no server: %v, want a deadline", err)
	}
	addr, _ := startServer(t)
	d.set(addr)
	flush(t, s)
	if got := countNodes(t, c, "late"); got != 1 {
		t.Fatalf("%d nodes, want 1", got)
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if len(log.errs) == 0 {
		t.Error("OnError never told of the failed connections")
	}
}

func TestNewSyncerNeedsClusterAndSnapshot(t *testing.T) {
	c := dial(t, "127.0.0.1:1")
	if _, err := c.NewSyncer(sluice.SyncOptions{Snapshot: func() []*sluicev1.Delta { return nil }}); err == nil {
		t.Error("no cluster accepted")
	}
	if _, err := c.NewSyncer(sluice.SyncOptions{Cluster: "c"}); err == nil {
		t.Error("no snapshot accepted")
	}
}

// TestSyncBadClusterEndsRun returns the server's INVALID_ARGUMENT instead of retrying.
func TestSyncBadClusterEndsRun(t *testing.T) {
	addr, _ := startServer(t)
	c := dial(t, addr)
	s, _ := c.NewSyncer(sluice.SyncOptions{Cluster: "Not A Cluster!", Snapshot: newFakeRM().snapshot})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.Run(ctx); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("Run: %v, want INVALID_ARGUMENT", err)
	}
}

package sluice_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// grpcDefaultMax is gRPC's default bound on a received message.
const grpcDefaultMax = 4 << 20

// startServer4MiB starts an in-process server that takes messages of at most 4 MiB.
func startServer4MiB(t *testing.T) string {
	t.Helper()
	addr, stop, err := service.StartInProcess(context.Background(), builtin.Registry(),
		func(o *service.Options) { o.MaxRecvBytes = grpcDefaultMax })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

// dial4MiB connects with gRPC's default 4 MiB bound on messages both ways.
func dial4MiB(t *testing.T, addr string) *sluice.Client {
	return dial(t, addr, sluice.WithDialOptions(grpc.WithDefaultCallOptions(
		grpc.MaxCallSendMsgSize(grpcDefaultMax), grpc.MaxCallRecvMsgSize(grpcDefaultMax))))
}

// bigCluster is a cluster of nodes, jobs of 10 tasks each, and tasks, the placed ones
// running on their nodes, as upserts in an order whose references point forward (tasks
// first), so that they cross chunks.
func bigCluster(nodes, tasks int) []*sluicev1.Delta {
	var out []*sluicev1.Delta
	for i := range tasks {
		t := &sluicev1.Task{
			Name: fmt.Sprintf("task-%07d", i), Namespace: "batch", Job: fmt.Sprintf("job-%06d", i/10),
			Resources: map[string]string{"cpu": "500m", "memory": "1Gi"},
		}
		if i%2 == 0 {
			t.Node, t.Status = fmt.Sprintf("node-%05d", i%nodes), sluicev1.TaskStatus_TASK_STATUS_RUNNING
		}
		out = append(out, sluice.UpsertTask(t))
	}
	for j := range (tasks + 9) / 10 {
		out = append(out, sluice.UpsertJob(&sluicev1.Job{Name: fmt.Sprintf("job-%06d", j), Namespace: "batch", Queue: "default"}))
	}
	for i := range nodes {
		out = append(out, node(fmt.Sprintf("node-%05d", i), "64"))
	}
	return out
}

// countTasks counts the tasks on a node.
func countTasks(t *testing.T, c *sluice.Client, cluster, node string) int {
	t.Helper()
	n, token := 0, ""
	for {
		resp, err := c.State.ListTasks(context.Background(), &sluicev1.ListTasksRequest{Cluster: cluster, Node: node, PageSize: 1000, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		n += len(resp.GetTasks())
		if token = resp.GetNextPageToken(); token == "" {
			return n
		}
	}
}

// TestSyncResyncsAClusterFarLargerThanOneMessage resyncs, through a Syncer, a cluster whose
// encoding is several times gRPC's default 4 MiB message limit, with that limit on both
// sides: the resync goes as chunks and replaces the cluster whole.
func TestSyncResyncsAClusterFarLargerThanOneMessage(t *testing.T) {
	addr := startServer4MiB(t)
	c := dial4MiB(t, addr)
	// What was there before goes.
	if _, err := c.Apply(context.Background(), "big", true, node("stale", "8")); err != nil {
		t.Fatal(err)
	}
	const nodes, tasks = 4000, 180000
	cluster := bigCluster(nodes, tasks)
	size := proto.Size(&sluicev1.DeltaBatch{Deltas: cluster})
	if size < 3*grpcDefaultMax {
		t.Fatalf("the cluster encodes to %d bytes: the test wants several times %d", size, grpcDefaultMax)
	}
	var log syncLog
	s, err := c.NewSyncer(log.options(sluice.SyncOptions{Cluster: "big", Snapshot: func() []*sluicev1.Delta { return cluster }}))
	if err != nil {
		t.Fatal(err)
	}
	runSyncer(t, s)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rev, err := s.Flush(ctx)
	if err != nil {
		t.Fatalf("Flush: %v (errors %v)", err, log.errs)
	}
	t.Logf("resynced %d bytes (%d nodes, %d tasks) in %s", size, nodes, tasks, time.Since(start).Round(time.Millisecond))
	if _, full, _ := log.counts(); full != 1 || len(log.errs) != 0 {
		t.Fatalf("%d full syncs, stream errors %v; want one resync and no error", full, log.errs)
	}
	if got := countNodes(t, c, "big"); got != nodes {
		t.Fatalf("%d nodes after the resync, want %d", got, nodes)
	}
	for _, name := range []string{"task-0000000", fmt.Sprintf("task-%07d", tasks/2+1), fmt.Sprintf("task-%07d", tasks-1)} {
		if _, err := c.State.GetTask(context.Background(), &sluicev1.GetTaskRequest{Cluster: "big", Namespace: "batch", Name: name}); err != nil {
			t.Fatalf("task %s after the resync: %v", name, err)
		}
	}
	if got, want := countTasks(t, c, "big", "node-00008"), tasks/nodes; got != want {
		t.Fatalf("%d tasks on node-00008 after the resync, want %d", got, want)
	}
	if _, err := c.State.GetNode(context.Background(), &sluicev1.GetNodeRequest{Cluster: "big", Name: "stale"}); err == nil {
		t.Fatal("the node the resync did not name survived it")
	}
	if rev != 2 {
		t.Fatalf("revision %d after the resync, want 2: one write for the whole cluster", rev)
	}
	// Deltas go on in batches after it.
	s.Send(node("node-new", "8"))
	flush(t, s)
	if got := countNodes(t, c, "big"); got != nodes+1 {
		t.Fatalf("%d nodes, want %d", got, nodes+1)
	}
}

// TestSyncResumeAcrossAnInMemoryRestartWithMatchingRevision: a server restarted without a data
// directory reaches, through another writer, the very revision a Syncer resumes from; the
// store id tells the Syncer to resync all the same, and the cluster becomes the RM's.
func TestSyncResumeAcrossAnInMemoryRestartWithMatchingRevision(t *testing.T) {
	addr1, stop1 := startServer(t)
	c1 := dial(t, addr1)
	rm := newFakeRM()
	rm.upsert(node("n1", "8"))
	s1, _ := c1.NewSyncer(sluice.SyncOptions{Cluster: "same", Snapshot: rm.snapshot})
	stopRun := runSyncer(t, s1)
	rev := flush(t, s1)
	revision, storeID := s1.Resume()
	stopRun()
	stop1()
	if revision != rev || storeID == "" {
		t.Fatalf("Resume() = %d, %q; want %d and a store id", revision, storeID, rev)
	}

	// The restarted server: another writer brings the cluster to the same revision.
	addr2, _ := startServer(t)
	c2 := dial(t, addr2)
	var got uint64
	for got < rev {
		var err error
		if got, err = c2.Apply(context.Background(), "same", false, node(fmt.Sprintf("other-%d", got), "8")); err != nil {
			t.Fatal(err)
		}
	}
	if got != rev {
		t.Fatalf("the restarted server is at revision %d, want %d", got, rev)
	}
	var log syncLog
	s2, _ := c2.NewSyncer(log.options(sluice.SyncOptions{Cluster: "same", Snapshot: rm.snapshot,
		ResumeRevision: revision, ResumeStoreID: storeID}))
	runSyncer(t, s2)
	s2.Send(rm.upsert(node("n2", "8")))
	flush(t, s2)
	_, full, resyncs := log.counts()
	if full != 1 || len(resyncs) != 1 || !strings.Contains(resyncs[0], "store id") {
		t.Fatalf("%d full syncs, resyncs %q; want one, for another store's id", full, resyncs)
	}
	if n := countNodes(t, c2, "same"); n != 2 {
		t.Fatalf("%d nodes, want the RM's two", n)
	}
	if s2.StoreID() == storeID || s2.StoreID() == "" {
		t.Fatalf("the Syncer kept store id %q after resyncing to another store", s2.StoreID())
	}
}

// TestResyncChunks checks the chunks' bounds and framing.
func TestResyncChunks(t *testing.T) {
	cluster := bigCluster(100, 5000)
	const limit = 64 << 10
	chunks := sluice.ResyncChunks(9, cluster, limit)
	if len(chunks) < 3 {
		t.Fatalf("%d chunks, want several", len(chunks))
	}
	n := 0
	for i, ch := range chunks {
		if size := proto.Size(ch); size > limit {
			t.Fatalf("chunk %d is %d bytes, over %d", i, size, limit)
		}
		if ch.GetSequence() != 9 || ch.GetLast() != (i == len(chunks)-1) {
			t.Fatalf("chunk %d: sequence %d, last %v", i, ch.GetSequence(), ch.GetLast())
		}
		for _, d := range ch.GetDeltas() {
			if d != cluster[n] {
				t.Fatalf("chunk %d: delta %d out of order", i, n)
			}
			n++
		}
	}
	if n != len(cluster) {
		t.Fatalf("the chunks carry %d deltas of %d", n, len(cluster))
	}
	if empty := sluice.ResyncChunks(1, nil, 0); len(empty) != 1 || !empty[0].GetLast() || len(empty[0].GetDeltas()) != 0 {
		t.Fatalf("an empty cluster gives %v, want one empty last chunk", empty)
	}
}

// TestMeasureLargeResync measures a resync of 20,000 nodes and 500,000 tasks through a Syncer
// with 4 MiB limits: its time and the process's peak heap (client and in-process server
// together). It runs only with SLUICE_MEASURE_RESYNC=1.
func TestMeasureLargeResync(t *testing.T) {
	if os.Getenv("SLUICE_MEASURE_RESYNC") == "" {
		t.Skip("set SLUICE_MEASURE_RESYNC=1 to measure a 500,000-task resync")
	}
	addr := startServer4MiB(t)
	c := dial4MiB(t, addr)
	const nodes, tasks = 20000, 500000
	cluster := bigCluster(nodes, tasks)
	size := proto.Size(&sluicev1.DeltaBatch{Deltas: cluster})
	var peak atomic.Uint64
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stopSampling:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	s, _ := c.NewSyncer(sluice.SyncOptions{Cluster: "huge", Snapshot: func() []*sluicev1.Delta { return cluster }})
	runSyncer(t, s)
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if _, err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	close(stopSampling)
	<-sampled
	cluster = nil
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	t.Logf("resync of %d nodes, %d tasks (%d MiB encoded, in 1 MiB chunks): %s; heap in use before %d MiB, peak %d MiB, after %d MiB (the stored cluster)",
		nodes, tasks, size>>20, took.Round(time.Millisecond),
		before.HeapInuse>>20, peak.Load()>>20, after.HeapInuse>>20)
	if got := countNodes(t, c, "huge"); got != nodes {
		t.Fatalf("%d nodes, want %d", got, nodes)
	}
}

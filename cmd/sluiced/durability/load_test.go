package durability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// TestLoad runs 50 Sync streams (one cluster each, a batch of 10 task updates at a time,
// each waiting for its acknowledgement) and a loop that schedules and commits the clusters in
// turn, against sluiced --data-dir, for a fixed time (10 s short, 60 s full, where the same
// runs in memory too, for comparison). Every call must succeed; the p99 latencies and the
// server's memory before and after are reported, and memory must level off (the state is
// bounded: the streams update the same tasks).
func TestLoad(t *testing.T) {
	need(t)
	dur := 10 * time.Second
	if full() {
		dur = 60 * time.Second
	}
	t.Run("durable", func(t *testing.T) { runLoad(t, dur, "--data-dir", t.TempDir()) })
	if full() {
		t.Run("memory", func(t *testing.T) { runLoad(t, dur) })
	}
}

func runLoad(t *testing.T, dur time.Duration, flags ...string) {
	const streams = 50
	const tasksPerCluster = 200
	// Committed plans are kept for ten times --plan-ttl (for GetPlan and ExplainJob); a short
	// TTL bounds that bookkeeping within the run, so that memory can level off. Go's own
	// collector (no heap floor): with the default 2 GiB floor the heap fills with garbage up
	// to the floor and levels off there whatever the state, and the check below would see no
	// leak smaller than that.
	p := newProc(t, "sluiced", append([]string{"--plan-ttl", "500ms", "--gc-min-heap", "none"}, flags...)...)
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready", p.ready)
	conn, err := grpc.NewClient(p.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stub := sluicev1.NewClusterStateServiceClient(conn)
	c := dial(t, p.grpc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var errs atomic.Int64
	fail := func(format string, args ...any) {
		if errs.Add(1) <= 10 {
			t.Errorf(format, args...)
		}
	}
	var acks, commits latencies
	var scheds latencies
	var deltas atomic.Int64
	deadline := time.Now().Add(dur)
	var wg sync.WaitGroup
	for i := range streams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cluster := fmt.Sprintf("load-%02d", i)
			stream, err := stub.Sync(ctx)
			if err != nil {
				fail("stream %d: %v", i, err)
				return
			}
			defer stream.CloseSend()
			if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: cluster}}}); err != nil {
				fail("stream %d: hello: %v", i, err)
				return
			}
			if m, err := stream.Recv(); err != nil || m.GetWelcome() == nil {
				fail("stream %d: welcome: %v %v", i, m, err)
				return
			}
			setup := []*sluicev1.Delta{job("j")}
			for n := range 20 {
				setup = append(setup, node(fmt.Sprintf("n%02d", n)))
			}
			for seq, k := uint64(1), 0; time.Now().Before(deadline); seq++ {
				b := &sluicev1.DeltaBatch{Sequence: seq}
				if seq == 1 {
					b.Deltas = setup
				}
				for range 10 {
					b.Deltas = append(b.Deltas, task(fmt.Sprintf("t%03d", k%tasksPerCluster), "j", sluicev1.TaskStatus_TASK_STATUS_PENDING))
					k++
				}
				start := time.Now()
				if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: b}}); err != nil {
					fail("stream %d: send: %v", i, err)
					return
				}
				m, err := stream.Recv()
				if err != nil {
					fail("stream %d: receive: %v", i, err)
					return
				}
				if m.GetAck() == nil || m.GetAck().GetSequence() != seq {
					fail("stream %d: batch %d answered with %v", i, seq, m)
					return
				}
				acks.add(time.Since(start))
				deltas.Add(int64(len(b.Deltas)))
			}
			if err := stream.CloseSend(); err == nil {
				if _, err := stream.Recv(); err != nil && !errors.Is(err, io.EOF) {
					fail("stream %d: end: %v", i, err)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // the scheduling loop, over the clusters in turn
		defer wg.Done()
		time.Sleep(200 * time.Millisecond)
		for k := 0; time.Now().Before(deadline); k++ {
			cluster := fmt.Sprintf("load-%02d", k%streams)
			start := time.Now()
			plan, err := c.Schedule(ctx, cluster, sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE)
			if err != nil {
				fail("schedule %s: %v", cluster, err)
				return
			}
			scheds.add(time.Since(start))
			start = time.Now()
			if len(plan.GetDecisions()) == 0 {
				err = c.Discard(ctx, cluster, plan.GetId())
			} else {
				_, err = c.Commit(ctx, cluster, plan.GetId())
			}
			if err != nil {
				fail("commit %s: %v", cluster, err)
				return
			}
			commits.add(time.Since(start))
		}
	}()

	time.Sleep(min(2*time.Second, dur/4))
	warm := p.rssKiB()
	peak := warm
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	midAt := time.Now().Add(time.Until(deadline) / 2)
	var mid, midAnon int64
wait:
	for {
		select {
		case <-done:
			break wait
		case now := <-tick.C:
			rss := p.rssKiB()
			peak = max(peak, rss)
			if mid == 0 && now.After(midAt) {
				mid, midAnon = rss, p.memKiB("RssAnon")
			}
		}
	}
	end := p.rssKiB()
	anon, file := p.memKiB("RssAnon"), p.memKiB("RssFile")
	st, _ := p.raft()
	if errs.Load() > 0 {
		t.Fatalf("%d unexpected errors", errs.Load())
	}
	report(t, "%d Sync streams + a schedule/commit loop for %s: %.0f deltas/s; batch ack %s; Schedule %s; Commit/Discard %s; RSS after warm-up %d MiB, half-way %d MiB (anonymous %d MiB), peak %d MiB, at the end %d MiB (anonymous %d MiB, mapped files %d MiB); log entries %d..%d (snapshot at %d)",
		streams, dur, float64(deltas.Load())/dur.Seconds(), acks.summary(), scheds.summary(), commits.summary(),
		warm/1024, mid/1024, midAnon/1024, peak/1024, end/1024, anon/1024, file/1024, st.FirstIndex, st.LastIndex, st.SnapshotIndex)
	// The heap must level off. Mapped files (the bolt log, which the kernel may drop from
	// memory at any time) are bounded by the log's length: snapshot threshold + trailing logs.
	if limit := midAnon*13/10 + 32*1024; anon > limit {
		t.Errorf("the heap grew from %d MiB half-way to %d MiB at the end (limit %d MiB) with a bounded state", midAnon/1024, anon/1024, limit/1024)
	}
	if err := p.stop(); err != nil {
		t.Errorf("stopping: %v", err)
	}
}

package durability

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// crashBatch is batch i: a marker node, a job and its tasks, all new. After any crash the
// batch must be there whole or not at all, and whole if it was acknowledged.
func crashBatch(i, tasks int) []*sluicev1.Delta {
	jn := fmt.Sprintf("c%05d", i)
	out := []*sluicev1.Delta{node(fmt.Sprintf("m%05d", i)), job(jn)}
	for k := range tasks {
		out = append(out, task(fmt.Sprintf("%s-t%02d", jn, k), jn, sluicev1.TaskStatus_TASK_STATUS_PENDING))
	}
	return out
}

// crashLedger is what the clients sent and had acknowledged.
type crashLedger struct {
	mu      sync.Mutex
	tasks   map[int]int       // batch -> task count, for every batch sent
	acked   map[int]uint64    // batch -> revision
	binds   map[string]string // task name -> node, of acknowledged commits
	commits int
	maxRev  uint64
}

// TestCrashConsistency kills sluiced --data-dir with SIGKILL at random points while one
// client applies batches and another schedules and commits plans, and a Syncer streams a
// third cluster. After each restart every acknowledged batch and commit is there, no batch
// is there in part, the revision did not go back, and the Syncer resumed without a resync.
func TestCrashConsistency(t *testing.T) {
	need(t)
	points := 5
	if full() {
		points = 20
	}
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	dir := t.TempDir()
	p := newProc(t, "sluiced", "--data-dir", dir, "--snapshot-threshold", "150", "--snapshot-interval", "100ms", "--trailing-logs", "50")
	p.start()
	waitFor(t, 20*time.Second, "sluiced ready", p.ready)
	c := dial(t, p.grpc)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// The Syncer's cluster: a node per tick, resumed across crashes.
	var smu sync.Mutex
	var synced []*sluicev1.Delta
	var resyncs atomic.Int32
	s, err := c.NewSyncer(sluice.SyncOptions{Cluster: "sync", Linger: -1,
		Snapshot: func() []*sluicev1.Delta {
			smu.Lock()
			defer smu.Unlock()
			return append([]*sluicev1.Delta(nil), synced...)
		},
		OnResync: func(reason string) {
			if !strings.Contains(reason, "initial full sync") {
				t.Logf("resync: %s", reason)
				resyncs.Add(1)
			}
		},
		Backoff: sluice.Backoff{Initial: 20 * time.Millisecond, Max: 200 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	go s.Run(ctx)

	led := &crashLedger{tasks: map[int]int{}, acked: map[int]uint64{}, binds: map[string]string{}}
	next := 0
	var recovery []time.Duration
	for round := range points {
		var wg sync.WaitGroup
		stop := make(chan struct{})
		wg.Add(2)
		go func() { // batches, until the server dies
			defer wg.Done()
			for n := 0; n < 400; n++ {
				i := next
				next++
				k := 1 + rng.IntN(30)
				led.mu.Lock()
				led.tasks[i] = k
				led.mu.Unlock()
				smu.Lock()
				d := node(fmt.Sprintf("s%05d", i))
				synced = append(synced, d)
				smu.Unlock()
				s.Send(d)
				cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
				rev, err := c.Apply(cctx, "crash", false, crashBatch(i, k)...)
				ccancel()
				if err != nil {
					return
				}
				led.mu.Lock()
				led.acked[i] = rev
				led.maxRev = max(led.maxRev, rev)
				led.mu.Unlock()
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
		go func() { // plans, committed
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, ccancel := context.WithTimeout(ctx, 10*time.Second)
				res, err := c.ScheduleAndCommit(cctx, "crash")
				ccancel()
				if err != nil {
					return
				}
				led.mu.Lock()
				led.commits++
				led.maxRev = max(led.maxRev, res.Revision)
				for _, d := range res.Applied {
					if b := d.GetBind(); b != nil {
						led.binds[b.GetTask().GetName()] = b.GetNode()
					}
				}
				led.mu.Unlock()
			}
		}()
		time.Sleep(time.Duration(150+rng.IntN(900)) * time.Millisecond)
		p.kill9()
		close(stop)
		wg.Wait()

		start := time.Now()
		p.start()
		waitFor(t, 30*time.Second, "sluiced ready after a crash", p.ready)
		recovery = append(recovery, time.Since(start))
		verifyCrash(t, ctx, c, led, round)
	}
	sctx, scancel := context.WithTimeout(ctx, 30*time.Second)
	defer scancel()
	if _, err := s.Flush(sctx); err != nil {
		t.Fatalf("Syncer flush after the crashes: %v", err)
	}
	nodes, _, _, err := listAll(ctx, c, "sync")
	if err != nil {
		t.Fatal(err)
	}
	smu.Lock()
	sent := len(synced)
	smu.Unlock()
	if len(nodes) != sent {
		t.Errorf("the Syncer's cluster has %d nodes, %d were sent", len(nodes), sent)
	}
	if n := resyncs.Load(); n != 0 {
		t.Errorf("the Syncer resynced %d times after its initial full sync; it should resume after each crash", n)
	}
	var total, worst time.Duration
	for _, d := range recovery {
		total += d
		worst = max(worst, d)
	}
	st, _ := p.raft()
	report(t, "%d kill -9 points, %d batches sent (%d acknowledged), %d plans committed; restart to ready: mean %s, max %s; log kept: entries %d..%d, snapshot at %d",
		points, next, len(led.acked), led.commits, (total / time.Duration(len(recovery))).Round(time.Millisecond), worst.Round(time.Millisecond),
		st.FirstIndex, st.LastIndex, st.SnapshotIndex)
}

// verifyCrash checks the state after a restart against the ledger.
func verifyCrash(t *testing.T, ctx context.Context, c *sluice.Client, led *crashLedger, round int) {
	t.Helper()
	nodes, tasks, jobs, err := listAll(ctx, c, "crash")
	if err != nil {
		t.Fatalf("round %d: listing: %v", round, err)
	}
	led.mu.Lock()
	defer led.mu.Unlock()
	for i, k := range led.tasks {
		jn := fmt.Sprintf("c%05d", i)
		have := 0
		if nodes[fmt.Sprintf("m%05d", i)] {
			have++
		}
		if jobs[jn] {
			have++
		}
		for n := range k {
			if tasks[fmt.Sprintf("%s-t%02d", jn, n)] != nil {
				have++
			}
		}
		_, acked := led.acked[i]
		switch {
		case have != 0 && have != k+2:
			t.Fatalf("round %d: batch %d is there in part: %d of its %d objects", round, i, have, k+2)
		case acked && have == 0:
			t.Fatalf("round %d: batch %d was acknowledged (revision %d) and is gone", round, i, led.acked[i])
		}
	}
	for name, want := range led.binds {
		tk := tasks[name]
		if tk == nil || tk.GetNode() != want || tk.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_BOUND {
			t.Fatalf("round %d: committed bind of %s to %s is gone: %v", round, name, want, tk)
		}
	}
	r, err := c.State.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "crash", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.GetRevision() < led.maxRev {
		t.Fatalf("round %d: revision %d after the restart, but %d was acknowledged", round, r.GetRevision(), led.maxRev)
	}
}

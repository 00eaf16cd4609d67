package durability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testnet"
)

// cluster starts n sluiced members forming one raft cluster (every member bootstraps with
// the same peers) and waits for a leader.
func startCluster(t *testing.T, n int, extra ...string) []*proc {
	t.Helper()
	addrs := testnet.FreeAddrs(t, 3*n)
	raftAddrs := addrs[:n]
	members := make([]*proc, n)
	for i := range members {
		members[i] = newProcAt(t, fmt.Sprintf("n%d", i+1), addrs[n+2*i], addrs[n+2*i+1])
	}
	var peers []string
	for i, m := range members {
		peers = append(peers, fmt.Sprintf("%s=%s@%s", m.name, raftAddrs[i], m.grpc))
	}
	for i, m := range members {
		m.args = append(m.args, "--data-dir", t.TempDir(), "--node-id", m.name, "--raft-listen", raftAddrs[i],
			"--raft-peers", strings.Join(peers, ","), "--bootstrap")
		m.args = append(m.args, extra...)
		m.start()
	}
	waitFor(t, 20*time.Second, "a leader", func() bool { return leaderOf(members, nil) != nil })
	return members
}

// leaderOf returns the member that leads (and caught up), skipping the one given.
func leaderOf(members []*proc, skip *proc) *proc {
	for _, m := range members {
		if m != skip && m.running() && m.leads() {
			return m
		}
	}
	return nil
}

// TestFailover kills the leader of a 3-member cluster (SIGKILL) while a Syncer streams
// deltas through a client that knows every member: a new leader is elected within 5 s, the
// client carries on against it without a full resync, and no acknowledged delta is lost. A
// follower answers a write with UNAVAILABLE naming the leader. The full version fails over
// three times, restarting each killed member (which catches up as a follower).
func TestFailover(t *testing.T) {
	need(t)
	failovers := 1
	if full() {
		failovers = 3
	}
	members := startCluster(t, 3)
	leader := leaderOf(members, nil)
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.grpc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	// A follower refuses writes and names the leader.
	for _, m := range members {
		if m == leader {
			continue
		}
		conn, err := grpc.NewClient(m.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_, err = sluicev1.NewClusterStateServiceClient(conn).ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "fo", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{node("x")}}})
		if addr, ok := sluice.LeaderOf(err); status.Code(err) != codes.Unavailable || !ok || addr != leader.grpc {
			t.Fatalf("write on follower %s = %v; want UNAVAILABLE naming the leader at %s", m.name, err, leader.grpc)
		}
		break
	}

	in := startIngest(t, ctx, dial(t, members[0].grpc, sluice.WithEndpoints(endpoints[1:]...)))
	time.Sleep(time.Second)
	var elections, stalls []time.Duration
	for round := range failovers {
		acked := in.flushUntil(10 * time.Second) // everything up to here is acknowledged
		time.Sleep(300 * time.Millisecond)
		killed := leader
		start := time.Now()
		killed.kill9()
		waitFor(t, 5*time.Second, "a new leader", func() bool { return leaderOf(members, killed) != nil })
		elections = append(elections, time.Since(start))
		leader = leaderOf(members, killed)
		in.flushUntil(20 * time.Second) // the client goes on against the new leader
		stalls = append(stalls, time.Since(start))

		in.check(leader, acked, fmt.Sprintf("round %d", round))
		if round+1 < failovers {
			// The killed member comes back as a follower and catches up.
			killed.start()
			waitFor(t, 20*time.Second, killed.name+" following again", func() bool {
				st, err := killed.raft()
				return err == nil && st.State == "Follower" && st.LeaderID == leader.name
			})
		}
	}
	time.Sleep(time.Second)
	total := in.finish(leader)
	report(t, "%d failover(s) of a 3-member cluster (raft timeout 1s): new leader after %v; client acknowledged again after %v; %d deltas, none lost, no resync",
		failovers, round(elections), round(stalls), total)
}

func round(ds []time.Duration) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond).String()
	}
	return out
}

// TestFailoverFiveMembers (full version only) kills the leader and one follower of a
// 5-member cluster at once: the three left elect a leader within 5 s and the client goes on,
// losing nothing acknowledged.
func TestFailoverFiveMembers(t *testing.T) {
	need(t)
	if !full() {
		t.Skip("full version only (make test-durability)")
	}
	members := startCluster(t, 5)
	leader := leaderOf(members, nil)
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.grpc)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := startIngest(t, ctx, dial(t, endpoints[0], sluice.WithEndpoints(endpoints[1:]...)))
	time.Sleep(time.Second)
	acked := in.flushUntil(10 * time.Second)
	var follower *proc
	for _, m := range members {
		if m != leader {
			follower = m
			break
		}
	}
	start := time.Now()
	leader.kill9()
	follower.kill9()
	waitFor(t, 5*time.Second, "a new leader among the three left", func() bool { return leaderOf(members, leader) != nil })
	election := time.Since(start)
	nl := leaderOf(members, leader)
	in.flushUntil(20 * time.Second)
	stall := time.Since(start)
	in.check(nl, acked, "after the failover")
	time.Sleep(time.Second)
	total := in.finish(nl)
	report(t, "5-member cluster losing its leader and a follower at once: new leader after %s; client acknowledged again after %s; %d deltas, none lost, no resync",
		election.Round(time.Millisecond), stall.Round(time.Millisecond), total)
}

// ingest streams a node every 2ms into cluster "fo" through a Syncer.
type ingest struct {
	t       *testing.T
	ctx     context.Context
	s       *sluice.Syncer
	mu      sync.Mutex
	deltas  []*sluicev1.Delta
	resyncs atomic.Int32
	stop    chan struct{}
	done    chan struct{}
}

func startIngest(t *testing.T, ctx context.Context, c *sluice.Client) *ingest {
	t.Helper()
	in := &ingest{t: t, ctx: ctx, stop: make(chan struct{}), done: make(chan struct{})}
	s, err := c.NewSyncer(sluice.SyncOptions{Cluster: "fo",
		Snapshot: func() []*sluicev1.Delta {
			in.mu.Lock()
			defer in.mu.Unlock()
			return append([]*sluicev1.Delta(nil), in.deltas...)
		},
		OnResync: func(reason string) {
			if !strings.Contains(reason, "initial full sync") { // the first one may be tried on several members
				t.Logf("resync: %s", reason)
				in.resyncs.Add(1)
			}
		},
		Backoff: sluice.Backoff{Initial: 20 * time.Millisecond, Max: 250 * time.Millisecond},
	})
	if err != nil {
		t.Fatal(err)
	}
	in.s = s
	go s.Run(ctx)
	go func() {
		defer close(in.done)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-in.stop:
				return
			case <-tick.C:
			}
			d := node(fmt.Sprintf("f%06d", i))
			in.mu.Lock()
			in.deltas = append(in.deltas, d)
			in.mu.Unlock()
			s.Send(d)
		}
	}()
	return in
}

func (in *ingest) sent() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return len(in.deltas)
}

// flushUntil waits until everything sent so far is acknowledged (at most d) and returns how
// many deltas that is.
func (in *ingest) flushUntil(d time.Duration) int {
	in.t.Helper()
	n := in.sent()
	ctx, cancel := context.WithTimeout(in.ctx, d)
	defer cancel()
	if _, err := in.s.Flush(ctx); err != nil {
		in.t.Fatalf("the client did not get its deltas acknowledged within %s: %v", d, err)
	}
	return n
}

// check verifies that the first n deltas are on the member.
func (in *ingest) check(m *proc, n int, when string) {
	in.t.Helper()
	nodes, _, _, err := listAll(in.ctx, dial(in.t, m.grpc), "fo")
	if err != nil {
		in.t.Fatal(err)
	}
	for i := range n {
		if !nodes[fmt.Sprintf("f%06d", i)] {
			in.t.Fatalf("%s: delta %d was acknowledged and is lost", when, i)
		}
	}
}

// finish stops sending, flushes, checks every delta is on the leader and that the Syncer
// never resynced, and returns how many deltas were sent.
func (in *ingest) finish(leader *proc) int {
	in.t.Helper()
	close(in.stop)
	<-in.done
	total := in.flushUntil(20 * time.Second)
	in.check(leader, total, "at the end")
	if n := in.resyncs.Load(); n != 0 {
		in.t.Errorf("the Syncer resynced %d times after its initial full sync", n)
	}
	return total
}

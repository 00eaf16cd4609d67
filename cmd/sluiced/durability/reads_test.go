package durability

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// stateOn returns a ClusterStateService client of one member (no leader following).
func stateOn(t *testing.T, m *proc) sluicev1.ClusterStateServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(m.grpc, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sluicev1.NewClusterStateServiceClient(conn)
}

// queueWeight writes queue q with a weight through c.
func queueWeight(t *testing.T, ctx context.Context, c *sluice.Client, w int32) {
	t.Helper()
	if _, err := c.Apply(ctx, "rd", false, sluice.UpsertQueue(&sluicev1.Queue{Name: "q", Weight: w})); err != nil {
		t.Fatalf("writing weight %d: %v", w, err)
	}
}

// TestReadsAreLinearizable checks the read side of a 3-member cluster: a follower forwards a
// default read to the leader and answers a stale one itself, and the Go client reads its own
// write; a leader paused (SIGSTOP) until a new one took over answers nothing from its old term
// when it wakes; a member restarted reports /readyz 503 until it caught up.
func TestReadsAreLinearizable(t *testing.T) {
	need(t)
	members := startCluster(t, 3)
	leader := leaderOf(members, nil)
	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.grpc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	var follower *proc
	for _, m := range members {
		if m != leader {
			follower = m
			break
		}
	}
	w := dial(t, leader.grpc, sluice.WithEndpoints(endpoints...))
	queueWeight(t, ctx, w, 1)

	// A follower forwards a default read to the leader: a plain client (grpcurl) gets the
	// leader's answer from any member.
	var hdr metadata.MD
	fq, err := stateOn(t, follower).GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "rd", Name: "q"}, grpc.Header(&hdr))
	if err != nil || fq.GetQueue().GetWeight() != 1 || fmt.Sprint(hdr.Get("sluice-member")) != "["+leader.name+"]" {
		t.Fatalf("default read on follower %s = %v, %v (headers %v); want the leader %s's answer", follower.name, fq, err, hdr, leader.name)
	}
	// A stale read it answers itself.
	hdr = nil
	staleRead := &sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE}
	waitFor(t, 5*time.Second, follower.name+" serving stale reads", func() bool {
		_, err := stateOn(t, follower).GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "rd", Name: "q", Read: staleRead}, grpc.Header(&hdr))
		return err == nil && fmt.Sprint(hdr.Get("sluice-member")) == "["+follower.name+"]"
	})
	// The Go client, attached to the follower, follows and reads its own write.
	r := dial(t, follower.grpc, sluice.WithEndpoints(endpoints...))
	q, err := r.State.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "rd", Name: "q"})
	if err != nil || q.GetQueue().GetWeight() != 1 {
		t.Fatalf("read through the client: %v, %v", q, err)
	}

	// Pause the leader until another takes over and acknowledges a write; the old leader, woken,
	// must not answer with the weight it had.
	old := leader
	if err := syscall.Kill(old.pid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	paused := true
	defer func() {
		if paused {
			_ = syscall.Kill(old.pid(), syscall.SIGCONT)
		}
	}()
	waitFor(t, 15*time.Second, "a new leader while the old one is paused", func() bool { return leaderOf(members, old) != nil })
	leader = leaderOf(members, old)
	queueWeight(t, ctx, dial(t, leader.grpc), 2)
	if err := syscall.Kill(old.pid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	paused = false
	stale := stateOn(t, old)
	for i := range 50 {
		q, err := stale.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "rd", Name: "q"})
		if err == nil && q.GetQueue().GetWeight() != 2 {
			t.Fatalf("read %d on the woken old leader answered weight %d, overwritten and acknowledged before the read", i, q.GetQueue().GetWeight())
		}
		time.Sleep(5 * time.Millisecond)
	}

	// A member killed and restarted is not ready until it caught up.
	victim := old
	if victim == leader {
		victim = follower
	}
	victim.kill9()
	queueWeight(t, ctx, dial(t, leader.grpc), 3)
	victim.start()
	var readyAt time.Duration
	start := time.Now()
	waitFor(t, 30*time.Second, victim.name+" ready again", func() bool {
		if !victim.ready() {
			return false
		}
		readyAt = time.Since(start)
		return true
	})
	st, err := victim.raft()
	if err != nil {
		t.Fatal(err)
	}
	if st.State != "Follower" || st.AppliedIndex < st.CommitIndex-1 {
		t.Fatalf("%s ready as %s with applied index %d, commit index %d", victim.name, st.State, st.AppliedIndex, st.CommitIndex)
	}
	report(t, "reads: a follower sends default reads to the leader; a leader paused past an election answered nothing stale; a restarted member was ready after %v, caught up (applied %d, commit %d)",
		readyAt.Round(time.Millisecond), st.AppliedIndex, st.CommitIndex)
}

// partitionBound is how soon after being cut off from the quorum a leader must refuse default
// reads: about an election timeout (--raft-timeout, 1 s in these clusters; raft's leader lease
// is half of it), with room for a loaded machine.
const partitionBound = 2 * time.Second

// refusedByCutOff reports whether err is how a member cut off from the quorum refuses a
// default read: UNAVAILABLE with NOT_LEADER (naming a leader it still believes in) or
// STORE_UNAVAILABLE (no leader known), never an answer or a timeout.
func refusedByCutOff(err error) bool {
	r := reasonOf(err)
	return status.Code(err) == codes.Unavailable && (r == "NOT_LEADER" || r == "STORE_UNAVAILABLE")
}

// TestPartitionedLeaderReads cuts the leader of a 3-member cluster off from both followers
// (raft traffic only: its gRPC port stays reachable). Within partitionBound it refuses
// default reads with UNAVAILABLE (not a stale value); the others elect a leader and take a
// write; the cut-off member still answers a STALE read with a generous max_staleness, with
// its old value and a staleness header that says so, and refuses one with a small
// max_staleness (STALE_READ_REFUSED). A Go client attached to it that knows every member
// moves on and has a write acknowledged within 10 s. Healed, it rejoins and answers default
// reads with the new value.
func TestPartitionedLeaderReads(t *testing.T) {
	need(t)
	members := startCluster(t, 3, faultFlag)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	old := leaderOf(members, nil)
	queueWeight(t, ctx, dial(t, old.grpc), 1)
	direct := stateOn(t, old)
	get := func(ro *sluicev1.ReadOptions, hdr *metadata.MD) (int32, error) {
		rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
		defer rcancel()
		q, err := direct.GetQueue(rctx, &sluicev1.GetQueueRequest{Cluster: "rd", Name: "q", Read: ro}, grpc.Header(hdr))
		return q.GetQueue().GetWeight(), err
	}
	var hdr metadata.MD
	if w, err := get(nil, &hdr); err != nil || w != 1 {
		t.Fatalf("default read on the leader %s before the partition: %d, %v", old.name, w, err)
	}

	var endpoints []string
	for _, m := range members {
		endpoints = append(endpoints, m.grpc)
	}
	writer := dial(t, old.grpc, sluice.WithEndpoints(endpoints...))

	if err := isolate(members, old); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = heal(members) }()
	cut := time.Now()
	// A client attached to the cut-off leader, that knows every member, writes until a write
	// is acknowledged: how long writers are without service.
	writeBack := make(chan time.Duration, 1)
	go func() {
		for i := int32(1); time.Since(cut) < 20*time.Second; i++ {
			wctx, wcancel := context.WithTimeout(ctx, time.Second)
			_, err := writer.Apply(wctx, "rd", false, sluice.UpsertQueue(&sluicev1.Queue{Name: "w", Weight: i}))
			wcancel()
			if err == nil {
				writeBack <- time.Since(cut)
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		writeBack <- -1
	}()
	var readErr error
	reads := 0
	for readErr == nil && time.Since(cut) < 10*time.Second {
		reads++
		_, readErr = get(nil, &hdr)
	}
	refusedAfter := time.Since(cut)
	if !refusedByCutOff(readErr) {
		t.Fatalf("default read on the cut-off leader %s: %v (reason %q); want UNAVAILABLE, NOT_LEADER or STORE_UNAVAILABLE", old.name, readErr, reasonOf(readErr))
	}
	if refusedAfter > partitionBound {
		t.Fatalf("the cut-off leader %s refused default reads only %v after the cut (bound %v)", old.name, refusedAfter, partitionBound)
	}

	waitFor(t, 15*time.Second, "a new leader on the majority side", func() bool { return leaderOf(members, old) != nil })
	elected := time.Since(cut)
	writesBack := <-writeBack
	if writesBack < 0 || writesBack > 10*time.Second {
		t.Fatalf("a client attached to the cut-off leader, knowing every member, had no write acknowledged within %v of the cut (%v)", 10*time.Second, writesBack)
	}
	queueWeight(t, ctx, dial(t, leaderOf(members, old).grpc), 2)
	if w, err := get(nil, &hdr); !refusedByCutOff(err) {
		t.Fatalf("default read on the cut-off member after a newer write: %d, %v; want it refused", w, err)
	}

	// Stale reads: a generous bound gets the old value and says how stale it is.
	hdr = nil
	stale := func(max time.Duration) *sluicev1.ReadOptions {
		return &sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE, MaxStaleness: durationpb.New(max)}
	}
	w, err := get(stale(time.Minute), &hdr)
	if err != nil || w != 1 {
		t.Fatalf("stale read (max 1m) on the cut-off member: %d, %v; want its old weight 1", w, err)
	}
	ms, _ := strconv.Atoi(strings.Join(hdr.Get("sluice-staleness-ms"), ""))
	if ms <= 0 || fmt.Sprint(hdr.Get("sluice-member")) != "["+old.name+"]" {
		t.Fatalf("stale read headers %v; want the member %s and a positive staleness", hdr, old.name)
	}
	// A small bound is refused with the documented reason.
	if w, err := get(stale(200*time.Millisecond), &hdr); status.Code(err) != codes.Unavailable || reasonOf(err) != "STALE_READ_REFUSED" {
		t.Fatalf("stale read (max 200ms) on the cut-off member: %d, %v; want UNAVAILABLE STALE_READ_REFUSED", w, err)
	}

	if err := heal(members); err != nil {
		t.Fatal(err)
	}
	healed := time.Now()
	waitFor(t, 30*time.Second, old.name+" answering default reads again", func() bool {
		w, err := get(nil, &hdr)
		return err == nil && w == 2
	})
	report(t, "partitioned leader: %s refused default reads %v after it was cut off (%d reads tried; reason %s); a new leader %v after the cut; "+
		"a client attached to the cut-off leader had a write acknowledged %v after the cut; the cut-off member answered a stale read %d ms stale, "+
		"refused one bounded at 200ms, and answered default reads again %v after the heal",
		old.name, refusedAfter.Round(time.Millisecond), reads, reasonOf(readErr), elected.Round(time.Millisecond),
		writesBack.Round(time.Millisecond), ms, time.Since(healed).Round(time.Millisecond))
}

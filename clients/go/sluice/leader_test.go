package sluice_test

import (
	"context"
	"net"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// follower is a member that does not lead: it refuses writes with NOT_LEADER naming the
// leader, as a replicated sluiced does, and counts them.
type follower struct {
	sluicev1.UnimplementedClusterStateServiceServer
	leader  string
	refused chan string
}

func (f *follower) notLeader(method string) error {
	f.refused <- method
	st, _ := status.New(codes.Unavailable, "not the leader: writes go to the leader n1 at "+f.leader).WithDetails(
		&errdetails.ErrorInfo{Reason: "NOT_LEADER", Domain: "sluice.sched", Metadata: map[string]string{"leader": f.leader, "leader_id": "n1"}})
	return st.Err()
}

func (f *follower) ApplyDeltas(context.Context, *sluicev1.ApplyDeltasRequest) (*sluicev1.ApplyDeltasResponse, error) {
	return nil, f.notLeader("ApplyDeltas")
}

func (f *follower) Sync(sluicev1.ClusterStateService_SyncServer) error { return f.notLeader("Sync") }

func startFollower(t *testing.T, leader string) (string, *follower) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &follower{leader: leader, refused: make(chan string, 100)}
	gs := grpc.NewServer()
	sluicev1.RegisterClusterStateServiceServer(gs, f)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), f
}

// TestFollowsTheLeader dials a follower: the first write is refused and sent again to the
// leader it names, and every later call and stream goes to the leader at once.
func TestFollowsTheLeader(t *testing.T) {
	leader, _ := startServer(t)
	addr, f := startFollower(t, leader)
	c := dial(t, addr)
	ctx := context.Background()
	rev, err := c.Apply(ctx, "lead", false, node("n1", "8"))
	if err != nil || rev != 1 {
		t.Fatalf("Apply through a follower = %d, %v", rev, err)
	}
	if got := <-f.refused; got != "ApplyDeltas" {
		t.Fatalf("follower saw %s", got)
	}
	if c.Conn().Target() != leader {
		t.Fatalf("calls go to %s, want the leader %s", c.Conn().Target(), leader)
	}
	rm := newFakeRM()
	s, err := c.NewSyncer(sluice.SyncOptions{Cluster: "lead", Snapshot: rm.snapshot, ResumeRevision: rev})
	if err != nil {
		t.Fatal(err)
	}
	runSyncer(t, s)
	s.Send(rm.upsert(node("n2", "4")))
	flush(t, s)
	if got := countNodes(t, c, "lead"); got != 2 {
		t.Fatalf("%d nodes, want 2", got)
	}
	select {
	case m := <-f.refused:
		t.Fatalf("the follower got a %s after the leader was known", m)
	default:
	}
	if addr, ok := sluice.LeaderOf(f.notLeader("x")); !ok || addr != leader {
		t.Fatalf("LeaderOf = %q, %v", addr, ok)
	}
}

// TestSyncerFollowsTheLeader starts a Syncer on a follower: its stream is refused, and it
// reconnects to the leader.
func TestSyncerFollowsTheLeader(t *testing.T) {
	leader, _ := startServer(t)
	addr, f := startFollower(t, leader)
	c := dial(t, addr)
	rm := newFakeRM()
	rm.upsert(node("n1", "8"))
	s, err := c.NewSyncer(sluice.SyncOptions{Cluster: "lead", Snapshot: rm.snapshot})
	if err != nil {
		t.Fatal(err)
	}
	runSyncer(t, s)
	flush(t, s)
	if got := <-f.refused; got != "Sync" {
		t.Fatalf("follower saw %s", got)
	}
	if got := countNodes(t, c, "lead"); got != 1 {
		t.Fatalf("%d nodes, want 1", got)
	}
}

// TestEndpointsAfterAFailure dials a member that is down: the call fails, and the next one
// goes to the next endpoint.
func TestEndpointsAfterAFailure(t *testing.T) {
	up, _ := startServer(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := lis.Addr().String()
	lis.Close()
	c := dial(t, down, sluice.WithEndpoints(up))
	ctx := context.Background()
	if _, err := c.Apply(ctx, "ep", false, node("n1", "8")); status.Code(err) != codes.Unavailable {
		t.Fatalf("Apply on a member that is down = %v, want UNAVAILABLE", err)
	}
	if _, err := c.Apply(ctx, "ep", false, node("n1", "8")); err != nil {
		t.Fatalf("Apply on the next endpoint: %v", err)
	}
}

// cutOff is a member cut off from its cluster: it knows no leader and answers every write
// with UNAVAILABLE STORE_UNAVAILABLE, as a replicated sluiced does then.
type cutOff struct {
	sluicev1.UnimplementedClusterStateServiceServer
	calls chan string
}

func (c *cutOff) ApplyDeltas(context.Context, *sluicev1.ApplyDeltasRequest) (*sluicev1.ApplyDeltasResponse, error) {
	c.calls <- "ApplyDeltas"
	st, _ := status.New(codes.Unavailable, "store unavailable: no leader is elected yet; retry shortly").WithDetails(
		&errdetails.ErrorInfo{Reason: "STORE_UNAVAILABLE", Domain: "sluice.sched"})
	return nil, st.Err()
}

// TestEndpointsAfterNoLeader dials a member that knows no leader: the call fails (it is not
// sent again: a write's outcome may be unknown), and the next one goes to the next endpoint.
func TestEndpointsAfterNoLeader(t *testing.T) {
	up, _ := startServer(t)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	co := &cutOff{calls: make(chan string, 10)}
	gs := grpc.NewServer()
	sluicev1.RegisterClusterStateServiceServer(gs, co)
	go gs.Serve(lis)
	t.Cleanup(gs.Stop)
	c := dial(t, lis.Addr().String(), sluice.WithEndpoints(up))
	ctx := context.Background()
	if _, err := c.Apply(ctx, "ep", false, node("n1", "8")); status.Code(err) != codes.Unavailable {
		t.Fatalf("Apply on a member without a leader = %v, want UNAVAILABLE", err)
	}
	if _, err := c.Apply(ctx, "ep", false, node("n1", "8")); err != nil {
		t.Fatalf("Apply on the next endpoint: %v", err)
	}
	if len(co.calls) != 1 {
		t.Fatalf("the member without a leader got %d calls, want 1", len(co.calls))
	}
}

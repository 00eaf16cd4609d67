package slurm

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// waitUntil polls ok every 10ms until it holds or timeout passes.
func waitUntil(timeout time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !ok() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// A sluiced that restarts while Slurm is quiet (nothing to send) must still get the whole
// cluster: the broken stream is noticed without any call, and the next cycle's hello finds
// the lost state. Dry-run plans keep Slurm unchanged from cycle to cycle, and are not
// checked against the acknowledged revision, so only the stream's watch can notice.
func TestAdapterResyncsAfterRestartWhileSlurmIsQuiet(t *testing.T) {
	addr, stop := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	conn := dialSluice(t, d)
	sl := NewGRPCSluice(conn, "hpc")
	a, logs := newAdapter(t, newFakeSlurm(t, "squeue.json"), sl, func(c *Config) { c.DryRun = true })
	ctx := context.Background()
	if rep := a.Cycle(ctx); rep.Err != nil || !rep.Resynced {
		t.Fatalf("first cycle %+v", rep)
	}
	if rep := a.Cycle(ctx); rep.Err != nil || rep.Resynced || rep.Deltas != 0 {
		t.Fatalf("second cycle should send nothing: %+v", rep)
	}
	if !sl.Connected() {
		t.Fatal("no stream open after two cycles")
	}

	stop()
	if !waitUntil(5*time.Second, func() bool { return !sl.Connected() }) {
		t.Fatal("the stream's end went unnoticed for 5s")
	}
	addr2, _ := startSluice(t)
	d.set(addr2)
	var rep *CycleReport
	for i := 0; i < 100; i++ {
		if rep = a.Cycle(ctx); rep.Err == nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rep.Err != nil || !rep.Resynced {
		t.Fatalf("cycle against the restarted server: %+v", rep)
	}
	if n := len(listTasks(t, conn, "hpc")); n != 10 {
		t.Errorf("restarted server has %d tasks, want 10", n)
	}
	if got := strings.Count(logs.String(), "replace_all"); got != 2 {
		t.Errorf("%d full syncs logged, want 2:\n%s", got, logs)
	}
}

// splitConn sends Sync streams to one connection and unary calls to another: a stream that
// stays up while the calls reach a server that never saw it.
type splitConn struct {
	streams, unary grpc.ClientConnInterface
}

func (c splitConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return c.unary.Invoke(ctx, method, args, reply, opts...)
}

func (c splitConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return c.streams.NewStream(ctx, desc, method, opts...)
}

// A server that lost the cluster (a restart without state) has none: Schedule refuses its
// CLUSTER_NOT_FOUND with a StateLostError, makes no plan, and drops the stream so that the
// next Sync starts over (a server without the state then asks for the whole cluster).
func TestScheduleOnAServerThatLostStateFails(t *testing.T) {
	addrA, _ := startSluice(t)
	addrB, _ := startSluice(t)
	da, db := &switchDialer{}, &switchDialer{}
	da.set(addrA)
	db.set(addrB)
	connB := dialSluice(t, db)
	sl := NewGRPCSluice(splitConn{streams: dialSluice(t, da), unary: connB}, "hpc")
	ctx := context.Background()
	node := &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}}}}
	all := func() []*sluicev1.Delta { return []*sluicev1.Delta{node} }
	if _, err := sl.Sync(ctx, nil, all); err != nil {
		t.Fatal(err)
	}
	_, err := sl.Schedule(ctx, false)
	var lost *StateLostError
	if !errors.As(err, &lost) || lost.Acknowledged != sl.Revision() || lost.PlanID != "" {
		t.Fatalf("Schedule on a server without the cluster: %v, want a StateLostError without a plan", err)
	}
	if sl.Connected() {
		t.Error("the stream stays open after a StateLostError")
	}
	// A dry run may come from a follower that lags: not turned into a StateLostError.
	if _, err := sl.Schedule(ctx, true); errors.As(err, &lost) {
		t.Errorf("dry run: %v", err)
	}
	// The next Sync opens a new stream.
	if _, err := sl.Sync(ctx, nil, all); err != nil || !sl.Connected() {
		t.Fatalf("Sync after the loss: %v (connected %v)", err, sl.Connected())
	}
}

// A cluster deleted while the stream is open refuses the next batch with
// FAILED_PRECONDITION; the adapter sends the whole cluster instead.
func TestSyncResendsEverythingAfterTheClusterWasDeleted(t *testing.T) {
	addr, _ := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	conn := dialSluice(t, d)
	sl := NewGRPCSluice(conn, "hpc")
	ctx := context.Background()
	node := func(name string) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: name, Allocatable: map[string]string{"cpu": "4"}}}}
	}
	all := []*sluicev1.Delta{node("n1"), node("n2")}
	if _, err := sl.Sync(ctx, nil, func() []*sluicev1.Delta { return all[:1] }); err != nil {
		t.Fatal(err)
	}
	if _, err := sluicev1.NewClusterStateServiceClient(conn).DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "hpc"}); err != nil {
		t.Fatal(err)
	}
	resynced, err := sl.Sync(ctx, all[1:], func() []*sluicev1.Delta { return all })
	if err != nil || !resynced {
		t.Fatalf("sync after DeleteCluster: resynced %v, %v", resynced, err)
	}
	nodes, err := sluicev1.NewClusterStateServiceClient(conn).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "hpc"})
	if err != nil || len(nodes.GetNodes()) != 2 {
		t.Errorf("after the resync: %v %v", nodes.GetNodes(), err)
	}
}

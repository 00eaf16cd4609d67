package service

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-sched/sluice/engine/durable"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// fakeGate is a ReadGate whose answers a test sets.
type fakeGate struct {
	mu           sync.Mutex
	linearizable error
	staleness    atomic.Int64 // nanoseconds
	caughtUp     atomic.Bool
	calls        atomic.Int32
}

func (g *fakeGate) LinearizableRead(context.Context) error {
	g.calls.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.linearizable
}

func (g *fakeGate) setLinearizable(err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.linearizable = err
}
func (g *fakeGate) Staleness() (time.Duration, bool) {
	return time.Duration(g.staleness.Load()), g.caughtUp.Load()
}
func (g *fakeGate) NodeID() string { return "m2" }

func TestReadModes(t *testing.T) {
	gate := &fakeGate{}
	gate.caughtUp.Store(true)
	var rn *durable.Node
	h := newHarnessWith(t, setup{durable: &rn, opts: func(o *Options) { o.Reads = gate }})
	ctx := ctxT(t)
	rev := h.apply("c", node("n1", cpu("4")))
	get := func(ro *sluicev1.ReadOptions, opts ...grpc.CallOption) (*sluicev1.GetNodeResponse, error) {
		return h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c", Name: "n1", Read: ro}, opts...)
	}

	// Default reads go through the linearizable gate, and follow its verdict.
	if _, err := get(nil); err != nil || gate.calls.Load() != 1 {
		t.Fatalf("default read: %v, %d gate calls", err, gate.calls.Load())
	}
	gate.setLinearizable(&state.NotLeaderError{LeaderID: "m1", Leader: "10.0.0.1:50051"})
	_, err := get(nil)
	wantReason(t, err, codes.Unavailable, ReasonNotLeader)
	gate.setLinearizable(nil)

	// Stale reads skip it, within their bound, and say how stale they may be.
	gate.staleness.Store(int64(3 * time.Second))
	stale := func(max time.Duration) *sluicev1.ReadOptions {
		ro := &sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE}
		if max > 0 {
			ro.MaxStaleness = durationpb.New(max)
		}
		return ro
	}
	calls := gate.calls.Load()
	_, err = get(stale(time.Second))
	wantReason(t, err, codes.Unavailable, ReasonStaleReadRefused)
	var got metadata.MD
	if _, err := get(stale(5*time.Second), grpc.Header(&got)); err != nil {
		t.Fatalf("stale read within its bound: %v", err)
	}
	if fmt.Sprint(got.Get(HeaderStaleness), got.Get(HeaderMember), got.Get(HeaderRevision)) != "[3000] [m2] [1]" {
		t.Fatalf("headers %v", got)
	}
	if gate.calls.Load() != calls {
		t.Fatal("a stale read went through the linearizable gate")
	}
	gate.caughtUp.Store(false)
	_, err = get(stale(0))
	wantReason(t, err, codes.Unavailable, ReasonStaleReadRefused)
	gate.caughtUp.Store(true)

	// min_revision waits for the revision, up to the deadline.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = h.cs.GetNode(short, &sluicev1.GetNodeRequest{Cluster: "c", Name: "n1", Read: &sluicev1.ReadOptions{
		Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE, MinRevision: rev + 1}})
	wantCode(t, err, codes.DeadlineExceeded)
	done := make(chan error, 1)
	go func() {
		resp, err := get(&sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE, MinRevision: rev + 1})
		if err == nil && resp.GetRevision() < rev+1 {
			t.Errorf("read at revision %d, below its min_revision %d", resp.GetRevision(), rev+1)
		}
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	h.apply("c", node("n2", cpu("4")))
	if err := <-done; err != nil {
		t.Fatalf("read waiting for its revision: %v", err)
	}

	// Bad options are refused with their path.
	_, err = get(&sluicev1.ReadOptions{MaxStaleness: durationpb.New(time.Second)})
	wantViolation(t, err, "read.max_staleness", ReasonInvalidField)
	_, err = get(&sluicev1.ReadOptions{Consistency: 9})
	wantViolation(t, err, "read.consistency", ReasonInvalidField)
	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Read: stale(0)})
	wantViolation(t, err, "read", ReasonInvalidField)
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, Read: stale(0)}); err != nil {
		t.Fatalf("stale dry run: %v", err)
	}
}

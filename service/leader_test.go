package service

import (
	"errors"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// follower is the Replicator of a member that does not lead.
type follower struct{ err error }

func (f follower) CheckLeader() error { return f.err }
func (f follower) Replicate(*state.Op) (*state.OpResult, error) {
	return nil, errors.New("a follower must not replicate")
}

func wantNotLeader(t *testing.T, what string, err error) {
	t.Helper()
	st := wantCode(t, err, codes.Unavailable)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			if info.GetReason() != ReasonNotLeader || info.GetMetadata()[MetadataLeader] != "10.0.0.1:50051" || info.GetMetadata()[MetadataLeaderID] != "n1" {
				t.Fatalf("%s: ErrorInfo %v", what, info)
			}
			return
		}
	}
	t.Fatalf("%s: no ErrorInfo in %v", what, err)
}

// TestFollowerRefusesWrites: a member that does not lead answers every write and every
// cycle that may be committed with UNAVAILABLE naming the leader, and serves reads and dry
// runs from its own state.
func TestFollowerRefusesWrites(t *testing.T) {
	h := newHarness(t)
	h.apply("c", node("n1", cpu("4")), job("j", "default", 1), task("t", "j", cpu("1")))
	h.store.SetReplicator(follower{&state.NotLeaderError{LeaderID: "n1", Leader: "10.0.0.1:50051"}})
	ctx := ctxT(t)

	_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{node("n2", cpu("1"))}}})
	wantNotLeader(t, "ApplyDeltas", err)
	stream, err := h.cs.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "c"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = stream.Recv()
	wantNotLeader(t, "Sync", err)
	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE})
	wantNotLeader(t, "Schedule", err)
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c", PlanId: "p"})
	wantNotLeader(t, "CommitPlan", err)
	_, err = h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c", Config: testConfig})
	wantNotLeader(t, "UpdateSchedulerConfig", err)
	w, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE})
	if err != nil {
		t.Fatal(err)
	}
	_, err = w.Recv()
	wantNotLeader(t, "WatchPlans", err)

	if _, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c", Name: "n1"}); err != nil {
		t.Fatalf("GetNode on a follower: %v", err)
	}
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
		t.Fatalf("dry run on a follower: %v", err)
	}

	// No leader at all, or a store that cannot write: UNAVAILABLE with the reason.
	h.store.SetReplicator(follower{errors.Join(state.ErrUnavailable, errors.New("no leader is elected yet"))})
	_, err = h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{node("n2", cpu("1"))}}})
	st := wantCode(t, err, codes.Unavailable)
	if _, reason := fieldsOf(st); reason != ReasonStoreUnavailable || !contains(st.Message(), "no leader") {
		t.Fatalf("ApplyDeltas without a leader: %v", err)
	}
}

// TestSyncEndsWhenTheStoreCannotWrite: a batch the replicated store could not take (the
// member lost its leadership meanwhile) ends the stream with UNAVAILABLE rather than being
// rejected, so that the client keeps it and sends it again.
func TestSyncEndsWhenTheStoreCannotWrite(t *testing.T) {
	h := newHarness(t)
	rep := &flaky{}
	h.store.SetReplicator(rep)
	ctx := ctxT(t)
	stream, err := h.cs.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	send := func(m *sluicev1.SyncRequest) {
		if err := stream.Send(m); err != nil {
			t.Fatal(err)
		}
	}
	send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "c"}}})
	if m, err := stream.Recv(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("welcome: %v %v", m, err)
	}
	rep.err = &state.NotLeaderError{LeaderID: "n1", Leader: "10.0.0.1:50051"}
	send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: &sluicev1.DeltaBatch{Sequence: 1, Deltas: []*sluicev1.Delta{node("n1", cpu("1"))}}}})
	_, err = stream.Recv()
	wantNotLeader(t, "Sync batch", err)
	if got := status.Code(err); got != codes.Unavailable {
		t.Fatalf("code %s", got)
	}
}

// flaky leads until err is set, then Replicate fails with it (CheckLeader still passes, as
// when leadership is lost while a write is in flight).
type flaky struct{ err error }

func (f *flaky) CheckLeader() error { return nil }
func (f *flaky) Replicate(*state.Op) (*state.OpResult, error) {
	return nil, f.err
}

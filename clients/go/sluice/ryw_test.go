package sluice

import (
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestRevisionFloor(t *testing.T) {
	var f revisionFloor
	stale := &sluicev1.GetNodeRequest{Cluster: "c", Name: "n", Read: &sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE}}
	if got := f.apply(stale); got != any(stale) {
		t.Fatal("a floor was set before any revision was seen")
	}
	f.note(&sluicev1.ApplyDeltasRequest{Cluster: "c"}, &sluicev1.ApplyDeltasResponse{Revision: 7})
	f.note(&sluicev1.GetNodeRequest{Cluster: "c"}, &sluicev1.GetNodeResponse{Revision: 5}) // lower: ignored
	f.note(&sluicev1.ApplyDeltasRequest{Cluster: "other"}, &sluicev1.ApplyDeltasResponse{Revision: 99})
	got := f.apply(stale).(*sluicev1.GetNodeRequest)
	if got.GetRead().GetMinRevision() != 7 {
		t.Fatalf("stale read carries min_revision %d, want 7", got.GetRead().GetMinRevision())
	}
	if stale.GetRead().GetMinRevision() != 0 {
		t.Fatal("the caller's request was changed")
	}
	// Linearizable reads, reads with their own floor, and requests without read options are
	// left alone.
	for _, req := range []proto.Message{
		&sluicev1.GetNodeRequest{Cluster: "c", Name: "n"},
		&sluicev1.GetNodeRequest{Cluster: "c", Read: &sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE, MinRevision: 3}},
		&sluicev1.ApplyDeltasRequest{Cluster: "c"},
	} {
		if out := f.apply(req); !proto.Equal(out.(proto.Message), req) {
			t.Fatalf("apply changed %v into %v", req, out)
		}
	}
}

// sentStream is a grpc.ClientStream that records what is sent on it.
type sentStream struct {
	grpc.ClientStream
	sent []any
}

func (s *sentStream) SendMsg(m any) error {
	s.sent = append(s.sent, m)
	return nil
}

// TestStreamsCarryTheFloor: a stream's request (a dry-run WatchPlans with stale read options)
// carries the floor as a unary read does.
func TestStreamsCarryTheFloor(t *testing.T) {
	l := &leaderConn{}
	l.floor.note(&sluicev1.ApplyDeltasRequest{Cluster: "c"}, &sluicev1.ApplyDeltasResponse{Revision: 11})
	cs := &sentStream{}
	s := &observedStream{ClientStream: cs, l: l}
	req := &sluicev1.WatchPlansRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN,
		Read: &sluicev1.ReadOptions{Consistency: sluicev1.ReadConsistency_READ_CONSISTENCY_STALE}}
	if err := s.SendMsg(req); err != nil {
		t.Fatal(err)
	}
	got, ok := cs.sent[0].(*sluicev1.WatchPlansRequest)
	if !ok || got.GetRead().GetMinRevision() != 11 {
		t.Fatalf("the stream sent %v, want min_revision 11", cs.sent[0])
	}
	if req.GetRead().GetMinRevision() != 0 {
		t.Fatal("the caller's request was changed")
	}
}

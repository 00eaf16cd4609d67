package sluice

import (
	"testing"

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

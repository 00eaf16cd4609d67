package sluice

import (
	"testing"

	"google.golang.org/grpc/codes"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// TestRejectedResyncIsSentAgain: a resync the server refuses with FAILED_PRECONDITION (its
// cluster was deleted before the last chunk) is sent again, rather than waited on forever.
func TestRejectedResyncIsSentAgain(t *testing.T) {
	s := &Syncer{opts: SyncOptions{Cluster: "c"}, progress: make(chan struct{})}
	s.resync, s.resyncSent = true, true
	rej := &sluicev1.BatchRejected{Sequence: 1, Code: int32(codes.FailedPrecondition), Message: "deleted"}
	if err := s.rejected(&sent{seq: 1, replaceAll: true}, rej); err != nil {
		t.Fatalf("rejected: %v", err)
	}
	if !s.resync || s.resyncSent {
		t.Fatalf("after the rejection: resync %v, sent %v; want a resync to send", s.resync, s.resyncSent)
	}
	// A batch refused so while the resync is on the wire leaves the resync alone.
	s.resyncSent = true
	if err := s.rejected(&sent{seq: 2}, rej); err != nil || !s.resyncSent {
		t.Fatalf("a delta batch's rejection: %v, sent %v", err, s.resyncSent)
	}
}

package framework

import (
	"sync/atomic"
	"testing"
	"time"
)

// TestPacerPausesOnceTheTimeCame: a checkpoint before the time RequestAfter named does not
// pause, the first one after it pauses once, RequestAfter(0) cancels, and Request still asks
// for a pause at once.
func TestPacerPausesOnceTheTimeCame(t *testing.T) {
	var pauses atomic.Int32
	p := NewPacer(func() { pauses.Add(1) })
	p.RequestAfter(time.Hour)
	p.checkpoint()
	if n := pauses.Load(); n != 0 {
		t.Fatalf("%d pauses before the time came", n)
	}
	p.RequestAfter(time.Millisecond)
	for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
	}
	p.checkpoint()
	p.checkpoint()
	if n := pauses.Load(); n != 1 {
		t.Fatalf("%d pauses once the time came, want 1", n)
	}
	p.RequestAfter(time.Millisecond)
	p.RequestAfter(0)
	for start := time.Now(); time.Since(start) < 2*time.Millisecond; {
	}
	p.checkpoint()
	if n := pauses.Load(); n != 1 {
		t.Fatalf("a cancelled request paused (%d pauses)", n)
	}
	p.Request()
	p.checkpoint()
	if n := pauses.Load(); n != 2 {
		t.Fatalf("Request made %d pauses in all, want 2", n)
	}
	var nilPacer *Pacer
	nilPacer.checkpoint() // a session without a pacer never pauses
}

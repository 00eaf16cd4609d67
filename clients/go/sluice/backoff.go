package sluice

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is an exponential backoff with jitter between reconnects and retries.
// The zero value means the defaults.
type Backoff struct {
	// Initial is the first delay. 0 means 100ms.
	Initial time.Duration
	// Max caps the delay. 0 means 10s.
	Max time.Duration
	// Multiplier grows the delay after each failure. 0 means 2.
	Multiplier float64
	// Jitter spreads each delay by up to this fraction either way. 0 means 0.2;
	// negative means none.
	Jitter float64
}

// Delay returns the delay before retry number attempt (0 for the first retry).
func (b Backoff) Delay(attempt int) time.Duration {
	initial, maxd, mult, jitter := b.Initial, b.Max, b.Multiplier, b.Jitter
	if initial <= 0 {
		initial = 100 * time.Millisecond
	}
	if maxd <= 0 {
		maxd = 10 * time.Second
	}
	if maxd < initial {
		maxd = initial
	}
	if mult < 1 {
		mult = 2
	}
	switch {
	case jitter == 0:
		jitter = 0.2
	case jitter < 0:
		jitter = 0
	case jitter > 1:
		jitter = 1
	}
	d := float64(initial)
	for i := 0; i < attempt && d < float64(maxd); i++ {
		d *= mult
	}
	d = min(d, float64(maxd))
	if jitter > 0 {
		d *= 1 + jitter*(2*rand.Float64()-1)
	}
	return time.Duration(d)
}

// sleep waits d or until ctx ends; it reports whether the full delay passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

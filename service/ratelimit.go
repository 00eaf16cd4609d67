package service

import (
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"
)

// clientLimiter is a token bucket per client: an authenticated identity, or a peer's IP
// address for calls that did not authenticate (see Server.admit). A call over the limit fails
// with RESOURCE_EXHAUSTED, reason RATE_LIMITED and a RetryInfo.
type clientLimiter struct {
	limit rate.Limit
	burst int
	now   func() time.Time

	mu        sync.Mutex
	clients   map[string]*bucket
	lastSweep time.Time
}

type bucket struct {
	lim  *rate.Limiter
	used time.Time
}

// limiterIdle is how long a client's bucket is kept after its last call; a full bucket is
// the same as a new one, so forgetting it changes nothing once it has refilled.
const limiterIdle = 10 * time.Minute

func newClientLimiter(perSecond float64, burst int, now func() time.Time) *clientLimiter {
	if burst <= 0 {
		burst = max(1, int(perSecond))
	}
	return &clientLimiter{limit: rate.Limit(perSecond), burst: burst, now: now, clients: map[string]*bucket{}}
}

// take takes a token from key's bucket. Over the limit it fails with RESOURCE_EXHAUSTED,
// reason RATE_LIMITED, and a RetryInfo saying when a token will be there.
func (l *clientLimiter) take(key string) error {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.Sub(l.lastSweep) > time.Minute {
		for k, b := range l.clients {
			if now.Sub(b.used) > limiterIdle {
				delete(l.clients, k)
			}
		}
		l.lastSweep = now
	}
	b, ok := l.clients[key]
	if !ok {
		b = &bucket{lim: rate.NewLimiter(l.limit, l.burst)}
		l.clients[key] = b
	}
	b.used = now
	if b.lim.AllowN(now, 1) {
		return nil
	}
	wait := time.Second
	if l.limit > 0 {
		r := b.lim.ReserveN(now, 1)
		wait = r.DelayFrom(now)
		r.CancelAt(now)
	}
	return rateLimited(fmt.Sprintf("client %s is over its limit of %g requests/s (burst %d); retry in %v",
		key, float64(l.limit), l.burst, wait.Round(time.Millisecond)), wait)
}

// rateLimited builds the RESOURCE_EXHAUSTED status of a call over its limit.
func rateLimited(msg string, wait time.Duration) error {
	st := status.New(codes.ResourceExhausted, msg)
	if d, err := st.WithDetails(
		&errdetails.ErrorInfo{Reason: ReasonRateLimited, Domain: ErrorDomain},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(wait)},
	); err == nil {
		st = d
	}
	return st.Err()
}

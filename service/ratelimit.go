package service

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"google.golang.org/grpc/peer"
)

// clientLimiter is a token bucket per client: the authenticated identity when the server
// authenticates, else the peer's IP address. It implements the go-grpc-middleware ratelimit
// Limiter; a call over the limit fails with RESOURCE_EXHAUSTED.
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

// Limit takes a token from the caller's bucket.
func (l *clientLimiter) Limit(ctx context.Context) error {
	key := clientKey(ctx)
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
	if !b.lim.AllowN(now, 1) {
		return fmt.Errorf("client %s is over its limit of %g requests/s (burst %d)", key, float64(l.limit), l.burst)
	}
	return nil
}

// clientKey names the caller for rate limiting.
func clientKey(ctx context.Context) string {
	if id := IdentityFrom(ctx); id != nil {
		return "identity " + id.Name
	}
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return "unknown peer"
	}
	addr := p.Addr.String()
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return "peer " + addr
}

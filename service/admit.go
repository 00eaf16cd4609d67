package service

import (
	"context"
	"errors"
	"net"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc/peer"
)

// admit is the first step of every call but health and reflection: it authenticates the
// caller (when the server authenticates) and takes a token from its rate-limit bucket, so
// that no call, authenticated or not, escapes the limiter.
//
//   - A caller that authenticates is charged to its identity's bucket: clients behind one
//     address (a NAT, a proxy) do not share theirs.
//   - A caller that fails to authenticate (no, wrong or malformed credentials) is charged to
//     its peer address's bucket. Over the limit, it gets RESOURCE_EXHAUSTED instead of
//     UNAUTHENTICATED, so that guessing tokens is as slow as the limit. Authenticating costs a
//     SHA-256 of the token and a comparison with each entry: the least work that tells whom
//     to charge.
//   - Without authentication, every call is charged to its peer address.
//
// It returns the caller's identity, nil when the server does not authenticate.
func (s *Server) admit(ctx context.Context) (*Identity, error) {
	a := s.auth.Load()
	if a == nil {
		return nil, s.limit(ctx, peerKey(ctx))
	}
	id, err := a.Authenticate(ctx)
	if err != nil {
		if lerr := s.limit(ctx, peerKey(ctx)); lerr != nil {
			return nil, lerr
		}
		return nil, err
	}
	logging.AddFields(ctx, logging.Fields{"client", id.Name})
	if err := s.limit(ctx, "identity "+id.Name); err != nil {
		return nil, err
	}
	return id, nil
}

// limit takes a token from key's bucket when the server rate-limits.
func (s *Server) limit(_ context.Context, key string) error {
	if s.limiter == nil {
		return nil
	}
	return s.limiter.take(key)
}

// peerKey names the caller's network address for rate limiting (its IP, without the port).
func peerKey(ctx context.Context) string {
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

// SetAuthenticator replaces the server's authenticator (a reloaded tokens file): calls that
// start from then on are checked against it; calls in progress, and open streams, keep the
// identity they were admitted with. A server started without one cannot be given one, nor
// lose it.
func (s *Server) SetAuthenticator(a *Authenticator) error {
	if a == nil {
		return errors.New("service: an authenticator is required")
	}
	if s.auth.Load() == nil {
		return errors.New("service: the server was started without authentication")
	}
	s.auth.Store(a)
	return nil
}

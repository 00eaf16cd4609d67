package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// defaultWait is how long a command waits by default for a server that is starting, or
// electing a leader, before it gives up (--wait).
const defaultWait = 10 * time.Second

// errorDomain is the domain of the ErrorInfo details sluiced attaches to its errors.
const errorDomain = "sluice.sched"

// ErrorInfo reasons sluicectl acts on (service/errors.go lists them all).
const (
	reasonNotLeader        = "NOT_LEADER"
	reasonStoreUnavailable = "STORE_UNAVAILABLE"
	reasonShuttingDown     = "SHUTTING_DOWN"
	metadataLeader         = "leader"
)

// errorInfo returns the ErrorInfo sluiced attached to err, or nil.
func errorInfo(err error) *errdetails.ErrorInfo {
	st, ok := status.FromError(err)
	if !ok {
		return nil
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info
		}
	}
	return nil
}

// notReady reports whether err says that the server is up but cannot answer yet: its raft
// member has no leader (STORE_UNAVAILABLE, or NOT_LEADER without a known leader), it is
// shutting down ahead of a restart, or the call failed in transport while nothing listens
// (the last connection attempt was refused: a server restarting). A transport failure
// after a connection was made (a TLS mismatch) is not retried.
func (a *app) notReady(err error) bool {
	if status.Code(err) != codes.Unavailable {
		return false
	}
	info := errorInfo(err)
	if info == nil {
		return a.tracker != nil && !a.tracker.lastOK()
	}
	switch info.GetReason() {
	case reasonStoreUnavailable, reasonShuttingDown:
		return true
	case reasonNotLeader:
		return info.GetMetadata()[metadataLeader] == ""
	}
	return false
}

// notRunningError is a server that never accepted a connection within --wait.
type notRunningError struct {
	addr string
	wait time.Duration
	// cause is the last dial error.
	cause error
}

func (e *notRunningError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "no server answers at %s", e.addr)
	if e.wait > 0 {
		fmt.Fprintf(&b, " (waited %s)", e.wait)
	}
	if e.cause != nil {
		fmt.Fprintf(&b, ": %v", e.cause)
	}
	fmt.Fprintf(&b, "\nhint: is sluiced running at %s? start it with 'sluiced', or pass --server ADDR", e.addr)
	return b.String()
}

// dialTracker dials TCP for gRPC and remembers whether a connection was ever made, so that
// "nothing listens" (keep waiting) is told from "something answered but the handshake
// failed" (TLS settings: report at once).
type dialTracker struct {
	mu        sync.Mutex
	connected bool
	lastErr   error
	// ok is whether the most recent attempt connected.
	ok bool
}

func (d *dialTracker) dial(ctx context.Context, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, "tcp", addr)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ok = err == nil
	if err != nil {
		d.lastErr = err
		return nil, err
	}
	d.connected = true
	return c, nil
}

func (d *dialTracker) lastOK() bool {
	if d == nil {
		return false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.ok
}

func (d *dialTracker) state() (bool, error) {
	if d == nil {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.connected, d.lastErr
}

// usesTCP reports whether a gRPC target is dialled over TCP (not a unix socket), so that
// the dialTracker can dial it.
func usesTCP(target string) bool {
	return !strings.HasPrefix(target, "unix:") && !strings.HasPrefix(target, "unix-abstract:")
}

// waitConnected waits until conn is ready, for at most until the deadline. It returns a
// *notRunningError when nothing accepted a TCP connection by then. When a connection was
// made but the channel is still not ready (a TLS mismatch, say), or the target is not TCP,
// it returns nil, so that the first call fails with the transport's own error.
func (a *app) waitConnected(conn *grpc.ClientConn) error {
	tr := a.tracker
	ctx, cancel := context.WithDeadline(a.ctx, a.waitDeadline)
	defer cancel()
	conn.Connect()
	for {
		s := conn.GetState()
		switch s {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure:
			if connected, _ := tr.state(); connected {
				return nil
			}
			conn.Connect()
		}
		if !conn.WaitForStateChange(ctx, s) {
			if a.ctx.Err() != nil {
				return a.ctx.Err()
			}
			if connected, _ := tr.state(); connected {
				return nil
			}
			if tr == nil {
				return nil
			}
			_, cause := tr.state()
			return &notRunningError{addr: a.server.addr, wait: a.wait, cause: cause}
		}
	}
}

// retryDelay is the wait before attempt n+1 of a call the server was not ready for: 100 ms
// doubling to 1 s, and never past the deadline.
func (a *app) retryDelay(n int) (time.Duration, bool) {
	d := 100 * time.Millisecond << min(n, 4)
	d = min(d, time.Second)
	left := time.Until(a.waitDeadline)
	if left <= 0 {
		return 0, false
	}
	return min(d, left), true
}

// noteWaiting tells the user once that the command waits for the server.
func (a *app) noteWaiting(err error) {
	if a.warnedWaiting {
		return
	}
	a.warnedWaiting = true
	fmt.Fprintf(a.stderr, "sluicectl: the server is not ready (%s); retrying for up to %s\n",
		status.Convert(err).Message(), time.Until(a.waitDeadline).Round(100*time.Millisecond))
}

// retry runs fn again while it fails because the server is not ready, until --wait has
// passed since the command connected. fn must be safe to repeat.
func (a *app) retry(fn func() error) error {
	for n := 0; ; n++ {
		err := fn()
		if err == nil || !a.notReady(err) {
			return err
		}
		d, ok := a.retryDelay(n)
		if !ok {
			return err
		}
		a.noteWaiting(err)
		t := time.NewTimer(d)
		select {
		case <-a.ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

// retryUnary is a unary interceptor that retries a call the server was not ready for.
func (a *app) retryUnary(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return a.retry(func() error { return invoker(ctx, method, req, reply, cc, opts...) })
}

// retryServerStream is a stream interceptor that opens a server-streaming call again when
// its first message fails because the server was not ready (the error of a stream arrives
// with its first receive). Streams the client sends on (Sync) are left to their caller.
func (a *app) retryServerStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil || desc.ClientStreams {
		return s, err
	}
	return &retryingStream{ClientStream: s, a: a, open: func() (grpc.ClientStream, error) {
		return streamer(ctx, desc, cc, method, opts...)
	}}, nil
}

// retryingStream is a server-streaming call that is opened again, with the same request,
// while its first receive fails because the server was not ready.
type retryingStream struct {
	grpc.ClientStream
	a        *app
	open     func() (grpc.ClientStream, error)
	req      any
	received bool
}

func (s *retryingStream) SendMsg(m any) error {
	s.req = m
	return s.ClientStream.SendMsg(m)
}

func (s *retryingStream) RecvMsg(m any) error {
	if s.received {
		return s.ClientStream.RecvMsg(m)
	}
	first := true
	err := s.a.retry(func() error {
		if !first {
			ns, err := s.open()
			if err != nil {
				return err
			}
			// A failed send shows its cause at the receive.
			if err := ns.SendMsg(s.req); err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if err := ns.CloseSend(); err != nil {
				return err
			}
			s.ClientStream = ns
		}
		first = false
		return s.ClientStream.RecvMsg(m)
	})
	if err == nil {
		s.received = true
	}
	return err
}

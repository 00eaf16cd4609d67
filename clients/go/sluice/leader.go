package sluice

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Error reasons and metadata of a replicated server (sluiced with --raft-peers).
const (
	// ReasonNotLeader is the ErrorInfo reason of a write sent to a member that does not
	// lead; its metadata MetadataLeader is the leader's gRPC address, when known.
	ReasonNotLeader = "NOT_LEADER"
	// MetadataLeader is the ErrorInfo metadata key holding the leader's address.
	MetadataLeader = "leader"
	// errorDomain is the domain of the server's ErrorInfo details.
	errorDomain = "sluice.sched"
)

// Reasons of a member that cannot serve the call, whichever member it goes to: the client
// tries the next endpoint for later calls.
const (
	// reasonStoreUnavailable: the member knows no leader (an election, or it is cut off from
	// the others), lost the leadership mid-call, or cannot write its data directory.
	reasonStoreUnavailable = "STORE_UNAVAILABLE"
	// reasonStaleReadRefused: the member is further behind than a stale read allows.
	reasonStaleReadRefused = "STALE_READ_REFUSED"
)

// maxLeaderHops bounds how often one call follows a NOT_LEADER answer to another member.
const maxLeaderHops = 3

// LeaderOf returns the leader's address that a NOT_LEADER error names, if err is one.
func LeaderOf(err error) (string, bool) {
	st, ok := status.FromError(err)
	if !ok || st.Code() != codes.Unavailable {
		return "", false
	}
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain && info.GetReason() == ReasonNotLeader {
			addr := info.GetMetadata()[MetadataLeader]
			return addr, addr != ""
		}
	}
	return "", false
}

// leaderConn is the connection behind a Client's stubs: it follows the leader of a
// replicated server. A call that a follower refuses with NOT_LEADER is sent again to the
// leader it names (a refused call did nothing), and later calls and streams go there too. A
// call that fails with UNAVAILABLE because the member is unreachable, or because it answered
// STORE_UNAVAILABLE or STALE_READ_REFUSED (a member cut off from the others knows no leader
// and names none), makes later calls try the next of the endpoints given with WithEndpoints.
// It implements grpc.ClientConnInterface.
type leaderConn struct {
	// dial connects to a member; nil when the Client wraps a connection it cannot re-dial.
	dial func(target string) (*grpc.ClientConn, error)

	mu        sync.Mutex
	cur       *grpc.ClientConn
	curTarget string
	conns     map[string]*grpc.ClientConn
	endpoints []string
	closed    bool

	// floor gives stale reads this client's read-your-writes floor.
	floor revisionFloor
}

func newLeaderConn(target string, conn *grpc.ClientConn, dial func(string) (*grpc.ClientConn, error), endpoints []string) *leaderConn {
	l := &leaderConn{dial: dial, cur: conn, curTarget: target, conns: map[string]*grpc.ClientConn{target: conn}}
	seen := map[string]bool{target: true}
	l.endpoints = append(l.endpoints, target)
	for _, e := range endpoints {
		if !seen[e] {
			seen[e] = true
			l.endpoints = append(l.endpoints, e)
		}
	}
	return l
}

// current returns the connection calls go to now.
func (l *leaderConn) current() *grpc.ClientConn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cur
}

// Invoke implements grpc.ClientConnInterface.
// A stale read carries the client's revision floor for its cluster (see revisionFloor); every
// reply's revision raises it.
func (l *leaderConn) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	args = l.floor.apply(args)
	for hop := 0; ; hop++ {
		conn := l.current()
		err := conn.Invoke(ctx, method, args, reply, opts...)
		if err == nil {
			l.floor.note(args, reply)
		}
		if err == nil || !l.observe(conn, err) || hop >= maxLeaderHops || ctx.Err() != nil {
			return err
		}
	}
}

// NewStream implements grpc.ClientConnInterface. A stream that a follower ends with
// NOT_LEADER moves later calls and streams to the leader; the caller opens a new one.
func (l *leaderConn) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	conn := l.current()
	cs, err := conn.NewStream(ctx, desc, method, opts...)
	if err != nil {
		l.observe(conn, err)
		return nil, err
	}
	return &observedStream{ClientStream: cs, l: l, conn: conn}, nil
}

// observe looks at a failed call made on conn: a NOT_LEADER answer naming a leader moves
// the calls there (and observe reports true: the call may be sent again); an unreachable
// member moves them to the next endpoint.
func (l *leaderConn) observe(conn *grpc.ClientConn, err error) bool {
	if l.dial == nil {
		return false
	}
	if addr, ok := LeaderOf(err); ok {
		return l.moveTo(conn, addr)
	}
	if status.Code(err) == codes.Unavailable && len(l.endpoints) > 1 && (!fromServer(err) || tryAnother(err)) {
		l.mu.Lock()
		next := l.endpoints[0]
		for i, e := range l.endpoints {
			if e == l.curTarget {
				next = l.endpoints[(i+1)%len(l.endpoints)]
				break
			}
		}
		l.mu.Unlock()
		l.moveTo(conn, next)
	}
	return false
}

// tryAnother reports whether a member's own UNAVAILABLE answer says that another member may
// serve the call.
func tryAnother(err error) bool {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return info.GetReason() == reasonStoreUnavailable || info.GetReason() == reasonStaleReadRefused
		}
	}
	return false
}

// fromServer reports whether a status carries the server's own ErrorInfo (the server
// answered), as opposed to a transport failure.
func fromServer(err error) bool {
	st, _ := status.FromError(err)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == errorDomain {
			return true
		}
	}
	return false
}

// moveTo makes target the current member, unless another call moved away from conn already.
// It reports whether calls now go to target.
func (l *leaderConn) moveTo(from *grpc.ClientConn, target string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if l.curTarget == target {
		return true
	}
	if l.cur != from {
		return true // another call moved already; follow it
	}
	conn, ok := l.conns[target]
	if !ok {
		var err error
		if conn, err = l.dial(target); err != nil {
			return false
		}
		l.conns[target] = conn
	}
	l.cur, l.curTarget = conn, target
	return true
}

// close closes every connection the Client opened.
func (l *leaderConn) close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	var errs []error
	for _, c := range l.conns {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// observedStream watches a stream's errors for a leader change.
type observedStream struct {
	grpc.ClientStream
	l    *leaderConn
	conn *grpc.ClientConn
}

// SendMsg sends m with the client's revision floor when it is a stale read (a dry-run
// WatchPlans with read options), as Invoke does for unary calls.
func (s *observedStream) SendMsg(m any) error {
	return s.ClientStream.SendMsg(s.l.floor.apply(m))
}

func (s *observedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if err != nil && !errors.Is(err, io.EOF) {
		s.l.observe(s.conn, err)
	}
	return err
}

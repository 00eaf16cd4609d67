package service

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// forwardedHeader marks a call a member forwarded to the leader, so that it is never
// forwarded again.
const forwardedHeader = "sluice-forwarded-by"

// ReadForwarder dials the leader, for a follower that forwards default reads to it instead of
// answering NOT_LEADER (so that grpcurl users get an answer from any member).
type ReadForwarder func(addr string) (grpc.ClientConnInterface, error)

// forwarder keeps one connection per leader address.
type forwarder struct {
	dial  ReadForwarder
	mu    sync.Mutex
	conns map[string]grpc.ClientConnInterface
}

func (f *forwarder) conn(addr string) (grpc.ClientConnInterface, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.conns[addr]; ok {
		return c, nil
	}
	c, err := f.dial(addr)
	if err != nil {
		return nil, err
	}
	if f.conns == nil {
		f.conns = map[string]grpc.ClientConnInterface{}
	}
	f.conns[addr] = c
	return c, nil
}

// close closes the connections that can be closed.
func (f *forwarder) close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for addr, c := range f.conns {
		if cl, ok := c.(interface{ Close() error }); ok {
			_ = cl.Close()
		}
		delete(f.conns, addr)
	}
}

// forwardable reports whether a call may be forwarded to the leader: a read, or a dry run,
// with the default (linearizable) consistency, that no member forwarded yet.
func forwardable(ctx context.Context, method string, req any) bool {
	if md, ok := metadata.FromIncomingContext(ctx); ok && len(md.Get(forwardedHeader)) > 0 {
		return false
	}
	if r, ok := req.(readRequest); ok && r.GetRead().GetConsistency() == sluicev1.ReadConsistency_READ_CONSISTENCY_STALE {
		return false
	}
	if s, ok := req.(*sluicev1.ScheduleRequest); ok {
		return s.GetMode() == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN
	}
	return readMethods[method]
}

// responseFor returns a new response message of a method, found in the registered descriptors.
func responseFor(method string) (proto.Message, error) {
	name := protoreflect.FullName(strings.ReplaceAll(strings.TrimPrefix(method, "/"), "/", "."))
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return nil, err
	}
	md, ok := d.(protoreflect.MethodDescriptor)
	if !ok {
		return nil, fmt.Errorf("%s is not a method", name)
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
	if err != nil {
		return nil, err
	}
	return mt.New().Interface(), nil
}

// forwardToLeader sends a refused read to the leader that err names, with the caller's bearer
// token, and answers with the leader's response and headers. ok is false when the call is not
// to be forwarded (then the caller answers err).
func (s *Server) forwardToLeader(ctx context.Context, method string, req any, err error) (any, bool, error) {
	var nle *state.NotLeaderError
	if s.forward == nil || !errors.As(err, &nle) || nle.Leader == "" || !forwardable(ctx, method, req) {
		return nil, false, nil
	}
	conn, cerr := s.forward.conn(nle.Leader)
	if cerr != nil {
		return nil, false, nil
	}
	out, rerr := responseFor(method)
	if rerr != nil {
		return nil, false, nil
	}
	md := metadata.Pairs(forwardedHeader, s.reads.NodeID())
	if in, ok := metadata.FromIncomingContext(ctx); ok {
		for _, v := range in.Get("authorization") {
			md.Append("authorization", v)
		}
	}
	var hdr metadata.MD
	ferr := conn.Invoke(metadata.NewOutgoingContext(ctx, md), method, req, out, grpc.Header(&hdr))
	if len(hdr) > 0 {
		_ = grpc.SetHeader(ctx, hdr)
	}
	if ferr != nil {
		if _, ok := status.FromError(ferr); ok {
			return nil, true, ferr
		}
		return nil, true, toStatus(ferr)
	}
	return out, true, nil
}

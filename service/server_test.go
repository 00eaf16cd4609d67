package service

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestRecoveryTurnsPanicIntoInternal(t *testing.T) {
	// An interceptor added after the server's own chain runs inside it, like a handler.
	panicky := grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if strings.HasSuffix(info.FullMethod, "/GetNode") {
			panic("boom in GetNode")
		}
		return next(ctx, req)
	})
	panickyStream := grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
		if strings.HasSuffix(info.FullMethod, "/WatchPlans") {
			panic("boom in WatchPlans")
		}
		return next(srv, ss)
	})
	h := newHarness(t, panicky, panickyStream)
	ctx := ctxT(t)
	h.apply("c1")
	_, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n1"})
	st := wantCode(t, err, codes.Internal)
	if _, reason := fieldsOf(st); reason != ReasonInternal {
		t.Fatalf("reason %q", reason)
	}
	ws, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1"})
	if err == nil {
		_, err = ws.Recv()
	}
	wantCode(t, err, codes.Internal)
	// The server keeps serving.
	if _, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	logs := h.logs.String()
	if !contains(logs, "boom in GetNode", "panic in handler", "runtime/debug.Stack", "boom in WatchPlans") {
		t.Fatalf("the panics are not logged with their stacks:\n%s", logs)
	}
}

func TestCallsAreLogged(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	_, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "logged-cluster", Name: "nope"})
	wantCode(t, err, codes.NotFound)
	deadline := time.Now().Add(5 * time.Second)
	for {
		logs := h.logs.String()
		if contains(logs, `"grpc.method":"GetNode"`, `"cluster":"logged-cluster"`, `"grpc.code":"NotFound"`, `"grpc.time_ms"`) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with method, cluster, code and duration:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHealthAndReflection(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	hc := healthpb.NewHealthClient(h.conn)
	for _, svc := range []string{"", "sluice.v1.ClusterStateService", "sluice.v1.SchedulerService"} {
		resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: svc})
		if err != nil {
			t.Fatalf("health %q: %v", svc, err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			t.Fatalf("health %q: %v", svc, resp.GetStatus())
		}
	}
	rc, err := reflectionpb.NewServerReflectionClient(h.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		names = append(names, s.GetName())
	}
	for _, want := range []string{"sluice.v1.ClusterStateService", "sluice.v1.SchedulerService", "grpc.health.v1.Health"} {
		if !slices.Contains(names, want) {
			t.Errorf("reflection lists %v, not %s", names, want)
		}
	}
	h.srv.Shutdown()
	resp2, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: ""})
	if err != nil || resp2.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
		t.Fatalf("health after Shutdown: %v, %v", resp2.GetStatus(), err)
	}
}

func TestToStatus(t *testing.T) {
	tests := []struct {
		err    error
		code   codes.Code
		reason string
	}{
		{nil, codes.OK, ""},
		{invalid("x", "bad"), codes.InvalidArgument, ReasonInvalidField},
		{&state.ValidationError{Index: 0, Field: "changes[0].task.job", Msg: "missing"}, codes.InvalidArgument, ReasonInvalidReference},
		{fmt.Errorf("wrapped: %w", &state.ValidationError{Index: -1, Field: "cluster", Msg: "empty"}), codes.InvalidArgument, ReasonInvalidReference},
		{fmt.Errorf("%w: bad", engine.ErrInvalidConfig), codes.InvalidArgument, ReasonInvalidConfig},
		{fmt.Errorf("%w: plan p", engine.ErrNotFound), codes.NotFound, ReasonNotFound},
		{fmt.Errorf("commit: %w", engine.ErrFailedPrecondition), codes.FailedPrecondition, ReasonFailedPrecondition},
		{context.Canceled, codes.Canceled, ReasonCancelled},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), codes.DeadlineExceeded, ReasonDeadlineExceeded},
		{status.Error(codes.PermissionDenied, "no"), codes.PermissionDenied, ""},
		{errors.New("disk on fire"), codes.Internal, ReasonInternal},
	}
	for _, tc := range tests {
		err := toStatus(tc.err)
		st := status.Convert(err)
		if st.Code() != tc.code {
			t.Errorf("toStatus(%v) = %v, want %s", tc.err, err, tc.code)
		}
		if _, reason := fieldsOf(st); reason != tc.reason {
			t.Errorf("toStatus(%v) reason %q, want %q", tc.err, reason, tc.reason)
		}
	}
	// A store error names the store's field.
	fields, _ := fieldsOf(status.Convert(toStatus(&state.ValidationError{Field: "changes[0].task.job", Msg: "m"})))
	if len(fields) != 1 || fields[0] != "changes[0].task.job" {
		t.Errorf("fields %v", fields)
	}
}

func TestDeltaPath(t *testing.T) {
	deltaOf := []int{0, 2, 5}
	tests := []struct {
		prefix string
		verr   state.ValidationError
		want   string
	}{
		{"batch", state.ValidationError{Index: 1, Field: "changes[1].task.job", Object: "task", Path: "job"}, "batch.deltas[2].upsert_task.job"},
		{"", state.ValidationError{Index: 2, Field: "changes[2].hyper_node.members[3]", Object: "hyper_node", Path: "members[3]"}, "deltas[5].upsert_hyper_node.members[3]"},
		{"", state.ValidationError{Index: 0, Field: "changes[0].quota.namespace", Object: "quota", Path: "namespace"}, "deltas[0].upsert_namespace_quota.namespace"},
		{"batch", state.ValidationError{Index: 2, Field: "changes[2].delete", Object: "delete"}, "batch.deltas[5].delete"},
		{"batch", state.ValidationError{Index: 1, Field: "changes[1]"}, "batch.deltas[2]"},
		{"batch", state.ValidationError{Index: -1, Field: "cluster"}, "cluster"},
		{"batch", state.ValidationError{Index: 9, Field: "changes[9].task", Object: "task"}, "changes[9].task"},
	}
	for _, tc := range tests {
		if got := deltaPath(tc.prefix, &tc.verr, deltaOf); got != tc.want {
			t.Errorf("deltaPath(%q, %q) = %q, want %q", tc.prefix, tc.verr.Field, got, tc.want)
		}
	}
}

func TestStartInProcess(t *testing.T) {
	if err := builtin.Registry().Validate(conf.Default()); err != nil {
		t.Fatalf("the built-in actions and plugins must cover the default configuration: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, stop, err := StartInProcess(ctx, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := sluicev1.NewClusterStateServiceClient(conn).ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{
		Cluster: "c1", Batch: batchOf(node("n1", cpu("1"))),
	})
	if err != nil || resp.GetRevision() != 1 {
		t.Fatalf("ApplyDeltas: %v, %v", resp, err)
	}
	if _, err := sluicev1.NewSchedulerServiceClient(conn).Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	stop()
	stop()
}

package main

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// unready fails the first n calls (unary or streaming) with err, as a sluiced whose raft
// member has no leader yet does.
type unready struct {
	mu    sync.Mutex
	n     int
	calls int
	err   error
}

func (u *unready) fail() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls++
	if u.calls <= u.n {
		return u.err
	}
	return nil
}

func (u *unready) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.calls
}

func infoErr(code codes.Code, reason, msg string, md map[string]string) error {
	st, err := status.New(code, msg).WithDetails(&errdetails.ErrorInfo{Reason: reason, Domain: errorDomain, Metadata: md})
	if err != nil {
		panic(err)
	}
	return st.Err()
}

func storeUnavailable() error {
	return infoErr(codes.Unavailable, reasonStoreUnavailable, "state store unavailable: no leader is elected yet; retry shortly", nil)
}

// WatchPlans sends the fake's plan once.
func (f *fake) WatchPlans(_ *sluicev1.WatchPlansRequest, stream grpc.ServerStreamingServer[sluicev1.WatchPlansResponse]) error {
	return stream.Send(&sluicev1.WatchPlansResponse{Plan: f.plan})
}

// serveOn serves f on lis, failing calls as u says.
func serveOn(t *testing.T, lis net.Listener, f *fake, u *unready) {
	t.Helper()
	srv := grpc.NewServer(
		grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
			if err := u.fail(); err != nil {
				return nil, err
			}
			return h(ctx, req)
		}),
		grpc.StreamInterceptor(func(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, h grpc.StreamHandler) error {
			if err := u.fail(); err != nil {
				return err
			}
			return h(srv, ss)
		}))
	sluicev1.RegisterClusterStateServiceServer(srv, f)
	sluicev1.RegisterSchedulerServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
}

func listen(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

// A server that starts listening a moment after the command: the command waits for it.
func TestWaitsForAServerThatIsStarting(t *testing.T) {
	lis := listen(t)
	addr := lis.Addr().String()
	lis.Close()
	go func() {
		time.Sleep(700 * time.Millisecond)
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		serveOn(t, l, newFake(), &unready{})
	}()
	code, out, errOut := sluicectl(t, "", "--server", addr, "get", "nodes")
	if code != exitOK || !strings.Contains(out, "n1") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// A server whose store has no leader yet: unary calls and the Sync stream of apply are
// retried until it has one, and the user is told once why the command waits.
func TestRetriesWhileTheLeaderIsElected(t *testing.T) {
	for _, args := range [][]string{
		{"get", "nodes"},
		{"schedule", "--dry-run"},
		{"apply", "-f", writeFile(t, "c.yaml", clusterFile)},
		{"watch", "--count", "1"},
	} {
		t.Run(args[0], func(t *testing.T) {
			lis := listen(t)
			u := &unready{n: 3, err: storeUnavailable()}
			serveOn(t, lis, newFake(), u)
			code, out, errOut := sluicectl(t, "", append([]string{"--server", lis.Addr().String()}, args...)...)
			if code != exitOK || out == "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if strings.Count(errOut, "the server is not ready (state store unavailable: no leader is elected yet; retry shortly); retrying for up to") != 1 {
				t.Errorf("stderr %q", errOut)
			}
			if u.count() <= 3 {
				t.Errorf("%d calls", u.count())
			}
		})
	}
}

// The wait is bounded: a server that stays unready fails the command after --wait, with
// the server's reason and a hint that does not ask whether sluiced runs.
func TestGivesUpAfterWait(t *testing.T) {
	lis := listen(t)
	u := &unready{n: 1 << 30, err: storeUnavailable()}
	serveOn(t, lis, newFake(), u)
	start := time.Now()
	code, _, errOut := sluicectl(t, "", "--server", lis.Addr().String(), "--wait", "600ms", "get", "nodes")
	took := time.Since(start)
	if code != exitFailure || !strings.Contains(errOut, "no leader is elected yet") || !strings.Contains(errOut, "hint: the server is up but cannot take this yet") ||
		strings.Contains(errOut, "is sluiced running") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
	if took < 500*time.Millisecond || took > 5*time.Second {
		t.Errorf("gave up after %s, want about 600ms", took)
	}
	if u.count() < 3 {
		t.Errorf("%d calls in 600ms", u.count())
	}
}

// Errors that waiting does not cure are reported at once: a member that knows its leader
// names it; a refused request is not retried.
func TestDoesNotRetryWhatWaitingWillNotCure(t *testing.T) {
	tests := []struct {
		name, want string
		err        error
	}{
		{"not the leader", "hint: this member of a replicated sluiced does not lead it: pass --server 10.0.0.2:50051 (the leader)",
			infoErr(codes.Unavailable, reasonNotLeader, "not the leader", map[string]string{metadataLeader: "10.0.0.2:50051"})},
		{"invalid", "InvalidArgument: bad", status.Error(codes.InvalidArgument, "bad")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			lis := listen(t)
			u := &unready{n: 1 << 30, err: tc.err}
			serveOn(t, lis, newFake(), u)
			code, _, errOut := sluicectl(t, "", "--server", lis.Addr().String(), "get", "nodes")
			if code != exitFailure || !strings.Contains(errOut, tc.want) || u.count() != 1 {
				t.Errorf("exit %d after %d calls, stderr %q", code, u.count(), errOut)
			}
		})
	}
}

// Nothing listens: the command says so after --wait (or at once with --wait 0), and asks
// whether sluiced runs.
func TestNothingListens(t *testing.T) {
	lis := listen(t)
	addr := lis.Addr().String()
	lis.Close()
	for _, wait := range []string{"400ms", "0"} {
		start := time.Now()
		code, _, errOut := sluicectl(t, "", "--server", addr, "--wait", wait, "get", "nodes")
		if code != exitFailure || !strings.Contains(errOut, "hint: is sluiced running at "+addr+"?") {
			t.Errorf("--wait %s: exit %d, stderr %q", wait, code, errOut)
		}
		if wait == "400ms" && (!strings.Contains(errOut, "no server answers at "+addr+" (waited 400ms)") || time.Since(start) < 350*time.Millisecond) {
			t.Errorf("--wait %s: after %s, stderr %q", wait, time.Since(start), errOut)
		}
	}
	if code, _, errOut := sluicectl(t, "", "--server", addr, "--wait", "-1s", "get", "nodes"); code != exitUsage {
		t.Errorf("--wait -1s: exit %d %q", code, errOut)
	}
}

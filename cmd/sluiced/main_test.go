package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// A registry with one no-op action and plugin, so that the test does not depend on the
// built-in ones.
type noop struct{}

func (noop) Name() string                      { return "noop" }
func (noop) Execute(*framework.Session)        {}
func (noop) OnSessionOpen(*framework.Session)  {}
func (noop) OnSessionClose(*framework.Session) {}

func register(reg *framework.Registry) {
	reg.RegisterAction("noop", func(conf.Arguments) (framework.Action, error) { return noop{}, nil })
	reg.RegisterPlugin("noop", func(conf.Arguments) (framework.Plugin, error) { return noop{}, nil })
}

const testConfig = "actions: \"noop\"\ntiers:\n- plugins:\n  - name: noop\n"

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func writeConfig(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scheduler.yaml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// started runs the server in the background and returns its addresses and exit code channel.
func started(t *testing.T, ctx context.Context, stderr io.Writer) (grpcAddr, adminAddr string, exit chan int) {
	t.Helper()
	type addrs struct{ g, a string }
	ready := make(chan addrs, 1)
	exit = make(chan int, 1)
	args := []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--config", writeConfig(t, testConfig),
		"--log-level", "debug", "--plan-ttl", "5s"}
	go func() {
		exit <- run(ctx, args, stderr, wiring{register: register, ready: func(g, a string) { ready <- addrs{g, a} }})
	}()
	select {
	case a := <-ready:
		return a.g, a.a, exit
	case code := <-exit:
		t.Fatalf("sluiced exited with %d before serving", code)
	case <-time.After(10 * time.Second):
		t.Fatal("sluiced did not start")
	}
	return "", "", nil
}

func TestServeAndDrainOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	grpcAddr, adminAddr, exit := started(t, ctx, logs)

	resp, err := http.Get("http://" + adminAddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
	}

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	hr, err := healthpb.NewHealthClient(conn).Check(cctx, &healthpb.HealthCheckRequest{})
	if err != nil || hr.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health: %v, %v", hr, err)
	}
	create(t, conn, "c1")
	cfg, err := sluicev1.NewSchedulerServiceClient(conn).GetSchedulerConfig(cctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"})
	if err != nil || cfg.GetConfig() != testConfig {
		t.Fatalf("config: %v, %v", cfg, err)
	}
	// An open Sync stream must not hold up the shutdown.
	s, err := sluicev1.NewClusterStateServiceClient(conn).Sync(cctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "c1"}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := s.Recv(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("welcome: %v, %v", m, err)
	}

	cancel()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("exit code %d\n%s", code, logs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sluiced did not stop")
	}
	if _, err := s.Recv(); status.Code(err) != codes.Unavailable {
		t.Fatalf("Sync after shutdown: %v, want UNAVAILABLE", err)
	}
	if !strings.Contains(logs.String(), `"msg":"sluiced serving"`) || !strings.Contains(logs.String(), `"msg":"stopped"`) {
		t.Fatalf("logs:\n%s", logs)
	}
}

func TestSIGTERMStopsCleanly(t *testing.T) {
	logs := &lockedBuffer{}
	_, _, exit := started(t, context.Background(), logs)
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("exit code %d\n%s", code, logs)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("sluiced did not stop on SIGTERM")
	}
	if !strings.Contains(logs.String(), "shutting down") {
		t.Fatalf("logs:\n%s", logs)
	}
}

func TestStartupErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"invalid config", []string{"--config", writeConfig(t, "actions: \"noop, gnag\"\n")}, exitError, `unknown action \"gnag\"`},
		{"unparsable config", []string{"--config", writeConfig(t, "actions: [\n")}, exitError, "scheduler configuration"},
		{"missing config", []string{"--config", "/nonexistent/sluice.yaml"}, exitError, "--config"},
		{"bad log level", []string{"--log-level", "loud"}, exitUsage, "--log-level"},
		{"bad plan ttl", []string{"--plan-ttl", "-1s"}, exitUsage, "--plan-ttl"},
		{"unknown flag", []string{"--nope"}, exitUsage, "nope"},
		{"bad listen address", []string{"--config", writeConfig(t, testConfig), "--insecure", "--listen", "256.0.0.1:1"}, exitError, "--listen"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stderr lockedBuffer
			args := append([]string{"--admin-listen", "127.0.0.1:0", "--listen", "127.0.0.1:0"}, tc.args...)
			code := run(context.Background(), args, &stderr, wiring{register: register})
			if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
				t.Fatalf("exit %d (want %d), stderr:\n%s\nwant it to mention %s", code, tc.code, stderr.String(), tc.want)
			}
		})
	}
}

func TestDefaultConfigNeedsTheBuiltins(t *testing.T) {
	// Without --config the embedded default is used and validated against the registry: an
	// empty registry must refuse it rather than start.
	var stderr lockedBuffer
	code := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0"}, &stderr,
		wiring{register: func(*framework.Registry) {}})
	if code != exitError || !strings.Contains(stderr.String(), "embedded default") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
	}
}

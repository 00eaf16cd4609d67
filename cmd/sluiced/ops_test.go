package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/gcpolicy"
	"github.com/sluice-sched/sluice/internal/testpki"
)

// create makes clusters exist: an empty batch each.
func create(t *testing.T, conn grpc.ClientConnInterface, clusters ...string) {
	t.Helper()
	for _, c := range clusters {
		if _, err := sluicev1.NewClusterStateServiceClient(conn).ApplyDeltas(tctx(t),
			&sluicev1.ApplyDeltasRequest{Cluster: c, Batch: &sluicev1.DeltaBatch{}}); err != nil {
			t.Fatalf("creating cluster %s: %v", c, err)
		}
	}
}

// startedWith runs sluiced with args (plus loopback listen addresses) in the background.
func startedWith(t *testing.T, ctx context.Context, stderr *lockedBuffer, args []string, w wiring) (grpcAddr, adminAddr string, exit chan int) {
	t.Helper()
	type addrs struct{ g, a string }
	ready := make(chan addrs, 1)
	exit = make(chan int, 1)
	if w.register == nil {
		w.register = register
	}
	w.ready = func(g, a string) { ready <- addrs{g, a} }
	args = append([]string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--log-level", "debug"}, args...)
	go func() { exit <- run(ctx, args, stderr, w) }()
	select {
	case a := <-ready:
		return a.g, a.a, exit
	case code := <-exit:
		t.Fatalf("sluiced exited with %d before serving:\n%s", code, stderr)
	case <-time.After(10 * time.Second):
		t.Fatal("sluiced did not start")
	}
	return "", "", nil
}

func waitExit(t *testing.T, exit chan int, logs *lockedBuffer) {
	t.Helper()
	select {
	case code := <-exit:
		if code != exitOK {
			t.Fatalf("exit code %d\n%s", code, logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("sluiced did not stop")
	}
}

func tctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestTLSTokensAndMetrics(t *testing.T) {
	ca := testpki.NewCA(t, "sluiced-test")
	srvCert := ca.Server(t, "sluiced")
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- {name: rm, token: s3cret-token, clusters: [c1]}\n- {name: ops, token: ops-token, clusters: ['*'], admin: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	grpcAddr, adminAddr, exit := startedWith(t, ctx, logs, []string{"--config", writeConfig(t, testConfig),
		"--tls-cert", srvCert.CertFile, "--tls-key", srvCert.KeyFile, "--tokens", tokens}, wiring{})

	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cs := sluicev1.NewClusterStateServiceClient(conn)
	sc := sluicev1.NewSchedulerServiceClient(conn)
	rc := tctx(t)
	rm := metadata.AppendToOutgoingContext(rc, "authorization", "Bearer s3cret-token")
	if _, err := cs.ApplyDeltas(rm, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}}}},
		{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: &sluicev1.Queue{Name: "q1", Weight: 1}}},
	}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sc.Schedule(rm, &sluicev1.ScheduleRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.ListNodes(rc, &sluicev1.ListNodesRequest{Cluster: "c1"}); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("without a token: %v", err)
	}
	if _, err := cs.ListNodes(rm, &sluicev1.ListNodesRequest{Cluster: "c2"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("another cluster: %v", err)
	}
	if _, err := sc.GetSchedulerConfig(rm, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("configuration without admin: %v", err)
	}
	ops := metadata.AppendToOutgoingContext(rc, "authorization", "Bearer ops-token")
	if _, err := sc.GetSchedulerConfig(ops, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}

	// The admin listener serves TLS too, with the same certificate.
	if resp, err := http.Get("http://" + adminAddr + "/healthz"); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("the admin listener answers plaintext HTTP while sluiced serves TLS")
		}
	}
	https := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}}}
	fams := scrape(t, https, "https://"+adminAddr+"/metrics")
	for _, want := range []string{"sluice_cycle_duration_seconds", "sluice_action_duration_seconds", "sluice_decisions_total",
		"sluice_deltas_total", "sluice_streams", "sluice_queue_allocated_milli_cpu", "sluice_plan_expiries_total",
		"sluice_rpc_server_call_duration_seconds", "sluice_build_info",
		"go_goroutines", "go_memstats_heap_inuse_bytes", "process_resident_memory_bytes", "process_open_fds"} {
		if _, ok := fams[want]; !ok {
			t.Errorf("/metrics has no %s", want)
		}
	}
	for name := range fams {
		if !strings.HasPrefix(name, "sluice_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("/metrics: %s is neither Sluice's (sluice_) nor the runtime's (go_, process_)", name)
		}
	}
	cancel()
	waitExit(t, exit, logs)
}

// TestProfilesNeedAnAdminToken: with --tokens, /debug/pprof/ answers an admin token (heap,
// goroutine, mutex and CPU profiles), refuses a writer or read-only token with 403 and a
// missing or wrong token with 401; --pprof=false removes it; without credentials on a
// loopback admin address it is open. The web UI takes any valid token (--ui=false removes
// it), /metrics needs one with --metrics-auth, and /healthz and /readyz never do.
func TestProfilesNeedAnAdminToken(t *testing.T) {
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	if err := os.WriteFile(tokens, []byte("- {name: rm, token: rm-token, clusters: [c1]}\n"+
		"- {name: viewer, token: viewer-token, clusters: ['*'], read_only: true}\n"+
		"- {name: ops, token: ops-token, clusters: ['*'], admin: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get := func(adminAddr, path, token string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+adminAddr+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body strings.Builder
		_, _ = io.Copy(&body, resp.Body)
		if resp.StatusCode == http.StatusOK && body.Len() == 0 {
			t.Errorf("%s: an empty profile", path)
		}
		return resp.StatusCode
	}
	for _, tc := range []struct {
		name  string
		args  []string
		calls []struct {
			path, token string
			want        int
		}
	}{
		{"tokens", []string{"--tokens", tokens}, []struct {
			path, token string
			want        int
		}{
			{"/debug/pprof/heap", "ops-token", 200},
			{"/debug/pprof/goroutine?debug=1", "ops-token", 200},
			{"/debug/pprof/mutex", "ops-token", 200},
			{"/debug/pprof/profile?seconds=1", "ops-token", 200},
			{"/debug/pprof/", "ops-token", 200},
			{"/debug/pprof/heap", "rm-token", 403},
			{"/debug/pprof/heap", "viewer-token", 403},
			{"/debug/pprof/heap", "", 401},
			{"/debug/pprof/heap", "wrong-token", 401},
			{"/metrics", "", 200},
			{"/healthz", "", 200},
			{"/ui/", "", 401},
			{"/ui/", "wrong-token", 401},
			{"/ui/", "viewer-token", 200},
		}},
		{"metrics behind the tokens", []string{"--tokens", tokens, "--metrics-auth"}, []struct {
			path, token string
			want        int
		}{{"/metrics", "", 401}, {"/metrics", "viewer-token", 200}, {"/readyz", "", 200}}},
		{"no ui", []string{"--tokens", tokens, "--ui=false"}, []struct {
			path, token string
			want        int
		}{{"/ui/", "ops-token", 404}}},
		{"off", []string{"--tokens", tokens, "--pprof=false"}, []struct {
			path, token string
			want        int
		}{{"/debug/pprof/heap", "ops-token", 404}}},
		{"loopback without credentials", nil, []struct {
			path, token string
			want        int
		}{{"/debug/pprof/heap", "", 200}, {"/ui/", "", 200}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			logs := &lockedBuffer{}
			_, adminAddr, exit := startedWith(t, ctx, logs, append([]string{"--config", writeConfig(t, testConfig)}, tc.args...), wiring{})
			for _, c := range tc.calls {
				if got := get(adminAddr, c.path, c.token); got != c.want {
					t.Errorf("%s with token %q: %d, want %d", c.path, c.token, got, c.want)
				}
			}
			cancel()
			waitExit(t, exit, logs)
		})
	}
}

func TestRefusesToServeExposedWithoutCredentials(t *testing.T) {
	logs := &lockedBuffer{}
	code := run(context.Background(), []string{"--listen", "0.0.0.0:0", "--admin-listen", "127.0.0.1:0",
		"--config", writeConfig(t, testConfig)}, logs, wiring{register: register})
	if code != exitError || !strings.Contains(logs.String(), "--insecure") || !strings.Contains(logs.String(), "--tokens") {
		t.Fatalf("exit %d:\n%s", code, logs)
	}
	for _, extra := range [][]string{{"--insecure"}, {"--tokens", writeConfig(t, "- {name: a, token: t, clusters: [c]}\n")}} {
		ctx, cancel := context.WithCancel(context.Background())
		logs := &lockedBuffer{}
		exit := make(chan int, 1)
		ready := make(chan struct{})
		args := append([]string{"--listen", "0.0.0.0:0", "--admin-listen", "127.0.0.1:0", "--config", writeConfig(t, testConfig)}, extra...)
		go func() {
			exit <- run(ctx, args, logs, wiring{register: register, ready: func(string, string) { close(ready) }})
		}()
		select {
		case <-ready:
		case code := <-exit:
			t.Fatalf("%v: exit %d:\n%s", extra, code, logs)
		}
		cancel()
		waitExit(t, exit, logs)
	}
	if !isLoopback("127.0.0.1:1") || !isLoopback("[::1]:1") || !isLoopback("localhost:1") || isLoopback(":1") || isLoopback("10.0.0.1:1") {
		t.Fatal("isLoopback")
	}
}

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", "x.pem"}, "--tls-key"},
		{[]string{"--client-ca", "ca.pem"}, "--client-ca needs TLS"},
		{[]string{"--rate-limit", "-1"}, "--rate-limit"},
		{[]string{"--max-recv-bytes", "0"}, "--max-recv-bytes"},
		{[]string{"--schedule-period", "1ms"}, "--schedule-period"},
		{[]string{"--max-concurrent-cycles", "-2"}, "--max-concurrent-cycles"},
		{[]string{"--cycle-quantum", "1us"}, "--cycle-quantum"},
		{[]string{"--max-queued-cycles", "0"}, "--max-queued-cycles"},
		{[]string{"--cycle-share", "0"}, "--cycle-share"},
		{[]string{"--cycle-share", "1.5"}, "--cycle-share"},
		{[]string{"--slow-call", "-1s"}, "--slow-call"},
		{[]string{"--log-summary-period", "-1s"}, "--log-summary-period"},
		{[]string{"--max-labels", "0"}, "--max-labels"},
		{[]string{"--max-objects-per-cluster", "-1"}, "--max-objects-per-cluster"},
		{[]string{"--max-dry-run-watches", "0"}, "--max-dry-run-watches"},
		{[]string{"--gc-percent", "-10"}, "--gc-percent"},
		{[]string{"--memory-limit", "12 apples"}, "--memory-limit"},
		{[]string{"--memory-limit", "0"}, "--memory-limit"},
		{[]string{"--gc-min-heap", "lots"}, "--gc-min-heap"},
		{[]string{"--gc-min-heap", "3GiB", "--memory-limit", "2GiB"}, "above the memory limit"},
	}
	for _, tc := range tests {
		var stderr lockedBuffer
		if code := run(context.Background(), tc.args, &stderr, wiring{register: register}); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}
	var stderr lockedBuffer
	code := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--tokens", writeConfig(t, "- {name: a, clusters: [c]}\n")}, &stderr, wiring{register: register})
	if code != exitError || !strings.Contains(stderr.String(), "exactly one of token") {
		t.Errorf("bad tokens file: exit %d, stderr %q", code, stderr.String())
	}
}

// scrape reads a Prometheus text exposition.
func scrape(t *testing.T, c *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// TestCollectorPolicy: sluiced sets the collector from its flags, over GOGC and GOMEMLIMIT,
// and falls back to those and then to its defaults, a heap floor among them; /metrics and the
// start line show what is in force, and the process's earlier setting is back once run
// returns.
func TestCollectorPolicy(t *testing.T) {
	before := debug.SetGCPercent(77)
	defer debug.SetGCPercent(before)
	avail := gcpolicy.Available()
	for _, tc := range []struct {
		name string
		args []string
		env  map[string]string
		// pct is GOGC as /metrics shows it; with a floor, the least it may be (the floor
		// raises it as long as the live heap is small).
		pct    float64
		floor  bool
		limit  float64
		logged string
	}{
		{"flags", []string{"--gc-percent", "250", "--memory-limit", "3GiB", "--gc-min-heap", "none"}, map[string]string{"GOGC": "50", "GOMEMLIMIT": "1GiB"},
			250, false, 3 << 30, "GOGC=250 GOMEMLIMIT=3GiB min_heap=none"},
		// The runtime reports GOGC=off as the largest uint64.
		{"environment", []string{"--gc-min-heap", "none"}, map[string]string{"GOGC": "off", "GOMEMLIMIT": "1536MiB"},
			math.MaxUint64, false, 1536 << 20, "GOGC=off GOMEMLIMIT=1.5GiB min_heap=none"},
		{"floor", []string{"--gc-min-heap", "1GiB", "--memory-limit", "4GiB"}, map[string]string{"GOGC": "", "GOMEMLIMIT": ""},
			101, true, 4 << 30, "GOGC=100 GOMEMLIMIT=4GiB min_heap=1GiB"}, // raised past 100 while the live heap is under 512MiB
		{"defaults", nil, map[string]string{"GOGC": "", "GOMEMLIMIT": ""},
			gcpolicy.DefaultPercent, true, float64(avail) * 3 / 4, "GOGC=100 GOMEMLIMIT="},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			logs := &lockedBuffer{}
			_, adminAddr, exit := startedWith(t, ctx, logs, append([]string{"--config", writeConfig(t, testConfig)}, tc.args...), wiring{})
			fams := scrape(t, http.DefaultClient, "http://"+adminAddr+"/metrics")
			gauge := func(name string) float64 {
				f, ok := fams[name]
				if !ok || len(f.GetMetric()) != 1 {
					t.Fatalf("/metrics has no single %s", name)
				}
				return f.GetMetric()[0].GetGauge().GetValue()
			}
			switch got := gauge("go_gc_gogc_percent"); {
			case tc.floor && got < tc.pct:
				t.Errorf("go_gc_gogc_percent %g; want at least %g (the floor over a small live heap)", got, tc.pct)
			case !tc.floor && got != tc.pct:
				t.Errorf("go_gc_gogc_percent %g; want %g", got, tc.pct)
			}
			// A percentage of the machine's memory is rounded down to a byte.
			if got := gauge("go_gc_gomemlimit_bytes"); got < tc.limit-1 || got > tc.limit {
				t.Errorf("go_gc_gomemlimit_bytes %g; want %g", got, tc.limit)
			}
			cancel()
			waitExit(t, exit, logs)
			if !strings.Contains(logs.String(), `"gc":"`+tc.logged) {
				t.Errorf("the start line does not say %q:\n%s", tc.logged, logs)
			}
			if got := debug.SetGCPercent(77); got != 77 {
				t.Errorf("after sluiced stopped the process's GOGC is %d; want 77 back", got)
			}
		})
	}
}

func TestConfigReloadOnChangeAndSIGHUP(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	path := writeConfig(t, testConfig)
	hup := make(chan os.Signal, 1)
	grpcAddr, _, exit := startedWith(t, ctx, logs, []string{"--config", path}, wiring{hangup: hup, configPoll: 20 * time.Millisecond})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sc := sluicev1.NewSchedulerServiceClient(conn)
	rc := tctx(t)
	create(t, conn, "c1")
	current := func() string {
		r, err := sc.GetSchedulerConfig(rc, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		return r.GetConfig()
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s:\n%s", what, logs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The file changes: the poll picks it up.
	next := testConfig + "    enableJobOrder: false\n"
	writeAt(t, path, next, time.Now().Add(time.Second))
	waitFor("the changed file was not reloaded", func() bool { return current() == next })
	// A bad file is refused with its reason; the previous configuration stays.
	writeAt(t, path, "actions: \"noop, nosuchaction\"\n", time.Now().Add(2*time.Second))
	waitFor("the bad file was not refused", func() bool {
		return strings.Contains(logs.String(), "scheduler configuration refused") && strings.Contains(logs.String(), "nosuchaction")
	})
	if current() != next {
		t.Fatal("a refused configuration took effect")
	}
	// SIGHUP reloads even when the modification time did not move.
	third := testConfig + "    enablePredicate: false\n"
	info, _ := os.Stat(path)
	writeAt(t, path, third, info.ModTime())
	hup <- syscall.SIGHUP
	waitFor("SIGHUP did not reload", func() bool { return current() == third })
	cancel()
	waitExit(t, exit, logs)
}

// writeAt writes a file and sets its modification time.
func writeAt(t *testing.T, path, text string, mtime time.Time) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, mtime, mtime); err != nil {
		t.Fatal(err)
	}
}

// slowAction signals when a cycle reaches it and holds the cycle until released.
type slowAction struct {
	entered chan struct{}
	release chan struct{}
}

func (slowAction) Name() string { return "slow" }

func (a slowAction) Execute(*framework.Session) {
	select {
	case a.entered <- struct{}{}:
	default:
	}
	<-a.release
}

func TestSIGTERMFinishesTheCycleInProgress(t *testing.T) {
	slow := slowAction{entered: make(chan struct{}, 1), release: make(chan struct{})}
	reg := func(r *framework.Registry) {
		register(r)
		r.RegisterAction("slow", func(conf.Arguments) (framework.Action, error) { return slow, nil })
	}
	logs := &lockedBuffer{}
	cfg := writeConfig(t, "actions: \"slow\"\ntiers:\n- plugins:\n  - name: noop\n")
	grpcAddr, _, exit := startedWith(t, context.Background(), logs, []string{"--config", cfg}, wiring{register: reg})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	sc := sluicev1.NewSchedulerServiceClient(conn)
	rc := tctx(t)
	// A watch on one cluster, a unary cycle on another.
	create(t, conn, "w1", "c1")
	watch, err := sc.WatchPlans(rc, &sluicev1.WatchPlansRequest{Cluster: "w1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil {
		t.Fatal(err)
	}
	<-slow.entered
	slow.release <- struct{}{}
	if _, err := watch.Recv(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := sc.Schedule(rc, &sluicev1.ScheduleRequest{Cluster: "c1"})
		done <- err
	}()
	<-slow.entered
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The watch ends with a clear status while the cycle still runs.
	_, err = watch.Recv()
	if status.Code(err) != codes.Unavailable || status.Convert(err).Message() != "server shutting down" {
		t.Fatalf("watch after SIGTERM: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	close(slow.release)
	if err := <-done; err != nil {
		t.Fatalf("the cycle in progress was cut short: %v", err)
	}
	waitExit(t, exit, logs)
}

// collector is an OTLP trace collector that records span names.
type collector struct {
	collectortrace.UnimplementedTraceServiceServer
	mu    sync.Mutex
	names []string
}

func (c *collector) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.names = append(c.names, s.GetName())
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func TestTracesExportedOverOTLP(t *testing.T) {
	col := &collector{}
	gs := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(gs, col)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	defer gs.Stop()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	grpcAddr, _, exit := startedWith(t, ctx, logs, []string{"--config", writeConfig(t, testConfig),
		"--otlp-endpoint", lis.Addr().String(), "--otlp-insecure"}, wiring{})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	create(t, conn, "c1")
	if _, err := sluicev1.NewSchedulerServiceClient(conn).Schedule(tctx(t), &sluicev1.ScheduleRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	cancel()
	waitExit(t, exit, logs) // the shutdown flushes the exporter
	col.mu.Lock()
	defer col.mu.Unlock()
	for _, want := range []string{"sluice.v1.SchedulerService/Schedule", "Schedule", "action/noop", "plugin/noop/open"} {
		if !slices.Contains(col.names, want) {
			t.Errorf("no span %q exported; got %v", want, col.names)
		}
	}
	if t.Failed() {
		fmt.Println(logs)
	}
}

func TestSIGHUPReloads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	path := writeConfig(t, testConfig)
	info, _ := os.Stat(path)
	_, _, exit := startedWith(t, ctx, logs, []string{"--config", path}, wiring{configPoll: time.Hour})
	writeAt(t, path, testConfig+"    enableJobOrder: false\n", info.ModTime())
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), `"msg":"scheduler configuration reloaded"`) {
		if time.Now().After(deadline) {
			t.Fatalf("SIGHUP did not reload:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	waitExit(t, exit, logs)
}

func TestRateAndSizeLimitFlags(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	grpcAddr, _, exit := startedWith(t, ctx, logs, []string{"--config", writeConfig(t, testConfig),
		"--rate-limit", "0.001", "--rate-burst", "2", "--max-recv-bytes", "1024"}, wiring{})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cs := sluicev1.NewClusterStateServiceClient(conn)
	rc := tctx(t)
	big := &sluicev1.Node{Name: "n1", Labels: map[string]string{"x": strings.Repeat("y", 2000)}}
	_, err = cs.ApplyDeltas(rc, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: big}}}}})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a message over --max-recv-bytes: %v", err)
	}
	for range 2 {
		// c1 does not exist (NOT_FOUND): a call all the same.
		if _, err := cs.ListNodes(rc, &sluicev1.ListNodesRequest{Cluster: "c1"}); status.Code(err) != codes.NotFound {
			t.Fatal(err)
		}
	}
	_, err = cs.ListNodes(rc, &sluicev1.ListNodesRequest{Cluster: "c1"})
	if status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("a call over --rate-limit: %v", err)
	}
	cancel()
	waitExit(t, exit, logs)
}

// TestDefaultLogsStayQuiet: at the default level, hundreds of committed cycles and reads add
// nothing to the log while they run; stopping writes the period's summary of the cluster.
func TestDefaultLogsStayQuiet(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	grpcAddr, _, exit := startedWith(t, ctx, logs, []string{"--config", writeConfig(t, testConfig), "--log-level", "info"}, wiring{})
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cs, sc := sluicev1.NewClusterStateServiceClient(conn), sluicev1.NewSchedulerServiceClient(conn)
	rc := tctx(t)
	if _, err := cs.ApplyDeltas(rc, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}}}},
	}}}); err != nil {
		t.Fatal(err)
	}
	before := strings.Count(logs.String(), "\n")
	for i := 0; i < 300; i++ {
		p, err := sc.Schedule(rc, &sluicev1.ScheduleRequest{Cluster: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := sc.CommitPlan(rc, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetPlan().GetId()}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListNodes(rc, &sluicev1.ListNodesRequest{Cluster: "c1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := cs.GetNode(rc, &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	if added := strings.Count(logs.String(), "\n") - before; added != 0 {
		t.Fatalf("300 committed cycles and 600 reads added %d lines at info:\n%s", added, logs)
	}
	cancel()
	waitExit(t, exit, logs)
	text := logs.String()
	if !strings.Contains(text, `"msg":"cluster activity","cluster":"c1"`) || !strings.Contains(text, `"cycles":300`) ||
		!strings.Contains(text, `"commits":300`) {
		t.Fatalf("no summary of the cluster's activity at shutdown:\n%s", text)
	}
	if n := strings.Count(text, "\n"); n > 6 {
		t.Fatalf("%d lines in all:\n%s", n, text)
	}
}

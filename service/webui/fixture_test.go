package webui_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
	"github.com/sluice-sched/sluice/service/webui"
)

// Tokens of the fixture: a read-only viewer of alpha, and an admin of every cluster.
const (
	alphaToken = "alpha-viewer-token"
	opsToken   = "ops-admin-token"
	tokensFile = "- {name: alpha-viewer, token: " + alphaToken + ", clusters: [alpha], read_only: true}\n" +
		"- {name: ops, token: " + opsToken + ", clusters: ['*'], admin: true}\n"
)

// The scenarios of the tests (cmd/sluiced's browser test plays them too): demo.yaml has two
// queues under a root, a gang that fits (train) and one that cannot (big: 6 CPUs a task, and
// the node with room is tainted); other.yaml is cluster beta's, whose names appear nowhere
// in alpha.
const (
	demoScenario  = "testdata/demo.yaml"
	otherScenario = "testdata/other.yaml"
)

// fixture is a service in process (gRPC on loopback) with the UI over it on an httptest
// server.
type fixture struct {
	store *state.Store
	eng   *engine.Engine
	srv   *service.Server
	ui    *webui.UI
	web   *httptest.Server
	conn  *grpc.ClientConn
}

// newFixture starts the service, with tokens when tokens is not empty, and the UI.
func newFixture(t testing.TB, tokens string, open bool) *fixture {
	t.Helper()
	store := state.New()
	eng, err := engine.New(store, engine.Options{Registry: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	opts := service.Options{Store: store, Engine: eng, Logger: slog.New(slog.DiscardHandler)}
	if tokens != "" {
		entries, err := service.ParseTokens([]byte(tokens))
		if err != nil {
			t.Fatal(err)
		}
		if opts.Auth, err = service.NewAuthenticator(entries, false); err != nil {
			t.Fatal(err)
		}
	}
	f := &fixture{store: store, eng: eng, srv: service.New(opts)}
	gs := service.NewGRPCServer(f.srv)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() { f.srv.Shutdown(); gs.Stop() })
	if f.conn, err = grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials())); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.conn.Close() })
	f.ui = webui.New(webui.Options{Source: f.srv.UIReads(), Open: open, Refresh: time.Second})
	mux := http.NewServeMux()
	mux.Handle(webui.Path, f.ui)
	mux.Handle("/guarded", f.ui.Guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "inside") })))
	f.web = httptest.NewServer(mux)
	t.Cleanup(f.web.Close)
	return f
}

// play runs a scenario file (apply, configure, schedule and commit each cycle) in a
// cluster, as the admin.
func (f *fixture) play(t testing.TB, file, cluster string) {
	t.Helper()
	sc, err := scenario.LoadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+opsToken)
	if res := scenario.Run(ctx, f.conn, sc, cluster); !res.Passed() {
		t.Fatal(res)
	}
}

// apply applies a batch to a cluster as the admin.
func (f *fixture) apply(t testing.TB, cluster string, b *sluicev1.DeltaBatch) {
	t.Helper()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+opsToken)
	if _, err := sluicev1.NewClusterStateServiceClient(f.conn).ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: cluster, Batch: b}); err != nil {
		t.Fatal(err)
	}
}

// get fetches a path with a bearer token ("" for none) and returns the status and body.
func (f *fixture) get(t testing.TB, path, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.web.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := f.web.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// mustGet fetches a path that must answer 200 and contain every want.
func (f *fixture) mustGet(t testing.TB, path, token string, want ...string) string {
	t.Helper()
	code, body := f.get(t, path, token)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d\n%.2000s", path, code, body)
	}
	for _, w := range want {
		if !strings.Contains(body, w) {
			t.Errorf("GET %s: no %q in\n%.3000s", path, w, body)
		}
	}
	return body
}

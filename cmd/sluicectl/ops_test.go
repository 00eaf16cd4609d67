package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
	"gopkg.in/yaml.v3"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testpki"
	"github.com/sluice-sched/sluice/service"
)

// secured is a real Sluice server with TLS and bearer tokens.
type secured struct {
	addr                 string
	ca                   *testpki.CA
	caFile               string
	rmToken, adminToken  string
	rmTokenFile, adminTF string
}

func startSecured(t *testing.T) *secured {
	t.Helper()
	ca := testpki.NewCA(t, "ctl-test")
	pair := ca.Server(t, "sluiced")
	cfg, err := service.ServerTLSConfig(pair.CertFile, pair.KeyFile, "")
	if err != nil {
		t.Fatal(err)
	}
	entries, err := service.ParseTokens([]byte("- {name: rm, token: rm-token, clusters: [c1]}\n- {name: admin, token: admin-token, clusters: ['*'], admin: true}\n"))
	if err != nil {
		t.Fatal(err)
	}
	auth, err := service.NewAuthenticator(entries, false)
	if err != nil {
		t.Fatal(err)
	}
	store := state.New()
	eng, err := engine.New(store, engine.Options{Registry: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := service.New(service.Options{Store: store, Engine: eng, Auth: auth, Logger: slog.New(slog.DiscardHandler)})
	gs := service.NewGRPCServer(srv, grpc.Creds(credentials.NewTLS(cfg)))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() {
		srv.Shutdown()
		service.GracefulStop(gs, 5*time.Second)
	})
	dir := t.TempDir()
	s := &secured{addr: lis.Addr().String(), ca: ca, caFile: ca.CertFile, rmToken: "rm-token", adminToken: "admin-token",
		rmTokenFile: filepath.Join(dir, "rm.token"), adminTF: filepath.Join(dir, "admin.token")}
	for path, tok := range map[string]string{s.rmTokenFile: s.rmToken + "\n", s.adminTF: s.adminToken} {
		if err := os.WriteFile(path, []byte(tok), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// ctl runs sluicectl against the secured server as the resource manager of cluster c1.
func (s *secured) ctl(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return sluicectl(t, "", append([]string{"--server", s.addr, "--cluster", "c1", "--tls-ca", s.caFile, "--token-file", s.rmTokenFile}, args...)...)
}

// cpuCluster is clusterFile with resources.
const cpuCluster = `
queues: [{name: q}]
nodes: [{name: n1, allocatable: {cpu: 4, memory: 8Gi}}]
jobs: [{name: j, queue: q, tasks: [{name: t, replicas: 2, resources: {cpu: 1}}]}]
`

func TestAgainstASecuredServer(t *testing.T) {
	s := startSecured(t)
	// A typo'd or new cluster is NOT_FOUND, not an empty table.
	if code, out, errOut := s.ctl(t, "get", "nodes"); code != 1 || out != "" || !strings.Contains(errOut, "NotFound") ||
		!strings.Contains(errOut, "sluicectl get clusters") {
		t.Fatalf("get nodes of an unknown cluster: %d %q %q", code, out, errOut)
	}
	path := writeFile(t, "c.yaml", cpuCluster)
	if code, out, errOut := s.ctl(t, "apply", "-f", path); code != 0 || !strings.Contains(out, "into cluster c1") {
		t.Fatalf("apply: %d %q %q", code, out, errOut)
	}
	code, out, errOut := s.ctl(t, "get", "nodes", "-o", "yaml")
	var nodes []map[string]any
	if code != 0 || yaml.Unmarshal([]byte(out), &nodes) != nil || len(nodes) != 1 || nodes[0]["name"] != "n1" {
		t.Fatalf("get nodes -o yaml: %d %q %q", code, out, errOut)
	}
	if !strings.Contains(out, "cpu: \"4\"") && !strings.Contains(out, "cpu: '4'") {
		t.Errorf("quantities must stay strings in YAML:\n%s", out)
	}
	if code, out, errOut := s.ctl(t, "schedule", "--commit"); code != 0 || !strings.Contains(out, "BIND") {
		t.Fatalf("schedule: %d %q %q", code, out, errOut)
	}
	code, out, errOut = s.ctl(t, "describe", "queue", "q")
	for _, want := range []string{"Name: q", "Share: 1", "Overused: true", "Jobs: 1 (Running 1)", "cpu 2 2 - -", "RESOURCE ALLOCATED DESERVED", "cpu"} {
		if code != 0 || !strings.Contains(strings.Join(lines(out), "\n"), want) {
			t.Errorf("describe queue lacks %q: %d\n%s%s", want, code, out, errOut)
		}
	}
	code, out, _ = s.ctl(t, "describe", "queue", "q", "-o", "json")
	var q map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &q) != nil || q["status"] == nil {
		t.Errorf("describe -o json: %d %s", code, out)
	}

	// Configuration needs the admin token.
	code, _, errOut = s.ctl(t, "config", "get")
	if code != 1 || !strings.Contains(errOut, "PermissionDenied") || !strings.Contains(errOut, "hint: this needs a token with admin: true") {
		t.Errorf("config get as rm: %d %q", code, errOut)
	}
	if code, out, errOut := sluicectl(t, "", "--server", s.addr, "--cluster", "c1", "--tls-ca", s.caFile, "--token", s.adminToken,
		"config", "get"); code != 0 || !strings.Contains(out, "actions") {
		t.Errorf("config get as admin: %d %q %q", code, out, errOut)
	}

	// delete
	if code, out, errOut := s.ctl(t, "delete", "job", "default/j"); code != 0 || !strings.HasPrefix(out, "deleted job default/j from cluster c1 at revision") {
		t.Errorf("delete: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := s.ctl(t, "delete", "job", "j"); code != 1 || !strings.Contains(errOut, "--ignore-not-found") {
		t.Errorf("delete missing: %d %q", code, errOut)
	}
	if code, out, _ := s.ctl(t, "delete", "job", "j", "--ignore-not-found", "-o", "json"); code != 0 || !strings.Contains(out, `"deleted": false`) {
		t.Errorf("delete --ignore-not-found: %d %q", code, out)
	}

	// Errors say what to do.
	errs := []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--server", s.addr, "--tls-ca", s.caFile, "get", "nodes"}, "hint: pass a bearer token with --token-file", exitFailure},
		{[]string{"--server", s.addr, "--tls-ca", s.caFile, "--token", "nope", "get", "nodes"}, "hint: the server does not know this token", exitFailure},
		{[]string{"--server", s.addr, "--tls-ca", s.caFile, "--token-file", s.rmTokenFile, "--cluster", "c2", "get", "nodes"}, `does not cover cluster "c2"`, exitFailure},
		{[]string{"--server", s.addr, "--token-file", s.rmTokenFile, "--cluster", "c1", "get", "nodes"}, "hint: the server may require TLS", exitFailure},
		{[]string{"--server", s.addr, "--tls", "--token-file", s.rmTokenFile, "get", "nodes"}, "hint: the server's certificate was not verified: pass --tls-ca", exitFailure},
		{[]string{"--server", "127.0.0.1:1", "--wait", "300ms", "get", "nodes"}, "hint: is sluiced running at 127.0.0.1:1?", exitFailure},
		{[]string{"--server", s.addr, "--token", "a", "--token-file", s.rmTokenFile, "get", "nodes"}, "exclude each other", exitUsage},
	}
	for _, e := range errs {
		code, _, errOut := sluicectl(t, "", e.args...)
		if code != e.code || !strings.Contains(errOut, e.want) {
			t.Errorf("%v: exit %d, stderr %q, want it to say %q", e.args, code, errOut, e.want)
		}
	}
}

// lockedWriter is a goroutine-safe buffer.
type lockedWriter struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestWatchCommitsEachPlan(t *testing.T) {
	s := startSecured(t)
	if code, _, errOut := s.ctl(t, "apply", "-f", writeFile(t, "c.yaml", cpuCluster)); code != 0 {
		t.Fatal(errOut)
	}
	var stdout, stderr lockedWriter
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"--server", s.addr, "--cluster", "c1", "--tls-ca", s.caFile, "--token-file", s.rmTokenFile,
			"watch", "--commit", "--count", "2", "--period", "1h"}, strings.NewReader(""), &stdout, &stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(stdout.String(), "committed plan") {
		if time.Now().After(deadline) {
			t.Fatalf("no plan committed:\n%s\n%s", stdout.String(), stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A new job: the watch gets a plan for it and commits it.
	conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: s.ca.Pool(), MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx := metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer "+s.rmToken)
	if _, err := sluicev1.NewClusterStateServiceClient(conn).ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{
		Deltas: []*sluicev1.Delta{
			{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "k", Queue: "q", MinAvailable: proto.Int32(1)}}},
			{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{Name: "k-0", Job: "k", Resources: map[string]string{"cpu": "1"}}}},
		},
	}}); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("watch exit %d: %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the watch did not see the change:\n%s", stdout.String())
	}
	out := stdout.String()
	if strings.Count(out, "committed plan") != 2 || !strings.Contains(out, "default/k-0") {
		t.Fatalf("watch output:\n%s", out)
	}
	// The tasks are bound now.
	code, got, _ := s.ctl(t, "get", "tasks")
	if code != 0 || strings.Contains(got, "Pending") {
		t.Fatalf("tasks after the watch:\n%s", got)
	}
}

func TestOutputFormatsEverywhere(t *testing.T) {
	addr := serve(t, newFake())
	for _, args := range [][]string{
		{"get", "queues"}, {"get", "jobs", "train"}, {"schedule"}, {"commit", "p1"}, {"discard", "p1"}, {"explain", "batch"},
		{"apply", "-f", writeFile(t, "c.yaml", clusterFile)},
	} {
		for _, format := range []string{"json", "yaml"} {
			code, out, errOut := sluicectl(t, "", append([]string{"--server", addr}, append(args, "-o", format)...)...)
			var v any
			var perr error
			if format == "json" {
				perr = json.Unmarshal([]byte(out), &v)
			} else {
				perr = yaml.Unmarshal([]byte(out), &v)
			}
			want := exitOK
			if args[0] == "commit" {
				want = exitRejected // the fake's commit rejects a decision
			}
			if code != want || perr != nil || v == nil {
				t.Errorf("%v -o %s: exit %d, %v\n%s%s", args, format, code, perr, out, errOut)
			}
		}
	}
}

func TestCompletion(t *testing.T) {
	for _, shell := range []string{"bash", "zsh"} {
		code, out, _ := sluicectl(t, "", "completion", shell)
		if code != 0 || !strings.Contains(out, "complete -o default -F _sluicectl sluicectl") || !strings.Contains(out, "describe delete") {
			t.Errorf("completion %s: %d\n%s", shell, code, out)
		}
	}
	if code, _, errOut := sluicectl(t, "", "completion", "fish"); code != exitUsage || !strings.Contains(errOut, "bash or zsh") {
		t.Errorf("completion fish: %d %q", code, errOut)
	}
}

// admin runs sluicectl against the secured server with the admin token.
func (s *secured) admin(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	return sluicectl(t, "", append([]string{"--server", s.addr, "--tls-ca", s.caFile, "--token-file", s.adminTF}, args...)...)
}

func TestClusterCommands(t *testing.T) {
	s := startSecured(t)
	if code, _, errOut := s.ctl(t, "apply", "-f", writeFile(t, "c.yaml", cpuCluster)); code != 0 {
		t.Fatal(errOut)
	}
	if code, _, errOut := s.admin(t, "--cluster", "c2", "apply", "-f", writeFile(t, "c.yaml", cpuCluster)); code != 0 {
		t.Fatal(errOut)
	}
	// The rm's token covers c1 only.
	code, out, errOut := s.ctl(t, "get", "clusters")
	if code != 0 || !strings.Contains(out, "NAME") || !strings.Contains(out, "c1") || strings.Contains(out, "c2") {
		t.Fatalf("get clusters as rm: %d %q %q", code, out, errOut)
	}
	want := []string{"NAME REVISION NODES QUEUES JOBS TASKS PLANS CONFIG", "c1 1 1 1 1 2 0 default", "c2 1 1 1 1 2 0 default"}
	code, out, _ = s.admin(t, "get", "clusters")
	if got := lines(out); code != 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("get clusters as admin: %d\n%s", code, strings.Join(got, "\n"))
	}
	code, out, _ = s.admin(t, "get", "cluster", "c2", "-o", "json")
	var c2 map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &c2) != nil || c2["name"] != "c2" || c2["configEtag"] == "" {
		t.Fatalf("get cluster c2 -o json: %d %s", code, out)
	}
	code, out, _ = s.ctl(t, "describe", "cluster", "c1")
	for _, w := range []string{"Name: c1", "Revision: 1", "Configuration: server default", "Config etag: 0-", "tasks 2", "hypernodes 0"} {
		if code != 0 || !strings.Contains(strings.Join(lines(out), "\n"), w) {
			t.Errorf("describe cluster lacks %q: %d\n%s", w, code, out)
		}
	}

	// Deleting a cluster needs an admin token.
	code, _, errOut = s.ctl(t, "delete", "cluster", "c1")
	if code != 1 || !strings.Contains(errOut, "PermissionDenied") || !strings.Contains(errOut, "admin: true") {
		t.Errorf("delete cluster as rm: %d %q", code, errOut)
	}
	code, out, errOut = s.admin(t, "delete", "cluster", "c2")
	if code != 0 || out != "deleted cluster c2 at revision 1 (1 nodes, 1 queues, 1 jobs, 2 tasks, 0 plans; configuration: default)\n" {
		t.Errorf("delete cluster: %d %q %q", code, out, errOut)
	}
	if code, _, errOut := s.admin(t, "delete", "cluster", "c2"); code != 1 || !strings.Contains(errOut, "--ignore-not-found") {
		t.Errorf("delete a missing cluster: %d %q", code, errOut)
	}
	if code, out, _ := s.admin(t, "delete", "cluster", "c2", "--ignore-not-found", "-o", "json"); code != 0 || !strings.Contains(out, `"deleted": false`) {
		t.Errorf("delete --ignore-not-found: %d %q", code, out)
	}
	if code, _, errOut := s.admin(t, "describe", "cluster", "c2"); code != 1 || !strings.Contains(errOut, "NotFound") {
		t.Errorf("describe a deleted cluster: %d %q", code, errOut)
	}
}

func TestConfigSetChecksTheEtag(t *testing.T) {
	s := startSecured(t)
	// A cluster nothing created has no configuration to get.
	if code, _, errOut := s.admin(t, "--cluster", "c1", "config", "get"); code != 1 || !strings.Contains(errOut, "NotFound") ||
		!strings.Contains(errOut, "does not exist") {
		t.Fatalf("config get of an unknown cluster: %d %q", code, errOut)
	}
	if code, _, errOut := s.ctl(t, "apply", "-f", writeFile(t, "c.yaml", cpuCluster)); code != 0 {
		t.Fatalf("apply: %q", errOut)
	}
	code, got, errOut := s.admin(t, "--cluster", "c1", "config", "get")
	if code != 0 || !strings.HasPrefix(got, "# etag: 0-") {
		t.Fatalf("config get: %d %q %q", code, got, errOut)
	}
	// Got, edited and set: the etag line makes the update conditional, and is not stored.
	edited := writeFile(t, "conf.yaml", got+"# edited\n")
	code, out, errOut := s.admin(t, "--cluster", "c1", "config", "set", "-f", edited)
	if code != 0 || !strings.Contains(out, "updated (etag 1-") {
		t.Fatalf("config set: %d %q %q", code, out, errOut)
	}
	_, now, _ := s.admin(t, "--cluster", "c1", "config", "get")
	if strings.Count(now, "# etag:") != 1 || strings.HasPrefix(now, "# etag: 0-") {
		t.Fatalf("configuration after the set:\n%s", now)
	}
	// The same file again: the configuration changed since it was got.
	code, _, errOut = s.admin(t, "--cluster", "c1", "config", "set", "-f", edited)
	if code != 1 || !strings.Contains(errOut, "Aborted") || !strings.Contains(errOut, "hint: the configuration changed since it was read") {
		t.Fatalf("stale config set: %d %q", code, errOut)
	}
	etag, _ := splitEtag(now)
	if code, _, errOut := s.admin(t, "--cluster", "c1", "config", "set", "-f", edited, "--etag", etag); code != 0 {
		t.Fatalf("config set --etag: %d %q", code, errOut)
	}
	if code, _, errOut := s.admin(t, "--cluster", "c1", "config", "set", "-f", edited, "--force"); code != 0 {
		t.Fatalf("config set --force: %d %q", code, errOut)
	}
	if code, _, errOut := s.admin(t, "--cluster", "c1", "config", "set", "-f", edited, "--force", "--etag", etag); code != exitUsage || !strings.Contains(errOut, "exclude each other") {
		t.Fatalf("--force with --etag: %d %q", code, errOut)
	}
}

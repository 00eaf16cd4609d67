package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testpki"
)

// TestTokensAndCertificatesReload: the tokens file and the TLS certificate reload when they
// change (and on SIGHUP); a file that does not load leaves the previous one in force; calls in
// progress and open streams are not dropped.
func TestTokensAndCertificatesReload(t *testing.T) {
	ca := testpki.NewCA(t, "sluiced-test")
	srvCert := ca.Server(t, "sluiced")
	tokens := filepath.Join(t.TempDir(), "tokens.yaml")
	writeTokens := func(text string, mtime time.Time) { writeAt(t, tokens, text, mtime) }
	writeTokens("- {name: old, token: old-token, clusters: [c1]}\n", time.Now().Add(-time.Hour))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	hup := make(chan os.Signal, 1)
	grpcAddr, _, exit := startedWith(t, ctx, logs, []string{"--config", writeConfig(t, testConfig),
		"--tls-cert", srvCert.CertFile, "--tls-key", srvCert.KeyFile, "--tokens", tokens, "--rate-limit", "0"},
		wiring{hangup: hup, configPoll: 20 * time.Millisecond})

	// seen dials anew and returns the serial of the certificate the server presented.
	seen := func() *big.Int {
		t.Helper()
		var got *x509.Certificate
		cfg := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12,
			VerifyConnection: func(cs tls.ConnectionState) error { got = cs.PeerCertificates[0]; return nil }}
		c, err := tls.Dial("tcp", grpcAddr, cfg)
		if err != nil {
			t.Fatalf("TLS handshake: %v", err)
		}
		c.Close()
		return got.SerialNumber
	}
	conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cs := sluicev1.NewClusterStateServiceClient(conn)
	sc := sluicev1.NewSchedulerServiceClient(conn)
	rc := tctx(t)
	with := func(tok string) context.Context {
		return metadata.AppendToOutgoingContext(rc, "authorization", "Bearer "+tok)
	}
	if _, err := cs.ApplyDeltas(with("old-token"), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}}}}}}}); err != nil {
		t.Fatal(err)
	}
	// A stream opened with the old token, and a connection made before the reloads.
	watch, err := sc.WatchPlans(with("old-token"), &sluicev1.WatchPlansRequest{Cluster: "c1",
		Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, Period: durationpb.New(100 * time.Millisecond)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := watch.Recv(); err != nil {
		t.Fatal(err)
	}
	code := func(tok string) codes.Code {
		_, err := cs.ListNodes(with(tok), &sluicev1.ListNodesRequest{Cluster: "c1"})
		return status.Code(err)
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

	// The tokens file changes: the new token works, the old one no longer.
	writeTokens("- {name: new, token: new-token, clusters: [c1]}\n", time.Now())
	waitFor("the new tokens file was not loaded", func() bool { return code("new-token") == codes.OK })
	if c := code("old-token"); c != codes.Unauthenticated {
		t.Fatalf("the old token after the reload: %s", c)
	}
	// A broken file is refused, with the reason; the tokens stay.
	writeTokens("- {name: broken, clusters: [c1]}\n", time.Now().Add(time.Second))
	waitFor("the broken tokens file was not refused", func() bool {
		return strings.Contains(logs.String(), "tokens file refused; keeping the previous tokens")
	})
	if c := code("new-token"); c != codes.OK {
		t.Fatalf("the token in force after a refused file: %s", c)
	}

	// The certificate is renewed (same files): new handshakes present it.
	before := seen()
	renewed := ca.Server(t, "sluiced")
	if renewed.CertFile != srvCert.CertFile {
		t.Fatal("testpki wrote the renewed certificate elsewhere")
	}
	future := time.Now().Add(2 * time.Second)
	for _, f := range []string{renewed.CertFile, renewed.KeyFile} {
		if err := os.Chtimes(f, future, future); err != nil {
			t.Fatal(err)
		}
	}
	waitFor("the renewed certificate was not loaded", func() bool { return seen().Cmp(before) != 0 })
	current := seen()
	// A broken certificate is refused on SIGHUP; the renewed one stays in force.
	if err := os.WriteFile(renewed.CertFile, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup <- syscall.SIGHUP
	waitFor("the broken certificate was not refused", func() bool {
		return strings.Contains(logs.String(), "TLS certificates refused; keeping the previous ones")
	})
	if got := seen(); got.Cmp(current) != 0 {
		t.Fatalf("serial %v after a refused certificate, want %v", got, current)
	}

	// Nothing was dropped: the stream opened before every reload still gets plans (one per
	// change: watches are idle-free), and the old connection still serves calls.
	for i := range 2 {
		if _, err := cs.ApplyDeltas(with("new-token"), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
			{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: fmt.Sprintf("m%d", i), Allocatable: map[string]string{"cpu": "4"}}}}}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := watch.Recv(); err != nil {
			t.Fatalf("the stream opened before the reloads: %v", err)
		}
	}
	if c := code("new-token"); c != codes.OK {
		t.Fatalf("the connection made before the reloads: %s", c)
	}
	cancel()
	waitExit(t, exit, logs)
}

// TestConfigFileSizeIsBounded: a --config file over --max-config-bytes is refused at start
// and, later, on reload, without being read whole or logged whole.
func TestConfigFileSizeIsBounded(t *testing.T) {
	big := writeConfig(t, testConfig+"# "+strings.Repeat("x", 4096)+"\n")
	var stderr lockedBuffer
	code := run(context.Background(), []string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--config", big, "--max-config-bytes", "1024"}, &stderr, wiring{register: register})
	if code != exitError || !strings.Contains(stderr.String(), "--max-config-bytes") {
		t.Fatalf("an oversized --config: exit %d, stderr %q", code, stderr.String())
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	logs := &lockedBuffer{}
	path := writeConfig(t, testConfig)
	_, _, exit := startedWith(t, ctx, logs, []string{"--config", path, "--max-config-bytes", "1024"},
		wiring{configPoll: 20 * time.Millisecond})
	writeAt(t, path, testConfig+"# "+strings.Repeat("y", 20_000_000)+"\n", time.Now().Add(time.Second))
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(logs.String(), "scheduler configuration not reloaded") {
		if time.Now().After(deadline) {
			t.Fatalf("the oversized file was not refused:\n%s", logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	waitExit(t, exit, logs)
	for _, line := range strings.Split(logs.String(), "\n") {
		if len(line) > 4096 {
			t.Fatalf("a log line of %d bytes", len(line))
		}
	}
}

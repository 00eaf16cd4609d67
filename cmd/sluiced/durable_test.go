package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestDurableFlagErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--raft-listen", "127.0.0.1:7000"}, "need --data-dir"},
		{[]string{"--bootstrap"}, "need --data-dir"},
		{[]string{"--data-dir", "d", "--bootstrap"}, "need --raft-listen"},
		{[]string{"--data-dir", "d", "--raft-peers", "a=127.0.0.1:1"}, "need --raft-listen"},
		{[]string{"--data-dir", "d", "--raft-listen", "127.0.0.1:7000"}, "needs --node-id and --raft-peers"},
		{[]string{"--data-dir", "d", "--raft-peers", "a"}, "--raft-peers"},
		{[]string{"--data-dir", "d", "--snapshot-threshold", "0"}, "--snapshot-threshold"},
		{[]string{"--data-dir", "d", "--raft-timeout", "1ms"}, "--raft-timeout"},
		{[]string{"--raft-tls-ca", "ca.pem"}, "need --raft-listen"},
		{[]string{"--data-dir", "d", "--node-id", "a", "--raft-listen", "127.0.0.1:7000", "--raft-peers", "a=127.0.0.1:7000", "--raft-tls"}, "needs a certificate and a CA"},
		{[]string{"--data-dir", "d", "--node-id", "a", "--raft-listen", "127.0.0.1:7000", "--raft-peers", "a=127.0.0.1:7000", "--raft-tls-cert", "c.pem"}, "go together"},
		// The test-only fault injection: a cluster member, on a loopback admin address without
		// credentials unless --insecure.
		{[]string{"--data-dir", "d", "--unsafe-fault-injection"}, "needs a replicated cluster"},
		{[]string{"--data-dir", "d", "--node-id", "a", "--raft-listen", "127.0.0.1:7000", "--raft-peers", "a=127.0.0.1:7000",
			"--unsafe-fault-injection", "--admin-listen", "0.0.0.0:9090"}, "needs a loopback --admin-listen"},
		{[]string{"--data-dir", "d", "--node-id", "a", "--raft-listen", "127.0.0.1:7000", "--raft-peers", "a=127.0.0.1:7000",
			"--unsafe-fault-injection", "--tokens", "t.yaml"}, "refused with --tokens"},
	}
	for _, tc := range tests {
		var stderr lockedBuffer
		if code := run(context.Background(), tc.args, &stderr, wiring{register: register}); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}
	// A data directory that is a file, and one this node is not among the peers of.
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", file}, "is not a directory"},
		{[]string{"--data-dir", t.TempDir(), "--node-id", "x", "--raft-listen", "127.0.0.1:0", "--raft-peers", "a=127.0.0.1:1"}, "not among the peers"},
	} {
		var stderr lockedBuffer
		code := run(context.Background(), append([]string{"--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--config", writeConfig(t, testConfig)}, tc.args...), &stderr, wiring{register: register})
		if code != exitError || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q", tc.args, code, stderr.String())
		}
	}
}

// TestDataDirKeepsTheStateAcrossRestarts starts sluiced with --data-dir, writes, stops it,
// starts it again on the same directory: the state and its revision are back. /readyz turns
// ready once the node leads, and /raft shows its status.
func TestDataDirKeepsTheStateAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	args := []string{"--config", writeConfig(t, testConfig), "--data-dir", dir}
	for round := range 2 {
		ctx, cancel := context.WithCancel(context.Background())
		logs := &lockedBuffer{}
		grpcAddr, adminAddr, exit := startedWith(t, ctx, logs, args, wiring{})
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp, err := http.Get("http://" + adminAddr + "/readyz")
			if err == nil {
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					break
				}
				if !strings.Contains(string(body), "no leader ready") {
					t.Fatalf("/readyz %d %q", resp.StatusCode, body)
				}
			}
			if time.Now().After(deadline) {
				t.Fatal("never ready")
			}
			time.Sleep(10 * time.Millisecond)
		}
		conn, err := grpc.NewClient(grpcAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		cs := sluicev1.NewClusterStateServiceClient(conn)
		if round == 0 {
			resp, err := cs.ApplyDeltas(tctx(t), &sluicev1.ApplyDeltasRequest{Cluster: "d", Batch: &sluicev1.DeltaBatch{Deltas: []*sluicev1.Delta{
				{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}}}},
			}}})
			if err != nil || resp.GetRevision() != 1 {
				t.Fatalf("ApplyDeltas = %v, %v", resp, err)
			}
		} else {
			resp, err := cs.GetNode(tctx(t), &sluicev1.GetNodeRequest{Cluster: "d", Name: "n1"})
			if err != nil || resp.GetRevision() != 1 || resp.GetNode().GetAllocatable()["cpu"] != "4" {
				t.Fatalf("after a restart: GetNode = %v, %v", resp, err)
			}
		}
		resp, err := http.Get("http://" + adminAddr + "/raft")
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			State string `json:"state"`
			Ready bool   `json:"ready"`
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		if err != nil || st.State != "Leader" || !st.Ready {
			t.Fatalf("/raft = %+v, %v", st, err)
		}
		conn.Close()
		cancel()
		waitExit(t, exit, logs)
	}
}

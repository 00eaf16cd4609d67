package main

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// TestBenchIngest streams a tiny cluster into a server, in this process and on --server: a
// line per round with every object and batch, a summary whose median lies between its min
// and max, and on --server no cluster of the bench left behind.
func TestBenchIngest(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, stop, err := service.StartInProcess(ctx, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	args := []string{"bench", "ingest", "--nodes", "8", "--jobs", "12", "--tasks-per-job", "2", "--batch", "7", "--rounds", "3", "--shapes", "mixed"}
	for _, tc := range []struct {
		name   string
		args   []string
		server string
		lines  []string
	}{
		{"inprocess", append(args, "--warmup", "1"), "inprocess",
			[]string{"warmup=1 cluster=bench-ingest-1 ", "round=2 cluster=bench-ingest-2 ", "round=3 cluster=bench-ingest-3 ", "round=4 cluster=bench-ingest-4 "}},
		{"external", append([]string{"--server", addr}, args...), "external",
			[]string{"round=1 cluster=bench-ingest-1 ", "round=2 cluster=bench-ingest-2 ", "round=3 cluster=bench-ingest-3 "}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := sluicectl(t, "", tc.args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			for _, r := range tc.lines {
				if !strings.Contains(out, r+"objects=45 batches=7 ") {
					t.Errorf("no line %q for 45 objects in 7 batches:\n%s", r, out)
				}
			}
			kv := benchSummary(t, out)
			if kv["server"] != tc.server || kv["objects"] != "45" || kv["rounds"] != "3" {
				t.Errorf("summary %v; want server=%s objects=45 rounds=3", kv, tc.server)
			}
			lo, med, hi := number(t, kv, "min_objects_per_s"), number(t, kv, "objects_per_s"), number(t, kv, "max_objects_per_s")
			if lo <= 0 || lo > med || med > hi {
				t.Errorf("objects_per_s: min %g, median %g, max %g", lo, med, hi)
			}
		})
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	resp, err := sluicev1.NewClusterStateServiceClient(conn).ListClusters(ctx, &sluicev1.ListClustersRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range resp.GetClusters() {
		t.Errorf("cluster %q left behind", c.GetName())
	}
}

func TestBenchIngestFlags(t *testing.T) {
	for _, args := range [][]string{{"--rounds", "0"}, {"--batch", "0"}, {"--warmup", "-1"}, {"--cluster", ""}, {"--shapes", "odd"}, {"extra"}} {
		code, _, errOut := sluicectl(t, "", append([]string{"bench", "ingest"}, args...)...)
		if code == 0 || !strings.Contains(errOut, "bench ingest") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

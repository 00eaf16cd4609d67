package main

import (
	"strings"
	"testing"
)

// TestBenchNeighbours runs "bench neighbours" on a tiny large cluster against an in-process
// server, in short phases: a line per phase, the table of the small cluster's operations, and
// a summary line with the idle and noisy p50 and p99 of each operation and the large
// cluster's dry runs.
func TestBenchNeighbours(t *testing.T) {
	code, out, errOut := sluicectl(t, "", "bench", "neighbours", "--nodes", "20", "--jobs", "40", "--tasks-per-job", "2",
		"--queues", "2", "--small-nodes", "4", "--rate", "50", "--phase", "300ms", "--rounds", "2")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if n := strings.Count(out, "phase=idle"); n != 2 {
		t.Errorf("%d idle phase lines, want 2:\n%s", n, out)
	}
	if n := strings.Count(out, "phase=noisy"); n != 2 {
		t.Errorf("%d noisy phase lines, want 2:\n%s", n, out)
	}
	kv := benchSummary(t, out)
	for _, op := range neighbourOps {
		for _, k := range []string{"_idle_p50_ms", "_idle_p99_ms", "_noisy_p50_ms", "_noisy_p99_ms", "_p99_ratio"} {
			if v := number(t, kv, op+k); v <= 0 {
				t.Errorf("%s%s = %g", op, k, v)
			}
		}
	}
	if number(t, kv, "large_dry_runs") < 1 {
		t.Errorf("no dry run of the large cluster in the noisy phases:\n%s", out)
	}
	if _, ok := kv["noisy_errors"]; ok {
		t.Errorf("errors in the noisy phases:\n%s", out)
	}
}

func TestBenchNeighboursFlags(t *testing.T) {
	for _, args := range [][]string{{"--rate", "0"}, {"--callers", "0"}, {"--shapes", "odd"}, {"extra"}} {
		code, _, errOut := sluicectl(t, "", append([]string{"bench", "neighbours"}, args...)...)
		if code == 0 || !strings.Contains(errOut, "bench neighbours") {
			t.Errorf("%v: exit %d, stderr %q", args, code, errOut)
		}
	}
}

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// benchSummary parses the last line of "bench" output into its key=value pairs.
func benchSummary(t *testing.T, out string) map[string]string {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	kv := map[string]string{}
	for _, f := range strings.Fields(last) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			t.Fatalf("last line %q: %q is not key=value", last, f)
		}
		kv[k] = v
	}
	return kv
}

func number(t *testing.T, kv map[string]string, key string) float64 {
	t.Helper()
	v, ok := kv[key]
	if !ok {
		t.Fatalf("last line has no %s= (%v)", key, kv)
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		t.Fatalf("%s=%q is not a number", key, v)
	}
	return f
}

// TestBench runs the bench command on a tiny roomy cluster, in-process and through gRPC:
// every task is placed, there is a line per cycle, and the last line has the keys of the
// summary.
func TestBench(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		keys []string
	}{
		{"inprocess", []string{"--shapes", "uniform"}, []string{"nodes", "tasks", "placed", "cycle_ms", "tasks_per_s", "rss_mib"}},
		{"grpc mixed", []string{"--shapes", "mixed", "--queues", "3", "--grpc", "--batch", "7"},
			[]string{"nodes", "tasks", "placed", "cycle_ms", "tasks_per_s", "rss_mib", "grpc_cycle_ms", "ingest_s", "ingest_objects_per_s", "grpc_overhead_pct"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// 8 nodes of at least 16 cpu hold 12 jobs of 2 tasks of at most 4 cpu each.
			args := append([]string{"bench", "--nodes", "8", "--jobs", "12", "--tasks-per-job", "2", "--cycles", "3", "--seed", "7"}, tc.args...)
			code, out, errOut := sluicectl(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			kv := benchSummary(t, out)
			for _, k := range tc.keys {
				number(t, kv, k)
			}
			if n := number(t, kv, "nodes"); n != 8 {
				t.Errorf("nodes=%v, want 8", n)
			}
			tasks, placed := number(t, kv, "tasks"), number(t, kv, "placed")
			if tasks != 24 || placed != tasks {
				t.Errorf("placed=%v tasks=%v, want every one of 24 tasks placed\n%s", placed, tasks, out)
			}
			if number(t, kv, "tasks_per_s") <= 0 || number(t, kv, "cycle_ms") < 0 {
				t.Errorf("implausible figures: %v", kv)
			}
			paths := 1
			if strings.Contains(tc.name, "grpc") {
				paths = 2
				if !strings.Contains(out, "ingest path=grpc objects=47 batches=7 ") {
					t.Errorf("no ingest line for 47 objects in 7 batches:\n%s", out)
				}
			}
			if got := strings.Count(out, "\ncycle="); got != 4*paths {
				t.Errorf("%d cycle lines, want %d (a warm-up and 3 measured per path):\n%s", got, 4*paths, out)
			}
		})
	}
}

// TestBenchConfig runs a configuration from a file through both paths.
func TestBenchConfig(t *testing.T) {
	cfg := writeFile(t, "w1.yaml", `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`)
	code, out, errOut := sluicectl(t, "", "bench", "--nodes", "4", "--jobs", "4", "--tasks-per-job", "3", "--cycles", "1", "--config", cfg, "--grpc")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	kv := benchSummary(t, out)
	if kv["placed"] != "12" || kv["tasks"] != "12" {
		t.Errorf("placed=%s tasks=%s, want 12 of 12", kv["placed"], kv["tasks"])
	}
}

// TestBenchProfile writes a CPU and a heap profile.
func TestBenchProfile(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	code, out, errOut := sluicectl(t, "", "bench", "--nodes", "4", "--jobs", "2", "--cycles", "1", "--cpuprofile", cpu, "--memprofile", mem)
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, p := range []string{cpu, mem} {
		if st, err := statSize(p); err != nil || st == 0 {
			t.Errorf("%s: size %d, %v", p, st, err)
		}
	}
}

// TestBenchErrors: bad flags end with status 2, bad configurations with status 1, and both
// say what is wrong.
func TestBenchErrors(t *testing.T) {
	badPlugin := writeFile(t, "bad.yaml", "actions: allocate\ntiers:\n- plugins:\n  - name: nosuchplugin\n")
	badYAML := writeFile(t, "bad2.yaml", "actions: [\n")
	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"--shapes", "round"}, `shapes must be uniform or mixed, got "round"`, exitUsage},
		{[]string{"--nodes", "0"}, "nodes must be at least 1", exitUsage},
		{[]string{"--queues", "0"}, "queues must be at least 1", exitUsage},
		{[]string{"--tasks-per-job", "0"}, "tasks per job must be at least 1", exitUsage},
		{[]string{"--cycles", "0"}, "--cycles must be at least 1", exitUsage},
		{[]string{"--batch", "0"}, "--batch must be at least 1", exitUsage},
		{[]string{"--nodes", "many"}, `invalid value "many" for flag -nodes`, exitUsage},
		{[]string{"--server", "x:1"}, "flag provided but not defined: -server", exitUsage},
		{[]string{"extra"}, `unexpected argument "extra"`, exitUsage},
		{[]string{"--config", filepath.Join(t.TempDir(), "missing.yaml")}, "--config", exitFailure},
		{[]string{"--config", badPlugin}, "nosuchplugin", exitFailure},
		{[]string{"--config", badYAML}, "bad2.yaml", exitFailure},
		{[]string{"--cpuprofile", filepath.Join(t.TempDir(), "no", "such", "dir")}, "--cpuprofile", exitFailure},
	} {
		args := append([]string{"bench", "--nodes", "2", "--jobs", "1", "--cycles", "1"}, tc.args...)
		code, out, errOut := sluicectl(t, "", args...)
		if code != tc.code || !strings.Contains(errOut, tc.want) || !strings.HasPrefix(errOut, "sluicectl: bench") {
			t.Errorf("%v: exit %d, stderr %q (want %q), stdout %q", tc.args, code, errOut, tc.want, out)
		}
	}
}

func statSize(path string) (int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// TestBenchWorkloads runs every workload on a small cluster and checks what its cycles did:
// nothing pending in steady-idle, every arrival placed in steady-arrivals, a pipeline and an
// eviction per arriving task in preempt and reclaim, one job in big-job.
func TestBenchWorkloads(t *testing.T) {
	// 10 uniform nodes hold 160 tasks of 2 cpu: 10 jobs of 4 leave room for 3 cycles of 2
	// arriving gangs; preempt and reclaim fill them with 40 running gangs of 4.
	for _, tc := range []struct {
		workload                        string
		jobs, tasks, placed, piped, evd int
	}{
		{"pending", 10, 40, 40, 0, 0},
		{"steady-idle", 10, 40, 0, 0, 0},
		{"steady-arrivals", 18, 72, 8, 0, 0}, // 10 + 2 arrivals × (warm-up + 3 cycles)
		{"preempt", 42, 168, 0, 8, 8},
		{"reclaim", 42, 168, 0, 8, 8},
		{"big-job", 1, 4, 4, 0, 0},
	} {
		t.Run(tc.workload, func(t *testing.T) {
			code, out, errOut := sluicectl(t, "", "bench", "--workload", tc.workload, "--nodes", "10", "--jobs", "10",
				"--tasks-per-job", "4", "--arrivals", "2", "--cycles", "3")
			if code != 0 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			kv := benchSummary(t, out)
			if kv["workload"] != tc.workload {
				t.Errorf("workload=%s, want %s", kv["workload"], tc.workload)
			}
			for key, want := range map[string]int{"jobs": tc.jobs, "tasks": tc.tasks, "placed": tc.placed, "pipelined": tc.piped, "evicted": tc.evd} {
				if got := number(t, kv, key); got != float64(want) {
					t.Errorf("%s=%v, want %d\n%s", key, got, want, out)
				}
			}
			for _, k := range []string{"cycle_ms", "tasks_per_s", "rss_mib"} {
				number(t, kv, k)
			}
			if tc.workload == "steady-arrivals" {
				number(t, kv, "commit_ms")
				number(t, kv, "arrive_ms")
			}
		})
	}
}

// TestBenchWorkloadErrors: an unknown workload, negative arrivals and --grpc with a workload
// that changes the store are refused.
func TestBenchWorkloadErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "busy"}, `--workload must be one of`},
		{[]string{"--arrivals", "-1"}, "--arrivals must not be negative"},
		{[]string{"--workload", "preempt", "--grpc"}, "--grpc is supported with --workload pending and big-job only"},
	} {
		args := append([]string{"bench", "--nodes", "2", "--jobs", "1", "--cycles", "1"}, tc.args...)
		code, _, errOut := sluicectl(t, "", args...)
		if code != 2 || !strings.Contains(errOut, tc.want) { // a usage mistake
			t.Errorf("%v: exit %d, stderr %q, want %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestBenchWatch measures a few deltas through a loopback server's WatchPlans stream: every
// arrival is placed by the plan of its revision, and the idle-free watch sends nothing else.
func TestBenchWatch(t *testing.T) {
	code, out, errOut := sluicectl(t, "", "bench", "--workload", "steady-arrivals", "--watch", "--nodes", "10", "--jobs", "10",
		"--tasks-per-job", "4", "--arrivals", "2", "--cycles", "3", "--gap", "20ms")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	kv := benchSummary(t, out)
	for _, k := range []string{"delta_p50_ms", "delta_p90_ms", "delta_p99_ms", "delta_max_ms", "server_session_ms", "rss_mib"} {
		number(t, kv, k)
	}
	if number(t, kv, "deltas") != 3 || number(t, kv, "extra_plans") != 0 {
		t.Errorf("deltas=%s extra_plans=%s, want 3 and 0\n%s", kv["deltas"], kv["extra_plans"], out)
	}
	if got := strings.Count(out, "placed=8 "); got != 4 {
		t.Errorf("%d deltas placed their 8 tasks, want 4 (a warm-up and 3)\n%s", got, out)
	}
	code, _, errOut = sluicectl(t, "", "bench", "--workload", "preempt", "--watch")
	if code != 2 || !strings.Contains(errOut, "--watch is supported with --workload steady-arrivals") {
		t.Errorf("--watch with preempt: exit %d, stderr %q", code, errOut)
	}
}

// TestBenchGRPCReadsEveryPage: a plan larger than a page (5,100 binds against pages of at most
// 5,000) is read through GetPlan to its end, so the gRPC path decides exactly as the
// in-process one (it used to compare the first page alone and fail above 1,000 decisions).
func TestBenchGRPCReadsEveryPage(t *testing.T) {
	code, out, errOut := sluicectl(t, "", "bench", "--nodes", "600", "--jobs", "510", "--tasks-per-job", "10",
		"--shapes", "uniform", "--cycles", "1", "--grpc")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "path=grpc") || !strings.Contains(out, "decisions=5100") {
		t.Fatalf("no gRPC cycle of 5,100 decisions:\n%s", out)
	}
}

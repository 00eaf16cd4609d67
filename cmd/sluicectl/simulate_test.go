package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/sim"
)

// genTrace writes a generated SWF trace of n jobs on 8 nodes of 16 cores.
func genTrace(t *testing.T, n int) string {
	t.Helper()
	var b bytes.Buffer
	if err := sim.GenerateSWF(&b, sim.GenerateSpec{Seed: 11, Jobs: n, Nodes: 8, CoresPerNode: 16, Queues: 2, Load: 0.9}); err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "gen.swf", b.String())
}

const spreadConf = `name: spread
scheduler:
  actions: "enqueue, allocate, backfill"
  tiers:
  - plugins:
    - name: priority
    - name: gang
  - plugins:
    - name: predicates
    - name: proportion
    - name: nodeorder
queues:
- {name: q1, weight: 3}
`

func readSummary(t *testing.T, dir string) sim.Document {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc sim.Document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestSimulateWritesComparableDeterministicOutputs(t *testing.T) {
	trace := genTrace(t, 150)
	def := writeFile(t, "default.yaml", "actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n  - name: conformance\n- plugins:\n  - name: overcommit\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n  - name: binpack\n")
	spread := writeFile(t, "spread.yaml", spreadConf)
	outs := []string{t.TempDir(), t.TempDir()}
	for _, out := range outs {
		code, stdout, stderr := sluicectl(t, "", "simulate", "--trace", trace, "--config", def, "--config", spread, "--out", out, "--quiet")
		if code != 0 {
			t.Fatalf("simulate: %s", stderr)
		}
		for _, want := range []string{"default", "spread", "mean wait", "fairness (Jain)", "report.html"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the summary printed lacks %q:\n%s", want, stdout)
			}
		}
	}
	for _, f := range []string{"jobs.csv", "timeline.csv", "summary.json", "report.html"} {
		a, err := os.ReadFile(filepath.Join(outs[0], f))
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(outs[1], f))
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("%s: %d bytes, and a rerun wrote different bytes", f, len(a))
		}
	}
	doc := readSummary(t, outs[0])
	if len(doc.Configs) != 2 || doc.Configs[0].Config != "default" || doc.Configs[1].Config != "spread" || doc.Trace.Jobs != 150 ||
		doc.Cluster.Nodes != 8 || doc.Cluster.Capacity["cpu"] != 128 {
		t.Fatalf("summary: %+v", doc)
	}
	if doc.Configs[0].Wait == doc.Configs[1].Wait {
		t.Errorf("two configurations waited alike: %+v", doc.Configs[0].Wait)
	}
	jobs, _ := os.ReadFile(filepath.Join(outs[0], "jobs.csv"))
	if n := strings.Count(string(jobs), "\n"); n != 1+2*150 {
		t.Errorf("jobs.csv has %d lines, want a header and 300 rows", n)
	}
}

func TestSimulateNativeTraceOnAClusterFile(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", `
priorityClasses: [{name: high, value: 100}]
queues: [{name: a, weight: 1}, {name: b, weight: 1}]
nodes:
- {name: g1, allocatable: {cpu: 16, memory: 64Gi, nvidia.com/gpu: 4, pods: 110}}
`)
	trace := writeFile(t, "trace.jsonl", `{"name": "train", "submit": 0, "duration": 100, "queue": "a", "gang": 2, "resources": {"cpu": "4", "memory": "8Gi", "nvidia.com/gpu": "2"}}
{"name": "eval", "submit": 10, "duration": 50, "queue": "b", "priorityClass": "high", "resources": {"cpu": "2", "nvidia.com/gpu": "1"}}
`)
	out := t.TempDir()
	code, _, stderr := sluicectl(t, "", "simulate", "--trace", trace, "--cluster", cluster, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	doc := readSummary(t, out)
	c := doc.Configs[0]
	// train holds all 4 GPUs for 100 s; eval waits for them.
	if c.Finished != 2 || c.Wait.Max != 90 || doc.Cluster.Capacity["nvidia.com/gpu"] != 4 || c.Utilization["nvidia.com/gpu"] == 0 {
		t.Errorf("summary: %+v, capacity %v", c, doc.Cluster.Capacity)
	}
}

func TestSimulateRefusesBadInputBeforeRunning(t *testing.T) {
	cluster := writeFile(t, "cluster.yaml", "queues: [{name: a, weight: 1}]\nnodes:\n- {name: n1, allocatable: {cpu: 4, memory: 8Gi, pods: 110}}\n")
	tests := []struct {
		name  string
		args  []string
		wants []string
	}{
		{"malformed SWF line", []string{"--trace", writeFile(t, "bad.swf", "; MaxNodes: 1\n; MaxProcs: 4\n1 0 -1 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n2 5 -1 ten 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n")},
			[]string{"bad.swf:4: field run_time", `"ten"`}},
		{"malformed native line", []string{"--trace", writeFile(t, "bad.jsonl", "{\"submit\": 0, \"duration\": 1, \"resources\": {\"cpu\": \"1\"}}\n{\"submit\": 0, \"duration\": -3, \"resources\": {}}\n"), "--cluster", cluster},
			[]string{"bad.jsonl:2: field duration"}},
		{"unknown queue", []string{"--trace", writeFile(t, "q.jsonl", "{\"submit\": 0, \"duration\": 1, \"queue\": \"nope\", \"resources\": {\"cpu\": \"1\"}}\n"), "--cluster", cluster},
			[]string{"cannot start", `queue "nope" is not in the cluster`, "line 1"}},
		{"invalid config", []string{"--trace", writeFile(t, "ok.jsonl", "{\"submit\": 0, \"duration\": 1, \"queue\": \"a\", \"resources\": {\"cpu\": \"1\"}}\n"), "--cluster", cluster,
			"--config", writeFile(t, "bad.yaml", "actions: \"allocate, teleport\"\ntiers:\n- plugins:\n  - name: gang\n")},
			[]string{"bad.yaml", "teleport"}},
		{"native without a cluster", []string{"--trace", writeFile(t, "alone.jsonl", "{\"submit\": 0, \"duration\": 1, \"resources\": {\"cpu\": \"1\"}}\n")},
			[]string{"needs a cluster"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, _, stderr := sluicectl(t, "", append([]string{"simulate", "--out", out, "--quiet"}, tc.args...)...)
			if code == 0 {
				t.Fatal("accepted")
			}
			for _, w := range tc.wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("error lacks %q:\n%s", w, stderr)
				}
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("the run started: the output directory exists")
			}
		})
	}
}

func TestSimulateReportsJobsThatNeverFit(t *testing.T) {
	trace := writeFile(t, "big.swf", "; MaxNodes: 2\n; MaxProcs: 8\n"+
		"1 0 -1 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n"+
		"2 5 -1 10 16 -1 -1 16 10 -1 1 1 1 1 1 1 -1 -1\n")
	out := t.TempDir()
	code, _, stderr := sluicectl(t, "", "simulate", "--trace", trace, "--out", out, "--quiet")
	if code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	if !strings.Contains(stderr, "warning: job default/swf-0000002 (line 4) will never start") {
		t.Errorf("no warning before the run:\n%s", stderr)
	}
	c := readSummary(t, out).Configs[0]
	if c.Finished != 1 || len(c.NeverStarted) != 1 || c.NeverStarted[0].Job != "default/swf-0000002" || !strings.Contains(c.NeverStarted[0].Reason, "cpu") {
		t.Errorf("summary: %+v", c)
	}
}

func TestSimulateFromServer(t *testing.T) {
	addr := realServer(t)
	// The server's cluster: two nodes, a queue, and a job already running on n1 (background).
	if code, _, errOut := sluicectl(t, "", "--server", addr, "apply", "-f", writeFile(t, "c.yaml", whatifCluster)); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	if code, _, errOut := sluicectl(t, "", "--server", addr, "schedule", "--commit"); code != 0 {
		t.Fatalf("schedule: %s", errOut)
	}
	// Each node has 2 cores left besides the background gang: a 4-core job waits until the
	// background ends (--background-runtime). Without --config, the server's configuration
	// is used (this server takes no credentials).
	trace := writeFile(t, "t.jsonl", "{\"name\": \"x\", \"submit\": 0, \"duration\": 10, \"queue\": \"research\", \"resources\": {\"cpu\": \"4\"}}\n")
	out := t.TempDir()
	code, _, stderr := sluicectl(t, "", "simulate", "--server", addr, "--from-server", "--trace", trace, "--out", out, "--quiet",
		"--background-runtime", "30s")
	if code != 0 {
		t.Fatalf("simulate: %s", stderr)
	}
	doc := readSummary(t, out)
	c := doc.Configs[0]
	if doc.Cluster.Nodes != 2 || c.Config != "server" || c.Finished != 1 || c.Wait.Max != 30 {
		t.Errorf("summary: %+v (stderr %s)", doc, stderr)
	}
}

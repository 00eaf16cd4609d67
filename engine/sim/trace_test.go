package sim_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/sim"
)

const swfSample = `; Version: 2.2
; Computer: test
; MaxNodes: 4
; MaxProcs: 32
1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1
2 10 -1 50 20 -1 -1 20 60 -1 1 2 1 1 2 1 -1 -1
3 5 -1 -1 4 -1 -1 4 60 -1 5 2 1 1 2 1 -1 -1
4 7 -1 30 -1 -1 -1 3 60 -1 0 2 1 1 -1 1 -1 -1

5 7 -1 0 0 -1 -1 -1 60 -1 1 2 1 1 1 1 -1 -1
`

func TestReadSWF(t *testing.T) {
	tr, err := sim.ReadSWF("t.swf", strings.NewReader(swfSample), sim.SWFOptions{Queues: map[int]string{1: "short"}})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Header.MaxNodes != 4 || tr.Header.MaxProcs != 32 || tr.Header.Version != "2.2" {
		t.Errorf("header %+v", tr.Header)
	}
	// Record 3 has no run time, record 5 no processors; the rest sort by submit time.
	if tr.Skipped[sim.SkipNoRunTime] != 1 || tr.Skipped[sim.SkipNoProcessors] != 1 {
		t.Errorf("skipped %v", tr.Skipped)
	}
	var names []string
	for _, j := range tr.Jobs {
		names = append(names, j.Name)
	}
	if strings.Join(names, ",") != "swf-0000001,swf-0000004,swf-0000002" {
		t.Fatalf("jobs %v", names)
	}
	j2 := tr.Jobs[2]
	// 20 processors on 8-core nodes: two tasks of 8 and one of 4, all needed at once.
	if j2.Queue != "q2" || j2.Submit != 10*time.Second || j2.Duration != 50*time.Second || j2.Processors != 20 ||
		j2.TaskCount() != 3 || j2.Gang() != 3 || j2.Request().MilliCPU != 20000 || j2.Line != 6 {
		t.Errorf("job 2: %+v", j2)
	}
	if tr.Jobs[0].Queue != "short" || tr.Jobs[1].Queue != "default" || tr.Jobs[1].Processors != 3 {
		t.Errorf("queues %s, %s; job 4's processors %d (the requested ones)", tr.Jobs[0].Queue, tr.Jobs[1].Queue, tr.Jobs[1].Processors)
	}
	tr, err = sim.ReadSWF("t.swf", strings.NewReader(swfSample), sim.SWFOptions{Failed: sim.Drop, Cancelled: sim.Drop, ProcsPerTask: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 || tr.Skipped[sim.SkipFailed] != 1 || tr.Jobs[0].TaskCount() != 8 {
		t.Errorf("with failed dropped and one processor per task: %d jobs, skipped %v, %d tasks", len(tr.Jobs), tr.Skipped, tr.Jobs[0].TaskCount())
	}
}

func TestReadSWFRefusesMalformedLines(t *testing.T) {
	tests := []struct {
		name, body, field string
		line              int
	}{
		{"short", "1 0 -1 100 8 -1 -1 8 200 -1 1 1", "group_id", 2},
		{"long", "1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1 7", "", 2},
		{"word", "1 0 -1 ten 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1", "run_time", 2},
		{"negative", "1 0 -1 100 -8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1", "allocated_processors", 2},
		{"fraction", "1.5 0 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1", "job_number", 2},
		{"unknown submit", "1 -1 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1", "submit_time", 2},
		{"nan", "1 0 -1 NaN 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1", "run_time", 2},
		{"header", "1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1\n; MaxNodes: many", "maxnodes", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.ReadSWF("bad.swf", strings.NewReader("; Version: 2.2\n"+tc.body+"\n"), sim.SWFOptions{CoresPerNode: 8})
			var le *sim.LineError
			if !errors.As(err, &le) || le.Line != tc.line || le.Field != tc.field || le.File != "bad.swf" {
				t.Fatalf("got %v (%#v), want line %d field %q", err, le, tc.line, tc.field)
			}
			if !strings.HasPrefix(err.Error(), "bad.swf:") {
				t.Errorf("message %q does not start with the file and line", err)
			}
		})
	}
	dup := "1 0 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1\n1 5 -1 100 8 -1 -1 8 200 -1 1 1 1 1 1 1 -1 -1\n"
	if _, err := sim.ReadSWF("dup.swf", strings.NewReader(dup), sim.SWFOptions{CoresPerNode: 8}); err == nil || !strings.Contains(err.Error(), "dup.swf:2: field job_number") {
		t.Errorf("duplicate job number: %v", err)
	}
	if _, err := sim.ReadSWF("nohead.swf", strings.NewReader(strings.SplitAfter(dup, "\n")[0]), sim.SWFOptions{}); err == nil || !strings.Contains(err.Error(), "cores per node") {
		t.Errorf("no header, no cores per node: %v", err)
	}
}

const nativeYAML = `# two jobs
jobs:
- name: train
  submit: 30
  duration: 1h
  queue: research
  priorityClass: high
  tasks:
  - {role: ps, replicas: 1, resources: {cpu: "2", memory: 4Gi}}
  - {role: worker, replicas: 4, resources: {cpu: "8", memory: 32Gi, nvidia.com/gpu: "1"}}
  minAvailable: 3
  labels: {team: vision}
- submit: 0
  duration: 90.5
  gang: 2
  resources: {cpu: 500m}
  preemptable: true
`

func TestReadNative(t *testing.T) {
	tr, err := sim.ReadNative("t.yaml", strings.NewReader(nativeYAML))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 {
		t.Fatalf("%d jobs", len(tr.Jobs))
	}
	small, train := tr.Jobs[0], tr.Jobs[1]
	if small.Name != "job-2" || small.Duration != 90500*time.Millisecond || small.TaskCount() != 2 || small.Gang() != 2 ||
		!small.Tasks[0].Preemptable || small.Request().MilliCPU != 1000 || small.Line != 13 {
		t.Errorf("second job: %+v", small)
	}
	if train.Key() != "default/train" || train.Submit != 30*time.Second || train.Duration != time.Hour || train.Queue != "research" ||
		train.PriorityClass != "high" || train.Gang() != 3 || train.TaskCount() != 5 || train.Labels["team"] != "vision" ||
		train.Request().Scalars["nvidia.com/gpu"] != 4000 || train.Request().Memory != 132<<30 || train.Line != 3 {
		t.Errorf("train: %+v", train)
	}
	jsonl := "# jobs\n{\"name\": \"a\", \"submit\": 5, \"duration\": 10, \"resources\": {\"cpu\": \"1\"}}\n\n" +
		"{\"name\": \"b\", \"submit\": 1, \"duration\": 10, \"gang\": 3, \"resources\": {\"cpu\": \"2\"}, \"queue\": \"q\"}\n"
	tr, err = sim.ReadNative("t.jsonl", strings.NewReader(jsonl))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Jobs) != 2 || tr.Jobs[0].Name != "b" || tr.Jobs[0].Line != 4 || tr.Jobs[0].TaskCount() != 3 || tr.Jobs[1].Line != 2 {
		t.Errorf("JSON lines: %+v", tr.Jobs)
	}
}

func TestReadNativeRefusesBadJobs(t *testing.T) {
	tests := []struct {
		name, body, field string
		line              int
	}{
		{"unknown key", "{\"submit\": 1, \"duration\": 1, \"resources\": {}, \"colour\": 2}", "colour", 1},
		{"no submit", "\n{\"duration\": 1, \"resources\": {}}", "submit", 2},
		{"bad duration", "{\"submit\": 1, \"duration\": \"soon\", \"resources\": {}}", "duration", 1},
		{"bad quantity", "{\"submit\": 1, \"duration\": 1, \"resources\": {\"cpu\": \"lots\"}}", `resources["cpu"]`, 1},
		{"pods", "{\"submit\": 1, \"duration\": 1, \"resources\": {\"pods\": \"1\"}}", `resources["pods"]`, 1},
		{"min above gang", "{\"submit\": 1, \"duration\": 1, \"gang\": 2, \"minAvailable\": 3, \"resources\": {}}", "minAvailable", 1},
		{"both forms", "{\"submit\": 1, \"duration\": 1, \"gang\": 2, \"tasks\": [], \"resources\": {}}", "tasks", 1},
		{"bad json", "{\"submit\": 1,", "", 1},
		{"not an object", "{\"submit\": 1, \"duration\": 1, \"resources\": {}}\n[1]", "", 2},
		{"duplicate", "{\"name\": \"a\", \"submit\": 1, \"duration\": 1, \"resources\": {}}\n{\"name\": \"a\", \"submit\": 1, \"duration\": 1, \"resources\": {}}", "name", 2},
		{"yaml task group", "jobs:\n- submit: 1\n  duration: 1\n  tasks:\n  - {replicas: 0, resources: {}}\n", "tasks[0].replicas", 5},
		{"yaml bad name", "- name: Big_Job\n  submit: 1\n  duration: 1\n  resources: {}\n", "name", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sim.ReadNative("bad", strings.NewReader(tc.body))
			var le *sim.LineError
			if !errors.As(err, &le) || le.Line != tc.line || le.Field != tc.field {
				t.Fatalf("got %v, want line %d field %q", err, tc.line, tc.field)
			}
		})
	}
}

// FuzzReadSWF feeds the SWF reader arbitrary text: it never panics, and what it accepts is a
// well-formed trace (sorted, every job with tasks that add up to its processors); what it
// refuses names a line of the input.
func FuzzReadSWF(f *testing.F) {
	f.Add(swfSample)
	f.Add("; MaxNodes: 2\n; MaxProcs: 8\n1 0 -1 1 1 -1 -1 1 1 -1 1 1 1 1 1 1 -1 -1\n")
	f.Add("1 1e3 -1 2.5 3 -1 -1 3 1 -1 5 1 1 1 -1 1 -1 -1")
	f.Add(";\n;;:\n\n  \t\n")
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := sim.ReadSWF("fuzz.swf", strings.NewReader(text), sim.SWFOptions{CoresPerNode: 4})
		if err != nil {
			var le *sim.LineError
			if errors.As(err, &le) && (le.Line < 1 || le.Line > strings.Count(text, "\n")+1) {
				t.Fatalf("error on line %d of a %d-line input: %v", le.Line, strings.Count(text, "\n")+1, err)
			}
			return
		}
		for i, j := range tr.Jobs {
			if i > 0 && j.Submit < tr.Jobs[i-1].Submit {
				t.Fatalf("jobs out of submit order at %d", i)
			}
			if j.Processors < 1 || j.Duration < 0 || j.Submit < 0 || j.TaskCount() < 1 {
				t.Fatalf("bad job %+v", j)
			}
			if got := j.Request().MilliCPU; got != float64(j.Processors)*1000 {
				t.Fatalf("job %s: tasks ask for %g milli-cpu, processors %d", j.Name, got, j.Processors)
			}
			for _, g := range j.Tasks {
				if g.Resources.MilliCPU > 4000 {
					t.Fatalf("job %s: a task of %g milli-cpu on 4-core nodes", j.Name, g.Resources.MilliCPU)
				}
			}
		}
	})
}

// FuzzReadNative feeds the native reader arbitrary text: it never panics, and a job it accepts
// has a valid gang.
func FuzzReadNative(f *testing.F) {
	f.Add(nativeYAML)
	f.Add("{\"name\": \"a\", \"submit\": 5, \"duration\": 10, \"resources\": {\"cpu\": \"1\"}}\n")
	f.Add("- {submit: 1, duration: 2, tasks: [{role: a, resources: {memory: 1Gi}}]}")
	f.Fuzz(func(t *testing.T, text string) {
		tr, err := sim.ReadNative("fuzz", strings.NewReader(text))
		if err != nil {
			return
		}
		for _, j := range tr.Jobs {
			if n := j.TaskCount(); n < 1 || int(j.Gang()) > n || j.Gang() < 1 || j.Submit < 0 || j.Duration < 0 {
				t.Fatalf("bad job %+v", j)
			}
		}
	})
}

package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/state"
)

func TestStats(t *testing.T) {
	st := sim.StatsOf([]float64{5, 1, 4, 2, 3, 100, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	// 20 values: the median is the 10th smallest (10), p95 the 19th (19).
	if st.N != 20 || st.Median != 10 || st.P95 != 19 || st.Max != 100 || st.Mean != 14.5 {
		t.Errorf("stats %+v", st)
	}
	if got := sim.Jain([]float64{1, 1, 1, 1}); got != 1 {
		t.Errorf("Jain of equal shares %g, want 1", got)
	}
	if got := sim.Jain([]float64{1, 0, 0, 0}); got != 0.25 {
		t.Errorf("Jain with one queue holding everything %g, want 1/4", got)
	}
	if got := sim.Jain(nil); !math.IsNaN(got) {
		t.Errorf("Jain of nothing %g, want NaN", got)
	}
}

// A hand-made run: one queue, 10 cores; 4 held from 0 to 30 s, 10 from 30 to 60 s.
func TestTimelineAndSummary(t *testing.T) {
	job := &sim.Job{Name: "j", Namespace: "default", Queue: "q", Duration: 30 * time.Second, Processors: 10}
	r := &sim.Result{Config: "c", Queues: []string{"q"}, Resources: []string{"cpu", "memory"}, Capacity: []int64{10000, 0}, End: 60 * time.Second,
		Jobs: []sim.JobRecord{{Job: job, Started: true, Finished: true, Start: 30 * time.Second, End: 60 * time.Second, Wait: 30 * time.Second}},
		Steps: []sim.Step{
			{At: 0, Allocated: [][]int64{{4000, 0}}, Deserved: [][]int64{{8000, 0}}, Share: []float64{0.5}, Pending: []int{1}, Running: []int{0}},
			{At: 30 * time.Second, Allocated: [][]int64{{10000, 0}}, Deserved: [][]int64{{10000, 0}}, Share: []float64{1}, Pending: []int{0}, Running: []int{1}},
		}}
	tl := sim.Timeline(r, 20*time.Second)
	// Intervals [0,20): 4 cores; [20,40): half 4, half 10 = 7; [40,60): 10.
	want := []float64{4, 7, 10}
	if len(tl) != 3 {
		t.Fatalf("%d intervals, want 3", len(tl))
	}
	for i, iv := range tl {
		if iv.Allocated[0][0] != want[i] {
			t.Errorf("interval %d: %g cores allocated, want %g", i, iv.Allocated[0][0], want[i])
		}
	}
	if tl[1].Pending[0] != 0.5 || tl[1].Share[0] != 0.75 {
		t.Errorf("interval 1: pending %g, share %g; want 0.5 and 0.75", tl[1].Pending[0], tl[1].Share[0])
	}
	sum := sim.Summarize(r)
	// Utilization over the job's span, 0-60 s: (4*30 + 10*30) / 60 / 10 = 0.7.
	if sum.Utilization["cpu"] != 0.7 || sum.MakespanSeconds != 60 || sum.Wait.Mean != 30 || sum.BoundedSlowdown.Max != 2 {
		t.Errorf("summary %+v", sum)
	}
	if sum.Fairness == nil || *sum.Fairness != 1 {
		t.Errorf("fairness %v, want 1 (one active queue)", sum.Fairness)
	}
	var csv bytes.Buffer
	if err := sim.WriteTimelineCSV(&csv, []*sim.Result{r}, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	if got := lines[0]; got != "config,time,queue,pending_jobs,running_jobs,allocated_cpu,allocated_memory,deserved_cpu,deserved_memory,share,utilization_cpu,utilization_memory" {
		t.Errorf("header %s", got)
	}
	if got := lines[4]; got != "c,20,*,0.5,0.5,7,0,10,0,,0.7,0" {
		t.Errorf("cluster row of interval 1: %s", got)
	}
}

// The same inputs give the same results, and differing configurations differ.
func TestRunIsDeterministic(t *testing.T) {
	var trace bytes.Buffer
	if err := sim.GenerateSWF(&trace, sim.GenerateSpec{Seed: 3, Jobs: 300, Nodes: 8, CoresPerNode: 16, Queues: 3, Load: 0.9}); err != nil {
		t.Fatal(err)
	}
	text := trace.String()
	reg := builtin.Registry()
	spread, err := conf.Parse([]byte("actions: \"enqueue, allocate, backfill\"\ntiers:\n- plugins:\n  - name: priority\n  - name: gang\n- plugins:\n  - name: drf\n  - name: predicates\n  - name: proportion\n  - name: nodeorder\n"))
	if err != nil {
		t.Fatal(err)
	}
	configs := []sim.Config{{Name: "default", Scheduler: conf.Default()}, {Name: "spread", Scheduler: spread}}
	once := func() []byte {
		tr, err := sim.ReadSWF("gen.swf", strings.NewReader(text), sim.SWFOptions{})
		if err != nil {
			t.Fatal(err)
		}
		nodes, err := sim.SWFNodes(tr.Header, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		var cl []state.Change
		for _, n := range nodes {
			cl = append(cl, state.Change{Node: n})
		}
		for _, q := range sim.TraceQueues(tr) {
			cl = append(cl, state.Change{Queue: q})
		}
		var results []*sim.Result
		for _, c := range configs {
			r, err := sim.Run(context.Background(), cl, tr, c, sim.Options{Registry: reg, ReleaseDelay: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			results = append(results, r)
		}
		var out bytes.Buffer
		if err := sim.WriteJobsCSV(&out, results); err != nil {
			t.Fatal(err)
		}
		if err := sim.WriteTimelineCSV(&out, results, sim.AutoInterval(results)); err != nil {
			t.Fatal(err)
		}
		doc := &sim.Document{}
		for _, r := range results {
			doc.Configs = append(doc.Configs, sim.Summarize(r))
		}
		if err := sim.WriteSummaryJSON(&out, doc); err != nil {
			t.Fatal(err)
		}
		// The configurations must not agree on every job.
		var a, b []string
		for i := range results[0].Jobs {
			a = append(a, results[0].Jobs[i].Start.String())
			b = append(b, results[1].Jobs[i].Start.String())
		}
		if strings.Join(a, ",") == strings.Join(b, ",") {
			t.Error("binpack and spread started every job at the same time")
		}
		js, _ := json.Marshal(doc.Configs[0].Wait)
		t.Logf("default: %s, %d cycles", js, results[0].Cycles)
		return out.Bytes()
	}
	first, second := once(), once()
	if !bytes.Equal(first, second) {
		t.Fatal("two runs of the same inputs wrote different outputs")
	}
}

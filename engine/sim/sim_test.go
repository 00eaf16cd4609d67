package sim_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/state"
)

// Configurations of the hand-computed tests: few plugins, so that the expected waits follow
// from rules one can apply by hand.
const (
	// fifoConf: jobs in order of arrival (priority ties, then creation time, then name);
	// gangs all or nothing; no reservation for a blocked gang.
	fifoConf = `
actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: nodeorder
`
	// weightConf: proportion shares the cluster by queue weight.
	weightConf = `
actions: "allocate"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
`
	// preemptConf: a higher-priority job preempts a lower one's tasks.
	preemptConf = `
actions: "allocate, preempt"
tiers:
- plugins:
  - name: priority
  - name: conformance
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
`
)

func config(t *testing.T, name, text string) sim.Config {
	t.Helper()
	cfg, err := conf.Parse([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return sim.Config{Name: name, Scheduler: cfg}
}

func cores(n float64) api.Resource {
	return *api.NewResource(map[string]float64{"cpu": n, "memory": n * (1 << 30), "pods": 110})
}

// task is one task of n cores (and n GiB).
func task(n float64) api.Resource {
	r := cores(n)
	r.MaxTaskNum = 0
	return r
}

// cluster makes nodes of the given cores and the given queues (weight by name).
func cluster(nodes []float64, queues map[string]int32, classes map[string]int32) []state.Change {
	var out []state.Change
	for i, c := range nodes {
		out = append(out, state.Change{Node: &api.Node{Name: "n" + string(rune('1'+i)), Allocatable: cores(c)}})
	}
	for name, w := range queues {
		out = append(out, state.Change{Queue: &api.Queue{Name: name, Weight: w, State: api.QueueOpen, Reclaimable: true}})
	}
	for name, v := range classes {
		out = append(out, state.Change{PriorityClass: &api.PriorityClass{Name: name, Value: v}})
	}
	return out
}

// job is a trace job of gang tasks of cpu cores each.
func job(name, queue string, submit, run time.Duration, gang int, cpu float64) *sim.Job {
	return &sim.Job{Name: name, Namespace: "default", Queue: queue, Submit: submit, Duration: run,
		Tasks: []sim.TaskGroup{{Replicas: gang, Resources: task(cpu)}}}
}

func run(t *testing.T, cl []state.Change, jobs []*sim.Job, cfg sim.Config, opts sim.Options) *sim.Result {
	t.Helper()
	tr := &sim.Trace{Format: "native", Jobs: jobs}
	opts.Registry = builtin.Registry()
	if p := sim.Check(cl, tr, []sim.Config{cfg}, opts.Registry); p.Err() != nil {
		t.Fatal(p.Err())
	}
	res, err := sim.Run(context.Background(), cl, tr, cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// expect is a job's hand-computed life, in seconds.
type expect struct {
	start, end, wait    float64
	evictions, restarts int
}

func checkJobs(t *testing.T, res *sim.Result, want map[string]expect) {
	t.Helper()
	for _, r := range res.Jobs {
		w, ok := want[r.Job.Name]
		if !ok {
			continue
		}
		got := expect{r.Start.Seconds(), r.End.Seconds(), r.Wait.Seconds(), r.Evictions, r.Restarts}
		if !r.Finished || got != w {
			t.Errorf("%s: %s start %gs, end %gs, wait %gs, %d evictions, %d restarts; want %+v",
				r.Job.Name, r.JobState(), got.start, got.end, got.wait, got.evictions, got.restarts, w)
		}
		delete(want, r.Job.Name)
	}
	for name := range want {
		t.Errorf("job %s not in the results", name)
	}
}

const s = time.Second

// One 4-core node, jobs in order of arrival: a runs 0-100; b (all 4 cores) waits for it and
// runs 100-150; c (2 cores), which arrived after b, waits for b: 20-150.
func TestFIFOOnOneNode(t *testing.T) {
	res := run(t, cluster([]float64{4}, map[string]int32{"q": 1}, nil), []*sim.Job{
		job("a", "q", 0, 100*s, 1, 4),
		job("b", "q", 10*s, 50*s, 1, 4),
		job("c", "q", 20*s, 30*s, 1, 2),
	}, config(t, "fifo", fifoConf), sim.Options{})
	checkJobs(t, res, map[string]expect{
		"a": {start: 0, end: 100, wait: 0},
		"b": {start: 100, end: 150, wait: 90},
		"c": {start: 150, end: 180, wait: 130},
	})
}

// Two 4-core nodes. a holds n1 until 100; the gang g needs both nodes, so it waits until 100;
// s, a 2-core job that came later, is not held back by the blocked gang (no reservation, as
// in Volcano) and runs at once on n2, from 10 to 30.
func TestGangBlocking(t *testing.T) {
	res := run(t, cluster([]float64{4, 4}, map[string]int32{"q": 1}, nil), []*sim.Job{
		job("a", "q", 0, 100*s, 1, 4),
		job("g", "q", 5*s, 50*s, 2, 4),
		job("s", "q", 10*s, 20*s, 1, 2),
	}, config(t, "fifo", fifoConf), sim.Options{})
	checkJobs(t, res, map[string]expect{
		"a": {start: 0, end: 100, wait: 0},
		"g": {start: 100, end: 150, wait: 95},
		"s": {start: 10, end: 30, wait: 0},
	})
}

// One 4-core node shared by big (weight 3) and small (weight 1), each with four 1-core jobs of
// 100 s submitted at 0. proportion gives big 3 cores and small 1: big's b1-b3 and small's s1
// run 0-100. Then big asks for 1 core only, so it deserves 1 and small 3: b4 and s2-s4 run
// 100-200.
func TestTwoQueuesByWeight(t *testing.T) {
	var jobs []*sim.Job
	for i := 1; i <= 4; i++ {
		jobs = append(jobs, job("b"+string(rune('0'+i)), "big", 0, 100*s, 1, 1))
		jobs = append(jobs, job("s"+string(rune('0'+i)), "small", 0, 100*s, 1, 1))
	}
	res := run(t, cluster([]float64{4}, map[string]int32{"big": 3, "small": 1}, nil), jobs,
		config(t, "weights", weightConf), sim.Options{})
	first, second := expect{start: 0, end: 100}, expect{start: 100, end: 200, wait: 100}
	checkJobs(t, res, map[string]expect{
		"b1": first, "b2": first, "b3": first, "b4": second,
		"s1": first, "s2": second, "s3": second, "s4": second,
	})
	sum := sim.Summarize(res)
	if got := sum.WaitByQueue["big"].Mean; got != 25 {
		t.Errorf("big's mean wait %g, want 25", got)
	}
	if got := sum.WaitByQueue["small"].Mean; got != 75 {
		t.Errorf("small's mean wait %g, want 75", got)
	}
}

// One 4-core node. low (priority 1, preemptable) runs from 0; high (priority 100) arrives at
// 100 and preempts it. The victim takes the release delay (1 s) to stop: high runs 101-151.
// low, stopped at 101 (below its gang), starts over at 151 and runs its full 1000 s again:
// its wait is the 50 s it spent pending the second time.
func TestPreemption(t *testing.T) {
	low := job("low", "q", 0, 1000*s, 1, 4)
	low.PriorityClass, low.Tasks[0].Preemptable = "low", true
	high := job("high", "q", 100*s, 50*s, 1, 4)
	high.PriorityClass = "high"
	res := run(t, cluster([]float64{4}, map[string]int32{"q": 1}, map[string]int32{"low": 1, "high": 100}),
		[]*sim.Job{low, high}, config(t, "preempt", preemptConf), sim.Options{ReleaseDelay: s})
	checkJobs(t, res, map[string]expect{
		"low":  {start: 0, end: 1151, wait: 50, evictions: 1, restarts: 1},
		"high": {start: 101, end: 151, wait: 1},
	})
	if res.Evictions != 1 {
		t.Errorf("%d evictions in all, want 1", res.Evictions)
	}
	// Without a release delay the preemptor takes the node at the same instant.
	res = run(t, cluster([]float64{4}, map[string]int32{"q": 1}, map[string]int32{"low": 1, "high": 100}),
		[]*sim.Job{low, high}, config(t, "preempt", preemptConf), sim.Options{})
	checkJobs(t, res, map[string]expect{
		"low":  {start: 0, end: 1150, wait: 50, evictions: 1, restarts: 1},
		"high": {start: 100, end: 150, wait: 0},
	})
}

// A job larger than the cluster never starts, is reported with the reason, and the run ends.
func TestJobLargerThanTheClusterNeverStarts(t *testing.T) {
	cl := cluster([]float64{4, 4}, map[string]int32{"q": 1}, nil)
	jobs := []*sim.Job{job("ok", "q", 0, 10*s, 1, 4), job("huge", "q", 5*s, 10*s, 3, 4), job("wide", "q", 6*s, 10*s, 1, 6)}
	tr := &sim.Trace{Format: "native", Jobs: jobs}
	cfg := config(t, "fifo", fifoConf)
	p := sim.Check(cl, tr, []sim.Config{cfg}, builtin.Registry())
	if p.Err() != nil || len(p.Warnings) != 2 || p.NeverFits["default/huge"] == "" || p.NeverFits["default/wide"] == "" {
		t.Fatalf("check: errors %v, warnings %v", p.Err(), p.Warnings)
	}
	done := make(chan *sim.Result)
	go func() { done <- run(t, cl, jobs, cfg, sim.Options{Period: time.Minute}) }()
	var res *sim.Result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the run did not end")
	}
	sum := sim.Summarize(res)
	if sum.Finished != 1 || len(sum.NeverStarted) != 2 {
		t.Fatalf("finished %d, never started %+v", sum.Finished, sum.NeverStarted)
	}
	for _, ns := range sum.NeverStarted {
		if !strings.Contains(ns.Reason, "cluster") && !strings.Contains(ns.Reason, "node") {
			t.Errorf("never started %s: reason %q", ns.Job, ns.Reason)
		}
	}
}

// Bad inputs are refused before the run: an unknown queue, an unknown priority class, an
// invalid configuration, a cluster the store refuses.
func TestCheckRefusesBadInputs(t *testing.T) {
	reg := builtin.Registry()
	cl := cluster([]float64{4}, map[string]int32{"q": 1}, nil)
	j := job("x", "nowhere", 0, s, 1, 1)
	j.Line = 7
	c := job("y", "q", 0, s, 1, 1)
	c.PriorityClass = "vip"
	tr := &sim.Trace{Jobs: []*sim.Job{j, c}}
	bad, err := conf.Parse([]byte("actions: \"allocate\"\ntiers:\n- plugins:\n  - name: nosuchplugin\n"))
	if err != nil {
		t.Fatal(err)
	}
	p := sim.Check(cl, tr, []sim.Config{{Name: "bad", Scheduler: bad}}, reg)
	msg := p.Err().Error()
	for _, want := range []string{`job default/x (line 7): queue "nowhere"`, `priority class "vip"`, "configuration bad: invalid", "nosuchplugin"} {
		if !strings.Contains(msg, want) {
			t.Errorf("check's errors lack %q:\n%s", want, msg)
		}
	}
	broken := append(cl, state.Change{Task: &api.Task{Name: "t", Namespace: "default", Job: "ghost"}})
	if p := sim.Check(broken, &sim.Trace{}, nil, reg); p.Err() == nil || !strings.Contains(p.Err().Error(), "the cluster") {
		t.Errorf("a cluster with a dangling task: %v", p.Err())
	}
}

// A configuration's queues replace the cluster's: with small's weight raised to 3, the two
// queues share the node evenly at first.
func TestConfigQueuesOverrideTheCluster(t *testing.T) {
	var jobs []*sim.Job
	for i := 1; i <= 4; i++ {
		jobs = append(jobs, job("b"+string(rune('0'+i)), "big", 0, 100*s, 1, 1))
		jobs = append(jobs, job("s"+string(rune('0'+i)), "small", 0, 100*s, 1, 1))
	}
	cfg := config(t, "even", weightConf)
	cfg.Queues = []*api.Queue{{Name: "small", Weight: 3, State: api.QueueOpen, Reclaimable: true}}
	res := run(t, cluster([]float64{4}, map[string]int32{"big": 3, "small": 1}, nil), jobs, cfg, sim.Options{})
	sum := sim.Summarize(res)
	if b, sm := sum.WaitByQueue["big"].Mean, sum.WaitByQueue["small"].Mean; b != 50 || sm != 50 {
		t.Errorf("mean waits big %g, small %g; want 50 and 50", b, sm)
	}
}

// A queue only some configurations add is an error for the others, named.
func TestCheckQueueAddedByOneConfiguration(t *testing.T) {
	reg := builtin.Registry()
	cl := cluster([]float64{4}, map[string]int32{"q": 1}, nil)
	tr := &sim.Trace{Jobs: []*sim.Job{job("x", "extra", 0, s, 1, 1)}}
	with := config(t, "with", fifoConf)
	with.Queues = []*api.Queue{{Name: "extra", Weight: 1, State: api.QueueOpen}}
	without := config(t, "without", fifoConf)
	if p := sim.Check(cl, tr, []sim.Config{with}, reg); p.Err() != nil {
		t.Errorf("a queue the only configuration adds: %v", p.Err())
	}
	p := sim.Check(cl, tr, []sim.Config{with, without}, reg)
	if p.Err() == nil || !strings.Contains(p.Err().Error(), `queue "extra" is not in the cluster, nor in configuration without`) {
		t.Errorf("a queue one configuration lacks: %v", p.Err())
	}
}

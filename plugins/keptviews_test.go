package plugins_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/state"
)

// keptViewsConfigs are the configurations the differential test switches between: the
// default, one that evicts (preempt, reclaim) with queue-aware plugins, one that scores and
// filters with more plugins, one where drf alone orders jobs (so that its kept shares decide),
// and one with deviceshare (whose sessions build their views).
var keptViewsConfigs = []string{
	string(conf.Default().Raw()),
	`
actions: "enqueue, allocate, preempt, reclaim, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
`,
	`
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: overcommit
  - name: drf
    enableHierarchy: true
  - name: predicates
  - name: capacity
  - name: nodeorder
  - name: pdb
`,
	`
actions: "allocate, preempt"
tiers:
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
`,
	`
actions: "allocate"
tiers:
- plugins:
  - name: gang
  - name: deviceshare
  - name: predicates
  - name: proportion
`,
}

// twin runs the same cluster in two stores: one scheduled by an engine on kept views, the
// other by an engine that builds every session from the snapshot (the reference).
type twin struct {
	t        *testing.T
	rng      *rand.Rand
	inc, ref *engine.Engine
	si, sr   *state.Store
	now      time.Time
	// proposed lists the ids of proposed plans not yet committed or discarded.
	proposed []string
	cycles   int
	kept     int
	serial   int
	// last is the reference's last plan.
	last *engine.Plan
}

func newTwin(t *testing.T, seed uint64) *twin {
	tw := &twin{t: t, rng: rand.New(rand.NewPCG(seed, seed*7919+1)), si: state.New(), sr: state.New(), now: time.Unix(1_700_000_000, 0)}
	if seed%3 == 0 {
		// A change log that seldom reaches back: kept views compare everything instead.
		tw.si.LimitChangeLog(2, 20)
	}
	clock := func() time.Time { return tw.now }
	var err error
	if tw.inc, err = engine.New(tw.si, engine.Options{Registry: registry(), Clock: clock}); err != nil {
		t.Fatal(err)
	}
	if tw.ref, err = engine.New(tw.sr, engine.Options{Registry: registry(), Clock: clock, FromScratch: true}); err != nil {
		t.Fatal(err)
	}
	return tw
}

// apply applies the batch to both stores (each its own copies of the objects); both must
// accept it or both refuse it alike.
func (tw *twin) apply(changes ...state.Change) {
	tw.t.Helper()
	b := state.Batch{Changes: changes, Now: tw.now}
	ri, ei := tw.si.Apply("c", copyBatch(b))
	rr, er := tw.sr.Apply("c", copyBatch(b))
	if fmt.Sprint(ei) != fmt.Sprint(er) || ri != rr {
		tw.t.Fatalf("stores diverged: kept views store %d %v, reference %d %v", ri, ei, rr, er)
	}
}

// copyBatch gives a store its own objects (shallow copies: the maps and slices are never
// changed).
func copyBatch(b state.Batch) state.Batch {
	out := b
	out.Changes = make([]state.Change, len(b.Changes))
	for i, c := range b.Changes {
		switch {
		case c.Node != nil:
			n := *c.Node
			c.Node = &n
		case c.Job != nil:
			j := *c.Job
			c.Job = &j
		case c.Task != nil:
			t := *c.Task
			c.Task = &t
		case c.Queue != nil:
			q := *c.Queue
			c.Queue = &q
		case c.PriorityClass != nil:
			pc := *c.PriorityClass
			c.PriorityClass = &pc
		}
		out.Changes[i] = c
	}
	return out
}

// planView is what must be the same, bit for bit, between the two paths.
type planView struct {
	ID                string
	State             engine.PlanState
	BaseRevision      uint64
	Result            any
	Counts            engine.PlanCounts
	CommittedRevision uint64
	Rejections        []string
}

func viewOf(p *engine.Plan) planView {
	r := *p.Result
	r.Timings = nil
	return planView{ID: p.ID, State: p.State, BaseRevision: p.BaseRevision, Result: r, Counts: p.Counts,
		CommittedRevision: p.CommittedRevision, Rejections: p.Rejections}
}

func (tw *twin) schedule(mode engine.Mode) {
	tw.t.Helper()
	ctx := context.Background()
	pi, ei := tw.inc.Schedule(ctx, "c", engine.ScheduleRequest{Mode: mode})
	pr, er := tw.ref.Schedule(ctx, "c", engine.ScheduleRequest{Mode: mode})
	if fmt.Sprint(ei) != fmt.Sprint(er) {
		tw.t.Fatalf("cycle %d: errors differ: kept views %v, reference %v", tw.cycles, ei, er)
	}
	if ei != nil {
		return
	}
	tw.cycles++
	if pi.KeptViews {
		tw.kept++
	}
	if pr.KeptViews {
		tw.t.Fatalf("the reference engine opened on kept views")
	}
	tw.last = pr
	vi, vr := viewOf(pi), viewOf(pr)
	if !reflect.DeepEqual(vi, vr) {
		tw.t.Fatalf("cycle %d (mode %d, kept views %v): plans differ\nkept views: %+v\nreference:  %+v", tw.cycles, mode, pi.KeptViews, vi, vr)
	}
	if mode == engine.Propose {
		tw.proposed = append(tw.proposed, pi.ID)
	}
}

// settle commits or discards a proposed plan on both engines.
func (tw *twin) settle() {
	tw.t.Helper()
	if len(tw.proposed) == 0 {
		return
	}
	i := tw.rng.IntN(len(tw.proposed))
	id := tw.proposed[i]
	tw.proposed = append(tw.proposed[:i], tw.proposed[i+1:]...)
	if tw.rng.IntN(3) == 0 {
		ei, er := tw.inc.DiscardPlan("c", id), tw.ref.DiscardPlan("c", id)
		if fmt.Sprint(ei) != fmt.Sprint(er) {
			tw.t.Fatalf("discard %s: %v vs %v", id, ei, er)
		}
		return
	}
	ci, ei := tw.inc.CommitPlan(context.Background(), "c", id)
	cr, er := tw.ref.CommitPlan(context.Background(), "c", id)
	if fmt.Sprint(ei) != fmt.Sprint(er) {
		tw.t.Fatalf("commit %s: %v vs %v", id, ei, er)
	}
	if ei == nil && (!reflect.DeepEqual(ci.Rejected, cr.Rejected) || ci.Revision != cr.Revision) {
		tw.t.Fatalf("commit %s differs: %+v vs %+v", id, ci, cr)
	}
}

func (tw *twin) setConfig(text string) {
	tw.t.Helper()
	_, ei := tw.inc.SetConfig("c", []byte(text))
	_, er := tw.ref.SetConfig("c", []byte(text))
	if ei != nil || er != nil {
		tw.t.Fatalf("set config: %v, %v", ei, er)
	}
}

func (tw *twin) name(prefix string) string {
	tw.serial++
	return prefix + strconv.Itoa(tw.serial)
}

// resources returns a task's request: now and then no cpu or no memory (which the placement
// view counts per node), neither (a best-effort task, backfill's) or a fractional amount of cpu (which proportion cannot keep exact
// sums of: its sessions then sum afresh until the task goes).
func (tw *twin) resources() api.Resource {
	r := api.Resource{MilliCPU: float64(500 * (1 + tw.rng.IntN(4))), Memory: float64((1 + tw.rng.IntN(4)) << 30)}
	switch tw.rng.IntN(40) {
	case 0:
		r.MilliCPU = 0
	case 1:
		r.Memory = 0
	case 2:
		r.MilliCPU = 333.3
	case 3, 4:
		r.MilliCPU, r.Memory = 0, 0 // best effort: backfill's
	}
	return r
}

// affinity returns, now and then, task affinity terms (which the placement view keeps per
// node).
func (tw *twin) affinity(job string) *api.Affinity {
	switch tw.rng.IntN(12) {
	case 0:
		return &api.Affinity{TaskAntiAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"job": job}, TopologyKey: "kubernetes.io/hostname", Required: true}}}
	case 1:
		return &api.Affinity{TaskAffinity: []api.TaskAffinityTerm{{Selector: map[string]string{"job": job}, TopologyKey: "zone", Weight: 5}}}
	}
	return nil
}

func (tw *twin) newNode() *api.Node {
	return &api.Node{
		Name:        tw.name("n"),
		Allocatable: api.Resource{MilliCPU: float64(2000 * (1 + tw.rng.IntN(4))), Memory: float64((4 + tw.rng.IntN(12)) << 30), MaxTaskNum: 8 + tw.rng.IntN(8)},
		Labels:      map[string]string{"zone": "z" + strconv.Itoa(tw.rng.IntN(3))},
	}
}

// newJob returns a pending job with 1-4 pending tasks.
func (tw *twin) newJob(queues []*api.Queue) []state.Change {
	q := "default"
	if len(queues) > 0 {
		q = queues[tw.rng.IntN(len(queues))].Name
	}
	n := 1 + tw.rng.IntN(4)
	j := &api.Job{Name: tw.name("j"), Namespace: "ns", Queue: q, MinAvailable: int32(1 + tw.rng.IntN(n))}
	switch tw.rng.IntN(3) {
	case 0:
		j.PriorityClass = "pc" + strconv.Itoa(tw.rng.IntN(3))
	case 1:
		j.Priority, j.HasPriority = int32(tw.rng.IntN(100)), true
	}
	if tw.rng.IntN(2) == 0 {
		// Admission by minResources (enqueue's votes: overcommit, proportion, capacity), now
		// and then more than the cluster has idle.
		j.MinResources = tw.resources()
		f := float64(1 + tw.rng.IntN(12))
		j.MinResources.MilliCPU *= f
		j.MinResources.Memory *= f
	}
	out := []state.Change{{Job: j}}
	for i := range n {
		out = append(out, state.Change{Task: &api.Task{
			Name: j.Name + "-" + strconv.Itoa(i), Namespace: "ns", Job: j.Name, Role: "worker",
			Resources: tw.resources(), Status: api.Pending, Preemptable: tw.rng.IntN(2) == 0,
			Labels: map[string]string{"job": j.Name}, Affinity: tw.affinity(j.Name),
		}})
	}
	return out
}

// delta makes one random change to the cluster.
func (tw *twin) delta() {
	snap := tw.sr.Snapshot("c")
	nodes, jobs, tasks, queues := snap.Nodes(), snap.Jobs(), snap.Tasks(), snap.Queues()
	pick := func(n int) int { return tw.rng.IntN(n) }
	switch op := pick(14); {
	case op == 0:
		tw.apply(state.Change{Node: tw.newNode()})
	case op == 1 && len(nodes) > 0:
		n := *nodes[pick(len(nodes))]
		if pick(2) == 0 {
			n.Unschedulable = !n.Unschedulable
		} else {
			n.Allocatable.MilliCPU += 1000
		}
		tw.apply(state.Change{Node: &n})
	case op == 2 && len(nodes) > 0:
		tw.apply(state.Change{Delete: &state.Ref{Kind: state.KindNode, Name: nodes[pick(len(nodes))].Name}})
	case op <= 4:
		tw.apply(tw.newJob(queues)...)
	case op == 5 && len(jobs) > 0:
		j := *jobs[pick(len(jobs))]
		switch pick(3) {
		case 0:
			j.Priority, j.HasPriority = int32(pick(100)), true
		case 1:
			j.MinAvailable = int32(1 + pick(3))
		default:
			j.PriorityClass = "pc" + strconv.Itoa(pick(3))
		}
		tw.apply(state.Change{Job: &j})
	case op == 6 && len(jobs) > 0:
		j := jobs[pick(len(jobs))]
		tw.apply(state.Change{Delete: &state.Ref{Kind: state.KindJob, Namespace: j.Namespace, Name: j.Name}})
	case op <= 9 && len(tasks) > 0:
		t := *tasks[pick(len(tasks))]
		switch t.Status {
		case api.Bound, api.Binding:
			t.Status = api.Running
		case api.Running:
			t.Status = []api.TaskStatus{api.Succeeded, api.Failed, api.Releasing, api.Running}[pick(4)]
		case api.Releasing:
			t.Status, t.Node = api.Pending, ""
		case api.Pending:
			t.Resources = tw.resources()
		default:
			t.Status, t.Node = api.Pending, ""
		}
		tw.apply(state.Change{Task: &t})
	case op == 10 && len(jobs) > 0 && pick(2) == 0:
		// A task joins a job already there (the job itself unchanged).
		j := jobs[pick(len(jobs))]
		tw.apply(state.Change{Task: &api.Task{
			Name: j.Name + "-x" + tw.name(""), Namespace: j.Namespace, Job: j.Name, Role: "worker",
			Resources: tw.resources(), Status: api.Pending, Preemptable: pick(2) == 0,
			Labels: map[string]string{"job": j.Name},
		}})
	case op == 10 && len(tasks) > 0:
		t := tasks[pick(len(tasks))]
		tw.apply(state.Change{Delete: &state.Ref{Kind: state.KindTask, Namespace: t.Namespace, Name: t.Name}})
	case op == 11:
		if len(queues) > 1 && pick(3) == 0 {
			tw.apply(state.Change{Delete: &state.Ref{Kind: state.KindQueue, Name: queues[pick(len(queues))].Name}})
			return
		}
		q := &api.Queue{Name: "q" + strconv.Itoa(pick(4)), Weight: int32(1 + pick(4)), State: api.QueueOpen, Reclaimable: true}
		tw.apply(state.Change{Queue: q})
	case op == 12:
		tw.apply(state.Change{PriorityClass: &api.PriorityClass{Name: "pc" + strconv.Itoa(pick(3)), Value: int32(pick(1000))}})
	default:
		tw.setConfig(keptViewsConfigs[pick(len(keptViewsConfigs))])
	}
}

// TestKeptViewsMatchFromScratch is the differential test of kept views: random sequences of
// changes (nodes, queues, jobs, tasks, priority classes, configurations added, changed and
// deleted), interleaved with dry runs, proposals, auto-commits, commits and discards, run
// by an engine on kept views and by one that builds every session from the snapshot. Every
// plan (ids, decisions, reasons, job outcomes, queue figures, commit results) must be the
// same bit for bit. SLUICE_DIFF_SEEDS=N runs N seeds instead of 12, for a longer search.
func TestKeptViewsMatchFromScratch(t *testing.T) {
	seeds, steps := 12, 160
	if testing.Short() {
		seeds, steps = 4, 80
	}
	if n, err := strconv.Atoi(os.Getenv("SLUICE_DIFF_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for seed := range uint64(seeds) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			tw := newTwin(t, seed+1)
			var start []state.Change
			for range 6 {
				start = append(start, state.Change{Node: tw.newNode()})
			}
			for i := range 2 {
				start = append(start, state.Change{Queue: &api.Queue{Name: "q" + strconv.Itoa(i), Weight: int32(1 + i), State: api.QueueOpen, Reclaimable: true}})
			}
			start = append(start, state.Change{PriorityClass: &api.PriorityClass{Name: "pc0", Value: 10}})
			tw.apply(start...)
			tw.setConfig(keptViewsConfigs[int(seed)%len(keptViewsConfigs)])
			for range 5 {
				tw.apply(tw.newJob(nil)...)
			}
			tw.schedule(engine.AutoCommit)
			for range steps {
				tw.now = tw.now.Add(time.Second)
				switch r := tw.rng.IntN(10); {
				case r < 5:
					for range 1 + tw.rng.IntN(3) {
						tw.delta()
					}
				case r == 5:
					// Twice in a row: the second opens on views patched to the same state,
					// which only the first cycle's own changes can have made stale.
					tw.schedule(engine.DryRun)
					tw.schedule([]engine.Mode{engine.DryRun, engine.Propose}[tw.rng.IntN(2)])
				case r == 6:
					tw.schedule(engine.AutoCommit)
				case r == 7:
					tw.schedule(engine.Propose)
				default:
					tw.settle()
				}
			}
			if tw.kept == 0 || tw.kept == tw.cycles {
				// Both paths must have been taken: kept views, and a fresh build (the first
				// cycle, and deviceshare's).
				t.Logf("cycles %d, on kept views %d", tw.cycles, tw.kept)
			}
			if tw.kept == 0 {
				t.Fatalf("no cycle opened on kept views")
			}
		})
	}
}

// TestKeptDRFSharesFollowTheTotal changes only nodes between two cycles, so that drf's order
// of two jobs flips with the dominant dimension while neither job's view changes (their
// queue was overused in the first cycle, which left them alone): kept shares must be worked
// out again with the new total.
func TestKeptDRFSharesFollowTheTotal(t *testing.T) {
	tw := newTwin(t, 1)
	node := func(name string, cpu, memGi float64) *api.Node {
		return &api.Node{Name: name, Allocatable: api.Resource{MilliCPU: cpu, Memory: memGi * (1 << 30), MaxTaskNum: 100}}
	}
	task := func(job, name, node string, cpu, memGi float64, st api.TaskStatus) state.Change {
		return state.Change{Task: &api.Task{Name: name, Namespace: "ns", Job: job, Role: "worker", Node: node, Status: st,
			Resources: api.Resource{MilliCPU: cpu, Memory: memGi * (1 << 30)}}}
	}
	// At first the queue holds all the cpu there is (overused): nothing is tried. cpu is
	// scarce, so a's share (2 of 3 cpus) is larger than b's.
	tw.apply(state.Change{Node: node("n1", 3000, 5)}, state.Change{Node: node("big", 0, 1000)},
		state.Change{Queue: &api.Queue{Name: "default", Weight: 1, State: api.QueueOpen}},
		state.Change{Job: &api.Job{Name: "a", Namespace: "ns", Queue: "default", MinAvailable: 1}},
		state.Change{Job: &api.Job{Name: "b", Namespace: "ns", Queue: "default", MinAvailable: 1}},
		task("a", "a-0", "n1", 2000, 1, api.Running), task("b", "b-0", "n1", 1000, 3, api.Running),
		task("a", "a-1", "", 1000, 0, api.Pending), task("b", "b-1", "", 1000, 0, api.Pending))
	tw.setConfig(`
actions: "allocate"
tiers:
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
`)
	tw.schedule(engine.AutoCommit) // places nothing, stores the jobs' phases
	tw.schedule(engine.AutoCommit) // places nothing, changes nothing
	// Only nodes change: the queue deserves one more task, and memory is now the scarce
	// dimension: b's share (3 of 5.5 GiB) is larger than a's (2 of 4.5 cpus), and a goes first.
	tw.apply(state.Change{Node: node("n1", 4000, 5)}, state.Change{Node: node("big", 500, 0.5)})
	tw.schedule(engine.DryRun)
	if tw.kept != 3 {
		t.Fatalf("%d cycles on kept views, want 3", tw.kept)
	}
	if d := tw.last.Result.Decisions; len(d) != 1 || d[0].Job != "ns/a" {
		t.Fatalf("decisions %+v, want one of job ns/a", d)
	}
}

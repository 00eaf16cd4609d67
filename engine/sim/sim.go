package sim

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// clusterName is the cluster the simulation's private store holds.
const clusterName = "sim"

// Run simulates the trace on the cluster with one configuration and returns what happened.
// cluster is the starting state (nodes, queues, priority classes, ... and jobs already
// there), applied as one batch with the store's checks; Check should have accepted the
// inputs. Run stops with ctx's error when ctx ends.
func Run(ctx context.Context, cluster []state.Change, tr *Trace, cfg Config, opts Options) (*Result, error) {
	s, err := newRun(cluster, tr, cfg, opts)
	if err != nil {
		return nil, err
	}
	return s.run(ctx)
}

// jobState is a trace job in a run.
type jobState struct {
	rec   *JobRecord
	queue int
	tasks []*api.Task // as submitted (Pending)
	// running counts tasks holding a node (bound, running or releasing); releasing the
	// ones evicted and not yet released.
	running, releasing int
	// placed says, by task index, whether the task holds a node; placeGen counts its
	// placements, so that a release meant for an earlier placement is ignored.
	placed       []bool
	placeGen     []int
	active       bool
	gen          int
	pendingSince time.Duration
	background   bool
	done         bool
	// vec is each task's request as a vector over the run's resources.
	vec [][]int64
}

type runState struct {
	opts  Options
	cfg   Config
	tr    *Trace
	store *state.Store
	eng   *engine.Engine
	now   time.Duration

	nodes     []*api.Node
	jobs      []*jobState
	byJob     map[string]*jobState
	byTask    map[string]taskRef
	queueIdx  map[string]int
	resources []string
	res       *Result

	alloc         [][]int64
	deserved      [][]int64
	share         []float64
	pending, runn []int

	next    int // next arrival
	events  eventHeap
	seq     int // events pushed so far
	changes []state.Change
	done    int
	total   int
}

type taskRef struct {
	job  *jobState
	task int
}

func newRun(cluster []state.Change, tr *Trace, cfg Config, opts Options) (*runState, error) {
	if opts.Registry == nil {
		return nil, errors.New("sim: a registry is required")
	}
	if opts.ReleaseDelay < 0 {
		opts.ReleaseDelay = 0
	}
	if opts.MaxCyclesPerInstant <= 0 {
		opts.MaxCyclesPerInstant = 1000
	}
	if opts.ProgressEvery <= 0 {
		opts.ProgressEvery = time.Second
	}
	s := &runState{opts: opts, cfg: cfg, tr: tr, store: state.New(), byJob: map[string]*jobState{},
		byTask: map[string]taskRef{}, queueIdx: map[string]int{}}
	var err error
	s.eng, err = engine.New(s.store, engine.Options{
		Registry: opts.Registry, DefaultConfig: cfg.Scheduler,
		Clock: func() time.Time { return s.at(s.now) },
		// A simulation reads no plan back: keep as little of them as the store allows.
		Retention: state.PlanRetention{MaxFinished: 1, MaxKeptDecisions: 1},
	})
	if err != nil {
		return nil, fmt.Errorf("configuration %s: %w", cfg.Name, err)
	}
	batch := state.Batch{ReplaceAll: true, Now: s.at(0), Changes: withQueues(cluster, cfg.Queues)}
	if _, err := s.store.Apply(clusterName, batch); err != nil {
		return nil, fmt.Errorf("configuration %s: the cluster: %w", cfg.Name, err)
	}
	snap := s.store.Snapshot(clusterName)
	s.res = &Result{Config: cfg.Name}
	for _, q := range snap.Queues() {
		s.queueIdx[q.Name] = len(s.res.Queues)
		s.res.Queues = append(s.res.Queues, q.Name)
	}
	s.nodes = snap.Nodes()
	s.res.Nodes = len(s.nodes)
	s.resources, s.res.Capacity = capacity(s.nodes)
	s.res.Resources = s.resources
	nq, nr := len(s.res.Queues), len(s.resources)
	s.alloc, s.deserved = matrix(nq, nr), matrix(nq, nr)
	s.share, s.pending, s.runn = make([]float64, nq), make([]int, nq), make([]int, nq)
	if err := s.loadBackground(snap); err != nil {
		return nil, err
	}
	s.res.Jobs = make([]JobRecord, len(tr.Jobs))
	for i, j := range tr.Jobs {
		q, ok := s.queueIdx[j.Queue]
		if !ok {
			return nil, fmt.Errorf("job %s (line %d): queue %q is not in the cluster", j.Key(), j.Line, j.Queue)
		}
		s.res.Jobs[i].Job = j
		js := &jobState{rec: &s.res.Jobs[i], queue: q}
		s.addJob(js, j.Key(), taskSpecs(j), false)
	}
	s.total = len(tr.Jobs)
	return s, nil
}

// withQueues returns the cluster's changes with the configuration's queues in place of those
// of the same name.
func withQueues(cluster []state.Change, queues []*api.Queue) []state.Change {
	if len(queues) == 0 {
		return cluster
	}
	over := map[string]*api.Queue{}
	for _, q := range queues {
		over[q.Name] = q
	}
	out := make([]state.Change, 0, len(cluster)+len(queues))
	for _, c := range cluster {
		if c.Queue != nil && over[c.Queue.Name] != nil {
			continue
		}
		out = append(out, c)
	}
	for _, q := range queues {
		out = append(out, state.Change{Queue: q})
	}
	return out
}

func matrix(rows, cols int) [][]int64 {
	m := make([][]int64, rows)
	for i := range m {
		m[i] = make([]int64, cols)
	}
	return m
}

// addJob registers a job and its tasks.
func (s *runState) addJob(js *jobState, key string, tasks []*api.Task, background bool) {
	js.tasks, js.background = tasks, background
	js.placed, js.placeGen = make([]bool, len(tasks)), make([]int, len(tasks))
	js.vec = make([][]int64, len(tasks))
	for i, t := range tasks {
		js.vec[i] = s.vector(&t.Resources)
		s.byTask[t.Key()] = taskRef{js, i}
	}
	s.byJob[key] = js
	s.jobs = append(s.jobs, js)
}

// loadBackground registers the jobs the cluster already holds: their placed tasks run from
// the start, for BackgroundRuntime or for ever.
func (s *runState) loadBackground(snap *state.Snapshot) error {
	for _, j := range snap.Jobs() {
		tasks := snap.TasksOfJob(j.Key())
		q := s.queueIdx[j.Queue]
		js := &jobState{rec: &JobRecord{Job: &Job{Name: j.Name, Namespace: j.Namespace, Queue: j.Queue,
			Duration: s.opts.BackgroundRuntime, MinAvailable: j.MinAvailable}}, queue: q}
		s.addJob(js, j.Key(), tasks, true)
		for i, t := range tasks {
			if api.OccupiesNode(t.Status) {
				js.placed[i] = true
				js.running++
				if t.Status == api.Releasing {
					js.releasing++
					s.push(event{at: 0, kind: evRelease, ref: taskRef{js, i}})
				}
				addVec(s.alloc[q], js.vec[i], 1)
			}
		}
		s.res.Background++
		s.checkStart(js)
	}
	return nil
}

// taskSpecs makes a trace job's tasks, Pending, named JOB-0, JOB-1, ...
func taskSpecs(j *Job) []*api.Task {
	out := make([]*api.Task, 0, j.TaskCount())
	for _, g := range j.Tasks {
		for range g.Replicas {
			out = append(out, &api.Task{
				Name: j.Name + "-" + strconv.Itoa(len(out)), Namespace: j.Namespace, Job: j.Name, Role: g.Role,
				Resources: g.Resources, Status: api.Pending, Preemptable: g.Preemptable,
			})
		}
	}
	return out
}

// minResources is what the first gang tasks of a job ask for, as Volcano's job controller
// sets a PodGroup's minResources: the enqueue action admits a job only when they fit.
func minResources(tasks []*api.Task, gang int32) api.Resource {
	var r api.Resource
	for _, t := range tasks[:min(int(gang), len(tasks))] {
		r.Add(&t.Resources)
	}
	return r
}

// at converts virtual time to the cycles' clock.
func (s *runState) at(d time.Duration) time.Time { return api.Epoch.Add(d) }

// run is the event loop.
func (s *runState) run(ctx context.Context) (*Result, error) {
	start := time.Now()
	lastProgress := start
	s.record()
	for {
		t, ok := s.nextTime()
		if !ok {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s.now = t
		if err := s.instant(ctx); err != nil {
			return nil, fmt.Errorf("configuration %s at %s: %w", s.cfg.Name, t, err)
		}
		if s.opts.Progress != nil && time.Since(lastProgress) >= s.opts.ProgressEvery {
			lastProgress = time.Now()
			s.opts.Progress(Progress{Config: s.cfg.Name, VirtualTime: s.now, JobsDone: s.done,
				JobsTotal: s.total, Cycles: s.res.Cycles, Wall: time.Since(start)})
		}
	}
	s.res.End = s.now
	total := api.EmptyResource()
	for _, n := range s.nodes {
		if !n.Unschedulable {
			total.Add(&n.Allocatable)
		}
	}
	for _, js := range s.jobs {
		if js.background || js.rec.Finished {
			continue
		}
		r := js.rec
		r.Wait += s.now - js.pendingSince
		if r.NeverFits = neverFits(r.Job, s.nodes, total); r.NeverFits == "" {
			r.Reason = "no explanation"
			if o, _, err := s.eng.ExplainJob(clusterName, r.Job.Key()); err == nil && o.Explanation != nil {
				r.Reason = o.Explanation.Summary
			}
		}
	}
	s.res.Wall = time.Since(start)
	return s.res, nil
}

// nextTime returns the time of the next event: an arrival, a completion, a release, or a
// periodic cycle while jobs wait or run.
func (s *runState) nextTime() (time.Duration, bool) {
	t, ok := time.Duration(math.MaxInt64), false
	if s.next < len(s.tr.Jobs) {
		t, ok = s.tr.Jobs[s.next].Submit, true
	}
	if len(s.events) > 0 && s.events[0].at < t {
		t, ok = s.events[0].at, true
	}
	if ok && s.opts.Period > 0 && s.busy() {
		if tick := (s.now/s.opts.Period + 1) * s.opts.Period; tick < t {
			t = tick
		}
	}
	return t, ok
}

// busy reports whether any trace job waits or runs.
func (s *runState) busy() bool {
	for q := range s.pending {
		if s.pending[q] > 0 || s.runn[q] > 0 {
			return true
		}
	}
	return false
}

// instant handles every event at s.now, then runs cycles until one leaves nothing to do at
// this instant.
func (s *runState) instant(ctx context.Context) error {
	for cycles := 0; ; cycles++ {
		if cycles == s.opts.MaxCyclesPerInstant {
			return fmt.Errorf("%d cycles at one instant without settling (evictions released without delay keep triggering cycles); give a release delay", cycles)
		}
		s.events.popAt(s.now, s)
		for s.next < len(s.tr.Jobs) && s.tr.Jobs[s.next].Submit == s.now {
			s.arrive(s.jobs[s.res.Background+s.next])
			s.next++
		}
		if err := s.apply(); err != nil {
			return err
		}
		again, err := s.cycle(ctx)
		if err != nil {
			return err
		}
		s.record()
		if !again {
			return nil
		}
	}
}

// apply writes the pending changes in one batch.
func (s *runState) apply() error {
	if len(s.changes) == 0 {
		return nil
	}
	_, err := s.store.Apply(clusterName, state.Batch{Changes: s.changes, Now: s.at(s.now)})
	s.changes = s.changes[:0]
	return err
}

// arrive submits a job: it and its tasks are upserted, Pending.
func (s *runState) arrive(js *jobState) {
	j := js.rec.Job
	s.changes = append(s.changes, state.Change{Job: &api.Job{
		Name: j.Name, Namespace: j.Namespace, Queue: j.Queue, PriorityClass: j.PriorityClass,
		Priority: j.Priority, HasPriority: j.HasPriority, MinAvailable: j.Gang(),
		MinResources: minResources(js.tasks, j.Gang()), Phase: api.JobPending, CreatedAt: s.at(j.Submit),
		Labels: j.Labels,
	}})
	for _, t := range js.tasks {
		s.changes = append(s.changes, state.Change{Task: t})
	}
	js.pendingSince = s.now
	s.pending[js.queue]++
}

// cycle runs one auto-committed cycle and carries its plan out: bound tasks start running,
// evicted ones are released after the release delay. It reports whether another cycle
// should run at this instant (releases without delay).
func (s *runState) cycle(ctx context.Context) (bool, error) {
	plan, err := s.eng.Schedule(ctx, clusterName, engine.ScheduleRequest{Mode: engine.AutoCommit, Now: s.at(s.now)})
	if err != nil {
		return false, err
	}
	s.res.Cycles++
	s.res.Rejected += len(plan.Commit.Rejected)
	for _, q := range plan.Result.Queues {
		i, ok := s.queueIdx[q.Queue]
		if !ok {
			continue
		}
		s.share[i] = q.Share
		if q.Deserved != nil {
			copy(s.deserved[i], s.vector(q.Deserved))
		}
	}
	var started []*jobState
	again := false
	for _, d := range plan.Commit.Applied {
		ref, ok := s.byTask[d.Task]
		if !ok {
			return false, fmt.Errorf("the plan names task %q, which the simulation does not know", d.Task)
		}
		switch d.Kind {
		case framework.DecisionBind:
			s.res.Binds++
			s.bind(ref, d)
			started = append(started, ref.job)
		case framework.DecisionEvict:
			s.res.Evictions++
			ref.job.releasing++
			if !ref.job.background {
				ref.job.rec.Evictions++
			}
			s.push(event{at: s.now + s.opts.ReleaseDelay, kind: evRelease, ref: ref, gen: ref.job.placeGen[ref.task]})
			again = again || s.opts.ReleaseDelay == 0
		}
	}
	for _, js := range started {
		s.checkStart(js)
	}
	return again, s.apply()
}

// bind records a bind the commit applied: the task runs from now.
func (s *runState) bind(ref taskRef, d framework.Decision) {
	js := ref.job
	t := *js.tasks[ref.task]
	t.Status, t.Node, t.DeviceIDs, t.StartedAt = api.Running, d.Node, d.DeviceIDs, s.at(s.now)
	s.changes = append(s.changes, state.Change{Task: &t})
	js.placed[ref.task] = true
	js.placeGen[ref.task]++
	js.running++
	addVec(s.alloc[js.queue], js.vec[ref.task], 1)
}

// checkStart starts a job whose gang now runs.
func (s *runState) checkStart(js *jobState) {
	if js.active || js.done || int32(js.running-js.releasing) < js.rec.Job.Gang() {
		return
	}
	js.active = true
	js.gen++
	if !js.background {
		r := js.rec
		if !r.Started {
			r.Started, r.Start = true, s.now
		}
		r.LastStart = s.now
		r.Wait += s.now - js.pendingSince
		s.pending[js.queue]--
		s.runn[js.queue]++
	}
	if js.rec.Job.Duration > 0 || !js.background {
		s.push(event{at: s.now + js.rec.Job.Duration, kind: evComplete, ref: taskRef{job: js}, gen: js.gen})
	}
}

// complete ends a job: it and its tasks are deleted.
func (s *runState) complete(js *jobState) {
	for i := range js.tasks {
		if js.placed[i] {
			js.placed[i] = false
			addVec(s.alloc[js.queue], js.vec[i], -1)
		}
	}
	js.running, js.releasing, js.active, js.done = 0, 0, false, true
	j := js.rec.Job
	s.changes = append(s.changes, state.Change{Delete: &state.Ref{Kind: state.KindJob, Namespace: j.Namespace, Name: j.Name}})
	if !js.background {
		js.rec.Finished, js.rec.End = true, s.now
		s.runn[js.queue]--
		s.done++
	}
}

// release returns an evicted task to Pending. A job left with fewer running tasks than its
// gang stops: its other tasks return to Pending too, and it starts over once placed again.
func (s *runState) release(ref taskRef, gen int) {
	js := ref.job
	if js.done || !js.placed[ref.task] || js.placeGen[ref.task] != gen {
		return
	}
	s.unplace(js, ref.task)
	js.releasing--
	if js.active && int32(js.running-js.releasing) < js.rec.Job.Gang() {
		js.active = false
		js.gen++ // cancels the completion
		for i := range js.tasks {
			if js.placed[i] {
				s.unplace(js, i)
			}
		}
		js.releasing = 0
		if !js.background {
			js.rec.Restarts++
			js.pendingSince = s.now
			s.runn[js.queue]--
			s.pending[js.queue]++
		}
	}
}

// unplace makes a placed task Pending again.
func (s *runState) unplace(js *jobState, i int) {
	js.placed[i] = false
	js.running--
	addVec(s.alloc[js.queue], js.vec[i], -1)
	t := *js.tasks[i]
	t.Status, t.Node, t.DeviceIDs, t.StartedAt = api.Pending, "", nil, time.Time{}
	s.changes = append(s.changes, state.Change{Task: &t})
}

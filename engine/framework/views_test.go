package framework

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/state"
)

// reusable is a plugin without callbacks that keeps views.
type reusable struct{}

func (reusable) Name() string            { return "reusable" }
func (reusable) OnSessionOpen(*Session)  {}
func (reusable) OnSessionClose(*Session) {}
func (reusable) ReusableViews()          {}

// tracker is a plugin that keeps, with KeptState, the very job and node views of the session
// and the total, patched from the changes alone, and checks them against the session's: a
// change the refresh leaves out shows as a view kept stale.
type tracker struct {
	reusable
	errp *error
	// kept counts the sessions that patched a kept state.
	kept *int
}

// trackedViews is tracker's kept state.
type trackedViews struct {
	jobs  map[string]*api.JobInfo
	nodes map[string]*api.NodeInfo
	total *api.Resource
}

func (tr tracker) OnSessionOpen(s *Session) {
	// A validity that depends on the job's view and on the session, as with another
	// configuration (for ValidIdleJob): ready tasks of the revision's parity are invalid.
	s.AddJobValidFn("reusable", func(j *api.JobInfo) *ValidateResult {
		if (uint64(j.ReadyTaskNum())+s.Revision)%2 == 1 {
			return &ValidateResult{Message: "odd"}
		}
		return nil
	})
	k, ch := KeptState[trackedViews](s, "framework_test.tracker")
	if again, ch2 := KeptState[trackedViews](s, "framework_test.tracker"); again != k || !reflect.DeepEqual(ch, ch2) {
		*tr.errp = fmt.Errorf("a second call in the session gave another state")
	}
	if ch.All || k.jobs == nil {
		k.jobs, k.nodes = map[string]*api.JobInfo{}, map[string]*api.NodeInfo{}
		for key, j := range s.Jobs {
			k.jobs[key] = j
		}
		for name, n := range s.Nodes {
			k.nodes[name] = n
		}
		k.total = s.TotalResource.Clone()
		return
	}
	*tr.kept++
	for _, key := range ch.Jobs {
		if j := s.Jobs[key]; j != nil {
			k.jobs[key] = j
		} else {
			delete(k.jobs, key)
		}
	}
	for _, name := range ch.Nodes {
		if n := s.Nodes[name]; n != nil {
			k.nodes[name] = n
		} else {
			delete(k.nodes, name)
		}
	}
	if !ch.Total && !reflect.DeepEqual(k.total, s.TotalResource) {
		*tr.errp = fmt.Errorf("total moved from %v to %v without Changes.Total", k.total, s.TotalResource)
	}
	k.total = s.TotalResource.Clone()
	if len(k.jobs) != len(s.Jobs) || len(k.nodes) != len(s.Nodes) {
		*tr.errp = fmt.Errorf("%d jobs and %d nodes tracked, %d and %d in the session", len(k.jobs), len(k.nodes), len(s.Jobs), len(s.Nodes))
	}
	for key, j := range s.Jobs {
		if k.jobs[key] != j {
			*tr.errp = fmt.Errorf("job %s was rebuilt without a change", key)
		}
	}
	for name, n := range s.Nodes {
		if k.nodes[name] != n {
			*tr.errp = fmt.Errorf("node %s was rebuilt without a change", name)
		}
	}
}

// frameworkSnapshot is the engine's conversion of a store snapshot, listing lazily.
func frameworkSnapshot(s *state.Snapshot) *Snapshot {
	return &Snapshot{
		Cluster: s.Cluster(), Revision: s.Revision(), Queues: s.Queues(), PriorityClasses: s.PriorityClasses(),
		TasksOfJob: s.TasksOfJob, TasksOnNode: s.TasksOnNode, Mark: s.Mark(),
		Load: func(fs *Snapshot) { fs.Nodes, fs.Jobs, fs.Tasks = s.Nodes(), s.Jobs(), s.Tasks() },
		ChangesSince: func(mark any) (api.ObjectChanges, bool) {
			m, ok := mark.(state.Mark)
			if !ok {
				return api.ObjectChanges{}, false
			}
			return s.ChangesSince(m)
		},
	}
}

// mess is an action that changes the views every way a cycle may: it allocates, pipelines
// and evicts through statements that it commits, discards or leaves undispatched, and sets
// jobs' phases and fit errors. Half of its cycles walk the active jobs only (ActiveJobs) and
// evict tasks found on nodes, of idle jobs too.
type mess struct{ rng *rand.Rand }

func (m *mess) Name() string { return "mess" }

func (m *mess) Execute(ssn *Session) {
	jobs := ssn.SortedJobs
	if m.rng.IntN(2) == 0 {
		jobs = ssn.ActiveJobs
		defer m.evictOnNodes(ssn)
	}
	for _, j := range jobs() {
		st := ssn.NewStatement()
		for _, t := range j.TasksIn(api.Pending) {
			n := ssn.NodeList[m.rng.IntN(len(ssn.NodeList))]
			switch {
			case n.FitsIdle(t.Resreq):
				_ = st.Allocate(t, n)
			case n.FitsFutureIdle(t.Resreq):
				_ = st.Pipeline(t, n.Name)
			default:
				j.NodesFitErrors[t.UID] = &api.FitErrors{Total: 1}
			}
		}
		for _, t := range j.TasksIn(api.Running) {
			if m.rng.IntN(4) == 0 {
				_ = st.Evict(t, EvictReason{Action: "mess"})
			}
		}
		switch m.rng.IntN(4) {
		case 0:
			st.Commit()
		case 1:
			st.Discard()
		case 2:
			st.LeaveUndispatched()
		default:
			st.Discard()
			j.Phase = api.JobInqueue
			j.JobFitErrors = "mess"
		}
	}
}

// evictOnNodes evicts some running tasks found on nodes (not through a walk of jobs), through
// a statement it commits or discards.
func (m *mess) evictOnNodes(ssn *Session) {
	st := ssn.NewStatement()
	for _, n := range ssn.NodeList {
		for _, t := range n.SortedTasks() {
			if t.Status == api.Running && m.rng.IntN(3) == 0 {
				_ = st.Evict(ssn.Jobs[t.Job].Tasks[t.UID], EvictReason{Action: "mess"})
			}
		}
	}
	if m.rng.IntN(2) == 0 {
		st.Commit()
	} else {
		st.Discard()
	}
}

// checkValidIdle compares ValidIdleJob with a walk of every idle job of the queue.
func checkValidIdle(s *Session, queue string) error {
	active := map[*api.JobInfo]bool{}
	for _, j := range s.ActiveJobs() {
		active[j] = true
	}
	want := false
	for _, j := range s.jobList() {
		want = want || (!active[j] && j.Queue == queue && s.JobValid(j) == nil)
	}
	got := s.ValidIdleJob(queue)
	if (got != nil) != want || (got != nil && (active[got] || s.Jobs[got.UID] != got || s.JobValid(got) != nil)) {
		return fmt.Errorf("ValidIdleJob(%s) = %v; a walk finds a valid idle job: %v", queue, got, want)
	}
	return nil
}

// compareViews reports the first difference between two sessions' node and job views.
func compareViews(kept, fresh *Session) error {
	if len(kept.Jobs) != len(fresh.Jobs) || len(kept.NodeList) != len(fresh.NodeList) {
		return fmt.Errorf("%d jobs and %d nodes kept, %d and %d fresh", len(kept.Jobs), len(kept.NodeList), len(fresh.Jobs), len(fresh.NodeList))
	}
	for uid, fj := range fresh.Jobs {
		if !reflect.DeepEqual(kept.Jobs[uid], fj) {
			return fmt.Errorf("job %s: kept %+v, fresh %+v", uid, kept.Jobs[uid], fj)
		}
		if kept.initialPhase[uid] != fresh.initialPhase[uid] {
			return fmt.Errorf("job %s: initial phase %s kept, %s fresh", uid, kept.initialPhase[uid], fresh.initialPhase[uid])
		}
	}
	for i, fn := range fresh.NodeList {
		if !reflect.DeepEqual(kept.NodeList[i], fn) || kept.Nodes[fn.Name] != kept.NodeList[i] || kept.nodeIndex[fn.Name] != int32(i) {
			return fmt.Errorf("node %s: kept %+v, fresh %+v", fn.Name, kept.NodeList[i], fn)
		}
	}
	if !reflect.DeepEqual(kept.TotalResource, fresh.TotalResource) {
		return fmt.Errorf("total %v kept, %v fresh", kept.TotalResource, fresh.TotalResource)
	}
	return nil
}

// TestKeptViewsMatchAFreshBuild opens every session of a random history on kept views and
// checks, before its actions run, that each view is deeply equal to the one a session built
// from the snapshot has: whatever the previous cycle did to them and whatever was written
// since, read from the store's change log or (the log being too short) found by comparing
// everything. The history mixes writes (nodes, jobs, tasks and priority classes added, changed and
// deleted) with cycles that allocate, pipeline and evict, commit, discard or leave their
// statements undispatched, and set phases and fit errors.
func TestKeptViewsMatchAFreshBuild(t *testing.T) {
	cfg, err := conf.Parse([]byte("actions: \"mess\"\ntiers:\n- plugins:\n  - name: reusable\n"))
	if err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(8) {
		rng := rand.New(rand.NewPCG(seed, 1))
		reg := NewRegistry()
		var trackErr error
		var patched, logged, compared int
		reg.RegisterPlugin("reusable", func(conf.Arguments) (Plugin, error) { return tracker{errp: &trackErr, kept: &patched}, nil })
		reg.RegisterAction("mess", func(conf.Arguments) (Action, error) { return &mess{rng: rng}, nil })
		st := state.New()
		if seed%2 == 1 {
			// A log too short to reach back most of the time: patches compare everything.
			st.LimitChangeLog(2, 30)
		}
		w := &writes{t: t, rng: rng, st: st}
		w.start()
		var views Views
		for step := range 120 {
			if rng.IntN(2) == 0 {
				w.change()
			}
			snap := st.Snapshot("c")
			fs := frameworkSnapshot(snap)
			since := fs.ChangesSince
			fs.ChangesSince = func(mark any) (api.ObjectChanges, bool) {
				c, ok := since(mark)
				if ok {
					logged++
				} else {
					compared++
				}
				return c, ok
			}
			freshSnap := frameworkSnapshot(snap)
			if rng.IntN(4) == 0 {
				// A hypernode over every node: sessions set each job's AllocatedHyperNode,
				// which the next session without hypernodes must find cleared.
				hn := &api.HyperNode{Name: "hn", Tier: 1}
				for _, n := range snap.Nodes() {
					hn.Members = append(hn.Members, n.Name)
				}
				fs.HyperNodes, freshSnap.HyperNodes = []*api.HyperNode{hn}, []*api.HyperNode{hn}
			}
			kept, err := OpenSession(fs, cfg, reg, Options{Views: &views})
			if err != nil {
				t.Fatal(err)
			}
			fresh, err := OpenSession(freshSnap, cfg, reg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !kept.FromKeptViews() {
				t.Fatal("the session did not open on kept views")
			}
			if err := compareViews(kept, fresh); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if err := checkValidIdle(kept, "default"); err != nil {
				t.Fatalf("seed %d step %d: %v", seed, step, err)
			}
			if trackErr != nil {
				t.Fatalf("seed %d step %d: kept state: %v", seed, step, trackErr)
			}
			fresh.Abandon()
			if err := kept.RunActions(reg); err != nil {
				t.Fatal(err)
			}
			if rng.IntN(6) == 0 {
				kept.Abandon() // the next session cannot take this one's outcomes over
				continue
			}
			want := make([]JobOutcome, 0, len(kept.Jobs))
			for _, j := range kept.jobList() {
				want = append(want, kept.outcome(j))
			}
			if len(want) == 0 {
				want = nil
			}
			if got := kept.Close().Jobs; !reflect.DeepEqual(got, want) {
				t.Fatalf("seed %d step %d: outcomes %+v, worked out afresh %+v", seed, step, got, want)
			}
		}
		if patched < 100 {
			t.Fatalf("seed %d: %d sessions patched a kept state", seed, patched)
		}
		if logged == 0 || (seed%2 == 1 && compared == 0) {
			t.Fatalf("seed %d: %d patches read the change log, %d compared everything", seed, logged, compared)
		}
	}
}

// writes makes random writes to cluster "c".
type writes struct {
	t   *testing.T
	rng *rand.Rand
	st  *state.Store
	n   int
}

func (w *writes) apply(cs ...state.Change) {
	// A refused batch (a node with tasks deleted, say) changes nothing, which is fine too.
	_, _ = w.st.Apply("c", state.Batch{Changes: cs})
}

func (w *writes) start() {
	for i := range 5 {
		w.apply(state.Change{Node: &api.Node{Name: "n" + strconv.Itoa(i), Allocatable: api.Resource{MilliCPU: 4000, Memory: 8 << 30, MaxTaskNum: 6}}})
	}
	for range 6 {
		w.apply(w.job()...)
	}
}

func (w *writes) job() []state.Change {
	w.n++
	j := &api.Job{Name: "j" + strconv.Itoa(w.n), Namespace: "ns", Queue: "default", MinAvailable: 1, PriorityClass: "pc" + strconv.Itoa(w.rng.IntN(2))}
	running := w.rng.IntN(2) == 0 // a running job, its tasks on nodes: idle (ActiveJobs)
	if running {
		j.Phase = api.JobRunning
	}
	cs := []state.Change{{Job: j}}
	for i := range 1 + w.rng.IntN(4) {
		t := &api.Task{Name: j.Name + "-" + strconv.Itoa(i), Namespace: "ns", Job: j.Name, Resources: w.request(), Preemptable: true}
		if running {
			t.Status, t.Node = api.Running, "n"+strconv.Itoa(w.rng.IntN(5))
		}
		cs = append(cs, state.Change{Task: t})
	}
	return cs
}

// request returns a task's request: now and then a fractional cpu amount, whose sums depend
// on the order they are added in (a node's view may then be patched only by a fresh build).
func (w *writes) request() api.Resource {
	r := api.Resource{MilliCPU: float64(300 * (1 + w.rng.IntN(5))), Memory: float64((1 + w.rng.IntN(3)) << 30)}
	if w.rng.IntN(4) == 0 {
		r.MilliCPU = []float64{0.1, 0.2, 0.7, 100.3, 33.33}[w.rng.IntN(5)]
	}
	return r
}

func (w *writes) change() {
	snap := w.st.Snapshot("c")
	nodes, jobs, tasks := snap.Nodes(), snap.Jobs(), snap.Tasks()
	switch w.rng.IntN(9) {
	case 0:
		w.apply(w.job()...)
	case 7:
		w.n++
		w.apply(state.Change{Node: &api.Node{Name: "n" + strconv.Itoa(100+w.n), Allocatable: api.Resource{MilliCPU: 2000, Memory: 4 << 30, MaxTaskNum: 6}}})
	case 8:
		// Refused while tasks are on the node.
		if len(nodes) < 4 {
			return
		}
		w.apply(state.Change{Delete: &state.Ref{Kind: state.KindNode, Name: nodes[w.rng.IntN(len(nodes))].Name}})
	case 1:
		if len(jobs) == 0 {
			return
		}
		j := jobs[w.rng.IntN(len(jobs))]
		w.apply(state.Change{Delete: &state.Ref{Kind: state.KindJob, Namespace: j.Namespace, Name: j.Name}})
	case 2:
		n := *nodes[w.rng.IntN(len(nodes))]
		n.Allocatable.MilliCPU += 500
		w.apply(state.Change{Node: &n})
	case 3:
		w.apply(state.Change{PriorityClass: &api.PriorityClass{Name: "pc" + strconv.Itoa(w.rng.IntN(2)), Value: int32(w.rng.IntN(100))}})
	default:
		if len(tasks) == 0 {
			return
		}
		t := *tasks[w.rng.IntN(len(tasks))]
		if w.rng.IntN(5) == 0 && len(jobs) > 0 {
			// The task moves to another job (its key stays): both jobs change.
			t.Job = jobs[w.rng.IntN(len(jobs))].Name
			w.apply(state.Change{Task: &t})
			return
		}
		switch t.Status {
		case api.Pending:
			t.Status, t.Node = api.Running, nodes[w.rng.IntN(len(nodes))].Name
		case api.Running:
			t.Status = api.Succeeded
		default:
			t.Status, t.Node = api.Pending, ""
		}
		w.apply(state.Change{Task: &t})
	}
}

// TestCompareJobKeyIsKeyOrder checks compareJobKey against comparing j.Key() itself, on short
// names and keys drawn from a few letters, the separator among them.
func TestCompareJobKeyIsKeyOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 13))
	word := func() string {
		b := make([]byte, rng.IntN(4))
		for i := range b {
			b[i] = "a/b."[rng.IntN(4)]
		}
		return string(b)
	}
	for range 20000 {
		j := &api.Job{Namespace: word(), Name: word()}
		key := word()
		if rng.IntN(3) == 0 {
			key = word() + "/" + word()
		}
		if got, want := compareJobKey(j, key), strings.Compare(j.Key(), key); got != want {
			t.Fatalf("compareJobKey(%q, %q) = %d, want %d", j.Key(), key, got, want)
		}
	}
}

// TestKeptActionStateFollowsEveryRefresh checks that an action's kept state is handed on
// with the changes of each refresh, and only from one refresh to the next: a session on kept
// views that did not ask for it (its refresh's changes unseen) leaves the next one a new state.
func TestKeptActionStateFollowsEveryRefresh(t *testing.T) {
	cfg, err := conf.Parse([]byte("actions: \"mess\"\ntiers:\n- plugins:\n  - name: reusable\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry()
	reg.RegisterPlugin("reusable", func(conf.Arguments) (Plugin, error) { return reusable{}, nil })
	st := state.New()
	w := &writes{t: t, rng: rand.New(rand.NewPCG(1, 1)), st: st}
	w.start()
	var views Views
	open := func() *Session {
		s, err := OpenSession(frameworkSnapshot(st.Snapshot("c")), cfg, reg, Options{Views: &views})
		if err != nil || !s.FromKeptViews() {
			t.Fatalf("open: %v (on kept views: %v)", err, err == nil && s.FromKeptViews())
		}
		return s
	}
	resize := func(name string, cpu float64) {
		w.apply(state.Change{Node: &api.Node{Name: name, Allocatable: api.Resource{MilliCPU: cpu, Memory: 8 << 30, MaxTaskNum: 6}}})
	}
	const key = "framework_test.action"

	s := open()
	first, ch := KeptActionState[int](s, key)
	if !ch.All {
		t.Fatalf("first session: changes %+v, want All", ch)
	}
	if again, ch := KeptActionState[int](s, key); again != first || ch.All || len(ch.Nodes) > 0 {
		t.Fatalf("second ask in a session: state %p (want %p), changes %+v (want none)", again, first, ch)
	}
	s.Close()

	resize("n1", 3000)
	s = open()
	if got, ch := KeptActionState[int](s, key); got != first || ch.All || !slices.Equal(ch.Nodes, []string{"n1"}) {
		t.Fatalf("next session: state %p (want %p), changes %+v (want node n1)", got, first, ch)
	}
	s.Close()

	resize("n2", 3000) // seen by a session that does not ask
	open().Close()
	s = open()
	if got, ch := KeptActionState[int](s, key); got == first || !ch.All {
		t.Fatalf("after a session that did not ask: state %p (the old one %p), changes %+v (want All)", got, first, ch)
	}
	s.Close()

	fresh, err := OpenSession(frameworkSnapshot(st.Snapshot("c")), cfg, reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ch := KeptActionState[int](fresh, key); !ch.All {
		t.Fatalf("a session off kept views: changes %+v, want All", ch)
	}
	fresh.Close()
}

// TestGallopIsSortSearch compares gallop with sort.Search on every split of short ranges.
func TestGallopIsSortSearch(t *testing.T) {
	for n := range 70 {
		for at := 0; at <= n; at++ {
			calls := 0
			f := func(i int) bool {
				if i < 0 || i >= n {
					t.Fatalf("n %d: f(%d) out of range", n, i)
				}
				calls++
				return i >= at
			}
			if got, want := gallop(n, f), sort.Search(n, func(i int) bool { return i >= at }); got != want {
				t.Fatalf("n %d, true from %d: gallop %d, sort.Search %d", n, at, got, want)
			}
			if limit := 4 + 2*bits.Len(uint(at+1)); calls > limit {
				t.Errorf("n %d, true from %d: %d calls, want at most %d", n, at, calls, limit)
			}
		}
	}
}

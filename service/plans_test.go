package service

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// TestPlansUnderConcurrency runs proposals, commits, discards, plan reads, dry runs, a
// committing WatchPlans subscriber and deltas on one cluster at once, with plans that expire
// within milliseconds. Under -race it must report nothing; a plan committed more than once
// answers every commit alike (it applied once), no plan is both committed and discarded, and
// every stored plan ends in one state.
func TestPlansUnderConcurrency(t *testing.T) {
	h := newHarnessWith(t, setup{planTTL: 30 * time.Millisecond, opts: func(o *Options) { o.SchedulePeriod = MinWatchPeriod }})
	ctx := ctxT(t)
	h.apply("c", node("n1", cpu("64")), node("n2", cpu("64")), queue("q1", 1))

	var mu sync.Mutex
	var ids []string
	committed := map[string]int{}
	// answers holds the first successful commit response of each plan: a repeated commit
	// must answer the same (nothing applied twice).
	answers := map[string]*sluicev1.CommitPlanResponse{}
	discarded := map[string]bool{}
	note := func(id string) {
		mu.Lock()
		ids = append(ids, id)
		mu.Unlock()
	}
	record := func(id string, resp *sluicev1.CommitPlanResponse) {
		mu.Lock()
		defer mu.Unlock()
		committed[id]++
		if first, ok := answers[id]; !ok {
			answers[id] = resp
		} else if !proto.Equal(first, resp) {
			t.Errorf("plan %s: a repeated commit answered\n%v\nthe first answered\n%v", id, resp, first)
		}
	}
	pick := func(r *rand.Rand) string {
		mu.Lock()
		defer mu.Unlock()
		if len(ids) == 0 {
			return ""
		}
		// Mostly recent plans, which are still proposed.
		n := min(len(ids), 8)
		return ids[len(ids)-1-r.IntN(n)]
	}
	wantCodes := func(err error, ok ...codes.Code) {
		t.Helper()
		if err == nil {
			return
		}
		c := status.Code(err)
		for _, k := range ok {
			if c == k {
				return
			}
		}
		t.Errorf("unexpected error %v", err)
	}

	deadline := time.Now().Add(2 * time.Second)
	var wg sync.WaitGroup
	run := func(seed uint64, f func(r *rand.Rand)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, seed))
			for time.Now().Before(deadline) {
				f(r)
			}
		}()
	}
	// A resource manager adds jobs.
	var jobs int
	run(1, func(*rand.Rand) {
		jobs++
		name := fmt.Sprintf("j%d", jobs)
		h.apply("c", job(name, "q1", 1), task(name+"-0", name, cpu("1")))
		time.Sleep(5 * time.Millisecond)
	})
	for i := range 2 {
		run(uint64(10+i), func(*rand.Rand) {
			resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c"})
			if err != nil {
				t.Errorf("Schedule: %v", err)
				return
			}
			note(resp.GetPlan().GetId())
		})
	}
	run(20, func(r *rand.Rand) {
		if id := pick(r); id != "" {
			resp, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c", PlanId: id})
			wantCodes(err, codes.FailedPrecondition, codes.NotFound)
			if err == nil {
				record(id, resp)
			}
		}
	})
	run(21, func(r *rand.Rand) {
		if id := pick(r); id != "" {
			_, err := h.sc.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: "c", PlanId: id})
			wantCodes(err, codes.FailedPrecondition, codes.NotFound)
			if err == nil {
				mu.Lock()
				discarded[id] = true
				mu.Unlock()
			}
		}
	})
	run(30, func(r *rand.Rand) {
		if id := pick(r); id != "" {
			p, err := h.eng.GetPlan("c", id)
			switch {
			case errors.Is(err, engine.ErrNotFound):
			case err != nil:
				t.Errorf("GetPlan: %v", err)
			case p.State == engine.PlanProposed && p.Result == nil:
				t.Errorf("plan %s is proposed without its decisions", id)
			}
		}
		if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
			t.Errorf("dry run: %v", err)
		}
	})
	// A WatchPlans subscriber commits what it is sent; its plans are open to the others too.
	wctx, stopWatch := context.WithCancel(ctx)
	stream, err := h.sc.WatchPlans(wctx, &sluicev1.WatchPlansRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE})
	if err != nil {
		t.Fatal(err)
	}
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			m, err := stream.Recv()
			if err != nil {
				return
			}
			id := m.GetPlan().GetId()
			note(id)
			resp, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c", PlanId: id})
			if err == nil {
				record(id, resp)
			}
		}
	}()
	wg.Wait()
	stopWatch()
	<-watched

	mu.Lock()
	defer mu.Unlock()
	if len(ids) < 10 || len(committed) == 0 {
		t.Fatalf("too little happened: %d plans, %d committed", len(ids), len(committed))
	}
	for id := range committed {
		if discarded[id] {
			t.Errorf("plan %s was both committed and discarded", id)
		}
	}
	for _, p := range h.store.Snapshot("c").Plans() {
		st := p.StateAt(time.Now())
		switch {
		case committed[p.ID] > 0 && st != state.PlanCommitted:
			t.Errorf("plan %s was committed but is %s", p.ID, st)
		case committed[p.ID] == 0 && st == state.PlanCommitted:
			t.Errorf("plan %s is committed, but no commit succeeded", p.ID)
		case p.State.Finished() && p.State != state.PlanCommitted && p.Decisions != nil:
			// (A proposed plan past its deadline reads as expired but keeps its decisions until
			// the next plan op records the expiry.)
			t.Errorf("%s plan %s still holds its decisions", p.State, p.ID)
		}
	}
	t.Logf("%d plans, %d committed, %d discarded", len(ids), len(committed), len(discarded))
}

// racer is a plugin that, when a session opens, makes node n1 unschedulable in the store: the
// cycle places on n1 (its snapshot predates the change), and the commit must refuse it.
type racer struct{ store **state.Store }

func (racer) Name() string { return "racer" }
func (r racer) OnSessionOpen(ssn *framework.Session) {
	n := *ssn.Nodes["n1"].Node
	n.Unschedulable = true
	if _, err := (*r.store).Apply(ssn.Cluster, state.Batch{Changes: []state.Change{{Node: &n}}}); err != nil {
		panic(err)
	}
}
func (racer) OnSessionClose(*framework.Session) {}

func TestAutoCommitReportsRejections(t *testing.T) {
	var store *state.Store
	reg := testRegistry()
	reg.RegisterPlugin("racer", func(conf.Arguments) (framework.Plugin, error) { return racer{&store}, nil })
	h := newHarnessWith(t, setup{reg: reg, config: "actions: \"fakealloc\"\ntiers:\n- plugins:\n  - name: racer\n"})
	store = h.store
	ctx := ctxT(t)
	h.apply("c", node("n1", cpu("4")), queue("q1", 1), job("j", "q1", 1), task("j-0", "j", cpu("1")))
	resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	if err != nil {
		t.Fatal(err)
	}
	if got := binds(resp.GetPlan()); len(got) != 1 {
		t.Fatalf("the cycle bound %v, want the one task", got)
	}
	c := resp.GetCommit()
	if c == nil || len(c.GetApplied()) != 0 || len(c.GetRejected()) != 1 {
		t.Fatalf("auto-commit outcome %v, want one rejected bind", c)
	}
	if r := c.GetRejected()[0]; refName(r.GetDecision().GetBind().GetTask()) != "default/j-0" || r.GetReason() != "node n1 is unschedulable" {
		t.Fatalf("rejection %v", r)
	}
	if resp.GetPlan().GetState() != sluicev1.PlanState_PLAN_STATE_COMMITTED {
		t.Fatalf("plan state %s", resp.GetPlan().GetState())
	}
	if tk, _ := h.store.Snapshot("c").Task("default/j-0"); tk.Status != api.Pending {
		t.Fatalf("the rejected bind changed the task: %s", tk.Status)
	}
	// The other modes carry no commit outcome.
	resp, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil || resp.GetCommit() != nil {
		t.Fatalf("dry run: %v, commit %v", err, resp.GetCommit())
	}
}

// TestCancelledCycleStopsAtOnce starts a dry run on a cluster large enough to take seconds
// (100,000 pending tasks on 2,000 nodes, the built-in default configuration), cancels it, and checks that the
// call ends with CANCELED soon after, and that another caller's Schedule on the cluster then
// runs at once. The bound is loose (the race detector and a busy machine slow everything);
// the test logs the latency it measured.
func TestCancelledCycleStopsAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a large cluster")
	}
	reg := builtin.Registry()
	h := newHarnessWith(t, setup{reg: reg, config: string(conf.Default().Raw())})
	cl, err := synth.Generate(synth.Spec{Seed: 1, Nodes: 2000, Jobs: 20000, TasksPerJob: 5, Queues: 1, Shapes: synth.Uniform})
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.Load(h.store, "big"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctxT(t))
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "big", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the cycle ended before the cancel (%v after %v): make the cluster larger", err, time.Since(start))
	default:
	}
	cancel()
	cancelled := time.Now()
	err = <-done
	latency := time.Since(cancelled)
	if status.Code(err) != codes.Canceled {
		t.Fatalf("cancelled dry run: %v, want CANCELED", err)
	}
	t.Logf("the cycle stopped %v after the cancel", latency)
	if latency > 2*time.Second {
		t.Fatalf("the cycle stopped %v after the cancel", latency)
	}
	// The cluster is free: a call with a short deadline gets the lock at once (its own cycle
	// may take long, so it is cancelled in turn).
	sctx, scancel := context.WithTimeout(ctxT(t), 200*time.Millisecond)
	defer scancel()
	unlock, err := h.srv.lockCycle(sctx, "big")
	if err != nil {
		t.Fatalf("the cluster's cycle lock is still held after the cancel: %v", err)
	}
	unlock()
	if n := len(h.store.Snapshot("big").Plans()); n != 0 {
		t.Fatalf("a cancelled dry run stored %d plans", n)
	}
}

// pageThrough reads every page of a plan through GetPlan, starting from a response's first
// page and token, and returns its decisions' tasks and its jobs, in order.
func pageThrough(t *testing.T, h *harness, first *sluicev1.Plan, token string, size int32) (tasks, jobs []string) {
	t.Helper()
	add := func(p *sluicev1.Plan) {
		if n := len(p.GetDecisions()); n > int(size) {
			t.Fatalf("a page of %d decisions, page size %d", n, size)
		}
		for _, d := range p.GetDecisions() {
			tasks = append(tasks, refName(d.GetBind().GetTask())+refName(d.GetPipeline().GetTask())+refName(d.GetEvict().GetTask()))
		}
		for _, j := range p.GetJobs() {
			jobs = append(jobs, refName(j.GetJob()))
		}
	}
	add(first)
	for token != "" {
		resp, err := h.sc.GetPlan(ctxT(t), &sluicev1.GetPlanRequest{Cluster: first.GetCluster(), PlanId: first.GetId(), PageSize: size, PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		if resp.GetPlan().GetCounts().GetBinds() != first.GetCounts().GetBinds() {
			t.Fatalf("counts differ between pages: %v vs %v", resp.GetPlan().GetCounts(), first.GetCounts())
		}
		add(resp.GetPlan())
		token = resp.GetNextPageToken()
	}
	return tasks, jobs
}

func TestPlansArePaged(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	deltas := []*sluicev1.Delta{node("n1", cpu("100")), queue("q1", 1)}
	var want []string
	for i := range 7 {
		name := fmt.Sprintf("j%d", i)
		deltas = append(deltas, job(name, "q1", 1), task(name+"-0", name, cpu("1")))
		want = append(want, "default/"+name+"-0")
	}
	h.apply("c", deltas...)

	for _, mode := range []sluicev1.ScheduleMode{sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE} {
		resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: mode, PageSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		p := resp.GetPlan()
		if len(p.GetDecisions()) != 3 || p.GetCounts().GetBinds() != 7 || p.GetCounts().GetJobs() != 7 || resp.GetNextPageToken() == "" {
			t.Fatalf("%s: first page %d decisions, counts %v, token %q", mode, len(p.GetDecisions()), p.GetCounts(), resp.GetNextPageToken())
		}
		tasks, jobs := pageThrough(t, h, p, resp.GetNextPageToken(), 3)
		if !reflect.DeepEqual(tasks, want) || len(jobs) != 7 {
			t.Fatalf("%s: paged decisions %v, want %v; %d jobs", mode, tasks, want, len(jobs))
		}
		if mode != sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE {
			continue
		}
		// A token is bound to its plan.
		other, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
		if err != nil {
			t.Fatal(err)
		}
		_, err = h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c", PlanId: other.GetPlan().GetId(), PageToken: resp.GetNextPageToken()})
		wantViolation(t, err, "page_token", ReasonInvalidField)
		_, err = h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c", PlanId: p.GetId(), PageToken: "garbage"})
		wantViolation(t, err, "page_token", ReasonInvalidField)
		_, err = h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c", PlanId: p.GetId(), PageSize: -1})
		wantViolation(t, err, "page_size", ReasonInvalidField)
		_, err = h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c", PlanId: "c-r1-999"})
		wantReason(t, err, codes.NotFound, ReasonPlanNotFound)

		// Committed with a page of 3, read back with its outcomes page by page.
		cr, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c", PlanId: p.GetId(), PageSize: 3})
		if err != nil {
			t.Fatal(err)
		}
		if len(cr.GetApplied()) != 3 || cr.GetPlan().GetCounts().GetApplied() != 7 || cr.GetNextPageToken() == "" {
			t.Fatalf("commit answer: %d applied on its page, counts %v, token %q", len(cr.GetApplied()), cr.GetPlan().GetCounts(), cr.GetNextPageToken())
		}
		applied := 0
		token := ""
		for first := true; first || token != ""; first = false {
			gp, err := h.sc.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: "c", PlanId: p.GetId(), PageSize: 3, PageToken: token})
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range gp.GetPlan().GetDecisions() {
				if d.GetOutcome() == sluicev1.DecisionOutcome_DECISION_OUTCOME_APPLIED {
					applied++
				}
			}
			token = gp.GetNextPageToken()
		}
		if applied != 7 {
			t.Fatalf("%d decisions read back as applied, want 7", applied)
		}
	}
}

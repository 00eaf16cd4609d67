package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// switchDialer dials whatever address it holds, so that a test can move the adapter to a
// restarted server on another port.
type switchDialer struct{ addr atomic.Value }

func (d *switchDialer) set(addr string) { d.addr.Store(addr) }

// startSluice starts an in-process server; it stops with the test at the latest.
func startSluice(t *testing.T) (string, func()) {
	t.Helper()
	addr, stop, err := service.StartInProcess(context.Background(), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr, stop
}

// dialSluice connects to the address the dialer holds.
func dialSluice(t *testing.T, d *switchDialer) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///sluice",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
			var nd net.Dialer
			return nd.DialContext(ctx, "tcp", d.addr.Load().(string))
		}),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 20 * time.Millisecond, Multiplier: 1.5, MaxDelay: 200 * time.Millisecond},
			MinConnectTimeout: time.Second,
		}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func schedulerConfig(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("examples/scheduler-conf.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// testLogger logs into a buffer that the test can search.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func newAdapter(t *testing.T, f Runner, sl Sluice, mut func(*Config)) (*Adapter, *logBuffer) {
	t.Helper()
	logs := &logBuffer{}
	cfg := Config{
		SchedulerConfig: schedulerConfig(t),
		Logger:          slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if mut != nil {
		mut(&cfg)
	}
	a, err := New(cfg, f, sl)
	if err != nil {
		t.Fatal(err)
	}
	return a, logs
}

// binds returns the binds of a plan by task (without namespace).
func binds(p *sluicev1.Plan) map[string]string {
	out := map[string]string{}
	for _, d := range p.GetDecisions() {
		if b := d.GetBind(); b != nil {
			out[b.GetTask().GetName()] = b.GetNode()
		}
	}
	return out
}

func listTasks(t *testing.T, conn *grpc.ClientConn, cluster string) map[string]*sluicev1.Task {
	t.Helper()
	resp, err := sluicev1.NewClusterStateServiceClient(conn).ListTasks(context.Background(), &sluicev1.ListTasksRequest{Cluster: cluster, PageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*sluicev1.Task{}
	for _, task := range resp.GetTasks() {
		out[task.GetNamespace()+"/"+task.GetName()] = task
	}
	return out
}

// runningSqueue rewrites the recorded squeue.json so that the given jobs run on the given
// nodes, as Slurm would show them once started.
func runningSqueue(t *testing.T, running map[int64]string) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(readFixture(t, "squeue.json"), &doc); err != nil {
		t.Fatal(err)
	}
	for _, j := range doc["jobs"].([]any) {
		job := j.(map[string]any)
		nodes, ok := running[int64(job["job_id"].(float64))]
		if !ok {
			continue
		}
		job["job_state"] = "RUNNING"
		job["state_reason"] = "None"
		job["nodes"] = nodes
		job["required_nodes"] = nodes
		job["tres_alloc_str"] = job["tres_req_str"]
		job["priority"] = 4294901000
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestAdapterCyclesAgainstSluice(t *testing.T) {
	addr, _ := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	conn := dialSluice(t, d)
	f := newFakeSlurm(t, "squeue.json")
	a, logs := newAdapter(t, f, NewGRPCSluice(conn, "hpc"), nil)
	ctx := context.Background()

	// First cycle: the whole cluster, the configuration, a plan, and Slurm commands that
	// carry out its binds.
	rep := a.Cycle(ctx)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if !rep.Resynced || rep.Jobs != 8 || rep.Tasks != 10 || rep.Nodes != 3 {
		t.Errorf("report %+v", rep)
	}
	cfg, err := sluicev1.NewSchedulerServiceClient(conn).GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "hpc"})
	if err != nil || !strings.Contains(cfg.GetConfig(), "preempt") {
		t.Errorf("scheduler configuration not set: %v %q", err, cfg.GetConfig())
	}
	planned := binds(rep.Plan)
	if len(planned) == 0 || rep.Applied != len(rep.Plan.GetDecisions()) {
		t.Fatalf("plan %v, applied %d", rep.Plan.GetDecisions(), rep.Applied)
	}
	var want []string
	for _, act := range rep.Actions {
		if act.Kind != ActionStart || act.Err != nil {
			t.Errorf("action %+v", act)
			continue
		}
		for i, tn := range a.last.SlurmJobs[act.Job].TaskNames {
			if planned[tn] != act.Nodes[i] {
				t.Errorf("%s started on %v; the plan binds %s to %s", act.Job, act.Nodes, tn, planned[tn])
			}
		}
		want = append(want, act.Commands...)
	}
	if got := f.actions(); strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != 2*len(planned) {
		t.Errorf("commands %q, want %q", got, want)
	}
	server := listTasks(t, conn, "hpc")
	for task, node := range planned {
		if s := server["slurm/"+task]; s.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_BOUND || s.GetNode() != node {
			t.Errorf("server task %s: %v", task, s)
		}
	}
	if !strings.Contains(logs.String(), "slurm: started job") {
		t.Errorf("no start logged:\n%s", logs)
	}

	// Slurm did not follow (the fake stays as it was): the adapter reports the tasks
	// pending again and Sluice binds them again.
	rep = a.Cycle(ctx)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if rep.Resynced || rep.Deltas < len(planned) {
		t.Errorf("second cycle: %d deltas, resynced %v", rep.Deltas, rep.Resynced)
	}
	if got := binds(rep.Plan); len(got) != len(planned) {
		t.Errorf("second plan binds %v, first %v", got, planned)
	}
	f.actions()

	// Slurm runs them: the next cycle reports them running where Sluice put them.
	running := map[int64]string{}
	for task, node := range planned {
		running[a.last.SlurmJobs[a.last.Tasks[task].GetJob()].ID] = node
	}
	f.setOutput("squeue --all --json", runningSqueue(t, running))
	rep = a.Cycle(ctx)
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	server = listTasks(t, conn, "hpc")
	for task, node := range planned {
		if s := server["slurm/"+task]; s.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_RUNNING || s.GetNode() != node {
			t.Errorf("server task %s: %v", task, s)
		}
	}
	for task := range binds(rep.Plan) {
		if _, again := planned[task]; again {
			t.Errorf("running task %s bound again", task)
		}
	}

	// Nothing changed: nothing is sent.
	f.actions()
	rep = a.Cycle(ctx)
	if rep.Err != nil || rep.Deltas != 0 {
		t.Errorf("quiet cycle: %+v", rep)
	}
}

func TestAdapterPreemptsLowerPriorityJob(t *testing.T) {
	addr, _ := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	conn := dialSluice(t, d)
	// job-1 (nice 0) runs on sn1 and sn2; job-3 (nice -100) waits for two GPUs of one
	// node in partition gpu. Make gpu and batch one queue (by account) so that preempt,
	// which works within a queue, may evict job-1.
	f := newFakeSlurm(t, "squeue.json")
	a, logs := newAdapter(t, f, NewGRPCSluice(conn, "hpc"), func(c *Config) {
		c.Mapping.QueueBy = QueueByAccount
	})
	ctx := context.Background()
	var evicted []Action
	for i := 0; i < 3 && len(evicted) == 0; i++ {
		rep := a.Cycle(ctx)
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
		for _, act := range rep.Actions {
			if act.Kind == ActionRequeue {
				evicted = append(evicted, act)
			}
		}
	}
	if len(evicted) != 1 || evicted[0].JobID != 1 || evicted[0].Err != nil || len(evicted[0].ForTasks) != 1 || evicted[0].ForTasks[0] != "slurm/job-3-0" {
		t.Fatalf("evictions %+v\n%s", evicted, logs)
	}
	var requeues int
	for _, c := range f.actions() {
		if c == "scontrol requeuehold 1" {
			requeues++
		}
	}
	if requeues != 1 {
		t.Errorf("job 1 requeued %d times", requeues)
	}
}

func TestAdapterResyncsAfterSluiceRestart(t *testing.T) {
	addr, stop := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	conn := dialSluice(t, d)
	f := newFakeSlurm(t, "squeue.json")
	sl := NewGRPCSluice(conn, "hpc")
	a, logs := newAdapter(t, f, sl, nil)
	ctx := context.Background()
	if rep := a.Cycle(ctx); rep.Err != nil || !rep.Resynced {
		t.Fatalf("first cycle %+v", rep)
	}
	if sl.Revision() == 0 {
		t.Fatal("no revision after the first sync")
	}

	stop()
	if rep := a.Cycle(ctx); rep.Err == nil {
		t.Fatal("a cycle without Sluice succeeded")
	}

	addr2, _ := startSluice(t)
	d.set(addr2)
	var rep *CycleReport
	deadline := time.Now().Add(10 * time.Second)
	for {
		rep = a.Cycle(ctx)
		if rep.Err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rep.Err != nil {
		t.Fatalf("no cycle against the restarted server: %v", rep.Err)
	}
	if !rep.Resynced {
		t.Error("the restarted server got no full resync")
	}
	if n := len(listTasks(t, conn, "hpc")); n != 10 {
		t.Errorf("restarted server has %d tasks, want 10", n)
	}
	cfg, err := sluicev1.NewSchedulerServiceClient(conn).GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "hpc"})
	if err != nil || !strings.Contains(cfg.GetConfig(), "preempt") {
		t.Errorf("configuration not given again after the restart: %v %q", err, cfg.GetConfig())
	}
	if strings.Count(logs.String(), "replace_all") != 2 {
		t.Errorf("want two full syncs logged:\n%s", logs)
	}
}

// recordingSluice is a Sluice that records calls and plans nothing.
type recordingSluice struct {
	mu    sync.Mutex
	syncs int
	err   error
}

func (r *recordingSluice) Sync(context.Context, []*sluicev1.Delta, func() []*sluicev1.Delta) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.syncs++
	return r.syncs == 1, r.err
}

func (r *recordingSluice) SetSchedulerConfig(context.Context, string) error { return nil }

func (r *recordingSluice) Schedule(context.Context, bool) (*sluicev1.Plan, error) {
	return &sluicev1.Plan{Id: "p"}, nil
}

func (r *recordingSluice) Commit(context.Context, string) (*sluicev1.CommitPlanResponse, error) {
	return &sluicev1.CommitPlanResponse{}, nil
}

func (r *recordingSluice) Discard(context.Context, string) error { return nil }

func TestAdapterDoesNothingWhenSlurmIsDown(t *testing.T) {
	f := newFakeSlurm(t, "squeue.json")
	sl := &recordingSluice{}
	a, _ := newAdapter(t, f, sl, nil)
	for _, cmd := range []string{"squeue", "sinfo", "scontrol --all"} {
		f.setFail(cmd, errors.New("exit status 1: slurm_load_jobs error: Unable to contact slurm controller"))
		rep := a.Cycle(context.Background())
		if rep.Err == nil || !strings.HasPrefix(rep.Err.Error(), "slurm: ") {
			t.Errorf("%s failing: cycle error %v", cmd, rep.Err)
		}
		f.setFail(cmd, nil)
	}
	// squeue exits 0 when the controller is down, and says so in its JSON (recorded).
	f.setOutput("squeue --all --json", readFixture(t, "squeue-controller-down.json"))
	if rep := a.Cycle(context.Background()); rep.Err == nil || !strings.Contains(rep.Err.Error(), "slurm_load_jobs") {
		t.Errorf("squeue reporting errors: cycle error %v", rep.Err)
	}
	if sl.syncs != 0 {
		t.Errorf("synced %d times with Slurm down", sl.syncs)
	}
	f.setOutput("squeue --all --json", readFixture(t, "squeue.json"))
	if rep := a.Cycle(context.Background()); rep.Err != nil {
		t.Errorf("after Slurm came back: %v", rep.Err)
	}
}

func TestAdapterDryRunChangesNothing(t *testing.T) {
	addr, _ := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	conn := dialSluice(t, d)
	f := newFakeSlurm(t, "squeue.json")
	a, logs := newAdapter(t, f, NewGRPCSluice(conn, "hpc"), func(c *Config) { c.DryRun = true })
	rep := a.Cycle(context.Background())
	if rep.Err != nil {
		t.Fatal(rep.Err)
	}
	if rep.Plan.GetState() != sluicev1.PlanState_PLAN_STATE_DRY_RUN || len(rep.Plan.GetDecisions()) == 0 {
		t.Errorf("plan %v", rep.Plan)
	}
	if got := f.actions(); len(got) != 0 {
		t.Errorf("dry run ran %q", got)
	}
	if !strings.Contains(logs.String(), "dry-run decision") {
		t.Errorf("decisions not logged:\n%s", logs)
	}
}

func TestGRPCSluiceReportsRejectedBatches(t *testing.T) {
	addr, _ := startSluice(t)
	d := &switchDialer{}
	d.set(addr)
	sl := NewGRPCSluice(dialSluice(t, d), "hpc")
	ctx := context.Background()
	node := &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "4"}}}}
	resynced, err := sl.Sync(ctx, nil, func() []*sluicev1.Delta { return []*sluicev1.Delta{node} })
	if err != nil || !resynced {
		t.Fatalf("first sync: %v %v", resynced, err)
	}
	bad := &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n2", Allocatable: map[string]string{"cpu": "lots"}}}}
	_, err = sl.Sync(ctx, []*sluicev1.Delta{bad}, nil)
	var rej *RejectedError
	if !errors.As(err, &rej) || rej.Code != codes.InvalidArgument || len(rej.Violations) == 0 {
		t.Fatalf("bad batch: %v", err)
	}
	// The stream goes on.
	if _, err := sl.Sync(ctx, []*sluicev1.Delta{node}, nil); err != nil {
		t.Errorf("after a rejection: %v", err)
	}
	// Nothing to send: no batch.
	rev := sl.Revision()
	if resynced, err := sl.Sync(ctx, nil, nil); err != nil || resynced || sl.Revision() != rev {
		t.Errorf("empty sync: %v %v", resynced, err)
	}
}

func TestRunStopsWithContextAndBacksOff(t *testing.T) {
	f := newFakeSlurm(t, "squeue.json")
	f.setFail("squeue", errors.New("down"))
	var cycles atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	a, logs := newAdapter(t, f, &recordingSluice{}, func(c *Config) {
		c.Period = 10 * time.Millisecond
		c.MaxBackoff = 10 * time.Millisecond
		c.OnCycle = func(*CycleReport) {
			if cycles.Add(1) == 3 {
				cancel()
			}
		}
	})
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Run returned %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not stop")
	}
	if !strings.Contains(logs.String(), "cycle failed; retrying") {
		t.Errorf("failures not logged:\n%s", logs)
	}

	b := &Adapter{cfg: Config{Period: 5 * time.Second}}
	var got []time.Duration
	for i := 1; i <= 5; i++ {
		got = append(got, b.backoff(i))
	}
	want := []time.Duration{5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second, 30 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("backoff %v, want %v", got, want)
			break
		}
	}
}

func TestAdapterHoldsJobsSlurmDoesNotStart(t *testing.T) {
	f := newFakeSlurm(t, "squeue.json") // job 8 was released onto sn1 and waits there
	a, logs := newAdapter(t, f, &recordingSluice{}, func(c *Config) { c.DispatchTimeout = time.Minute })
	clock := time.Unix(1_800_000_000, 0)
	a.reader.Now = func() time.Time { return clock }
	ctx := context.Background()
	a.released[8] = clock // as if this adapter had started it
	for _, step := range []time.Duration{0, 30 * time.Second, 29 * time.Second} {
		clock = clock.Add(step)
		if rep := a.Cycle(ctx); rep.Err != nil || len(rep.Actions) != 0 {
			t.Fatalf("at +%s: %+v", step, rep)
		}
	}
	clock = clock.Add(time.Second)
	rep := a.Cycle(ctx)
	if rep.Err != nil || len(rep.Actions) != 1 || rep.Actions[0].Kind != ActionHold || rep.Actions[0].JobID != 8 {
		t.Fatalf("after the timeout: %+v", rep)
	}
	if got := f.actions(); len(got) != 1 || got[0] != "scontrol hold 8" {
		t.Errorf("commands %q", got)
	}
	if !strings.Contains(logs.String(), "held job again") {
		t.Errorf("hold not logged:\n%s", logs)
	}

	// A job released by someone else (or by an earlier run) is never held.
	b, _ := newAdapter(t, f, &recordingSluice{}, func(c *Config) { c.DispatchTimeout = time.Minute })
	b.reader.Now = func() time.Time { return clock }
	for i := 0; i < 3; i++ {
		clock = clock.Add(time.Hour)
		if rep := b.Cycle(ctx); rep.Err != nil || len(rep.Actions) != 0 {
			t.Fatalf("cycle %d: %+v", i, rep)
		}
	}
}

// TestGRPCSluiceResyncsAStoreWithTheSameRevision: a server that restarted without its state
// and reached the adapter's revision through another writer is still resynced (the store id
// differs), and a large snapshot goes as a chunked resync.
func TestGRPCSluiceResyncsAStoreWithTheSameRevision(t *testing.T) {
	addr1, stop1 := startSluice(t)
	d := &switchDialer{}
	d.set(addr1)
	conn := dialSluice(t, d)
	sl := NewGRPCSluice(conn, "hpc")
	ctx := context.Background()
	var snapshot []*sluicev1.Delta
	for i := range 30000 { // about 1.4 MiB: more than one chunk
		snapshot = append(snapshot, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name: fmt.Sprintf("node-%05d", i), Allocatable: map[string]string{"cpu": "4"}}}})
	}
	snap := func() []*sluicev1.Delta { return snapshot }
	if resynced, err := sl.Sync(ctx, nil, snap); err != nil || !resynced {
		t.Fatalf("first sync: %v %v", resynced, err)
	}
	rev := sl.Revision()
	stop1()
	addr2, _ := startSluice(t)
	d2 := &switchDialer{}
	d2.set(addr2)
	other := sluicev1.NewClusterStateServiceClient(dialSluice(t, d2))
	for got := uint64(0); got < rev; {
		resp, err := other.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "hpc", Batch: &sluicev1.DeltaBatch{Deltas: snapshot[:1]}})
		if err != nil {
			t.Fatal(err)
		}
		got = resp.GetRevision()
	}
	d.set(addr2)
	sl.Close()
	extra := &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "extra", Allocatable: map[string]string{"cpu": "4"}}}}
	snapshot = append(snapshot, extra)
	resynced, err := sl.Sync(ctx, []*sluicev1.Delta{extra}, snap)
	if err != nil || !resynced {
		t.Fatalf("sync against the restarted server at revision %d: resynced %v, %v", rev, resynced, err)
	}
	got, err := other.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "hpc", Name: "node-29999"})
	if err != nil || got.GetRevision() != rev+1 {
		t.Fatalf("after the resync: revision %d, %v; want the snapshot at %d", got.GetRevision(), err, rev+1)
	}
}

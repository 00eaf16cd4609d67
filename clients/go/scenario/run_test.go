package scenario

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/test/bufconn"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// fakeServer is a scripted Sluice server: it stores tasks as a resource
// manager reports them, answers Schedule with the decisions of script, and
// commits like the real server (binds make tasks BOUND, evictions
// RELEASING).
type fakeServer struct {
	sluicev1.UnimplementedClusterStateServiceServer
	sluicev1.UnimplementedSchedulerServiceServer

	mu        sync.Mutex
	configErr error
	script    func(cycle int) []*sluicev1.Decision
	rejectAll bool
	phases    map[string]sluicev1.JobPhase
	queues    map[string]*sluicev1.QueueStatus
	explain   map[string]string

	config  string
	tasks   map[string]*sluicev1.Task
	batches []*sluicev1.DeltaBatch
	nows    []time.Time
	plans   map[string][]*sluicev1.Decision
	cycle   int
}

func (f *fakeServer) UpdateSchedulerConfig(_ context.Context, req *sluicev1.UpdateSchedulerConfigRequest) (*sluicev1.UpdateSchedulerConfigResponse, error) {
	if f.configErr != nil {
		return nil, f.configErr
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.config = req.Config
	return &sluicev1.UpdateSchedulerConfigResponse{Config: req.Config}, nil
}

func (f *fakeServer) ApplyDeltas(_ context.Context, req *sluicev1.ApplyDeltasRequest) (*sluicev1.ApplyDeltasResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, proto.Clone(req.Batch).(*sluicev1.DeltaBatch))
	if req.Batch.ReplaceAll || f.tasks == nil {
		f.tasks = map[string]*sluicev1.Task{}
	}
	for _, d := range req.Batch.Deltas {
		if t := d.GetUpsertTask(); t != nil {
			f.tasks[t.Namespace+"/"+t.Name] = proto.Clone(t).(*sluicev1.Task)
		}
	}
	return &sluicev1.ApplyDeltasResponse{Revision: uint64(len(f.batches))}, nil
}

func (f *fakeServer) GetTask(_ context.Context, req *sluicev1.GetTaskRequest) (*sluicev1.GetTaskResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.tasks[req.Namespace+"/"+req.Name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "task %s/%s not found", req.Namespace, req.Name)
	}
	return &sluicev1.GetTaskResponse{Task: proto.Clone(t).(*sluicev1.Task)}, nil
}

func (f *fakeServer) GetJob(_ context.Context, req *sluicev1.GetJobRequest) (*sluicev1.GetJobResponse, error) {
	return &sluicev1.GetJobResponse{Job: &sluicev1.Job{Name: req.Name, Namespace: req.Namespace, Phase: f.phases[req.Namespace+"/"+req.Name]}}, nil
}

func (f *fakeServer) GetQueue(_ context.Context, req *sluicev1.GetQueueRequest) (*sluicev1.GetQueueResponse, error) {
	st, ok := f.queues[req.Name]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "queue %s not found", req.Name)
	}
	return &sluicev1.GetQueueResponse{Queue: &sluicev1.Queue{Name: req.Name, Status: st}}, nil
}

func (f *fakeServer) ExplainJob(_ context.Context, req *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error) {
	return &sluicev1.ExplainJobResponse{Outcome: &sluicev1.JobOutcome{
		Job: &sluicev1.JobRef{Namespace: req.Namespace, Name: req.Name}, Explanation: &sluicev1.Explanation{Summary: f.explain[req.Namespace+"/"+req.Name]},
	}}, nil
}

func (f *fakeServer) Schedule(_ context.Context, req *sluicev1.ScheduleRequest) (*sluicev1.ScheduleResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if req.Mode != sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE {
		return nil, status.Error(codes.InvalidArgument, "want propose")
	}
	f.nows = append(f.nows, req.Now.AsTime())
	var ds []*sluicev1.Decision
	if f.script != nil {
		ds = f.script(f.cycle)
	}
	f.cycle++
	id := "plan-" + string(rune('0'+f.cycle))
	if f.plans == nil {
		f.plans = map[string][]*sluicev1.Decision{}
	}
	f.plans[id] = ds
	return &sluicev1.ScheduleResponse{Plan: &sluicev1.Plan{Id: id, Cluster: req.Cluster, Decisions: ds}}, nil
}

func (f *fakeServer) CommitPlan(_ context.Context, req *sluicev1.CommitPlanRequest) (*sluicev1.CommitPlanResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ds, ok := f.plans[req.PlanId]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "plan %s not found", req.PlanId)
	}
	delete(f.plans, req.PlanId)
	resp := &sluicev1.CommitPlanResponse{}
	for _, d := range ds {
		if f.rejectAll {
			resp.Rejected = append(resp.Rejected, &sluicev1.RejectedDecision{Decision: d, Reason: "changed since revision 1"})
			continue
		}
		switch k := d.Kind.(type) {
		case *sluicev1.Decision_Bind:
			t := f.tasks[sluice.FullName(k.Bind.Task)]
			t.Status, t.Node, t.DeviceIds = sluicev1.TaskStatus_TASK_STATUS_BOUND, k.Bind.Node, k.Bind.DeviceIds
		case *sluicev1.Decision_Evict:
			f.tasks[sluice.FullName(k.Evict.Task)].Status = sluicev1.TaskStatus_TASK_STATUS_RELEASING
		}
	}
	return resp, nil
}

// start serves f over an in-memory connection.
func (f *fakeServer) start(t *testing.T) *grpc.ClientConn {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	sluicev1.RegisterClusterStateServiceServer(srv, f)
	sluicev1.RegisterSchedulerServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	conn, err := grpc.NewClient("passthrough:///fake",
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return lis.DialContext(ctx) }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(); srv.Stop() })
	return conn
}

func bindD(task, job, node string, devs ...string) *sluicev1.Decision {
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{Task: taskRef(task), Job: jobRef(job), Node: node, DeviceIds: devs}}}
}

func evictD(task, job, node string) *sluicev1.Decision {
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Evict{Evict: &sluicev1.EvictDecision{Task: taskRef(task), Job: jobRef(job), Node: node, Action: "preempt"}}}
}

func pipeD(task, job, node string) *sluicev1.Decision {
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Pipeline{Pipeline: &sluicev1.PipelineDecision{Task: taskRef(task), Job: jobRef(job), Node: node}}}
}

// taskRef and jobRef name a task and a job given as "namespace/name", as the server does.
func taskRef(full string) *sluicev1.TaskRef {
	ns, name := SplitName(full)
	return &sluicev1.TaskRef{Namespace: ns, Name: name}
}

func jobRef(full string) *sluicev1.JobRef {
	ns, name := SplitName(full)
	return &sluicev1.JobRef{Namespace: ns, Name: name}
}

const preemptScenario = `name: preempt
config: |
  actions: "allocate, preempt"
cycles: 2
now: 10
cycleSeconds: 5
cluster:
  priorityClasses: [{name: low, value: 10}, {name: high, value: 1000}]
  nodes: [{name: n1, allocatable: {cpu: 4}}]
  jobs:
  - name: low
    priorityClass: low
    phase: Running
    tasks: [{name: low, replicas: 4, resources: {cpu: 1}, status: Running, node: n1}]
  - name: high
    priorityClass: high
    tasks: [{name: high-0, resources: {cpu: 2}, labels: {app: x}}]
expect:
  evictCounts: {default/low: 2}
  binds: {default/high-0: n1}
`

// preemptScript evicts two victims and pipelines the preemptor, then binds
// it.
func preemptScript(node string) func(int) []*sluicev1.Decision {
	return func(cycle int) []*sluicev1.Decision {
		if cycle == 0 {
			return []*sluicev1.Decision{
				evictD("default/low-0", "default/low", "n1"),
				evictD("default/low-1", "default/low", "n1"),
				pipeD("default/high-0", "default/high", "n1"),
			}
		}
		return []*sluicev1.Decision{bindD("default/high-0", "default/high", node, "gpu-0")}
	}
}

func TestRunPlaysCyclesAsResourceManager(t *testing.T) {
	f := &fakeServer{script: preemptScript("n1")}
	conn := f.start(t)
	sc := mustParse(t, preemptScenario)
	res := Run(context.Background(), conn, sc, "preempt")
	if !res.Passed() || res.String() != "PASS preempt" {
		t.Fatalf("result %v", res)
	}
	if f.config != sc.Config {
		t.Errorf("config %q", f.config)
	}
	if len(f.nows) != 2 || !f.nows[0].Equal(Epoch.Add(10*time.Second)) || !f.nows[1].Equal(Epoch.Add(15*time.Second)) {
		t.Errorf("cycle clocks %v", f.nows)
	}
	if len(f.batches) != 3 || !f.batches[0].ReplaceAll || f.batches[1].ReplaceAll || f.batches[2].ReplaceAll {
		t.Fatalf("batches: %d (want cluster + one per cycle)", len(f.batches))
	}
	if n := len(f.batches[1].Deltas); n != 2 {
		t.Errorf("cycle 1 reported %d task changes, want 2 (pipelines change nothing)", n)
	}
	high := f.tasks["default/high-0"]
	if high.Status != sluicev1.TaskStatus_TASK_STATUS_RUNNING || high.Node != "n1" ||
		!high.StartedAt.AsTime().Equal(Epoch.Add(15*time.Second)) || high.Resources["cpu"] != "2" ||
		high.Labels["app"] != "x" || high.PriorityClass != "" || len(high.DeviceIds) != 1 {
		t.Errorf("bound task after the run: %v", high)
	}
	for _, name := range []string{"default/low-0", "default/low-1"} {
		low := f.tasks[name]
		if low.Status != sluicev1.TaskStatus_TASK_STATUS_PENDING || low.Node != "" || low.StartedAt != nil || low.Resources["cpu"] != "1" {
			t.Errorf("evicted task %s: %v", name, low)
		}
	}
	if low := f.tasks["default/low-2"]; low.Status != sluicev1.TaskStatus_TASK_STATUS_RUNNING || low.Node != "n1" {
		t.Errorf("untouched task changed: %v", low)
	}
}

func TestRunReportsFirstDifference(t *testing.T) {
	f := &fakeServer{script: preemptScript("n2")}
	res := Run(context.Background(), f.start(t), mustParse(t, preemptScenario), "preempt")
	if want := "FAIL preempt: binds: default/high-0 bound to n2, want n1"; res.String() != want {
		t.Errorf("got  %s\nwant %s", res, want)
	}
}

func TestRunPipelinedIsLastCycleOnly(t *testing.T) {
	src := strings.Replace(preemptScenario, "  evictCounts: {default/low: 2}\n  binds: {default/high-0: n1}\n",
		"  pipelined: {default/high-0: n1}\n  evicted: [default/low-0, default/low-1]\n", 1)
	src = strings.Replace(src, "cycles: 2", "cycles: 1", 1)
	f := &fakeServer{script: preemptScript("n1")}
	if res := Run(context.Background(), f.start(t), mustParse(t, src), "p"); !res.Passed() {
		t.Errorf("one cycle: %v", res)
	}
	src = strings.Replace(src, "cycles: 1", "cycles: 2", 1)
	f = &fakeServer{script: preemptScript("n1")}
	want := "FAIL preempt: pipelined: missing pipeline of default/high-0 (want n1)"
	if res := Run(context.Background(), f.start(t), mustParse(t, src), "p"); res.String() != want {
		t.Errorf("two cycles: got %s\nwant %s", res, want)
	}
}

func TestRunConfigRejected(t *testing.T) {
	st, _ := status.New(codes.InvalidArgument, "invalid scheduler configuration").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "tiers[1].plugins[0].name", Description: `unknown plugin "magic"`}},
	})
	f := &fakeServer{configErr: st.Err()}
	res := Run(context.Background(), f.start(t), mustParse(t, preemptScenario), "preempt")
	want := `FAIL preempt: config rejected: InvalidArgument: invalid scheduler configuration (tiers[1].plugins[0].name: unknown plugin "magic")`
	if res.String() != want {
		t.Errorf("got  %s\nwant %s", res, want)
	}
	// The cluster is loaded first (a configuration alone does not create a cluster), and
	// nothing is scheduled once its configuration was refused.
	if len(f.batches) != 1 || f.cycle != 0 {
		t.Errorf("%d batches and %d cycles around a refused configuration, want 1 and 0", len(f.batches), f.cycle)
	}
}

func TestRunCommitRejection(t *testing.T) {
	f := &fakeServer{script: preemptScript("n1"), rejectAll: true}
	res := Run(context.Background(), f.start(t), mustParse(t, preemptScenario), "preempt")
	if !strings.Contains(res.Failure, "cycle 1: commit rejected evict default/low-0 from n1: changed since revision 1") {
		t.Errorf("result %v", res)
	}
}

func TestRunReadsBack(t *testing.T) {
	src := `name: rb
config: x
cluster:
  queues: [{name: q1}]
  nodes: [{name: n1, allocatable: {cpu: 4}}]
  jobs:
  - {name: a, queue: q1, tasks: [{name: a-0}]}
  - {name: b, tasks: [{name: b-0}]}
expect:
  jobPhases: {default/a: Running, default/b: Inqueue}
  queues: {q1: {deserved: {cpu: 2}, allocated: {cpu: 1}}}
  unschedulable: {default/b: "0/1"}
  bindCounts: {default/a: 1}
`
	f := &fakeServer{
		script:  func(int) []*sluicev1.Decision { return []*sluicev1.Decision{bindD("default/a-0", "default/a", "n1")} },
		phases:  map[string]sluicev1.JobPhase{"default/a": sluicev1.JobPhase_JOB_PHASE_RUNNING, "default/b": sluicev1.JobPhase_JOB_PHASE_INQUEUE},
		queues:  map[string]*sluicev1.QueueStatus{"q1": {Deserved: map[string]string{"cpu": "2"}, Allocated: map[string]string{"cpu": "1000m"}}},
		explain: map[string]string{"default/b": "0/1 nodes are available: 1 Insufficient cpu"},
	}
	conn := f.start(t)
	if res := Run(context.Background(), conn, mustParse(t, src), "rb"); !res.Passed() {
		t.Errorf("result %v", res)
	}
	f.phases["default/b"] = sluicev1.JobPhase_JOB_PHASE_PENDING
	f.cycle = 0
	if res := Run(context.Background(), conn, mustParse(t, src), "rb"); res.Failure != "jobPhases: default/b is Pending, want Inqueue" {
		t.Errorf("result %v", res)
	}
	delete(f.queues, "q1")
	if res := Run(context.Background(), conn, mustParse(t, src), "rb"); !strings.HasPrefix(res.Failure, "queues: GetQueue q1: NotFound") {
		t.Errorf("result %v", res)
	}
}

func TestRunFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a-good.yaml", preemptScenario)
	write("b-bad.yml", "name: bad\nconfig: x\ncluster:\n  nodes: [{name: n1, allocatable: {cpu: lots}}]\nexpect: {binds: {}}\n")
	write("c-dup.yaml", preemptScenario)
	write("notes.txt", "not a scenario")

	f := &fakeServer{script: preemptScript("n1")}
	conn := f.start(t)
	var out bytes.Buffer
	missing := filepath.Join(dir, "missing.yaml")
	passed, failed := RunFiles(context.Background(), conn, []string{dir, missing}, &out)
	want := strings.Join([]string{
		"FAIL " + missing + ": no such file or directory",
		"PASS preempt",
		"FAIL " + filepath.Join(dir, "b-bad.yml") + `: cluster.nodes[0].allocatable.cpu: invalid quantity "lots" (expected Kubernetes quantity syntax such as 4, 500m, 8Gi)`,
		"FAIL preempt: duplicate scenario name (also in " + filepath.Join(dir, "a-good.yaml") + ")",
		"1 passed, 3 failed",
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	if passed != 1 || failed != 3 {
		t.Errorf("passed %d failed %d", passed, failed)
	}
}

func TestFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"b.yaml", "a.YML", "sub/deeper/c.yml", "notes.txt", "sub/d.json"} {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.YML"), filepath.Join(dir, "b.yaml"), filepath.Join(dir, "sub/deeper/c.yml")}
	if !slices.Equal(got, want) {
		t.Errorf("Files = %v, want %v", got, want)
	}
	if _, err := Files(filepath.Join(dir, "missing")); err == nil {
		t.Error("Files of a missing directory: no error")
	}
}

func TestRunSharedScenariosAgainstFake(t *testing.T) {
	// Every shared scenario parses and plays its steps against a server
	// that decides nothing; a scenario that expects nothing to happen would
	// pass, the others fail with a specific difference, never an error.
	files, _ := filepath.Glob(filepath.Join(sharedScenarios, "*.yaml"))
	if len(files) == 0 {
		t.Skip("shared scenarios not found")
	}
	f := &fakeServer{
		phases:  map[string]sluicev1.JobPhase{},
		queues:  map[string]*sluicev1.QueueStatus{"a": {}, "b": {}, "c": {}, "q1": {}, "q2": {}},
		explain: map[string]string{},
	}
	var out bytes.Buffer
	_, failed := RunFiles(context.Background(), f.start(t), files, &out)
	t.Logf("against a server that decides nothing:\n%s", out.String())
	if failed != len(files) {
		t.Errorf("%d of %d failed against a server that does nothing:\n%s", failed, len(files), out.String())
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if strings.Contains(line, "rpc error") || strings.Contains(line, "Unimplemented") {
			t.Errorf("runner error instead of a difference: %s", line)
		}
	}
}

func TestClusterName(t *testing.T) {
	long := strings.Repeat("a-very-long-volcano-test-case-name-", 4)
	cases := []struct{ in, want string }{
		{"gang-all-or-nothing", "gang-all-or-nothing"},
		{"Case_With.Caps", "case-with.caps-"},
		{long, long[:54]},
	}
	seen := map[string]string{}
	for _, c := range cases {
		got := ClusterName(c.in)
		if !strings.HasPrefix(got, c.want) || len(got) > 63 {
			t.Errorf("ClusterName(%q) = %q, want prefix %q and at most 63 characters", c.in, got, c.want)
		}
		for _, r := range got {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '-') {
				t.Errorf("ClusterName(%q) = %q has %q", c.in, got, r)
			}
		}
		if prev, dup := seen[got]; dup {
			t.Errorf("%q and %q share cluster %q", prev, c.in, got)
		}
		seen[got] = c.in
	}
	if ClusterName(long+"x") == ClusterName(long+"y") {
		t.Error("two long names that differ only at the end share a cluster")
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// fake is a canned Sluice server. List calls return one item per page so
// that paging is exercised.
type fake struct {
	sluicev1.UnimplementedClusterStateServiceServer
	sluicev1.UnimplementedSchedulerServiceServer

	mu       sync.Mutex
	nodes    []*sluicev1.Node
	queues   []*sluicev1.Queue
	jobs     []*sluicev1.Job
	tasks    []*sluicev1.Task
	revision uint64
	reject   *sluicev1.BatchRejected
	hellos   []*sluicev1.SyncHello
	batches  []*sluicev1.DeltaBatch
	clusters []string
	modes    []sluicev1.ScheduleMode
	config   string
	etag     string
	setEtags []string
	cfgErr   error
	plan     *sluicev1.Plan
	commits  []string
	discards []string
}

func page[T any](items []T, token string) ([]T, string) {
	i, _ := strconv.Atoi(token)
	if i >= len(items) {
		return nil, ""
	}
	next := ""
	if i+1 < len(items) {
		next = strconv.Itoa(i + 1)
	}
	return items[i : i+1], next
}

func (f *fake) seen(cluster string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clusters = append(f.clusters, cluster)
}

func (f *fake) ListNodes(_ context.Context, r *sluicev1.ListNodesRequest) (*sluicev1.ListNodesResponse, error) {
	f.seen(r.Cluster)
	items, next := page(f.nodes, r.PageToken)
	return &sluicev1.ListNodesResponse{Nodes: items, NextPageToken: next, Revision: f.revision}, nil
}

func (f *fake) ListQueues(_ context.Context, r *sluicev1.ListQueuesRequest) (*sluicev1.ListQueuesResponse, error) {
	items, next := page(f.queues, r.PageToken)
	return &sluicev1.ListQueuesResponse{Queues: items, NextPageToken: next}, nil
}

func (f *fake) ListJobs(_ context.Context, r *sluicev1.ListJobsRequest) (*sluicev1.ListJobsResponse, error) {
	items, next := page(f.jobs, r.PageToken)
	return &sluicev1.ListJobsResponse{Jobs: items, NextPageToken: next}, nil
}

func (f *fake) ListTasks(_ context.Context, r *sluicev1.ListTasksRequest) (*sluicev1.ListTasksResponse, error) {
	var ts []*sluicev1.Task
	for _, t := range f.tasks {
		if r.Job == "" || t.Job == r.Job {
			ts = append(ts, t)
		}
	}
	items, next := page(ts, r.PageToken)
	return &sluicev1.ListTasksResponse{Tasks: items, NextPageToken: next}, nil
}

func (f *fake) GetNode(_ context.Context, r *sluicev1.GetNodeRequest) (*sluicev1.GetNodeResponse, error) {
	for _, n := range f.nodes {
		if n.Name == r.Name {
			return &sluicev1.GetNodeResponse{Node: n}, nil
		}
	}
	st, _ := status.New(codes.NotFound, "node "+r.Name+" not found").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "name", Description: "no such node"}},
	})
	return nil, st.Err()
}

func (f *fake) GetJob(_ context.Context, r *sluicev1.GetJobRequest) (*sluicev1.GetJobResponse, error) {
	for _, j := range f.jobs {
		if j.Name == r.Name && j.Namespace == r.Namespace {
			return &sluicev1.GetJobResponse{Job: j}, nil
		}
	}
	return nil, status.Error(codes.NotFound, "job not found")
}

func (f *fake) Sync(stream grpc.BidiStreamingServer[sluicev1.SyncRequest, sluicev1.SyncResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	hello := first.GetHello()
	if hello == nil {
		return status.Error(codes.InvalidArgument, "hello first")
	}
	f.mu.Lock()
	f.hellos = append(f.hellos, hello)
	f.mu.Unlock()
	if err := stream.Send(&sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Welcome{Welcome: &sluicev1.SyncWelcome{Revision: f.revision}}}); err != nil {
		return err
	}
	for {
		req, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		b := req.GetBatch()
		f.mu.Lock()
		f.batches = append(f.batches, b)
		f.mu.Unlock()
		var resp *sluicev1.SyncResponse
		if f.reject != nil {
			rej := proto.Clone(f.reject).(*sluicev1.BatchRejected)
			rej.Sequence = b.Sequence
			resp = &sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Rejected{Rejected: rej}}
		} else {
			resp = &sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Ack{Ack: &sluicev1.BatchAck{Sequence: b.Sequence, Revision: f.revision + 1}}}
		}
		if err := stream.Send(resp); err != nil {
			return err
		}
	}
}

func (f *fake) ApplyDeltas(_ context.Context, r *sluicev1.ApplyDeltasRequest) (*sluicev1.ApplyDeltasResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.batches = append(f.batches, r.Batch)
	return &sluicev1.ApplyDeltasResponse{Revision: f.revision + 1}, nil
}

func (f *fake) Schedule(_ context.Context, r *sluicev1.ScheduleRequest) (*sluicev1.ScheduleResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.modes = append(f.modes, r.Mode)
	return &sluicev1.ScheduleResponse{Plan: f.plan}, nil
}

func (f *fake) CommitPlan(_ context.Context, r *sluicev1.CommitPlanRequest) (*sluicev1.CommitPlanResponse, error) {
	f.commits = append(f.commits, r.PlanId)
	if r.PlanId != f.plan.GetId() {
		return nil, status.Error(codes.NotFound, "plan "+r.PlanId+" not found")
	}
	if len(f.plan.Decisions) < 2 {
		return &sluicev1.CommitPlanResponse{Revision: 8, Applied: f.plan.Decisions}, nil
	}
	return &sluicev1.CommitPlanResponse{Revision: 8, Applied: f.plan.Decisions[:1], Rejected: []*sluicev1.RejectedDecision{
		{Decision: f.plan.Decisions[1], Reason: "task default/b changed since revision 7"},
	}}, nil
}

func (f *fake) DiscardPlan(_ context.Context, r *sluicev1.DiscardPlanRequest) (*sluicev1.DiscardPlanResponse, error) {
	f.discards = append(f.discards, r.PlanId)
	return &sluicev1.DiscardPlanResponse{}, nil
}

func (f *fake) ExplainJob(_ context.Context, r *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error) {
	return &sluicev1.ExplainJobResponse{PlanId: "p1", Outcome: &sluicev1.JobOutcome{
		Job: &sluicev1.JobRef{Namespace: r.Namespace, Name: r.Name}, PreviousPhase: sluicev1.JobPhase_JOB_PHASE_PENDING, Phase: sluicev1.JobPhase_JOB_PHASE_INQUEUE,
		Pending: 1, MinAvailable: 1,
		Explanation: &sluicev1.Explanation{
			Summary: "0/2 nodes are available: 2 node(s) didn't match node selector", NodesTotal: 2,
			Reasons: []*sluicev1.ReasonCount{{Reason: "node(s) didn't match node selector", Nodes: 2}},
			Gang:    &sluicev1.GangStatus{Placeable: 0, MinAvailable: 1},
		},
	}}, nil
}

func (f *fake) GetSchedulerConfig(context.Context, *sluicev1.GetSchedulerConfigRequest) (*sluicev1.GetSchedulerConfigResponse, error) {
	return &sluicev1.GetSchedulerConfigResponse{Config: f.config, Etag: f.etag}, nil
}

func (f *fake) UpdateSchedulerConfig(_ context.Context, r *sluicev1.UpdateSchedulerConfigRequest) (*sluicev1.UpdateSchedulerConfigResponse, error) {
	if f.cfgErr != nil {
		return nil, f.cfgErr
	}
	f.config = r.Config
	f.setEtags = append(f.setEtags, r.Etag)
	return &sluicev1.UpdateSchedulerConfigResponse{Config: r.Config}, nil
}

func newFake() *fake {
	return &fake{
		revision: 7,
		nodes: []*sluicev1.Node{
			{Name: "n1", Allocatable: map[string]string{"cpu": "4", "memory": "16Gi", "pods": "110"},
				Labels: map[string]string{"kubernetes.io/hostname": "n1", "pool": "cpu"}},
			{Name: "n2", Allocatable: map[string]string{"cpu": "64", "memory": "512Gi", "nvidia.com/gpu": "8"},
				Labels: map[string]string{"kubernetes.io/hostname": "n2"},
				Taints: []*sluicev1.Taint{{Key: "dedicated", Value: "gpu", Effect: sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}}},
		},
		queues: []*sluicev1.Queue{
			{Name: "a", Weight: 2, Status: &sluicev1.QueueStatus{Allocated: map[string]string{"cpu": "2"}, Deserved: map[string]string{"cpu": "28", "memory": "1Gi"}, Share: "0.07"}},
			{Name: "b", Parent: "a", State: sluicev1.QueueState_QUEUE_STATE_CLOSED},
		},
		jobs: []*sluicev1.Job{
			{Name: "train", Namespace: "default", Queue: "a", PriorityClass: "high", MinAvailable: proto.Int32(2), Phase: sluicev1.JobPhase_JOB_PHASE_RUNNING},
			{Name: "web", Namespace: "default", Priority: proto.Int32(5), Phase: sluicev1.JobPhase_JOB_PHASE_INQUEUE},
		},
		tasks: []*sluicev1.Task{
			{Name: "train-0", Namespace: "default", Job: "train", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n2", Resources: map[string]string{"memory": "1Gi", "cpu": "8"}},
			{Name: "train-1", Namespace: "default", Job: "train", Status: sluicev1.TaskStatus_TASK_STATUS_PENDING, Resources: map[string]string{"cpu": "8"}},
			{Name: "web-0", Namespace: "default", Job: "web"},
		},
		config: "actions: \"allocate\"",
		plan: &sluicev1.Plan{
			Id: "p1", Cluster: "default", BaseRevision: 7, State: sluicev1.PlanState_PLAN_STATE_PROPOSED,
			Decisions: []*sluicev1.Decision{
				{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{Task: &sluicev1.TaskRef{Namespace: "default", Name: "a"}, Node: "n1", DeviceIds: []string{"gpu-0"}}}},
				{Kind: &sluicev1.Decision_Evict{Evict: &sluicev1.EvictDecision{Task: &sluicev1.TaskRef{Namespace: "default", Name: "b"}, Node: "n2", Reason: "lower priority",
					ForTask: &sluicev1.TaskRef{Namespace: "default", Name: "a"}, Action: "preempt"}}},
				{Kind: &sluicev1.Decision_Pipeline{Pipeline: &sluicev1.PipelineDecision{Task: &sluicev1.TaskRef{Namespace: "default", Name: "c"}, Node: "n2"}}},
			},
			Jobs: []*sluicev1.JobOutcome{
				{Job: &sluicev1.JobRef{Namespace: "default", Name: "batch"}, Pending: 1, Explanation: &sluicev1.Explanation{Summary: "0/2 nodes are available"}},
				{Job: &sluicev1.JobRef{Namespace: "default", Name: "ok"}, Ready: 1},
			},
		},
	}
}

// serve starts f on a loopback port and returns its address.
func serve(t *testing.T, f *fake) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	sluicev1.RegisterClusterStateServiceServer(srv, f)
	sluicev1.RegisterSchedulerServiceServer(srv, f)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// sluicectl runs the command line and returns its exit status and output.
func sluicectl(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &o, &e)
	return code, o.String(), e.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		out = append(out, strings.Join(strings.Fields(l), " "))
	}
	return out
}

func TestGetTables(t *testing.T) {
	addr := serve(t, newFake())
	tests := []struct {
		args []string
		want []string
	}{
		{[]string{"get", "nodes"}, []string{
			"NAME CPU MEMORY PODS GPU LABELS TAINTS",
			"n1 4 16Gi 110 - pool=cpu -",
			"n2 64 512Gi - 8 - dedicated=gpu:NoSchedule",
		}},
		{[]string{"get", "queues"}, []string{
			"NAME PARENT WEIGHT STATE ALLOCATED DESERVED SHARE",
			"a root 2 Open cpu=2 cpu=28,memory=1Gi 0.07",
			"b a 1 Closed - - -",
		}},
		{[]string{"get", "jobs"}, []string{
			"NAME QUEUE PHASE MIN PRIORITY TASKS",
			"default/train a Running 2 high 2",
			"default/web default Inqueue 1 5 1",
		}},
		{[]string{"get", "tasks"}, []string{
			"NAME JOB STATUS NODE RESOURCES",
			"default/train-0 default/train Running n2 cpu=8,memory=1Gi",
			"default/train-1 default/train Pending - cpu=8",
			"default/web-0 default/web Pending - -",
		}},
		{[]string{"get", "jobs", "train"}, []string{
			"NAME QUEUE PHASE MIN PRIORITY TASKS",
			"default/train a Running 2 high 2",
		}},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := sluicectl(t, "", append([]string{"--server", addr}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if got := lines(out); strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("output\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestGetJSONAndFlagsAfterCommand(t *testing.T) {
	f := newFake()
	addr := serve(t, f)
	code, out, errOut := sluicectl(t, "", "get", "nodes", "-o", "json", "--server", addr, "--cluster", "c9")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var items []map[string]any
	if err := json.Unmarshal([]byte(out), &items); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	if len(items) != 2 || items[1]["name"] != "n2" {
		t.Errorf("items %v", items)
	}
	if f.clusters[0] != "c9" {
		t.Errorf("cluster %q, want c9", f.clusters[0])
	}
	code, out, _ = sluicectl(t, "", "--server", addr, "get", "jobs", "default/web", "-o", "json")
	var job map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &job) != nil || job["name"] != "web" {
		t.Errorf("get job json: %d %s", code, out)
	}
}

func TestErrorsAreReported(t *testing.T) {
	addr := serve(t, newFake())
	code, _, errOut := sluicectl(t, "", "--server", addr, "get", "nodes", "n9")
	want := "sluicectl: get nodes: NotFound: node n9 not found\n  name: no such node\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d stderr %q, want %q", code, errOut, want)
	}
	for _, args := range [][]string{{"frobnicate"}, {"get"}, {"get", "pods"}, {"get", "nodes", "-o", "xml"}, {"get", "--bogus", "nodes"}, {"schedule", "--dry-run", "--commit"}} {
		code, _, errOut := sluicectl(t, "", append([]string{"--server", addr}, args...)...)
		if code != exitUsage || !strings.HasPrefix(errOut, "sluicectl: ") {
			t.Errorf("%v: exit %d stderr %q", args, code, errOut)
		}
	}
}

// Help that is asked for goes to standard output with status 0; a missing command is a
// usage error on standard error.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		code, out, errOut := sluicectl(t, "", args...)
		if code != exitOK || !strings.HasPrefix(out, "usage: sluicectl") || errOut != "" || !strings.Contains(out, "Exit status:") {
			t.Errorf("%v: exit %d, stdout %.40q, stderr %q", args, code, out, errOut)
		}
	}
	code, out, errOut := sluicectl(t, "", "get", "-h")
	if code != exitOK || !strings.HasPrefix(out, "usage of sluicectl get:") || !strings.Contains(out, "-wait") || errOut != "" {
		t.Errorf("get -h: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = sluicectl(t, "")
	if code != exitUsage || out != "" || !strings.HasPrefix(errOut, "usage: sluicectl") {
		t.Errorf("no command: exit %d, stdout %q, stderr %.40q", code, out, errOut)
	}
}

const clusterFile = `
queues: [{name: q}]
nodes: [{name: n1, allocatable: {cpu: 4}}]
jobs: [{name: j, queue: q, tasks: [{name: t, replicas: 2}]}]
`

func TestApply(t *testing.T) {
	f := newFake()
	addr := serve(t, f)
	path := writeFile(t, "c.yaml", clusterFile)
	code, out, errOut := sluicectl(t, "", "--server", addr, "--cluster", "rm1", "apply", "-f", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != "merged 5 objects into cluster rm1 at revision 8\n" {
		t.Errorf("output %q", out)
	}
	if len(f.hellos) != 1 || f.hellos[0].Cluster != "rm1" || f.hellos[0].ResumeRevision != 7 {
		t.Errorf("hello %v", f.hellos)
	}
	if b := f.batches[0]; b.ReplaceAll || b.Sequence != 1 || len(b.Deltas) != 5 {
		t.Errorf("batch replace_all=%v sequence=%d deltas=%d", b.ReplaceAll, b.Sequence, len(b.Deltas))
	}

	code, out, _ = sluicectl(t, "", "--server", addr, "apply", "--replace", "-f", "-")
	if code != 1 {
		t.Errorf("empty stdin accepted: %s", out)
	}
	code, out, errOut = sluicectl(t, clusterFile, "--server", addr, "apply", "--replace", "-f", "-")
	if code != 0 || !strings.HasPrefix(out, "replaced 5 objects") || !f.batches[1].ReplaceAll || f.hellos[1].ResumeRevision != 0 {
		t.Errorf("--replace: exit %d out %q err %q", code, out, errOut)
	}

	// A merge may refer to objects only the server has; --replace may not.
	partial := writeFile(t, "p.yaml", "jobs: [{name: j, queue: elsewhere, tasks: [{name: t}]}]\n")
	if code, _, errOut := sluicectl(t, "", "--server", addr, "apply", "-f", partial); code != 0 {
		t.Errorf("partial merge: exit %d %s", code, errOut)
	}
	code, _, errOut = sluicectl(t, "", "--server", addr, "apply", "--replace", "-f", partial)
	if code != 1 || !strings.Contains(errOut, `p.yaml: jobs[0].queue: queue "elsewhere" is not declared in queues`) {
		t.Errorf("strict replace: exit %d %q", code, errOut)
	}
}

func TestApplyErrors(t *testing.T) {
	f := newFake()
	f.reject = &sluicev1.BatchRejected{Code: int32(codes.InvalidArgument), Message: "invalid batch",
		Violations: []*sluicev1.FieldViolation{{Field: `deltas[1].upsert_node.allocatable["cpu"]`, Description: "too big"}}}
	addr := serve(t, f)
	path := writeFile(t, "c.yaml", clusterFile)
	code, _, errOut := sluicectl(t, "", "--server", addr, "apply", "-f", path)
	want := "sluicectl: apply: batch rejected: InvalidArgument: invalid batch\n  deltas[1].upsert_node.allocatable[\"cpu\"]: too big\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d stderr %q, want %q", code, errOut, want)
	}

	bad := writeFile(t, "bad.yaml", "nodes: [{name: n1, allocatable: {cpu: lots}}]\n")
	code, _, errOut = sluicectl(t, "", "--server", addr, "apply", "-f", bad)
	if code != 1 || !strings.Contains(errOut, `bad.yaml: nodes[0].allocatable.cpu: invalid quantity "lots"`) || !strings.HasPrefix(errOut, "sluicectl: ") {
		t.Errorf("exit %d stderr %q", code, errOut)
	}
	if code, _, errOut := sluicectl(t, "", "--server", addr, "apply"); code != exitUsage || !strings.Contains(errOut, "-f FILE is required") {
		t.Errorf("no -f: exit %d %q", code, errOut)
	}
}

func TestScheduleCommitDiscardExplain(t *testing.T) {
	f := newFake()
	addr := serve(t, f)
	code, out, errOut := sluicectl(t, "", "--server", addr, "schedule", "--dry-run")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	want := []string{
		"plan p1 cluster default base revision 7 state Proposed",
		"",
		"ACTION TASK NODE REASON",
		"BIND default/a n1 devices gpu-0",
		"EVICT default/b n2 lower priority (preempt, for default/a)",
		"PIPELINE default/c n2 -",
		"",
		"PENDING JOB READY PENDING EXPLANATION",
		"default/batch 0 1 0/2 nodes are available",
	}
	if got := lines(out); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("output\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sluicectl(t, "", "--server", addr, "schedule", "--commit")
	sluicectl(t, "", "--server", addr, "schedule")
	if code, out, _ := sluicectl(t, "", "--server", addr, "schedule", "-o", "json"); code != 0 || !json.Valid([]byte(out)) {
		t.Errorf("json plan: %s", out)
	}
	wantModes := []sluicev1.ScheduleMode{sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT,
		sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE, sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE}
	if len(f.modes) != 4 || f.modes[0] != wantModes[0] || f.modes[1] != wantModes[1] || f.modes[2] != wantModes[2] {
		t.Errorf("modes %v", f.modes)
	}

	// A commit that rejected a decision exits 3, after printing it.
	code, out, _ = sluicectl(t, "", "--server", addr, "commit", "p1")
	if code != exitRejected || !strings.HasPrefix(out, "committed plan p1 at revision 8: 1 applied, 1 rejected") ||
		!strings.Contains(out, "rejected: task default/b changed since revision 7") {
		t.Errorf("commit: %d %s", code, out)
	}
	if code, _, errOut := sluicectl(t, "", "--server", addr, "commit", "nope"); code != 1 || errOut != "sluicectl: commit: NotFound: plan nope not found\n" {
		t.Errorf("commit unknown: %d %q", code, errOut)
	}
	if code, out, _ := sluicectl(t, "", "--server", addr, "discard", "p2"); code != 0 || out != "discarded plan p2\n" || f.discards[0] != "p2" {
		t.Errorf("discard: %d %q", code, out)
	}
	code, out, _ = sluicectl(t, "", "--server", addr, "explain", "batch")
	for _, s := range []string{"job default/batch", "phase: Inqueue (was Pending)", "summary: 0/2 nodes are available", "gang: 0 of minAvailable 1 placeable", "node(s) didn't match node selector  2"} {
		if code != 0 || !strings.Contains(out, s) {
			t.Errorf("explain output lacks %q:\n%s", s, out)
		}
	}
}

func TestConfig(t *testing.T) {
	f := newFake()
	addr := serve(t, f)
	if code, out, _ := sluicectl(t, "", "--server", addr, "config", "get"); code != 0 || out != "actions: \"allocate\"\n" {
		t.Errorf("config get: %d %q", code, out)
	}
	path := writeFile(t, "conf.yaml", "actions: \"enqueue, allocate\"\n")
	if code, _, errOut := sluicectl(t, "", "--server", addr, "config", "set", "-f", path); code != 0 || f.config != "actions: \"enqueue, allocate\"\n" {
		t.Errorf("config set: %d %s %q", code, errOut, f.config)
	}
	st, _ := status.New(codes.InvalidArgument, "invalid configuration").WithDetails(&errdetails.BadRequest{
		FieldViolations: []*errdetails.BadRequest_FieldViolation{{Field: "tiers[0].plugins[0].name", Description: `unknown plugin "x"`}},
	})
	f.cfgErr = st.Err()
	code, _, errOut := sluicectl(t, "", "--server", addr, "config", "set", "-f", path)
	if want := "sluicectl: config set: InvalidArgument: invalid configuration\n  tiers[0].plugins[0].name: unknown plugin \"x\"\n"; code != 1 || errOut != want {
		t.Errorf("exit %d stderr %q, want %q", code, errOut, want)
	}
	f.cfgErr = nil

	// With an etag, get prints it first and set sends it back, without the line.
	f.etag = "4-0123456789abcdef"
	if code, out, _ := sluicectl(t, "", "--server", addr, "config", "get"); code != 0 || out != "# etag: 4-0123456789abcdef\nactions: \"enqueue, allocate\"\n" {
		t.Errorf("config get with an etag: %d %q", code, out)
	}
	tagged := writeFile(t, "tagged.yaml", "# etag: 4-0123456789abcdef\r\nactions: \"allocate\"\n")
	sets := []struct {
		args []string
		etag string
	}{
		{nil, "4-0123456789abcdef"},
		{[]string{"--etag", "5-0123456789abcdef"}, "5-0123456789abcdef"},
		{[]string{"--force"}, ""},
	}
	for _, tc := range sets {
		f.setEtags = nil
		args := append([]string{"--server", addr, "config", "set", "-f", tagged}, tc.args...)
		if code, _, errOut := sluicectl(t, "", args...); code != 0 || f.config != "actions: \"allocate\"\n" || !slices.Equal(f.setEtags, []string{tc.etag}) {
			t.Errorf("config set %v: %d %q, sent %q with etags %q", tc.args, code, errOut, f.config, f.setEtags)
		}
	}
	f.setEtags = nil
	if code, _, _ := sluicectl(t, "", "--server", addr, "config", "set", "-f", path); code != 0 || !slices.Equal(f.setEtags, []string{""}) {
		t.Errorf("a file without an etag line sent etags %q", f.setEtags)
	}
}

const passScenario = `name: nothing-happens
config: x
cluster:
  nodes: [{name: n1, allocatable: {cpu: 1}}]
  jobs: [{name: x, tasks: [{name: x}]}]
expect: {binds: {}}
`

func TestScenarioRun(t *testing.T) {
	f := newFake()
	f.plan = &sluicev1.Plan{Id: "p1"}
	addr := serve(t, f)
	pass := writeFile(t, "pass.yaml", passScenario)
	code, out, errOut := sluicectl(t, "", "scenario", "run", "--server", addr, pass)
	if code != 0 || out != "PASS nothing-happens\n1 passed, 0 failed\n" {
		t.Errorf("exit %d out %q err %q", code, out, errOut)
	}
	failSrc := strings.Replace(passScenario, "{binds: {}}", "{binds: {default/x: n1}}", 1)
	fail := writeFile(t, "fail.yaml", strings.Replace(failSrc, "name: nothing-happens", "name: something-happens", 1))
	code, out, _ = sluicectl(t, "", "--server", addr, "scenario", "run", pass, fail)
	if code != 1 || !strings.HasSuffix(out, "1 passed, 1 failed\n") || !strings.Contains(out, "FAIL something-happens: binds: missing bind default/x (want n1)") {
		t.Errorf("exit %d out %q", code, out)
	}

	// Without --server the in-process server is used.
	saved := startInProcess
	t.Cleanup(func() { startInProcess = saved })
	stopped := false
	startInProcess = func() (string, func(), error) { return addr, func() { stopped = true }, nil }
	if code, out, _ := sluicectl(t, "", "scenario", "run", pass); code != 0 || out != "PASS nothing-happens\n1 passed, 0 failed\n" || !stopped {
		t.Errorf("in-process: exit %d out %q stopped %v", code, out, stopped)
	}
	if code, _, errOut := sluicectl(t, "", "scenario", "run", t.TempDir()); code != 1 || !strings.Contains(errOut, "no scenario files found") {
		t.Errorf("empty dir: exit %d %q", code, errOut)
	}
}

package service

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/engine/durable"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// clusterNames lists every cluster through ListClusters, a page of size at a time.
func clusterNames(t *testing.T, cs sluicev1.ClusterStateServiceClient, size int32) []string {
	t.Helper()
	var out []string
	req := &sluicev1.ListClustersRequest{PageSize: size}
	for {
		resp, err := cs.ListClusters(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		if size > 0 && len(resp.GetClusters()) > int(size) {
			t.Fatalf("page of %d, asked for %d", len(resp.GetClusters()), size)
		}
		for _, c := range resp.GetClusters() {
			out = append(out, c.GetName())
		}
		if resp.GetNextPageToken() == "" {
			return out
		}
		req = &sluicev1.ListClustersRequest{PageSize: size, PageToken: resp.GetNextPageToken()}
	}
}

func TestClustersAreResources(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	if got := clusterNames(t, h.cs, 0); len(got) != 0 {
		t.Fatalf("clusters of a fresh server: %v", got)
	}
	rev := smallCluster(h, "c1")
	h.apply("c2", node("n1", cpu("1")))
	// An empty batch makes a cluster; a configuration or a rejected batch does not.
	h.apply("c3")
	if _, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c3", Config: testConfig}); err != nil {
		t.Fatal(err)
	}
	_, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c5", Config: testConfig})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	if _, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c4", Batch: &sluicev1.DeltaBatch{
		Deltas: []*sluicev1.Delta{task("t", "missing", cpu("1"))}}}); err == nil {
		t.Fatal("a dangling task was accepted")
	}
	for _, size := range []int32{0, 1, 2, 3} {
		if got := clusterNames(t, h.cs, size); !slices.Equal(got, []string{"c1", "c2", "c3"}) {
			t.Fatalf("page size %d: clusters %v", size, got)
		}
	}

	resp, err := h.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.GetCluster()
	want := &sluicev1.ObjectCounts{Nodes: 2, Queues: 1, Jobs: 2, Tasks: 3}
	if c.GetName() != "c1" || c.GetRevision() != rev || !proto.Equal(c.GetObjects(), want) || c.GetHasConfig() || c.GetPlans() != 0 {
		t.Fatalf("c1: %v", c)
	}
	cfg, err := h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"})
	if err != nil || c.GetConfigEtag() == "" || c.GetConfigEtag() != cfg.GetEtag() {
		t.Fatalf("c1's config etag %q, GetSchedulerConfig's %q, %v", c.GetConfigEtag(), cfg.GetEtag(), err)
	}
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	c3, err := h.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: "c3"})
	if err != nil || !c3.GetCluster().GetHasConfig() || c3.GetCluster().GetRevision() != 1 || c3.GetCluster().GetConfigEtag() == c.GetConfigEtag() {
		t.Fatalf("c3: %v, %v", c3, err)
	}
	list, err := h.cs.ListClusters(ctx, &sluicev1.ListClustersRequest{})
	if err != nil || len(list.GetClusters()) != 3 || list.GetClusters()[0].GetPlans() != 1 {
		t.Fatalf("list: %v, %v", list, err)
	}

	_, err = h.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: "c4"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	_, err = h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c4"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	_, err = h.cs.ListClusters(ctx, &sluicev1.ListClustersRequest{PageSize: -1})
	wantViolation(t, err, "page_size", ReasonInvalidField)
	_, err = h.cs.ListClusters(ctx, &sluicev1.ListClustersRequest{PageToken: "nope"})
	wantViolation(t, err, "page_token", ReasonInvalidField)
}

func TestDeleteClusterDeletesEverything(t *testing.T) {
	mp, handler, err := NewPrometheusMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(t.Context())
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.MeterProvider = mp }})
	ctx := ctxT(t)
	smallCluster(h, "c1")
	smallCluster(h, "c2")
	h.apply("c1", del(sluicev1.ObjectKind_OBJECT_KIND_TASK, "", "b-0"))
	upd, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1", Config: testConfig})
	if err != nil {
		t.Fatal(err)
	}
	p1, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p1.GetPlan().GetId()}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c1", "c2"} {
		if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: c, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT}); err != nil {
			t.Fatal(err)
		}
	}
	// The series a cluster has once it was written, scheduled and committed; the latency
	// histograms aside, which the SDK cannot forget.
	perCluster := []string{"sluice_decisions_total", "sluice_unschedulable_jobs", "sluice_plan_commits_total",
		"sluice_plan_conflicts_total", "sluice_deltas_total", "sluice_delta_batches_total",
		"sluice_queue_allocated_milli_cpu", "sluice_queue_share", "sluice_plan_expiries_total"}
	fams := scrape(t, handler)
	for _, name := range perCluster {
		for _, c := range []string{"c1", "c2"} {
			if _, ok := value(fams, name, map[string]string{"cluster": c}); !ok {
				t.Fatalf("no %s for %s before the delete", name, c)
			}
		}
	}

	resp, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if d := resp.GetCluster(); d.GetName() != "c1" || d.GetObjects().GetTasks() != 2 || !d.GetHasConfig() ||
		d.GetConfigEtag() != upd.GetEtag() || d.GetPlans() != 3 || d.GetRevision() == 0 {
		t.Fatalf("deleted %v", d)
	}

	_, err = h.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: "c1"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	if got := clusterNames(t, h.cs, 0); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("clusters after the delete: %v", got)
	}
	_, err = h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	_, err = h.cs.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "c1", Name: "default"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p2.GetPlan().GetId()})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	_, err = h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	fams = scrape(t, handler)
	for _, name := range perCluster {
		if _, ok := value(fams, name, map[string]string{"cluster": "c1"}); ok {
			t.Errorf("%s still has a series for the deleted cluster", name)
		}
		if _, ok := value(fams, name, map[string]string{"cluster": "c2"}); !ok {
			t.Errorf("%s lost the series of the other cluster", name)
		}
	}
	if _, err := h.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: "c2"}); err != nil {
		t.Fatal(err)
	}

	// Written again, the cluster starts from revision 1; its old plan ids name nothing.
	if rev := smallCluster(h, "c1"); rev != 1 {
		t.Fatalf("revision after the delete: %d", rev)
	}
	p3, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []*sluicev1.ScheduleResponse{p1, p2} {
		if p3.GetPlan().GetId() == old.GetPlan().GetId() {
			t.Fatalf("plan id %s repeats after the delete", p3.GetPlan().GetId())
		}
	}
}

func TestDeleteClusterEndsWatchAndResyncsSync(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	sc, _ := h.openSync(ctx, "c1", 0)
	wantAck(t, sc.batch(1, true, node("n1", cpu("2")), job("a", "", 1), task("a-0", "a", cpu("1"))), 1)
	w, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	for {
		_, err := w.Recv()
		if err != nil {
			wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
			break
		}
	}
	// The watch stored nothing after the delete.
	if _, ok := h.store.Snapshot("c1").Info(); ok {
		t.Fatal("the cluster exists again after the delete")
	}
	// The Sync stream's deltas were of the deleted state: it must send it whole again.
	r := wantRejected(t, sc.batch(2, false, node("n2", cpu("2"))), 2, codes.FailedPrecondition)
	if !strings.Contains(r.GetMessage(), "deleted") {
		t.Fatalf("rejection %q", r.GetMessage())
	}
	wantRejected(t, sc.batch(3, false, node("n2", cpu("2"))), 3, codes.FailedPrecondition)
	if rev := wantAck(t, sc.batch(4, true, node("n1", cpu("2"))), 4); rev != 1 {
		t.Fatalf("revision of the resync: %d, want 1", rev)
	}
	wantAck(t, sc.batch(5, false, node("n2", cpu("2"))), 5)
	// A new watch runs on the new cluster.
	w2, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Recv(); err != nil {
		t.Fatal(err)
	}
	// ApplyDeltas simply writes the cluster again.
	if _, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	if rev := h.apply("c1", node("n9", cpu("1"))); rev != 1 {
		t.Fatalf("revision after a second delete: %d", rev)
	}
}

func TestDeleteClusterThroughTheLog(t *testing.T) {
	var n *durable.Node
	h := newHarnessWith(t, setup{durable: &n})
	ctx := ctxT(t)
	smallCluster(h, "c1")
	smallCluster(h, "c2")
	if _, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	if got := clusterNames(t, h.cs, 0); !slices.Equal(got, []string{"c2"}) {
		t.Fatalf("clusters after the delete: %v", got)
	}
	_, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "c1"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
}

func TestListClustersIsScoped(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	smallCluster(h.withToken("tok-east"), "east")
	n := h.withToken("tok-read")
	// No token of the test's file writes west: it is written behind the API's back.
	if _, err := h.store.Apply("west", state.Batch{}); err != nil {
		t.Fatal(err)
	}
	if got := clusterNames(t, n.cs, 1); !slices.Equal(got, []string{"east", "west"}) {
		t.Fatalf("reader sees %v", got)
	}
	if got := clusterNames(t, h.withToken("tok-east").cs, 1); !slices.Equal(got, []string{"east"}) {
		t.Fatalf("east's writer sees %v", got)
	}
	if _, err := n.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: "west"}); err != nil {
		t.Fatalf("read-only GetCluster: %v", err)
	}
	_, err := n.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "west"})
	wantReason(t, err, codes.PermissionDenied, ReasonPermissionDenied)
	_, err = h.withToken("tok-east").cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "east"})
	wantReason(t, err, codes.PermissionDenied, ReasonPermissionDenied)
	if _, err := h.withToken("tok-admin").cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: "east"}); err != nil {
		t.Fatalf("admin delete: %v", err)
	}
	if got := clusterNames(t, n.cs, 0); !slices.Equal(got, []string{"west"}) {
		t.Fatalf("reader sees %v after the delete", got)
	}
}

func TestPageTokensAreBound(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	for _, c := range []string{"c1", "c2"} {
		h.apply(c, node("n1", cpu("1")), node("n2", cpu("1")), node("n3", cpu("1")),
			queue("q1", 1), queue("q2", 1), queue("q3", 1),
			job("j1", "q1", 0), job("j2", "q1", 0), job("j3", "q2", 0),
			task("t1", "j1", cpu("1")), task("t2", "j1", cpu("1")), task("t3", "j2", cpu("1")))
	}
	nodes, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageSize: 1})
	if err != nil || nodes.GetNextPageToken() == "" {
		t.Fatalf("first page: %v, %v", nodes, err)
	}
	tok := nodes.GetNextPageToken()
	if strings.Contains(tok, "n1") {
		t.Fatalf("token %q shows its cursor", tok)
	}
	next, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageSize: 1, PageToken: tok})
	if err != nil || len(next.GetNodes()) != 1 || next.GetNodes()[0].GetName() != "n2" {
		t.Fatalf("second page: %v, %v", next, err)
	}
	jobs, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q1", PageSize: 1,
		Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_INQUEUE, sluicev1.JobPhase_JOB_PHASE_PENDING}})
	if err != nil || jobs.GetNextPageToken() == "" {
		t.Fatalf("jobs: %v, %v", jobs, err)
	}
	jtok := jobs.GetNextPageToken()
	// The same filters in another order, and another page size, keep the token valid.
	if _, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q1", PageSize: 5, PageToken: jtok,
		Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_PENDING, sluicev1.JobPhase_JOB_PHASE_INQUEUE, sluicev1.JobPhase_JOB_PHASE_PENDING}}); err != nil {
		t.Fatalf("same filters: %v", err)
	}
	tasks, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c1", PageSize: 1})
	if err != nil || tasks.GetNextPageToken() == "" {
		t.Fatalf("tasks: %v, %v", tasks, err)
	}
	misuses := map[string]func() error{
		"another cluster": func() error {
			_, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c2", PageToken: tok})
			return err
		},
		"another list": func() error {
			_, err := h.cs.ListQueues(ctx, &sluicev1.ListQueuesRequest{Cluster: "c1", PageToken: tok})
			return err
		},
		"a jobs token on tasks": func() error {
			_, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c1", PageToken: jtok})
			return err
		},
		"a node token on clusters": func() error {
			_, err := h.cs.ListClusters(ctx, &sluicev1.ListClustersRequest{PageToken: tok})
			return err
		},
		"another queue": func() error {
			_, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q2", PageToken: jtok,
				Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_INQUEUE, sluicev1.JobPhase_JOB_PHASE_PENDING}})
			return err
		},
		"other phases": func() error {
			_, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q1", PageToken: jtok,
				Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_INQUEUE}})
			return err
		},
		"other statuses": func() error {
			_, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c1", PageToken: tasks.GetNextPageToken(),
				Statuses: []sluicev1.TaskStatus{sluicev1.TaskStatus_TASK_STATUS_PENDING}})
			return err
		},
		"a truncated token": func() error {
			_, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageToken: tok[:len(tok)-2]})
			return err
		},
		"a token of the old format": func() error {
			_, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageToken: "czEAAG4x"})
			return err
		},
	}
	for name, call := range misuses {
		err := call()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		st := wantCode(t, err, codes.InvalidArgument)
		if fields, reason := fieldsOf(st); !slices.Equal(fields, []string{"page_token"}) || reason != ReasonInvalidField {
			t.Errorf("%s: fields %v, reason %q", name, fields, reason)
		}
	}
}

func TestListFiltersByStatusAndPhase(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("8")), queue("q1", 1),
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "run", Queue: "q1", Phase: sluicev1.JobPhase_JOB_PHASE_RUNNING}}},
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "wait", Queue: "q1", Phase: sluicev1.JobPhase_JOB_PHASE_PENDING}}},
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "done", Phase: sluicev1.JobPhase_JOB_PHASE_COMPLETED}}},
		taskMsg(&sluicev1.Task{Name: "r0", Job: "run", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n1"}),
		taskMsg(&sluicev1.Task{Name: "r1", Job: "run", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n1"}),
		taskMsg(&sluicev1.Task{Name: "r2", Job: "run"}),
		taskMsg(&sluicev1.Task{Name: "w0", Job: "wait"}),
		taskMsg(&sluicev1.Task{Name: "d0", Job: "done", Status: sluicev1.TaskStatus_TASK_STATUS_SUCCEEDED}),
	)
	running := []sluicev1.TaskStatus{sluicev1.TaskStatus_TASK_STATUS_RUNNING}
	pending := []sluicev1.TaskStatus{sluicev1.TaskStatus_TASK_STATUS_PENDING}
	taskTests := []struct {
		req  *sluicev1.ListTasksRequest
		want string
	}{
		{&sluicev1.ListTasksRequest{Statuses: running}, "[default/r0 default/r1]"},
		{&sluicev1.ListTasksRequest{Statuses: pending}, "[default/r2 default/w0]"},
		{&sluicev1.ListTasksRequest{Statuses: append(pending, sluicev1.TaskStatus_TASK_STATUS_SUCCEEDED)}, "[default/d0 default/r2 default/w0]"},
		{&sluicev1.ListTasksRequest{Job: "run", Statuses: pending}, "[default/r2]"},
		{&sluicev1.ListTasksRequest{Node: "n1", Statuses: pending}, "[]"},
		{&sluicev1.ListTasksRequest{Node: "n1", Statuses: running, Namespace: "default"}, "[default/r0 default/r1]"},
		{&sluicev1.ListTasksRequest{Statuses: []sluicev1.TaskStatus{sluicev1.TaskStatus_TASK_STATUS_FAILED}}, "[]"},
	}
	for _, tt := range taskTests {
		tt.req.Cluster, tt.req.PageSize = "c1", 1
		if got := fmt.Sprint(listTasks(t, h, tt.req)); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.req, got, tt.want)
		}
	}
	jobTests := []struct {
		req  *sluicev1.ListJobsRequest
		want string
	}{
		{&sluicev1.ListJobsRequest{Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_RUNNING}}, "[default/run]"},
		{&sluicev1.ListJobsRequest{Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_RUNNING, sluicev1.JobPhase_JOB_PHASE_COMPLETED}}, "[default/done default/run]"},
		{&sluicev1.ListJobsRequest{Queue: "q1", Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_PENDING}}, "[default/wait]"},
		{&sluicev1.ListJobsRequest{Queue: "default", Phases: []sluicev1.JobPhase{sluicev1.JobPhase_JOB_PHASE_PENDING}}, "[]"},
	}
	for _, tt := range jobTests {
		tt.req.Cluster, tt.req.PageSize = "c1", 1
		if got := fmt.Sprint(listJobs(t, h, tt.req)); got != tt.want {
			t.Errorf("%v: %s, want %s", tt.req, got, tt.want)
		}
	}
	_, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c1", Statuses: []sluicev1.TaskStatus{1, 0}})
	wantViolation(t, err, "statuses[1]", ReasonInvalidField)
	_, err = h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c1", Statuses: []sluicev1.TaskStatus{99}})
	wantViolation(t, err, "statuses[0]", ReasonInvalidField)
	_, err = h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Phases: []sluicev1.JobPhase{0}})
	wantViolation(t, err, "phases[0]", ReasonInvalidField)
	_, err = h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Phases: []sluicev1.JobPhase{2, 42}})
	wantViolation(t, err, "phases[1]", ReasonInvalidField)
}

func TestSchedulerConfigEtags(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1")
	get := func() *sluicev1.GetSchedulerConfigResponse {
		t.Helper()
		resp, err := h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	update := func(etag string) (*sluicev1.UpdateSchedulerConfigResponse, error) {
		return h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1", Config: testConfig, Etag: etag})
	}
	def := get().GetEtag()
	if def == "" {
		t.Fatal("the default configuration has no etag")
	}
	u1, err := update(def)
	if err != nil {
		t.Fatalf("update against the default's etag: %v", err)
	}
	if u1.GetEtag() == def || get().GetEtag() != u1.GetEtag() {
		t.Fatalf("etags: default %q, update %q, read back %q", def, u1.GetEtag(), get().GetEtag())
	}
	// A second writer that read the default loses; the configuration stays the first's.
	_, err = update(def)
	st := wantReason(t, err, codes.Aborted, ReasonConfigEtagMismatch)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetMetadata()[MetadataField] != "etag" {
			t.Fatalf("ErrorInfo metadata %v does not name the etag", info.GetMetadata())
		}
	}
	if get().GetEtag() != u1.GetEtag() {
		t.Fatal("a refused update changed the configuration")
	}
	u2, err := update(u1.GetEtag())
	if err != nil || u2.GetEtag() == u1.GetEtag() {
		t.Fatalf("update with the current etag: %v, %v", u2, err)
	}
	// No etag: unconditional.
	u3, err := update("")
	if err != nil || u3.GetEtag() == u2.GetEtag() {
		t.Fatalf("unconditional update: %v, %v", u3, err)
	}
	for _, bad := range []string{"x", "1-ABCDEF0123456789", strings.Repeat("1", 30) + "-0123456789abcdef", "1-0123456789abcdef\n"} {
		_, err := update(bad)
		wantViolation(t, err, "etag", ReasonInvalidField)
	}
	// Concurrent conditional updates from one etag: exactly one wins.
	base := get().GetEtag()
	errs := make(chan error, 8)
	for range 8 {
		go func() { _, err := update(base); errs <- err }()
	}
	won := 0
	for range 8 {
		err := <-errs
		switch status.Code(err) {
		case codes.OK:
			won++
		case codes.Aborted:
		default:
			t.Fatalf("concurrent update: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d of 8 concurrent updates from one etag won, want 1", won)
	}
}

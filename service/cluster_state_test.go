package service

import (
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestApplyDeltasValidation(t *testing.T) {
	h := newHarness(t)
	// A base state the bad batches must leave alone.
	base := h.apply("c1", node("n1", cpuMem("4", "8Gi")), job("j1", "", 1), task("t1", "j1", cpu("1")))

	okNode := node("n9", cpu("1"))
	tests := []struct {
		name    string
		cluster string
		batch   *sluicev1.DeltaBatch
		field   string
		reason  string
	}{
		{"bad quantity", "c1", batchOf(okNode, task("t2", "j1", cpu("lots"))),
			`batch.deltas[1].upsert_task.resources["cpu"]`, ReasonInvalidField},
		{"negative quantity", "c1", batchOf(node("n2", cpuMem("4", "-1Gi"))),
			`batch.deltas[0].upsert_node.allocatable["memory"]`, ReasonInvalidField},
		{"huge quantity", "c1", batchOf(node("n2", cpu("1e100"))),
			`batch.deltas[0].upsert_node.allocatable["cpu"]`, ReasonInvalidField},
		{"empty node name", "c1", batchOf(node("", cpu("1"))), "batch.deltas[0].upsert_node.name", ReasonInvalidField},
		{"empty task name", "c1", batchOf(task("", "j1", nil)), "batch.deltas[0].upsert_task.name", ReasonInvalidField},
		{"node without resources", "c1", batchOf(node("n2", nil)), "batch.deltas[0].upsert_node.allocatable", ""},
		{"unknown task status", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Status: 42})),
			"batch.deltas[0].upsert_task.status", ReasonInvalidField},
		{"unknown queue state", "c1", batchOf(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: &sluicev1.Queue{Name: "q", State: 9}}}),
			"batch.deltas[0].upsert_queue.state", ""},
		{"unknown delete kind", "c1", batchOf(del(77, "", "x")), "batch.deltas[0].delete.kind", ""},
		{"unspecified delete kind", "c1", batchOf(del(0, "", "x")), "batch.deltas[0].delete.kind", ""},
		{"allocated status", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Status: sluicev1.TaskStatus_TASK_STATUS_ALLOCATED, Node: "n1"})),
			"batch.deltas[0].upsert_task.status", ""},
		{"pipelined status", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Status: sluicev1.TaskStatus_TASK_STATUS_PIPELINED})),
			"batch.deltas[0].upsert_task.status", ""},
		{"running without node", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING})),
			"batch.deltas[0].upsert_task.node", ""},
		{"pending with node", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Node: "n1"})),
			"batch.deltas[0].upsert_task.node", ""},
		{"negative weight", "c1", batchOf(queue("q", -1)), "batch.deltas[0].upsert_queue.weight", ""},
		{"negative min available", "c1", batchOf(job("j2", "", -3)), "batch.deltas[0].upsert_job.min_available", ""},
		{"bad taint effect", "c1", batchOf(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name: "n2", Allocatable: cpu("1"), Taints: []*sluicev1.Taint{{Key: "k", Effect: 9}}}}}),
			"batch.deltas[0].upsert_node.taints[0].effect", ""},
		{"bad toleration operator", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1",
			Tolerations: []*sluicev1.Toleration{{Key: "k", Operator: 7}}})),
			"batch.deltas[0].upsert_task.tolerations[0].operator", ""},
		{"bad selector operator", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Affinity: &sluicev1.Affinity{
			NodeRequired: []*sluicev1.NodeSelectorTerm{{MatchExpressions: []*sluicev1.NodeSelectorRequirement{{Key: "zone", Operator: "Near"}}}}}})),
			"batch.deltas[0].upsert_task.affinity.node_required[0].match_expressions[0].operator", ""},
		{"gt needs an integer", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Affinity: &sluicev1.Affinity{
			NodeRequired: []*sluicev1.NodeSelectorTerm{{MatchExpressions: []*sluicev1.NodeSelectorRequirement{{Key: "gen", Operator: "Gt", Values: []string{"x"}}}}}}})),
			"batch.deltas[0].upsert_task.affinity.node_required[0].match_expressions[0].values[0]", ""},
		{"bad when unsatisfiable", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1",
			TopologySpread: []*sluicev1.TopologySpreadConstraint{{TopologyKey: "zone", WhenUnsatisfiable: 5}}})),
			"batch.deltas[0].upsert_task.topology_spread[0].when_unsatisfiable", ""},
		{"duplicate object", "c1", batchOf(node("n2", cpu("1")), node("n2", cpu("2"))),
			"batch.deltas[1].upsert_node.name", ""},
		{"upsert and delete of one object", "c1", batchOf(task("t9", "j1", nil), del(sluicev1.ObjectKind_OBJECT_KIND_TASK, "default", "t9")),
			"batch.deltas[1].delete.name", ""},
		{"delete in replace_all", "c1", &sluicev1.DeltaBatch{ReplaceAll: true, Deltas: []*sluicev1.Delta{del(sluicev1.ObjectKind_OBJECT_KIND_NODE, "", "n1")}},
			"batch.deltas[0].delete", ""},
		{"empty delta", "c1", batchOf(&sluicev1.Delta{}), "batch.deltas[0]", ""},
		{"bad budget", "c1", batchOf(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertDisruptionBudget{UpsertDisruptionBudget: &sluicev1.DisruptionBudget{
			Name: "b", MinAvailable: proto.String("lots")}}}), "batch.deltas[0].upsert_disruption_budget.min_available", ""},
		{"bad port", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Ports: []int32{70000}})),
			"batch.deltas[0].upsert_task.ports[0]", ""},
		{"bad created_at", "c1", batchOf(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
			Name: "j3", CreatedAt: &timestamppb.Timestamp{Nanos: -5}}}}), "batch.deltas[0].upsert_job.created_at", ""},
		{"namespace with slash", "c1", batchOf(jobIn("a/b", "j", "")), "batch.deltas[0].upsert_job.namespace", ""},
		// Referential errors come from the store, mapped back to the delta.
		{"task of a missing job", "c1", batchOf(okNode, task("t2", "nojob", nil)),
			"batch.deltas[1].upsert_task.job", ReasonInvalidReference},
		{"task on a missing node", "c1", batchOf(taskMsg(&sluicev1.Task{Name: "t2", Job: "j1", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "ghost"})),
			"batch.deltas[0].upsert_task.node", ReasonInvalidReference},
		{"job in a missing queue", "c1", batchOf(job("j2", "noqueue", 1)), "batch.deltas[0].upsert_job.queue", ReasonInvalidReference},
		{"delete of a queue with jobs", "c1", batchOf(okNode, del(sluicev1.ObjectKind_OBJECT_KIND_QUEUE, "", "default")),
			"batch.deltas[1].delete", ReasonInvalidReference},
		{"empty cluster", "", batchOf(okNode), "cluster", ReasonInvalidField},
		{"bad cluster name", "Prod_1", batchOf(okNode), "cluster", ReasonInvalidField},
		{"missing batch", "c1", nil, "batch", ReasonInvalidField},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: tc.cluster, Batch: tc.batch})
			wantViolation(t, err, tc.field, tc.reason)
			// A rejected batch changes nothing.
			if rev := h.store.Revision("c1"); rev != base {
				t.Fatalf("revision moved from %d to %d", base, rev)
			}
			nodes, err := h.cs.ListNodes(ctxT(t), &sluicev1.ListNodesRequest{Cluster: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes.GetNodes()) != 1 || nodes.GetRevision() != base {
				t.Fatalf("nodes after a rejected batch: %v at %d", nodes.GetNodes(), nodes.GetRevision())
			}
			tasks, err := h.cs.ListTasks(ctxT(t), &sluicev1.ListTasksRequest{Cluster: "c1"})
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks.GetTasks()) != 1 {
				t.Fatalf("tasks after a rejected batch: %v", tasks.GetTasks())
			}
		})
	}
}

func batchOf(ds ...*sluicev1.Delta) *sluicev1.DeltaBatch { return &sluicev1.DeltaBatch{Deltas: ds} }

func TestApplyDeltasReportsEveryViolation(t *testing.T) {
	h := newHarness(t)
	_, err := h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(
		node("", cpu("lots")), task("t", "", map[string]string{"memory": "-1"}))})
	st := wantCode(t, err, codes.InvalidArgument)
	fields, _ := fieldsOf(st)
	want := []string{
		"batch.deltas[0].upsert_node.name",
		`batch.deltas[0].upsert_node.allocatable["cpu"]`,
		"batch.deltas[1].upsert_task.job",
		`batch.deltas[1].upsert_task.resources["memory"]`,
	}
	if fmt.Sprint(fields) != fmt.Sprint(want) {
		t.Fatalf("fields %q, want %q", fields, want)
	}
	if !contains(st.Message(), "lots") {
		t.Fatalf("message %q does not quote the bad quantity", st.Message())
	}
}

func TestApplyDeltasDefaultsAndRoundTrip(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	rev := h.apply("c1",
		&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name: "n1", Allocatable: map[string]string{"cpu": "2500m", "memory": "8Gi", "pods": "110", "nvidia.com/gpu": "2"},
			Devices: []*sluicev1.Device{{Id: "gpu-0", Type: "nvidia.com/gpu", Memory: "80Gi"}},
		}}},
		queue("q1", 0),
		job("j1", "q1", 0),
		task("t1", "j1", cpuMem("0.5", "1G")),
	)
	if rev != 1 {
		t.Fatalf("first revision %d, want 1", rev)
	}
	n, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if got := n.GetNode().GetAllocatable(); got["cpu"] != "2500m" || got["memory"] != "8Gi" || got["pods"] != "110" || got["nvidia.com/gpu"] != "2" {
		t.Errorf("allocatable %v", got)
	}
	if n.GetNode().GetLabels()[hostnameLabel] != "n1" {
		t.Errorf("labels %v lack the hostname", n.GetNode().GetLabels())
	}
	if d := n.GetNode().GetDevices()[0]; d.GetCores() != 100 || d.GetMemory() != "80Gi" {
		t.Errorf("device %v", d)
	}
	q, err := h.cs.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: "c1", Name: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	if q.GetQueue().GetWeight() != 1 || !q.GetQueue().GetReclaimable() || q.GetQueue().GetState() != sluicev1.QueueState_QUEUE_STATE_OPEN {
		t.Errorf("queue defaults: %v", q.GetQueue())
	}
	if q.GetQueue().GetStatus() == nil {
		t.Errorf("queue without status")
	}
	j, err := h.cs.GetJob(ctx, &sluicev1.GetJobRequest{Cluster: "c1", Name: "j1"})
	if err != nil {
		t.Fatal(err)
	}
	if jj := j.GetJob(); jj.GetNamespace() != "default" || jj.GetMinAvailable() != 1 ||
		jj.GetPhase() != sluicev1.JobPhase_JOB_PHASE_INQUEUE || jj.GetCreatedAt() == nil || jj.Priority != nil {
		t.Errorf("job defaults: %v", jj)
	}
	tk, err := h.cs.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: "c1", Namespace: "default", Name: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if tt := tk.GetTask(); tt.GetRole() != "t1" || tt.GetStatus() != sluicev1.TaskStatus_TASK_STATUS_PENDING ||
		!tt.GetPreemptable() || tt.GetResources()["cpu"] != "500m" || tt.GetResources()["memory"] != "1G" {
		t.Errorf("task defaults: %v", tt)
	}
	// Re-upserting a job without created_at keeps the time the server first saw it.
	created := j.GetJob().GetCreatedAt().AsTime()
	h.apply("c1", job("j1", "q1", 2))
	j2, err := h.cs.GetJob(ctx, &sluicev1.GetJobRequest{Cluster: "c1", Name: "j1"})
	if err != nil {
		t.Fatal(err)
	}
	if !j2.GetJob().GetCreatedAt().AsTime().Equal(created) || j2.GetJob().GetMinAvailable() != 2 {
		t.Errorf("re-upserted job: %v, created %v", j2.GetJob(), created)
	}
	// Not found.
	_, err = h.cs.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: "c1", Name: "nope"})
	wantCode(t, err, codes.NotFound)
	_, err = h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c1", Name: ""})
	wantViolation(t, err, "name", ReasonInvalidField)
}

func TestDeletes(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")), job("j1", "", 2), task("t1", "j1", nil), task("t2", "j1", nil))
	// Deleting what does not exist is not an error; deleting a job deletes its tasks, and a
	// task delete after its job's in the same batch is fine too.
	h.apply("c1",
		del(sluicev1.ObjectKind_OBJECT_KIND_NODE, "", "ghost"),
		del(sluicev1.ObjectKind_OBJECT_KIND_JOB, "", "j1"),
		del(sluicev1.ObjectKind_OBJECT_KIND_TASK, "", "t1"),
		del(sluicev1.ObjectKind_OBJECT_KIND_NAMESPACE_QUOTA, "", "team-a"),
	)
	tasks, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks.GetTasks()) != 0 {
		t.Fatalf("tasks left: %v", tasks.GetTasks())
	}
}

func TestClusterIsolation(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("alpha", node("n1", cpu("1")), node("n2", cpu("1")))
	if rev := h.apply("beta", node("n3", cpu("1"))); rev != 1 {
		t.Fatalf("beta's first revision is %d", rev)
	}
	for cluster, want := range map[string]int{"alpha": 2, "beta": 1} {
		resp, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: cluster})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetNodes()) != want {
			t.Errorf("%s has %d nodes, want %d", cluster, len(resp.GetNodes()), want)
		}
	}
	// A cluster nothing created is not an empty one.
	_, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "gamma"})
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
	_, err = h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "beta", Name: "n1"})
	wantReason(t, err, codes.NotFound, ReasonNotFound)
	// replace_all in one cluster leaves the other alone.
	if _, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "beta", Batch: &sluicev1.DeltaBatch{ReplaceAll: true}}); err != nil {
		t.Fatal(err)
	}
	resp, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "alpha"})
	if err != nil || len(resp.GetNodes()) != 2 {
		t.Fatalf("alpha after beta's replace_all: %v, %v", resp.GetNodes(), err)
	}
}

func TestPagination(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	var ds []*sluicev1.Delta
	for i := range 250 {
		ds = append(ds, node(fmt.Sprintf("n%03d", i), cpu("1")))
	}
	h.apply("c1", ds...)

	var names []string
	token := ""
	pages := 0
	for {
		resp, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageToken: token})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, n := range resp.GetNodes() {
			names = append(names, n.GetName())
		}
		if token = resp.GetNextPageToken(); token == "" {
			break
		}
	}
	if pages != 3 || len(names) != 250 || names[0] != "n000" || names[249] != "n249" {
		t.Fatalf("%d pages, %d names (%s..%s)", pages, len(names), names[0], names[len(names)-1])
	}
	for i := 1; i < len(names); i++ {
		if names[i-1] >= names[i] {
			t.Fatalf("not sorted at %d: %s, %s", i, names[i-1], names[i])
		}
	}
	big, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageSize: 5000})
	if err != nil || len(big.GetNodes()) != 250 || big.GetNextPageToken() != "" {
		t.Fatalf("page_size 5000: %d nodes, token %q, %v", len(big.GetNodes()), big.GetNextPageToken(), err)
	}
	exact, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageSize: 250})
	if err != nil || len(exact.GetNodes()) != 250 || exact.GetNextPageToken() != "" {
		t.Fatalf("exact page: %d nodes, token %q, %v", len(exact.GetNodes()), exact.GetNextPageToken(), err)
	}
	_, err = h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageToken: "garbage!"})
	wantViolation(t, err, "page_token", ReasonInvalidField)
	_, err = h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1", PageSize: -1})
	wantViolation(t, err, "page_size", ReasonInvalidField)

	// Jobs and tasks with filters.
	h.apply("c1", queue("q1", 1), jobIn("a", "j1", "q1"), jobIn("b", "j1", "q1"), jobIn("b", "j2", ""),
		jobIn("c", "j1", "q1"), jobIn("bb", "j1", "q1"))
	var tds []*sluicev1.Delta
	for i := range 7 {
		tds = append(tds, taskMsg(&sluicev1.Task{Name: fmt.Sprintf("t%d", i), Namespace: "b", Job: "j1"}))
	}
	tds = append(tds, taskMsg(&sluicev1.Task{Name: "x", Namespace: "b", Job: "j2", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n007"}))
	tds = append(tds, taskMsg(&sluicev1.Task{Name: "y", Namespace: "a", Job: "j1", Status: sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n007"}))
	h.apply("c1", tds...)

	jobs := listJobs(t, h, &sluicev1.ListJobsRequest{Cluster: "c1", Namespace: "b", PageSize: 1})
	if fmt.Sprint(jobs) != "[b/j1 b/j2]" {
		t.Errorf("jobs in b: %v", jobs)
	}
	jobs = listJobs(t, h, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q1", PageSize: 2})
	if fmt.Sprint(jobs) != "[a/j1 b/j1 bb/j1 c/j1]" {
		t.Errorf("jobs in q1: %v", jobs)
	}
	jobs = listJobs(t, h, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q1", Namespace: "b"})
	if fmt.Sprint(jobs) != "[b/j1]" {
		t.Errorf("jobs in q1 and b: %v", jobs)
	}
	tasks := listTasks(t, h, &sluicev1.ListTasksRequest{Cluster: "c1", Namespace: "b", Job: "j1", PageSize: 3})
	if len(tasks) != 7 {
		t.Errorf("tasks of b/j1: %v", tasks)
	}
	tasks = listTasks(t, h, &sluicev1.ListTasksRequest{Cluster: "c1", Node: "n007", PageSize: 1})
	if fmt.Sprint(tasks) != "[a/y b/x]" {
		t.Errorf("tasks on n007: %v", tasks)
	}
	tasks = listTasks(t, h, &sluicev1.ListTasksRequest{Cluster: "c1", Node: "n007", Namespace: "b"})
	if fmt.Sprint(tasks) != "[b/x]" {
		t.Errorf("tasks on n007 in b: %v", tasks)
	}
	// A token is bound to its filters.
	first, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "q1", PageSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: "c1", Queue: "default", PageToken: first.GetNextPageToken()})
	wantViolation(t, err, "page_token", ReasonInvalidField)
}

func listJobs(t *testing.T, h *harness, req *sluicev1.ListJobsRequest) []string {
	t.Helper()
	var out []string
	for {
		resp, err := h.cs.ListJobs(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		if req.GetPageSize() > 0 && len(resp.GetJobs()) > int(req.GetPageSize()) {
			t.Fatalf("page of %d, asked for %d", len(resp.GetJobs()), req.GetPageSize())
		}
		for _, j := range resp.GetJobs() {
			out = append(out, j.GetNamespace()+"/"+j.GetName())
		}
		if resp.GetNextPageToken() == "" {
			return out
		}
		req = proto.Clone(req).(*sluicev1.ListJobsRequest)
		req.PageToken = resp.GetNextPageToken()
	}
}

func listTasks(t *testing.T, h *harness, req *sluicev1.ListTasksRequest) []string {
	t.Helper()
	var out []string
	for {
		resp, err := h.cs.ListTasks(ctxT(t), req)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range resp.GetTasks() {
			out = append(out, x.GetNamespace()+"/"+x.GetName())
		}
		if resp.GetNextPageToken() == "" {
			return out
		}
		req = proto.Clone(req).(*sluicev1.ListTasksRequest)
		req.PageToken = resp.GetNextPageToken()
	}
}

func TestEveryRequestChecksTheCluster(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	calls := map[string]func(cluster string) error{
		"GetNode": func(c string) error {
			_, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: c, Name: "n"})
			return err
		},
		"ListNodes": func(c string) error {
			_, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: c})
			return err
		},
		"GetQueue": func(c string) error {
			_, err := h.cs.GetQueue(ctx, &sluicev1.GetQueueRequest{Cluster: c, Name: "q"})
			return err
		},
		"ListQueues": func(c string) error {
			_, err := h.cs.ListQueues(ctx, &sluicev1.ListQueuesRequest{Cluster: c})
			return err
		},
		"GetJob": func(c string) error {
			_, err := h.cs.GetJob(ctx, &sluicev1.GetJobRequest{Cluster: c, Name: "j"})
			return err
		},
		"ListJobs": func(c string) error { _, err := h.cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: c}); return err },
		"GetTask": func(c string) error {
			_, err := h.cs.GetTask(ctx, &sluicev1.GetTaskRequest{Cluster: c, Name: "t"})
			return err
		},
		"ListTasks": func(c string) error {
			_, err := h.cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: c})
			return err
		},
		"GetCluster": func(c string) error {
			_, err := h.cs.GetCluster(ctx, &sluicev1.GetClusterRequest{Cluster: c})
			return err
		},
		"DeleteCluster": func(c string) error {
			_, err := h.cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: c})
			return err
		},
		"Schedule": func(c string) error { _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: c}); return err },
		"CommitPlan": func(c string) error {
			_, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: c, PlanId: "p"})
			return err
		},
		"DiscardPlan": func(c string) error {
			_, err := h.sc.DiscardPlan(ctx, &sluicev1.DiscardPlanRequest{Cluster: c, PlanId: "p"})
			return err
		},
		"ExplainJob": func(c string) error {
			_, err := h.sc.ExplainJob(ctx, &sluicev1.ExplainJobRequest{Cluster: c, Name: "j"})
			return err
		},
		"GetSchedulerConfig": func(c string) error {
			_, err := h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: c})
			return err
		},
		"UpdateSchedulerConfig": func(c string) error {
			_, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: c, Config: testConfig})
			return err
		},
		"WatchPlans": func(c string) error {
			s, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: c})
			if err != nil {
				return err
			}
			_, err = s.Recv()
			return err
		},
	}
	for name, call := range calls {
		for _, bad := range []string{"", "UPPER", "-lead", "has space", string(make([]byte, 70))} {
			if err := call(bad); err == nil {
				t.Errorf("%s(%q) succeeded", name, bad)
			} else {
				wantViolation(t, err, "cluster", ReasonInvalidField)
			}
		}
	}
}

// TestDuplicatesInABatch: two deltas of one batch naming one object are refused at the second,
// whatever the kind (namespaced objects by namespace and name, a delete against an upsert, a
// delete of a non-namespaced kind whatever namespace it gives); the message names the object
// by its key. Objects that only look alike are not duplicates.
func TestDuplicatesInABatch(t *testing.T) {
	h := newHarness(t)
	h.apply("c1", node("n1", cpuMem("4", "8Gi")), job("j1", "", 1))
	quota := func(ns string) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNamespaceQuota{UpsertNamespaceQuota: &sluicev1.NamespaceQuota{Namespace: ns}}}
	}
	budget := func(ns, name string) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertDisruptionBudget{UpsertDisruptionBudget: &sluicev1.DisruptionBudget{
			Namespace: ns, Name: name, MinAvailable: proto.String("1")}}}
	}
	tests := []struct {
		name  string
		batch *sluicev1.DeltaBatch
		field string // "" when the batch has no duplicate
		key   string
	}{
		{"task twice", batchOf(task("t1", "j1", nil), task("t1", "j1", cpu("1"))), "batch.deltas[1].upsert_task.name", `task "default/t1"`},
		{"job twice", batchOf(job("j2", "", 1), job("j2", "", 2)), "batch.deltas[1].upsert_job.name", `job "default/j2"`},
		{"delete then upsert", batchOf(del(sluicev1.ObjectKind_OBJECT_KIND_JOB, "default", "j2"), job("j2", "", 1)), "batch.deltas[1].upsert_job.name", `job "default/j2"`},
		{"node deleted with a namespace", batchOf(node("n2", cpu("1")), del(sluicev1.ObjectKind_OBJECT_KIND_NODE, "ns", "n2")), "batch.deltas[1].delete.name", `node "n2"`},
		{"quota twice", batchOf(quota("team"), quota("team")), "batch.deltas[1].upsert_namespace_quota.namespace", `namespace quota "team"`},
		{"budget twice", batchOf(budget("a", "b"), budget("a", "b")), "batch.deltas[1].upsert_disruption_budget.name", `"a/b"`},
		{"same name, other namespace", batchOf(jobIn("a", "j", ""), jobIn("b", "j", "")), "", ""},
		{"same name, other kind", batchOf(job("x", "", 1), node("x", cpu("1"))), "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: tc.batch})
			if tc.field == "" {
				if status.Code(err) == codes.InvalidArgument && strings.Contains(err.Error(), "appears twice") {
					t.Fatalf("refused as a duplicate: %v", err)
				}
				return
			}
			wantViolation(t, err, tc.field, "")
			if !strings.Contains(err.Error(), tc.key+" appears twice") {
				t.Fatalf("message %q does not name %s", err.Error(), tc.key)
			}
		})
	}
}

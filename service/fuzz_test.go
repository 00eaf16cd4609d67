package service

import (
	"context"
	"math"
	"reflect"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluice-sched/sluice/engine/api"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// seedBatches are valid and invalid batches that cover every delta kind and most fields.
func seedBatches() []*sluicev1.DeltaBatch {
	full := &sluicev1.Task{
		Name: "t-full", Namespace: "ns", Job: "j", Role: "worker",
		Resources: map[string]string{"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1", "ephemeral-storage": "10G"},
		Status:    sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n1", PriorityClass: "high", Priority: proto.Int32(5),
		StartedAt:    timestamppb.New(time.Unix(1700000000, 0)),
		NodeSelector: map[string]string{"zone": "a"},
		Tolerations: []*sluicev1.Toleration{{Key: "dedicated", Operator: sluicev1.TolerationOperator_TOLERATION_OPERATOR_EQUAL, Value: "gpu",
			Effect: sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}, {Operator: sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS}},
		Affinity: &sluicev1.Affinity{
			NodeRequired:     []*sluicev1.NodeSelectorTerm{{MatchExpressions: []*sluicev1.NodeSelectorRequirement{{Key: "gen", Operator: "Gt", Values: []string{"3"}}}}},
			NodePreferred:    []*sluicev1.PreferredSchedulingTerm{{Weight: 10, MatchExpressions: []*sluicev1.NodeSelectorRequirement{{Key: "zone", Operator: "In", Values: []string{"a", "b"}}}}},
			TaskAffinity:     []*sluicev1.TaskAffinityTerm{{Selector: map[string]string{"app": "x"}, TopologyKey: "zone"}},
			TaskAntiAffinity: []*sluicev1.TaskAffinityTerm{{Selector: map[string]string{"app": "x"}, TopologyKey: "kubernetes.io/hostname", Required: true}},
		},
		TopologySpread: []*sluicev1.TopologySpreadConstraint{{MaxSkew: 2, TopologyKey: "zone", Selector: map[string]string{"app": "x"}}},
		Ports:          []int32{8080},
		Devices:        []*sluicev1.DeviceRequest{{Type: "nvidia.com/gpu", Memory: "10Gi", Cores: 50, Model: "H100"}},
		Labels:         map[string]string{"app": "x"}, Annotations: map[string]string{"a": "b"},
		Preemptable: proto.Bool(false), DeviceIds: []string{"gpu-0"},
	}
	nodeFull := &sluicev1.Node{
		Name: "n1", Allocatable: map[string]string{"cpu": "64", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": "8"},
		Labels: map[string]string{"zone": "a", "gen": "4"}, Taints: []*sluicev1.Taint{{Key: "dedicated", Value: "gpu", Effect: sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE}},
		Usage:   map[string]float64{"cpu": 40},
		Devices: []*sluicev1.Device{{Id: "gpu-0", Type: "nvidia.com/gpu", Model: "H100", Memory: "80Gi", Attributes: map[string]string{"driver": "550"}}},
	}
	return []*sluicev1.DeltaBatch{
		{Sequence: 1, ReplaceAll: true, Deltas: []*sluicev1.Delta{
			{Change: &sluicev1.Delta_UpsertNode{UpsertNode: nodeFull}},
			{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: &sluicev1.Queue{Name: "q1", Weight: 2, Capability: cpu("10"),
				Reclaimable: proto.Bool(false), State: sluicev1.QueueState_QUEUE_STATE_CLOSING,
				NodeGroupAffinity: &sluicev1.NodeGroupAffinity{Required: []string{"g1"}}}}},
			{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "j", Namespace: "ns", Queue: "q1", MinAvailable: proto.Int32(1),
				MinAvailableByRole: map[string]int32{"worker": 1}, MinResources: cpu("1"), Phase: sluicev1.JobPhase_JOB_PHASE_RUNNING,
				NetworkTopology: &sluicev1.NetworkTopology{Mode: sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_HARD, HighestTierAllowed: 2}}}},
			{Change: &sluicev1.Delta_UpsertTask{UpsertTask: full}},
			{Change: &sluicev1.Delta_UpsertPriorityClass{UpsertPriorityClass: &sluicev1.PriorityClass{Name: "high", Value: 1000}}},
			{Change: &sluicev1.Delta_UpsertNamespaceQuota{UpsertNamespaceQuota: &sluicev1.NamespaceQuota{Namespace: "ns", Hard: cpu("100")}}},
			{Change: &sluicev1.Delta_UpsertDisruptionBudget{UpsertDisruptionBudget: &sluicev1.DisruptionBudget{Name: "b", Namespace: "ns",
				Selector: map[string]string{"app": "x"}, MaxUnavailable: proto.String("50%")}}},
			{Change: &sluicev1.Delta_UpsertHyperNode{UpsertHyperNode: &sluicev1.HyperNode{Name: "h1", Tier: 1, Members: []string{"n1"}}}},
		}},
		batchOf(node("n2", cpu("1")), job("j2", "", 1), task("t2", "j2", cpu("lots"))),
		batchOf(del(sluicev1.ObjectKind_OBJECT_KIND_JOB, "ns", "j"), del(sluicev1.ObjectKind_OBJECT_KIND_HYPER_NODE, "", "h1")),
		batchOf(del(sluicev1.ObjectKind_OBJECT_KIND_NODE, "", "n1"), task("t3", "ghost", nil)),
		batchOf(queue("q2", 1), &sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: &sluicev1.Queue{Name: "q3", Parent: "q2"}}}),
		{},
	}
}

// fuzzServer is shared by the iterations of one fuzzing process, so that state built by one
// input is there for the next (deletes find objects, tasks find jobs).
var (
	fuzzOnce sync.Once
	fuzzSrv  *Server
	fuzzMu   sync.Mutex
)

func FuzzApplyDeltas(f *testing.F) {
	for _, b := range seedBatches() {
		data, err := proto.Marshal(b)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	fuzzOnce.Do(func() { fuzzSrv = newTestServer(f, nil) })
	f.Fuzz(func(t *testing.T, data []byte) {
		var b sluicev1.DeltaBatch
		if err := proto.Unmarshal(data, &b); err != nil {
			return
		}
		fuzzMu.Lock()
		defer fuzzMu.Unlock()
		s := fuzzSrv
		cs := &clusterState{s: s}
		ctx := context.Background()
		const cluster = "fuzz"
		before := s.store.Revision(cluster)
		resp, err := cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: cluster, Batch: &b})
		after := s.store.Revision(cluster)
		if err != nil {
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("batch refused with %s (%s), want INVALID_ARGUMENT", st.Code(), st.Message())
			}
			if len(violationsOf(st)) == 0 {
				t.Fatalf("rejection without field violations: %s", st.Message())
			}
			if after != before {
				t.Fatalf("rejected batch moved the revision from %d to %d", before, after)
			}
			return
		}
		if after != before+1 || resp.GetRevision() != after {
			t.Fatalf("accepted batch: revision %d -> %d, response %d", before, after, resp.GetRevision())
		}
		checkRoundTrip(t, s, cluster)
	})
}

// checkRoundTrip reads every node, queue, job and task back through the API and checks that
// each converts back, without violations, to the object the store holds: what a client reads
// it can write again unchanged.
func checkRoundTrip(t *testing.T, s *Server, cluster string) {
	t.Helper()
	ctx := context.Background()
	cs := &clusterState{s: s}
	snap := s.store.Snapshot(cluster)
	nodes, err := cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: cluster, PageSize: maxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.GetNodes() {
		var fe fieldErrors
		checkNode(&fe, "", n)
		got := nodeFromProto(&fe, "", n)
		want, _ := snap.Node(n.GetName())
		sameObject(t, &fe, got, want)
	}
	queues, err := cs.ListQueues(ctx, &sluicev1.ListQueuesRequest{Cluster: cluster, PageSize: maxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range queues.GetQueues() {
		var fe fieldErrors
		checkQueue(&fe, "", q)
		got := queueFromProto(&fe, "", q)
		want, _ := snap.Queue(q.GetName())
		sameObject(t, &fe, got, want)
	}
	jobs, err := cs.ListJobs(ctx, &sluicev1.ListJobsRequest{Cluster: cluster, PageSize: maxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, j := range jobs.GetJobs() {
		var fe fieldErrors
		checkJob(&fe, "", j)
		got := jobFromProto(&fe, "", j)
		want, _ := snap.Job(got.Key())
		sameObject(t, &fe, got, want)
	}
	tasks, err := cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: cluster, PageSize: maxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range tasks.GetTasks() {
		var fe fieldErrors
		checkTask(&fe, "", x)
		got := taskFromProto(&fe, "", x)
		want, _ := snap.Task(got.Key())
		sameObject(t, &fe, got, want)
	}
}

func sameObject[T any](t *testing.T, fe *fieldErrors, got, want *T) {
	t.Helper()
	if err := fe.err(); err != nil {
		t.Fatalf("%T read back is invalid: %v", got, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%T does not round-trip:\n got %+v\nwant %+v", got, got, want)
	}
}

func TestSeedBatchesRoundTrip(t *testing.T) {
	s := newTestServer(t, nil)
	cs := &clusterState{s: s}
	for i, b := range seedBatches() {
		_, err := cs.ApplyDeltas(context.Background(), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: b})
		if i == 0 && err != nil {
			t.Fatalf("seed 0: %v", err)
		}
		checkRoundTrip(t, s, "c1")
	}
	// The full task kept everything.
	tk, ok := s.store.Snapshot("c1").Task("ns/t-full")
	if ok {
		t.Fatalf("t-full survived the deletion of its job: %+v", tk)
	}
}

func TestQuantityConversion(t *testing.T) {
	tests := []struct {
		in   map[string]string
		want api.Resource
		out  map[string]string
	}{
		{map[string]string{"cpu": "500m", "memory": "8Gi"}, api.Resource{MilliCPU: 500, Memory: 8 << 30},
			map[string]string{"cpu": "500m", "memory": "8Gi"}},
		{map[string]string{"cpu": "2", "memory": "1G", "pods": "110"}, api.Resource{MilliCPU: 2000, Memory: 1e9, MaxTaskNum: 110},
			map[string]string{"cpu": "2", "memory": "1G", "pods": "110"}},
		{map[string]string{"cpu": "1.5", "nvidia.com/gpu": "2", "example.com/foo": "250m"},
			api.Resource{MilliCPU: 1500, Scalars: map[string]float64{"nvidia.com/gpu": 2000, "example.com/foo": 250}},
			map[string]string{"cpu": "1500m", "nvidia.com/gpu": "2", "example.com/foo": "250m"}},
		{map[string]string{"ephemeral-storage": "10Gi"}, api.Resource{Scalars: map[string]float64{"ephemeral-storage": 10 << 30 * 1000}},
			map[string]string{"ephemeral-storage": "10Gi"}},
	}
	for _, tc := range tests {
		var fe fieldErrors
		got := resourceFromProto(&fe, "r", tc.in)
		if !fe.ok() {
			t.Fatalf("%v: %v", tc.in, fe.err())
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v parsed to %+v, want %+v", tc.in, got, tc.want)
		}
		if out := resourceToProto(&got); !reflect.DeepEqual(out, tc.out) {
			t.Errorf("%+v formatted as %v, want %v", got, out, tc.out)
		}
	}
	for _, bad := range []string{"lots", "-1", "1e100", "", "9223372036854775807"} {
		var fe fieldErrors
		resourceFromProto(&fe, "r", map[string]string{"cpu": bad})
		if fe.ok() {
			t.Errorf("cpu %q accepted", bad)
		}
	}
}

func TestFormatExtremes(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e300, -1e300, 0.4, -2500} {
		_ = formatMilli(v)
		_ = formatBytes(v)
	}
	if got := formatMilli(-2500); got != "-2500m" {
		t.Errorf("formatMilli(-2500) = %q", got)
	}
}

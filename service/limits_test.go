package service

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine/durable"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// limitInfo returns the ErrorInfo metadata of a LIMIT_EXCEEDED status.
func limitInfo(t *testing.T, err error) map[string]string {
	t.Helper()
	st := wantReason(t, err, codes.ResourceExhausted, ReasonLimitExceeded)
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetMetadata()
		}
	}
	t.Fatalf("no ErrorInfo in %v", st)
	return nil
}

// wantDescription fails unless err has a violation of field whose description holds every part.
func wantDescription(t *testing.T, err error, field string, parts ...string) {
	t.Helper()
	wantViolation(t, err, field, ReasonInvalidField)
	for _, v := range violationsOf(status.Convert(err)) {
		if v.GetField() == field && contains(v.GetDescription(), parts...) {
			return
		}
	}
	t.Fatalf("no violation of %s says %q: %v", field, parts, err)
}

// TestLimitsOnValues: names, label counts and sizes, batches and configurations beyond the
// limits are INVALID_ARGUMENT naming the field and the limit, and change nothing: neither
// the store nor, durable, the raft log. The values of the issue (a 15.9 MiB label value, a
// node with 100,000 labels) are among them.
func TestLimitsOnValues(t *testing.T) {
	var rn *durable.Node
	h := newHarnessWith(t, setup{durable: &rn, opts: func(o *Options) {
		o.Limits = Limits{MaxNameBytes: 20, MaxLabels: 3, MaxLabelBytes: 10, MaxConfigBytes: 200, MaxBatchDeltas: 4}
		o.MaxRecvBytes = 32 << 20
	}})
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("1")))
	rev, last := h.store.Revision("c1"), rn.Status().LastIndex
	apply := func(ds ...*sluicev1.Delta) error {
		_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(ds...)})
		return err
	}
	withLabels := func(labels map[string]string) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n2", Allocatable: cpu("1"), Labels: labels}}}
	}
	wantDescription(t, apply(node(strings.Repeat("n", 21), cpu("1"))), "batch.deltas[0].upsert_node.name", "21 bytes", "limit of 20", LimitNameBytes)
	wantDescription(t, apply(withLabels(map[string]string{"a": "1", "b": "2", "c": "3", "d": "4"})), "batch.deltas[0].upsert_node.labels", "4 entries", LimitLabels)
	wantDescription(t, apply(withLabels(map[string]string{"a": strings.Repeat("v", 11)})), `batch.deltas[0].upsert_node.labels["a"]`, LimitLabelBytes)
	wantDescription(t, apply(withLabels(map[string]string{strings.Repeat("k", 21): "v"})), `batch.deltas[0].upsert_node.labels["`+strings.Repeat("k", 21)+`"]`, LimitNameBytes)
	huge := map[string]string{}
	for i := range 100_000 {
		huge[fmt.Sprintf("l%d", i)] = "v"
	}
	wantDescription(t, apply(withLabels(huge)), "batch.deltas[0].upsert_node.labels", "100000 entries", LimitLabels)
	wantDescription(t, apply(withLabels(map[string]string{"big": strings.Repeat("x", 15_900_000)})), `batch.deltas[0].upsert_node.labels["big"]`, LimitLabelBytes)
	var five []*sluicev1.Delta
	for i := range 5 {
		five = append(five, node(fmt.Sprintf("m%d", i), cpu("1")))
	}
	wantDescription(t, apply(five...), "batch.deltas", "5 deltas", LimitBatchDeltas)
	// Annotations and selectors are bounded alike.
	j := &sluicev1.Job{Name: "j", Annotations: map[string]string{"a": strings.Repeat("v", 11)}}
	wantDescription(t, apply(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: j}}), `batch.deltas[0].upsert_job.annotations["a"]`, LimitLabelBytes)

	// Configurations: the update's, a dry run's override, the server's file.
	big := "actions: \"fakealloc\"\n# " + strings.Repeat("x", 200) + "\n"
	_, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "c1", Config: big})
	wantDescription(t, err, "config", LimitConfigBytes)
	_, err = h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: dryRun, ConfigOverride: big})
	wantDescription(t, err, "config_override", LimitConfigBytes)
	if err := h.srv.ReloadConfig([]byte(big)); !strings.Contains(fmt.Sprint(err), LimitConfigBytes) {
		t.Fatalf("reload of an oversized configuration: %v", err)
	}
	if h.store.Revision("c1") != rev || rn.Status().LastIndex != last {
		t.Fatalf("refused requests changed the store (revision %d, was %d) or the log (index %d, was %d)",
			h.store.Revision("c1"), rev, rn.Status().LastIndex, last)
	}
}

// TestLimitsOnClusters: batches that would take a cluster beyond its objects or a job
// beyond its tasks are RESOURCE_EXHAUSTED, reason LIMIT_EXCEEDED, naming the limit, its value
// and the field, on ApplyDeltas and Sync alike; nothing reaches the log.
func TestLimitsOnClusters(t *testing.T) {
	var rn *durable.Node
	h := newHarnessWith(t, setup{durable: &rn, opts: func(o *Options) {
		o.Limits = Limits{MaxObjectsPerCluster: 6, MaxTasksPerJob: 2}
	}})
	ctx := ctxT(t)
	// n1, the default queue, a, a-0, a-1: five objects.
	h.apply("c1", node("n1", cpu("4")), job("a", "", 1), task("a-0", "a", cpu("1")), task("a-1", "a", cpu("1")))
	last := rn.Status().LastIndex
	_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(task("a-2", "a", cpu("1")))})
	md := limitInfo(t, err)
	if md["limit"] != LimitTasksPerJob || md["max"] != "2" || md[MetadataField] != "batch.deltas[0].upsert_task.job" {
		t.Fatalf("tasks per job: metadata %v", md)
	}
	_, err = h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(node("n2", cpu("1")), node("n3", cpu("1")))})
	md = limitInfo(t, err)
	if md["limit"] != LimitObjectsPerCluster || md["max"] != "6" || md[MetadataField] != "batch.deltas" {
		t.Fatalf("objects per cluster: metadata %v", md)
	}
	c, _ := h.openSync(ctx, "c1", 0)
	r := wantRejected(t, c.batch(1, false, node("n2", cpu("1")), node("n3", cpu("1"))), 1, codes.ResourceExhausted)
	if !strings.Contains(r.GetMessage(), LimitObjectsPerCluster) {
		t.Fatalf("rejection %q does not name the limit", r.GetMessage())
	}
	if rn.Status().LastIndex != last {
		t.Fatal("a batch over a limit reached the raft log")
	}
	// Up to the limit is fine.
	wantAck(t, c.batch(2, false, node("n2", cpu("1"))), 2)
}

// TestNamesRefuseHiddenCharacters: a name with a bidirectional control, a zero-width or
// another invisible character is refused with its field path, wherever a name goes; names in
// other scripts are fine.
func TestNamesRefuseHiddenCharacters(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("4")))
	for _, r := range []rune{0x202E, 0x202A, 0x2066, 0x2069, 0x200B, 0x200D, 0x200E, 0xFEFF, 0x00AD, 0x2060, 0x061C,
		0x034F, 0x3164, 0x115F, 0xFE0F, 0xE0041, 0x00A0, 0x2028, 0x0085, 0xE000, 0x180E, 0x2800} {
		bad := "ok" + string(r) + "x"
		wantBad := func(what, field string, err error) {
			t.Helper()
			st := wantCode(t, err, codes.InvalidArgument)
			for _, v := range violationsOf(st) {
				if v.GetField() == field && strings.Contains(v.GetDescription(), fmt.Sprintf("%U", r)) {
					return
				}
			}
			t.Fatalf("%U in %s: %v does not name %s and the character", r, what, err, field)
		}
		_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(node(bad, cpu("1")))})
		wantBad("a node name", "batch.deltas[0].upsert_node.name", err)
		_, err = h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(jobIn(bad, "j", ""))})
		wantBad("a namespace", "batch.deltas[0].upsert_job.namespace", err)
		_, err = h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(
			&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: "n2", Allocatable: cpu("1"), Labels: map[string]string{bad: "v"}}}})})
		// The path quotes the key as Go does: the character shows as an escape.
		wantBad("a label key", key("batch.deltas[0].upsert_node.labels", bad), err)
		_, err = h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c1", Name: bad})
		wantBad("a read", "name", err)
		_, err = h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: bad})
		wantBad("a plan id", "plan_id", err)
	}
	// Invalid UTF-8 never gets that far: the protobuf runtime refuses it.
	if utf8.ValidString("\xff") {
		t.Fatal("\\xff is valid UTF-8?")
	}
	if _, at, bad := hiddenRune("ab\xffc"); !bad || at != utf8.RuneError {
		t.Fatalf("hiddenRune of invalid UTF-8 = %v, %v", at, bad)
	}
	// Other scripts, accents, emoji and spaces are names like any other.
	for i, name := range []string{"nœud-é", "作业-1", "узел", "gpu node 🚀", "a.b_c-d"} {
		if _, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(node(name, cpu("1")))}); err != nil {
			t.Errorf("name %d %q: %v", i, name, err)
		}
	}
}

// TestLimitsOnChunkedResyncs: a chunked resync is held to the limits on what a cluster holds,
// like a replace_all batch: one with too many objects is refused at the chunk that goes over,
// before it is staged, one that gives a job too many tasks at its last chunk, naming the delta
// that first grew the job; either way the cluster is unchanged and nothing stays staged.
func TestLimitsOnChunkedResyncs(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) {
		o.Limits = Limits{MaxObjectsPerCluster: 5, MaxTasksPerJob: 1}
	}})
	ctx := ctxT(t)
	rev := h.apply("c1", node("n1", cpu("4")))
	c, _ := h.openSync(ctx, "c1", 0)
	c.chunk(1, false, node("n1", cpu("1")), node("n2", cpu("1")))
	c.chunk(1, false, node("n3", cpu("1")), node("n4", cpu("1")))
	c.chunk(1, false, node("n5", cpu("1")), node("n6", cpu("1")))
	c.chunk(1, true, node("n7", cpu("1")))
	rej := wantRejected(t, c.recv(), 1, codes.ResourceExhausted)
	md := limitInfo(t, status.ErrorProto(rej.GetStatus()))
	if md["limit"] != LimitObjectsPerCluster || md["max"] != "5" || md[MetadataField] != "chunks[2].deltas[1]" {
		t.Fatalf("objects per cluster: metadata %v", md)
	}
	h.waitStaged(0)
	c.chunk(2, false, node("n1", cpu("1")), job("a", "", 1))
	c.chunk(2, true, task("a-0", "a", cpu("1")), task("a-1", "a", cpu("1")))
	rej = wantRejected(t, c.recv(), 2, codes.ResourceExhausted)
	md = limitInfo(t, status.ErrorProto(rej.GetStatus()))
	if md["limit"] != LimitTasksPerJob || md["max"] != "1" || md[MetadataField] != "chunks[1].deltas[0].upsert_task.job" {
		t.Fatalf("tasks per job: metadata %v", md)
	}
	h.waitStaged(0)
	if got := h.nodeNames("c1"); got != "n1" || h.store.Revision("c1") != rev {
		t.Fatalf("refused resyncs changed the cluster: nodes %s at revision %d, want n1 at %d", got, h.store.Revision("c1"), rev)
	}
	// Within the limits, the resync applies.
	c.chunk(3, false, node("n1", cpu("1")), job("a", "", 1))
	c.chunk(3, true, task("a-0", "a", cpu("1")))
	wantAck(t, c.recv(), 3)
}

// TestLimitsOnWhatIfs: a what-if is held to the limits on what a cluster holds, as a batch
// is (it is never stored, but the cycle holds it), and an unknown cluster's is
// CLUSTER_NOT_FOUND, before any of it is looked at by the store.
func TestLimitsOnWhatIfs(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) {
		o.Limits = Limits{MaxObjectsPerCluster: 6, MaxTasksPerJob: 2}
	}})
	ctx := ctxT(t)
	// n1, the default queue, a, a-0: four objects.
	h.apply("c1", node("n1", cpu("4")), job("a", "", 1), task("a-0", "a", cpu("1")))
	_, err := h.sc.Schedule(ctx, dryRunWith("c1", task("a-1", "a", cpu("1")), task("a-2", "a", cpu("1"))))
	md := limitInfo(t, err)
	if md["limit"] != LimitTasksPerJob || md[MetadataField] != "hypothetical.deltas[0].upsert_task.job" {
		t.Fatalf("tasks per job: metadata %v", md)
	}
	_, err = h.sc.Schedule(ctx, dryRunWith("c1", node("n2", cpu("1")), node("n3", cpu("1")), node("n4", cpu("1"))))
	md = limitInfo(t, err)
	if md["limit"] != LimitObjectsPerCluster || md[MetadataField] != "hypothetical.deltas" {
		t.Fatalf("objects per cluster: metadata %v", md)
	}
	if _, err := h.sc.Schedule(ctx, dryRunWith("c1", task("a-1", "a", cpu("1")))); err != nil {
		t.Fatalf("a what-if within the limits: %v", err)
	}
	_, err = h.sc.Schedule(ctx, dryRunWith("nowhere", node("n1", cpu("1"))))
	wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
}

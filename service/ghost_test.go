package service

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// ghostRequest builds a valid request of r for cluster: the fields a request needs besides
// its cluster are filled in, so that only the cluster's existence can refuse it.
func ghostRequest(r rpc, cluster string, dryRun bool) proto.Message {
	m := r.request(cluster).ProtoReflect()
	fields := m.Descriptor().Fields()
	set := func(name string, v protoreflect.Value) {
		if f := fields.ByName(protoreflect.Name(name)); f != nil {
			m.Set(f, v)
		}
	}
	set("name", protoreflect.ValueOfString("x"))
	set("plan_id", protoreflect.ValueOfString(cluster+"-r1-1"))
	set("config", protoreflect.ValueOfString(testConfig))
	if dryRun {
		set("mode", protoreflect.ValueOfEnum(protoreflect.EnumNumber(sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN)))
	}
	return m.Interface()
}

// creates reports whether a method may create a cluster: only batches do.
func creates(r rpc) bool {
	return strings.HasSuffix(r.full, "/Sync") || strings.HasSuffix(r.full, "/ApplyDeltas")
}

// callWith makes one call of r with req and returns its error (a stream's first response's).
func callWith(ctx context.Context, h *harness, r rpc, req proto.Message) error {
	resp := r.output.New().Interface()
	if r.stream == nil {
		return h.conn.Invoke(ctx, r.full, req, resp)
	}
	cs, err := h.conn.NewStream(ctx, r.stream, r.full)
	if err != nil {
		return err
	}
	if err := cs.SendMsg(req); err != nil {
		return cs.RecvMsg(resp)
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	return cs.RecvMsg(resp)
}

// TestUnknownClustersLeaveNothing: every call naming a cluster that no batch created answers
// NOT_FOUND with reason CLUSTER_NOT_FOUND, and thousands of such calls leave nothing behind:
// no cluster in the store, no engine record, no metric series, no lock, watch or
// subscription.
func TestUnknownClustersLeaveNothing(t *testing.T) {
	mp, handler, err := NewPrometheusMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(t.Context())
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.MeterProvider = mp }})
	ctx := ctxT(t)
	checked := 0
	for i := range 40 {
		for _, r := range allRPCs(t) {
			if creates(r) || r.allClusters {
				continue
			}
			for _, dry := range []bool{false, true} {
				cluster := fmt.Sprintf("ghost-%d", i)
				err := callWith(ctx, h, r, ghostRequest(r, cluster, dry))
				if i == 0 {
					wantReason(t, err, codes.NotFound, ReasonClusterNotFound)
					checked++
				}
			}
		}
	}
	if checked < 30 {
		t.Fatalf("only %d calls checked", checked)
	}
	// A Sync stream's hello, and a refused first batch, create nothing either.
	for i := range 20 {
		cluster := fmt.Sprintf("synced-%d", i)
		c, _ := h.openSync(ctx, cluster, 0)
		wantRejected(t, c.batch(1, false, task("t", "missing", cpu("1"))), 1, codes.InvalidArgument)
		if err := c.s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := c.s.Recv(); err != nil {
				break
			}
		}
		_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: cluster, Batch: batchOf(task("t", "missing", cpu("1")))})
		wantCode(t, err, codes.InvalidArgument)
	}
	// Nor does a chunked resync refused at its last chunk, or one the stream abandons.
	for i := range 10 {
		cluster := fmt.Sprintf("resynced-%d", i)
		c, _ := h.openSync(ctx, cluster, 0)
		c.chunk(1, false, task("t", "missing", cpu("1")))
		c.chunk(1, true, node("n1", cpu("1")))
		wantRejected(t, c.recv(), 1, codes.InvalidArgument)
		c.chunk(2, false, node("n1", cpu("1")))
		if err := c.s.CloseSend(); err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := c.s.Recv(); err != nil {
				break
			}
		}
	}
	h.waitStaged(0)

	if names := h.store.ClusterNames(); len(names) != 0 {
		t.Errorf("the store holds clusters %v", names)
	}
	if n := h.eng.Clusters(); n != 0 {
		t.Errorf("the engine keeps %d records", n)
	}
	s := h.srv
	s.metrics.mu.Lock()
	counted := len(s.metrics.perCluster)
	s.metrics.mu.Unlock()
	s.gens.mu.Lock()
	gens := len(s.gens.m)
	s.gens.mu.Unlock()
	s.watches.mu.Lock()
	watches := len(s.watches.subs)
	s.watches.mu.Unlock()
	s.changes.mu.Lock()
	subs := len(s.changes.subs)
	s.changes.mu.Unlock()
	if counted != 0 || gens != 0 || watches != 0 || subs != 0 || s.locks.Len() != 0 || s.cycles.Len() != 0 {
		t.Errorf("left behind: %d metric counts, %d generations, %d watches, %d subscriptions, %d write locks, %d cycle locks",
			counted, gens, watches, subs, s.locks.Len(), s.cycles.Len())
	}
	for name, f := range scrape(t, handler) {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" {
					t.Errorf("%s has a series for cluster %q", name, l.GetValue())
				}
			}
		}
	}
}

package service

import (
	"bytes"
	"context"
	"log/slog"
	"net"
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

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/durable"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// testConfig uses only the fake action and plugin of testRegistry, so that the tests do not
// depend on the built-in ones.
const testConfig = `actions: "fakealloc"
tiers:
- plugins:
  - name: fakenoop
`

// testRegistry returns a registry with a first-fit allocate action and a no-op plugin.
func testRegistry() *framework.Registry {
	reg := framework.NewRegistry()
	reg.RegisterAction("fakealloc", func(conf.Arguments) (framework.Action, error) { return firstFit{}, nil })
	reg.RegisterAction("otheraction", func(conf.Arguments) (framework.Action, error) { return noopAction{}, nil })
	reg.RegisterPlugin("fakenoop", func(conf.Arguments) (framework.Plugin, error) { return noopPlugin{}, nil })
	return reg
}

type noopPlugin struct{}

func (noopPlugin) Name() string                      { return "fakenoop" }
func (noopPlugin) OnSessionOpen(*framework.Session)  {}
func (noopPlugin) OnSessionClose(*framework.Session) {}

type noopAction struct{}

func (noopAction) Name() string               { return "otheraction" }
func (noopAction) Execute(*framework.Session) {}

// firstFit places each pending task of each job on the first schedulable node (by name)
// with room, gang-style: a job's placements are kept only if they reach minAvailable.
type firstFit struct{}

func (firstFit) Name() string { return "fakealloc" }

func (firstFit) Execute(ssn *framework.Session) {
	for _, j := range ssn.SortedJobs() {
		st := ssn.NewStatement()
		for _, t := range j.SortedTasks() {
			if t.Status != api.Pending {
				continue
			}
			fe := api.NewFitErrors()
			fe.Total = len(ssn.NodeList)
			placed := false
			for _, n := range ssn.NodeList {
				if n.Node.Unschedulable {
					fe.SetNodeError(n.Name, api.NewFitError(n.Name, api.UnschedulableAndUnresolvable, "node(s) were unschedulable"))
					continue
				}
				if short := n.Idle.Insufficient(t.Resreq); len(short) > 0 {
					fe.SetNodeError(n.Name, api.NewFitError(n.Name, api.Unschedulable, "Insufficient "+short[0]))
					continue
				}
				if err := st.Allocate(t, n); err == nil {
					placed = true
					break
				}
			}
			if !placed {
				j.NodesFitErrors[t.UID] = fe
			}
		}
		if j.ReadyTaskNum() >= j.MinAvailable {
			st.Commit()
		} else {
			st.Discard()
		}
	}
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// harness is a server on an in-memory connection with clients for both services.
type harness struct {
	t     *testing.T
	lis   *bufconn.Listener
	store *state.Store
	eng   *engine.Engine
	srv   *Server
	gs    *grpc.Server
	conn  *grpc.ClientConn
	cs    sluicev1.ClusterStateServiceClient
	sc    sluicev1.SchedulerServiceClient
	logs  *syncBuffer
}

// newTestServer returns a Server over a fresh store and an engine with testRegistry.
func newTestServer(t testing.TB, logs *syncBuffer) *Server {
	t.Helper()
	return newTestServerWith(t, logs, setup{})
}

// setup varies the test server: the registry and default configuration of its engine, the
// plan TTL and clock, and the server's options.
type setup struct {
	reg     *framework.Registry
	config  string
	planTTL time.Duration
	clock   func() time.Time
	opts    func(*Options)
	// durable, if set, makes the store durable (a raft log alone in a temporary directory)
	// and receives the node once it leads.
	durable **durable.Node
}

func newTestServerWith(t testing.TB, logs *syncBuffer, su setup) *Server {
	t.Helper()
	store := state.New()
	if su.durable != nil {
		n, err := durable.Open(store, durable.Options{DataDir: t.TempDir()})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = n.Close(5 * time.Second) })
		for deadline := time.Now().Add(10 * time.Second); !n.IsLeader(); time.Sleep(5 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the durable store has no leader after 10s")
			}
		}
		*su.durable = n
	}
	if su.reg == nil {
		su.reg = testRegistry()
	}
	if su.config == "" {
		su.config = testConfig
	}
	if su.planTTL == 0 {
		su.planTTL = time.Minute
	}
	cfg, err := conf.Parse([]byte(su.config))
	if err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(store, engine.Options{Registry: su.reg, DefaultConfig: cfg, PlanTTL: su.planTTL, Clock: su.clock})
	if err != nil {
		t.Fatal(err)
	}
	var log *slog.Logger
	if logs != nil {
		log = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	opts := Options{Store: store, Engine: eng, Logger: log}
	if su.opts != nil {
		su.opts(&opts)
	}
	return New(opts)
}

func newHarness(t *testing.T, opts ...grpc.ServerOption) *harness {
	t.Helper()
	return newHarnessWith(t, setup{}, opts...)
}

// newHarnessWith starts a test server on an in-memory connection. Clients made with
// h.dial carry their own dial options (credentials).
func newHarnessWith(t *testing.T, su setup, opts ...grpc.ServerOption) *harness {
	t.Helper()
	logs := &syncBuffer{}
	srv := newTestServerWith(t, logs, su)
	h := &harness{t: t, store: srv.store, eng: srv.engine, srv: srv, logs: logs}
	h.lis = bufconn.Listen(1 << 20)
	h.gs = NewGRPCServer(srv, opts...)
	go func() { _ = h.gs.Serve(h.lis) }()
	h.conn = h.dial(grpc.WithTransportCredentials(insecure.NewCredentials()))
	h.cs = sluicev1.NewClusterStateServiceClient(h.conn)
	h.sc = sluicev1.NewSchedulerServiceClient(h.conn)
	t.Cleanup(func() {
		srv.Shutdown()
		GracefulStop(h.gs, 5*time.Second)
	})
	return h
}

// dial returns a new client connection to the harness's server.
func (h *harness) dial(opts ...grpc.DialOption) *grpc.ClientConn {
	h.t.Helper()
	opts = append([]grpc.DialOption{
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return h.lis.DialContext(ctx) }),
	}, opts...)
	conn, err := grpc.NewClient("passthrough:///bufnet", opts...)
	if err != nil {
		h.t.Fatal(err)
	}
	h.t.Cleanup(func() { conn.Close() })
	return conn
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// apply applies deltas to a cluster and fails the test on error.
func (h *harness) apply(cluster string, deltas ...*sluicev1.Delta) uint64 {
	h.t.Helper()
	resp, err := h.cs.ApplyDeltas(ctxT(h.t), &sluicev1.ApplyDeltasRequest{
		Cluster: cluster, Batch: &sluicev1.DeltaBatch{Deltas: deltas},
	})
	if err != nil {
		h.t.Fatalf("ApplyDeltas: %v", err)
	}
	return resp.GetRevision()
}

// mustExist makes a cluster exist (an empty batch), behind the API's back: without a call
// that counts against rate limits or needs credentials.
func (h *harness) mustExist(cluster string) {
	h.t.Helper()
	if _, err := h.store.Apply(cluster, state.Batch{}); err != nil {
		h.t.Fatal(err)
	}
}

// Delta builders.

func node(name string, res map[string]string) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{Name: name, Allocatable: res}}}
}

func queue(name string, weight int32) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: &sluicev1.Queue{Name: name, Weight: weight}}}
}

// job builds a job upsert; minAvailable 0 leaves the field unset (the server's default, 1).
func job(name, q string, minAvailable int32) *sluicev1.Delta {
	j := &sluicev1.Job{Name: name, Queue: q}
	if minAvailable != 0 {
		j.MinAvailable = &minAvailable
	}
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: j}}
}

func jobIn(ns, name, q string) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: name, Namespace: ns, Queue: q}}}
}

func task(name, jobName string, res map[string]string) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{Name: name, Job: jobName, Resources: res}}}
}

func taskMsg(t *sluicev1.Task) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}}
}

func del(kind sluicev1.ObjectKind, ns, name string) *sluicev1.Delta {
	return &sluicev1.Delta{Change: &sluicev1.Delta_Delete{Delete: &sluicev1.ObjectRef{Kind: kind, Namespace: ns, Name: name}}}
}

func cpu(v string) map[string]string { return map[string]string{"cpu": v} }

func cpuMem(c, m string) map[string]string { return map[string]string{"cpu": c, "memory": m} }

// wantCode fails unless err is a status with the code.
func wantCode(t *testing.T, err error, code codes.Code) *status.Status {
	t.Helper()
	st, ok := status.FromError(err)
	if !ok || st.Code() != code {
		t.Fatalf("got error %v, want code %s", err, code)
	}
	return st
}

// fieldsOf returns the BadRequest fields and the ErrorInfo reason of a status.
func fieldsOf(st *status.Status) (fields []string, reason string) {
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				fields = append(fields, v.GetField())
			}
		case *errdetails.ErrorInfo:
			reason = d.GetReason()
		}
	}
	return fields, reason
}

// wantViolation fails unless err is INVALID_ARGUMENT naming field (exactly) in its BadRequest.
func wantViolation(t *testing.T, err error, field, reason string) {
	t.Helper()
	st := wantCode(t, err, codes.InvalidArgument)
	fields, r := fieldsOf(st)
	if !slices.Contains(fields, field) {
		t.Fatalf("violations %q (message %q) do not name %q", fields, st.Message(), field)
	}
	if reason != "" && r != reason {
		t.Fatalf("reason %q, want %q", r, reason)
	}
}

// contains reports whether s contains every part.
func contains(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// wantReason checks an error's code and its ErrorInfo reason.
func wantReason(t *testing.T, err error, code codes.Code, reason string) *status.Status {
	t.Helper()
	st := wantCode(t, err, code)
	if _, got := fieldsOf(st); got != reason {
		t.Fatalf("error %v has reason %q, want %q", err, got, reason)
	}
	return st
}

package service

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	reflectionpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/testpki"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// testTokens is a tokens file: two writers for "east", a writer for "west", an admin for
// "east" given by its hash, a reader of every cluster and a certificate identity.
var testTokens = fmt.Sprintf(`
- name: east-rw
  token: tok-east
  clusters: [east]
- name: east-admin
  sha256: %s
  clusters: [east]
  admin: true
- name: east-rw2
  token: tok-east2
  clusters: [east]
- name: west-rw
  token: tok-west
  clusters: [west]
- name: reader
  token: tok-read
  clusters: ["*"]
  read_only: true
- name: ops
  client_cn: ops.example
  clusters: [east, west]
  admin: true
`, sha("tok-admin"))

func authSetup(t *testing.T, anyCert bool, more func(*Options)) setup {
	t.Helper()
	entries, err := ParseTokens([]byte(testTokens))
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(entries, anyCert)
	if err != nil {
		t.Fatal(err)
	}
	return setup{opts: func(o *Options) {
		o.Auth = a
		if more != nil {
			more(o)
		}
	}}
}

func withToken(ctx context.Context, tok string) context.Context {
	if tok == "" {
		return ctx
	}
	return metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+tok)
}

// rpc is one method of the API, from the generated service descriptors.
type rpc struct {
	full             string
	stream           *grpc.StreamDesc
	input, output    protoreflect.MessageType
	isAdmin, isWrite bool
	// allClusters: the request names no cluster; the answer is scoped instead
	// (TestListClustersIsScoped).
	allClusters bool
}

// allRPCs lists every method and stream of both services, from the generated descriptors,
// so that a new RPC is covered without editing the test.
func allRPCs(t *testing.T) []rpc {
	t.Helper()
	var out []rpc
	for _, sd := range []grpc.ServiceDesc{sluicev1.ClusterStateService_ServiceDesc, sluicev1.SchedulerService_ServiceDesc} {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(sd.ServiceName))
		if err != nil {
			t.Fatal(err)
		}
		svc := d.(protoreflect.ServiceDescriptor)
		add := func(name string, stream *grpc.StreamDesc) {
			md := svc.Methods().ByName(protoreflect.Name(name))
			if md == nil {
				t.Fatalf("%s/%s: no descriptor", sd.ServiceName, name)
			}
			in, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
			if err != nil {
				t.Fatal(err)
			}
			outT, err := protoregistry.GlobalTypes.FindMessageByName(md.Output().FullName())
			if err != nil {
				t.Fatal(err)
			}
			full := "/" + sd.ServiceName + "/" + name
			pol, ok := methodPolicies[full]
			if !ok {
				t.Errorf("%s has no entry in methodPolicies: it is refused to everyone", full)
			}
			out = append(out, rpc{full: full, stream: stream, input: in, output: outT, isAdmin: pol.admin, isWrite: pol.write,
				allClusters: pol.allClusters})
		}
		for _, m := range sd.Methods {
			add(m.MethodName, nil)
		}
		for _, s := range sd.Streams {
			add(s.StreamName, &grpc.StreamDesc{StreamName: s.StreamName, ServerStreams: s.ServerStreams, ClientStreams: s.ClientStreams})
		}
	}
	if len(out) < 20 {
		t.Fatalf("only %d RPCs found", len(out))
	}
	return out
}

// request builds a request of the method naming cluster: in its cluster field, or in the
// cluster field of its first message field that has one (a Sync hello).
func (r rpc) request(cluster string) proto.Message {
	m := r.input.New()
	if f := m.Descriptor().Fields().ByName("cluster"); f != nil {
		m.Set(f, protoreflect.ValueOfString(cluster))
		return m.Interface()
	}
	fields := m.Descriptor().Fields()
	for i := 0; i < fields.Len(); i++ {
		f := fields.Get(i)
		if f.Kind() != protoreflect.MessageKind || f.IsList() || f.IsMap() {
			continue
		}
		if cf := f.Message().Fields().ByName("cluster"); cf != nil {
			sub := m.Mutable(f).Message()
			sub.Set(cf, protoreflect.ValueOfString(cluster))
			return m.Interface()
		}
	}
	return m.Interface()
}

// call makes one call of the method and returns its error: for a stream, the first
// response's.
func (r rpc) call(ctx context.Context, conn *grpc.ClientConn, cluster string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req := r.request(cluster)
	resp := r.output.New().Interface()
	if r.stream == nil {
		return conn.Invoke(ctx, r.full, req, resp)
	}
	cs, err := conn.NewStream(ctx, r.stream, r.full)
	if err != nil {
		return err
	}
	if err := cs.SendMsg(req); err != nil {
		return cs.RecvMsg(resp)
	}
	return cs.RecvMsg(resp)
}

func TestEveryRPCNeedsCredentialsAndScope(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	ctx := ctxT(t)
	smallCluster(h.withToken("tok-east"), "east")
	for _, r := range allRPCs(t) {
		t.Run(strings.TrimPrefix(r.full, "/sluice.v1."), func(t *testing.T) {
			check := func(what, tok, cluster string, want codes.Code) {
				t.Helper()
				err := r.call(withToken(ctx, tok), h.conn, cluster)
				if got := status.Code(err); got != want {
					t.Errorf("%s: %v, want %s", what, err, want)
				}
			}
			allowed := func(what, tok, cluster string) {
				t.Helper()
				err := r.call(withToken(ctx, tok), h.conn, cluster)
				if c := status.Code(err); c == codes.Unauthenticated || c == codes.PermissionDenied {
					t.Errorf("%s: %v, want the call to be let through", what, err)
				}
			}
			check("no token", "", "east", codes.Unauthenticated)
			check("wrong token", "tok-nope", "east", codes.Unauthenticated)
			if r.allClusters {
				if r.input.Descriptor().Fields().ByName("cluster") != nil {
					t.Fatalf("%s names a cluster: authorize it by its cluster", r.full)
				}
				allowed("writer token", "tok-east", "")
				allowed("read-only token", "tok-read", "")
				return
			}
			check("token for another cluster", "tok-admin", "west", codes.PermissionDenied)
			check("writer token for another cluster", "tok-east", "west", codes.PermissionDenied)
			allowed("admin token for the cluster", "tok-admin", "east")
			if r.isAdmin {
				check("not an admin", "tok-east", "east", codes.PermissionDenied)
			} else {
				allowed("writer token for the cluster", "tok-east", "east")
			}
			if r.isWrite {
				check("read-only token", "tok-read", "east", codes.PermissionDenied)
			} else if !r.isAdmin {
				allowed("read-only token", "tok-read", "west")
			}
		})
	}
}

// withToken returns a copy of the harness whose clients send a bearer token.
func (h *harness) withToken(tok string) *harness {
	c := *h
	c.conn = h.dial(grpc.WithTransportCredentials(insecure.NewCredentials()), grpc.WithPerRPCCredentials(bearer(tok)))
	c.cs = sluicev1.NewClusterStateServiceClient(c.conn)
	c.sc = sluicev1.NewSchedulerServiceClient(c.conn)
	return &c
}

// bearer is per-call credentials for tests over plaintext connections.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return false }

func TestHealthAndReflectionStayOpen(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, func(o *Options) { o.RateLimit, o.RateBurst = 1, 1 }))
	ctx := ctxT(t)
	for range 3 {
		if _, err := healthpb.NewHealthClient(h.conn).Check(ctx, &healthpb.HealthCheckRequest{}); err != nil {
			t.Fatalf("health without a token: %v", err)
		}
	}
	rc, err := reflectionpb.NewServerReflectionClient(h.conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Send(&reflectionpb.ServerReflectionRequest{MessageRequest: &reflectionpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := rc.Recv(); err != nil {
		t.Fatalf("reflection without a token: %v", err)
	}
}

func TestSyncBatchesStayInTheHelloCluster(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil)).withToken("tok-east")
	ctx := ctxT(t)
	// A hello for a cluster out of scope ends the stream.
	s, err := h.cs.Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "west"}}}); err != nil {
		t.Fatal(err)
	}
	_, err = s.Recv()
	wantCode(t, err, codes.PermissionDenied)
	// In scope, batches apply to the hello's cluster.
	c, _ := h.openSync(ctx, "east", 0)
	wantAck(t, c.batch(1, false, node("n1", cpu("1"))), 1)
	if h.store.Revision("east") == 0 || h.store.Revision("west") != 0 {
		t.Fatal("the batch went to the wrong cluster")
	}
}

func TestReadOnlyTokenMayDryRun(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	smallCluster(h.withToken("tok-east"), "east")
	r := h.withToken("tok-read")
	ctx := ctxT(t)
	if _, err := r.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "east", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
		t.Fatalf("dry run with a read-only token: %v", err)
	}
	_, err := r.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "east", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	wantCode(t, err, codes.PermissionDenied)
	w, err := r.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "east", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatalf("dry-run watch with a read-only token: %v", err)
	}
}

func TestParseTokens(t *testing.T) {
	json := `{"tokens": [{"name": "a", "token": "x", "clusters": ["c1"]},
		{"name": "b", "sha256": "sha256:` + strings.ToUpper(sha("y")) + `", "clusters": ["*"], "admin": true, "read_only": true}]}`
	entries, err := ParseTokens([]byte(json))
	if err != nil {
		t.Fatal(err)
	}
	a, err := NewAuthenticator(entries, false)
	if err != nil {
		t.Fatal(err)
	}
	if id := a.byToken("y"); id == nil || id.Name != "b" || !id.Admin || !id.ReadOnly || !id.mayAccess("any") {
		t.Fatalf("token y: %+v", id)
	}
	if id := a.byToken("x"); id == nil || id.Name != "a" || id.mayAccess("c2") || !id.mayAccess("c1") {
		t.Fatalf("token x: %+v", id)
	}
	if a.byToken("z") != nil || a.byToken("") != nil {
		t.Fatal("an unknown token matched")
	}
	bad := []struct{ text, want string }{
		{``, "empty"},
		{`[]`, "empty"},
		{`- {name: a, clusters: [c]}`, "exactly one of"},
		{`- {name: a, token: x, sha256: ab, clusters: [c]}`, "exactly one of"},
		{`- {token: x, clusters: [c]}`, "name is required"},
		{`- {name: a, token: x}`, "clusters is required"},
		{`- {name: a, token: x, cluster: [c]}`, "cluster"},
		{`- {name: a, sha256: abc, clusters: [c]}`, "64 hexadecimal"},
		{`- {name: a, token: x, clusters: [c]}` + "\n" + `- {name: a, token: y, clusters: [c]}`, "used by tokens[0]"},
		{`- {name: a, token: x, clusters: [c]}` + "\n" + `- {name: b, sha256: ` + sha("x") + `, clusters: [c]}`, "same token"},
		{`- {name: a, token: x, clusters: ["Bad Name"]}`, "invalid cluster"},
		{`other: []`, "unknown key"},
		{"- {name: \"ops\\u202e\", token: x, clusters: [c]}", "bidirectional"},
	}
	for _, tc := range bad {
		if _, err := ParseTokens([]byte(tc.text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTokens(%q) = %v, want an error mentioning %q", tc.text, err, tc.want)
		}
	}
}

// tlsHarness serves the test server over TCP on 127.0.0.1 with TLS.
type tlsHarness struct {
	addr string
	ca   *testpki.CA
	h    *harness
}

func newTLSHarness(t *testing.T, clientCA bool, su setup) *tlsHarness {
	t.Helper()
	ca := testpki.NewCA(t, "sluice-test")
	srvPair := ca.Server(t, "server")
	caFile := ""
	if clientCA {
		caFile = ca.CertFile
	}
	cfg, err := ServerTLSConfig(srvPair.CertFile, srvPair.KeyFile, caFile)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServerWith(t, &syncBuffer{}, su)
	gs := NewGRPCServer(srv, grpc.Creds(credentials.NewTLS(cfg)))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(func() {
		srv.Shutdown()
		GracefulStop(gs, 5*time.Second)
	})
	return &tlsHarness{addr: lis.Addr().String(), ca: ca, h: &harness{t: t, srv: srv, store: srv.store, eng: srv.engine}}
}

func (th *tlsHarness) client(t *testing.T, cert *tls.Certificate, opts ...grpc.DialOption) sluicev1.ClusterStateServiceClient {
	t.Helper()
	cfg := &tls.Config{RootCAs: th.ca.Pool(), MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	conn, err := grpc.NewClient(th.addr, append([]grpc.DialOption{grpc.WithTransportCredentials(credentials.NewTLS(cfg))}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return sluicev1.NewClusterStateServiceClient(conn)
}

func TestTLSWithTokens(t *testing.T) {
	th := newTLSHarness(t, false, authSetup(t, false, nil))
	ctx := ctxT(t)
	c := th.client(t, nil, grpc.WithPerRPCCredentials(bearer("tok-east")))
	if _, err := c.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "east", Batch: batchOf(node("n1", cpu("1")))}); err != nil {
		t.Fatalf("over TLS with a token: %v", err)
	}
	_, err := th.client(t, nil).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	wantCode(t, err, codes.Unauthenticated)
	// A plaintext client cannot talk to a TLS server.
	conn, err := grpc.NewClient(th.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = sluicev1.NewClusterStateServiceClient(conn).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	wantCode(t, err, codes.Unavailable)
}

func TestMutualTLS(t *testing.T) {
	th := newTLSHarness(t, true, authSetup(t, false, nil))
	ctx := ctxT(t)
	ops := th.ca.Client(t, "ops.example")
	c := th.client(t, &ops.TLS)
	for _, cl := range []string{"west", "east"} {
		if _, err := c.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: cl, Batch: batchOf(node("n1", cpu("1")))}); err != nil {
			t.Fatalf("with the ops certificate: %v", err)
		}
	}
	_, err := c.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "north"})
	wantCode(t, err, codes.PermissionDenied)
	// A certificate the tokens file does not name needs a token.
	stranger := th.ca.Client(t, "stranger")
	_, err = th.client(t, &stranger.TLS).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	wantCode(t, err, codes.Unauthenticated)
	if _, err := th.client(t, &stranger.TLS, grpc.WithPerRPCCredentials(bearer("tok-east"))).ListNodes(ctx,
		&sluicev1.ListNodesRequest{Cluster: "east"}); err != nil {
		t.Fatalf("a known certificate's client with a token: %v", err)
	}
	// Without a client certificate, or with one from another CA, the handshake fails.
	_, err = th.client(t, nil, grpc.WithPerRPCCredentials(bearer("tok-east"))).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	wantCode(t, err, codes.Unavailable)
	other := testpki.NewCA(t, "other").Client(t, "ops.example")
	_, err = th.client(t, &other.TLS).ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	wantCode(t, err, codes.Unavailable)
}

func TestMutualTLSWithoutTokens(t *testing.T) {
	a, err := NewAuthenticator(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	th := newTLSHarness(t, true, setup{opts: func(o *Options) { o.Auth = a }})
	ctx := ctxT(t)
	cl := th.ca.Client(t, "anyone")
	if _, err := th.client(t, &cl.TLS).ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c9", Batch: batchOf(node("n1", cpu("1")))}); err != nil {
		t.Fatalf("a certified client without a tokens file: %v", err)
	}
}

func TestRateLimitPerClient(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, func(o *Options) { o.RateLimit, o.RateBurst = 0.001, 3 }))
	ctx := ctxT(t)
	h.mustExist("east")
	east := h.withToken("tok-east")
	for i := range 3 {
		if _, err := east.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"}); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	_, err := east.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "east"})
	st := wantReason(t, err, codes.ResourceExhausted, ReasonRateLimited)
	if !strings.Contains(st.Message(), "east-rw") {
		t.Errorf("message %q does not name the client", st.Message())
	}
	var retry *errdetails.RetryInfo
	for _, d := range st.Details() {
		if r, ok := d.(*errdetails.RetryInfo); ok {
			retry = r
		}
	}
	if retry == nil || retry.GetRetryDelay().AsDuration() <= 0 {
		t.Errorf("a rate-limited call carries no positive RetryInfo: %v", st.Details())
	}
	// Streams count too, when they open.
	_, err = east.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "east"})
	if err == nil {
		w, _ := east.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "east"})
		_, err = w.Recv()
	}
	wantCode(t, err, codes.ResourceExhausted)
	// Another identity has a bucket of its own, even on the same connection.
	if _, err := h.cs.ListNodes(withToken(ctx, "tok-read"), &sluicev1.ListNodesRequest{Cluster: "east"}); err != nil {
		t.Fatalf("another client: %v", err)
	}
}

func TestRateLimitByPeerWithoutAuth(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.RateLimit, o.RateBurst = 0.001, 2 }})
	ctx := ctxT(t)
	h.mustExist("c1")
	for range 2 {
		if _, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1"}); err != nil {
			t.Fatal(err)
		}
	}
	_, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1"})
	wantCode(t, err, codes.ResourceExhausted)
}

func TestMaxRecvBytes(t *testing.T) {
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.MaxRecvBytes = 4096 }})
	ctx := ctxT(t)
	var ds []*sluicev1.Delta
	for i := range 200 {
		ds = append(ds, node(fmt.Sprintf("node-%04d", i), cpuMem("8", "32Gi")))
	}
	_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(ds...)})
	wantCode(t, err, codes.ResourceExhausted)
	if h.store.Revision("c1") != 0 {
		t.Fatal("an oversized batch was applied")
	}
	h.apply("c1", ds[:5]...)
	if DefaultMaxRecvBytes != 16<<20 {
		t.Fatalf("DefaultMaxRecvBytes = %d", DefaultMaxRecvBytes)
	}
}

func TestCallLogsNameClientClusterAndPlan(t *testing.T) {
	h := newHarnessWith(t, authSetup(t, false, nil))
	east := h.withToken("tok-east")
	smallCluster(east, "east")
	resp, err := east.sc.Schedule(ctxT(t), &sluicev1.ScheduleRequest{Cluster: "east"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{`"grpc.method":"Schedule"`, `"cluster":"east"`, `"client":"east-rw"`,
		`"plan":"` + resp.GetPlan().GetId() + `"`, `"grpc.code":"OK"`, `"grpc.time_ms"`}
	deadline := time.Now().Add(5 * time.Second)
	for {
		for _, line := range strings.Split(h.logs.String(), "\n") {
			if contains(line, want...) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %v:\n%s", want, h.logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestREADMEScopeTable keeps the README's table of what each RPC needs (Scopes by effect)
// and the server's policy the same: every RPC has one row, and its "needs" is its policy.
// TestEveryRPCNeedsCredentialsAndScope calls every RPC with every kind of token against that
// policy, so each row is checked with real credentials.
func TestREADMEScopeTable(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	start := strings.Index(text, "### Scopes by effect")
	if start < 0 {
		t.Fatal("the README has no Scopes by effect section")
	}
	section := text[start+1:]
	if end := strings.Index(section, "\n### "); end >= 0 {
		section = section[:end]
	}
	needs := map[string]methodPolicy{
		"read": {},
		"read, answered with the clusters in scope": {allClusters: true},
		"write":                          {write: true},
		"read for a dry run, else write": {write: true, dryRunReads: true},
		"admin":                          {admin: true},
		"admin, not read-only":           {admin: true, write: true},
	}
	rows := map[string]methodPolicy{}
	for _, line := range strings.Split(section, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(line, "|")
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		pol, ok := needs[strings.TrimSpace(cells[2])]
		if !ok {
			t.Fatalf("README row %s: unknown needs %q", name, cells[2])
		}
		if _, dup := rows[name]; dup {
			t.Fatalf("README lists %s twice", name)
		}
		rows[name] = pol
	}
	for method, pol := range methodPolicies {
		name := shortMethod(method)
		row, ok := rows[name]
		switch {
		case !ok:
			t.Errorf("the README's table has no row for %s", name)
		case row != pol:
			t.Errorf("%s: the README says %+v, the server's policy is %+v", name, row, pol)
		}
		delete(rows, name)
	}
	for name := range rows {
		t.Errorf("the README lists %s, which is no RPC", name)
	}
}

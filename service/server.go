package service

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/keylock"
	"github.com/sluice-sched/sluice/internal/vtcodec"
)

// Options configure a Server.
type Options struct {
	// Store holds the clusters' state. Required.
	Store *state.Store
	// Engine runs cycles on Store and keeps plans. Required.
	Engine *engine.Engine
	// Logger receives the service's logs; nil discards them. What is logged at which level
	// is in oplog.go.
	Logger *slog.Logger
	// SlowCall is the duration from which a unary call is logged at warn ("slow call"); 0
	// means DefaultSlowCall, a negative value never.
	SlowCall time.Duration
	// AccessLog logs every call at info; otherwise calls that went as the client expects
	// (OK, NOT_FOUND, a plan conflict, ...) are logged at debug.
	AccessLog bool
	// Clock is the wall clock used for the defaults that depend on time (a job's creation
	// time, a task's start time); nil means time.Now.
	Clock func() time.Time

	// Auth authenticates and scopes callers (bearer tokens, client certificates); nil
	// serves every call without credentials. Health and reflection are always open.
	Auth *Authenticator
	// RateLimit is each client's sustained rate in calls per second (a stream counts once,
	// when it opens); 0 means unlimited. A client is its identity, or without Auth its IP
	// address. Calls over the limit fail with RESOURCE_EXHAUSTED.
	RateLimit float64
	// RateBurst is the size of each client's token bucket; 0 means max(1, RateLimit).
	RateBurst int
	// MaxRecvBytes bounds the size of a received message; 0 means DefaultMaxRecvBytes.
	// Larger messages fail with RESOURCE_EXHAUSTED.
	MaxRecvBytes int
	// MaxResyncBytes bounds the size of one chunked resync on a Sync stream (its chunks'
	// encoded sizes added up), which the server holds until the last chunk; 0 means
	// DefaultMaxResyncBytes. A larger resync is rejected with RESOURCE_EXHAUSTED (reason
	// RESYNC_TOO_LARGE).
	MaxResyncBytes int

	// TracerProvider receives the spans of calls (the otelgrpc stats handler) and of cycles
	// (a "Schedule" span, with one child per plugin session open and per action); nil means
	// none.
	TracerProvider trace.TracerProvider
	// MeterProvider receives the service's metrics (see NewPrometheusMetrics) and otelgrpc's
	// call metrics; nil means none.
	MeterProvider metric.MeterProvider

	// SchedulePeriod is accepted for compatibility: WatchPlans no longer runs cycles on a
	// period (see WatchPlans); 0 means DefaultSchedulePeriod.
	SchedulePeriod time.Duration
	// WatchDebounce is the shortest time between the starts of two change-triggered cycles
	// of a watch (see WatchPlans); 0 means DefaultWatchDebounce.
	WatchDebounce time.Duration

	// Reads makes the reads of a replicated Store linearizable (engine/durable's Node); nil
	// with a store in memory.
	Reads ReadGate
	// ForwardReads, if set (with Reads), lets a member that does not lead forward a default
	// read or dry run to the leader, with the caller's bearer token, instead of answering
	// NOT_LEADER. Leave it nil when callers authenticate with client certificates, which
	// cannot be forwarded.
	ForwardReads ReadForwarder

	// Limits bound requests and clusters; zero fields take DefaultLimits.
	Limits Limits

	// MaxConcurrentCycles is how many cycles run at once, across clusters (see admission.go:
	// slots go to the cluster with the least recent usage, and long cycles give way to
	// lighter clusters' calls); 0 means GOMAXPROCS, a negative value no admission at all.
	MaxConcurrentCycles int
	// CycleQuantum is how long a cycle runs between two checkpoints; 0 means
	// DefaultCycleQuantum.
	CycleQuantum time.Duration
	// MaxQueuedCycles is how many cycle calls one cluster may have waiting or running; 0
	// means DefaultMaxQueuedCycles.
	MaxQueuedCycles int
	// CycleShare is the share of the time a cycle of a heavy cluster runs while a lighter
	// cluster is active (admission.go); 0 means DefaultCycleShare, 1 no limit.
	CycleShare float64
	// BackgroundDryRuns runs a dry run admitted while a lighter cluster is active at the
	// operating system's idle priority (admission.go, rule 5).
	BackgroundDryRuns bool
}

// DefaultMaxRecvBytes is the default bound on a received message: 16 MiB.
const DefaultMaxRecvBytes = 16 << 20

// Server implements sluice.v1.ClusterStateService and sluice.v1.SchedulerService over a
// state store and an engine. It is safe for concurrent use.
type Server struct {
	store  *state.Store
	engine *engine.Engine
	log    *slog.Logger
	clock  func() time.Time
	health *health.Server

	// done is closed by Shutdown; streams end when it is.
	done     chan struct{}
	shutOnce sync.Once

	reads          ReadGate
	forward        *forwarder
	limits         Limits
	auth           atomic.Pointer[Authenticator]
	limiter        *clientLimiter
	maxRecv        int
	maxResync      int
	tp             trace.TracerProvider
	mp             metric.MeterProvider
	tracer         trace.Tracer
	metrics        *metrics
	schedulePeriod time.Duration
	watchDebounce  time.Duration
	changes        *changeHub
	watches        *watchRegistry
	admission      *admission
	// backgroundDryRuns: see Options.BackgroundDryRuns.
	backgroundDryRuns bool
	sampler           *logSampler
	slowCall          time.Duration
	accessLog         bool
	summary           summary

	// locks serialize the service's writes to a cluster, cycles its cycles that may be
	// committed and dryCycles its dry runs; a cluster's lock exists only while it is held or
	// waited for.
	locks, cycles, dryCycles keylock.Map
	// gens counts each cluster's deletions (its generation) while Sync streams of it are
	// open, so that a stream can tell that the state it streams deltas of is gone.
	gens generations
}

// New returns a server over the store and engine of opts. It panics if either is missing.
func New(opts Options) *Server {
	if opts.Store == nil || opts.Engine == nil {
		panic("service: Options.Store and Options.Engine are required")
	}
	s := &Server{
		backgroundDryRuns: opts.BackgroundDryRuns,
		store:             opts.Store,
		engine:            opts.Engine,
		log:               opts.Logger,
		clock:             opts.Clock,
		health:            health.NewServer(),
		done:              make(chan struct{}),

		reads:          opts.Reads,
		limits:         opts.Limits.withDefaults(),
		maxRecv:        opts.MaxRecvBytes,
		maxResync:      opts.MaxResyncBytes,
		tp:             opts.TracerProvider,
		mp:             opts.MeterProvider,
		schedulePeriod: opts.SchedulePeriod,
		watchDebounce:  opts.WatchDebounce,
		changes:        newChangeHub(),
		watches:        newWatchRegistry(opts.Limits.withDefaults().MaxDryRunWatches),
		sampler:        newLogSampler(time.Now),
		slowCall:       opts.SlowCall,
		accessLog:      opts.AccessLog,
	}
	s.auth.Store(opts.Auth)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	// No value a caller sends makes a log line longer than the limit.
	s.log = slog.New(LimitValues(s.log.Handler(), 0))
	if opts.ForwardReads != nil && opts.Reads != nil {
		s.forward = &forwarder{dial: opts.ForwardReads}
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.slowCall == 0 {
		s.slowCall = DefaultSlowCall
	}
	if s.maxRecv <= 0 {
		s.maxRecv = DefaultMaxRecvBytes
	}
	if s.maxResync <= 0 {
		s.maxResync = DefaultMaxResyncBytes
	}
	if s.schedulePeriod <= 0 {
		s.schedulePeriod = DefaultSchedulePeriod
	}
	s.schedulePeriod = max(s.schedulePeriod, MinWatchPeriod)
	if s.watchDebounce <= 0 {
		s.watchDebounce = DefaultWatchDebounce
	}
	tp := s.tp
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	s.tracer = tp.Tracer(instrumentationName)
	exists := func(c string) bool { return s.store.Snapshot(c).Exists() }
	m, err := newMetrics(s.mp, s.engine, exists)
	if err != nil {
		s.log.Error("metrics disabled", "error", err.Error())
		m, _ = newMetrics(nil, s.engine, exists)
	}
	s.metrics = m
	s.admission = newAdmission(opts.MaxConcurrentCycles, opts.CycleQuantum, opts.MaxQueuedCycles, opts.CycleShare, nil)
	if s.admission != nil {
		s.admission.exists = exists
		if err := s.admission.instrument(s.mp); err != nil {
			s.log.Error("admission metrics disabled", "error", err.Error())
			_ = s.admission.instrument(nil)
		}
	}
	if opts.RateLimit > 0 {
		s.limiter = newClientLimiter(opts.RateLimit, opts.RateBurst, time.Now)
	}
	for _, name := range []string{"", sluicev1.ClusterStateService_ServiceDesc.ServiceName, sluicev1.SchedulerService_ServiceDesc.ServiceName} {
		s.health.SetServingStatus(name, healthpb.HealthCheckResponse_SERVING)
	}
	return s
}

// Register registers the cluster state and scheduler services on r. Health and reflection
// are added by NewGRPCServer.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	sluicev1.RegisterClusterStateServiceServer(r, &clusterState{s: s})
	sluicev1.RegisterSchedulerServiceServer(r, &scheduler{s: s})
}

// Health returns the server's health service, which reports SERVING for "" and both service
// names until Shutdown.
func (s *Server) Health() *health.Server { return s.health }

// Shutdown starts draining: health turns NOT_SERVING and every Sync and WatchPlans stream
// ends with UNAVAILABLE "server shutting down" (a WatchPlans stream after the cycle in
// progress and its plan), so that a following grpc.Server.GracefulStop does not wait for them.
// Unary calls in progress finish. It is safe to call more than once.
func (s *Server) Shutdown() {
	s.shutOnce.Do(func() {
		s.health.Shutdown()
		close(s.done)
		if s.forward != nil {
			s.forward.close()
		}
	})
}

// generations counts the deletions of the clusters that Sync streams are open on: a
// cluster's count exists from the first stream's hello to the last stream's end, so that
// it costs nothing for the clusters nobody streams.
type generations struct {
	mu sync.Mutex
	m  map[string]*generation
}

type generation struct {
	n    uint64
	refs int
}

// open registers a Sync stream of a cluster and returns the cluster's generation.
func (g *generations) open(cluster string) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.m == nil {
		g.m = map[string]*generation{}
	}
	e, ok := g.m[cluster]
	if !ok {
		e = &generation{}
		g.m[cluster] = e
	}
	e.refs++
	return e.n
}

// close ends a stream that open registered.
func (g *generations) close(cluster string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.m[cluster]; ok {
		if e.refs--; e.refs <= 0 {
			delete(g.m, cluster)
		}
	}
}

// current returns a cluster's generation (0 when no stream of it is open).
func (g *generations) current(cluster string) uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.m[cluster]; ok {
		return e.n
	}
	return 0
}

// bump moves a cluster's generation on (a delete), for the streams open on it.
func (g *generations) bump(cluster string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.m[cluster]; ok {
		e.n++
	}
}

// lockCluster serializes the service's writes to one cluster, so that a batch is applied
// to the generation of the cluster it was checked against (a DeleteCluster in between makes
// a Sync stream resync). It returns the unlock function.
func (s *Server) lockCluster(cluster string) func() { return s.locks.Lock(cluster) }

// existing returns a snapshot of a cluster that exists, or a *state.ClusterNotFoundError:
// reads of a cluster no batch created answer NOT_FOUND and keep nothing.
func (s *Server) existing(cluster string) (*state.Snapshot, error) {
	snap := s.store.Snapshot(cluster)
	if !snap.Exists() {
		return nil, &state.ClusterNotFoundError{Cluster: cluster}
	}
	return snap, nil
}

// checkCluster validates a request's cluster name into fe and adds it to the call's log
// fields.
func (s *Server) checkCluster(ctx context.Context, fe *fieldErrors, field, cluster string) {
	checkCluster(fe, field, cluster)
	if cluster != "" {
		if len(cluster) > 64 {
			cluster = cluster[:64] + "..."
		}
		logging.AddFields(ctx, logging.Fields{"cluster", cluster})
	}
}

// NewGRPCServer returns a gRPC server with s registered, the interceptor chain, the health
// service and reflection. opts are appended to the server's own options (transport
// credentials, keepalive, further interceptors, which run inside the server's own).
//
// The otelgrpc stats handler (when Options give a tracer or meter provider) traces and
// measures every call. The interceptor chain, outermost first:
//
//   - logging: one slog line per call ("finished call"), with method, code, duration, and the
//     cluster, plan and client the handlers and the authentication add, at the level of
//     callLevel (debug for calls that went as the client expects), sampled at info and above;
//   - panic recovery: a panic becomes INTERNAL and is logged with its stack, and the server
//     keeps serving (inside logging, so that the log line shows the INTERNAL code);
//   - the slow-call line (Options.SlowCall), for unary calls; the open-streams gauge, for
//     streaming calls;
//   - admission (admit): authentication (Options.Auth: a bearer token or a client
//     certificate) and the per-client rate limit (Options.RateLimit), which every call
//     passes, authenticated or not: an identity's calls are charged to it, calls that fail
//     to authenticate to their peer address;
//   - authorization: the method's needs (write, admin) and the cluster of every request
//     (and of every message a stream receives); health and reflection are open;
//   - fair admission of cycles (admission.go): a call, or a Sync message until its answer,
//     counts as its cluster's work in progress, which heavier clusters' cycles give way to.
//
// Lines of calls refused for their credentials or rate (UNAUTHENTICATED, PERMISSION_DENIED,
// RESOURCE_EXHAUSTED) are themselves rate-limited, other lines at info and above are sampled
// per method and code, and every log line is bounded (LimitValues: values cut to
// DefaultMaxLogValueBytes, at most 32 attributes).
//
// Request validation happens in the handlers, in one place (validate.go). Messages larger
// than Options.MaxRecvBytes are refused by gRPC.
func NewGRPCServer(s *Server, opts ...grpc.ServerOption) *grpc.Server {
	logOpts := []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithLevels(s.callLevel),
		logging.WithFieldsFromContext(traceFields),
	}
	logger := s.callLogger()
	rec := recovery.WithRecoveryHandlerContext(s.recovered)
	unary := []grpc.UnaryServerInterceptor{
		logging.UnaryServerInterceptor(logger, logOpts...),
		recovery.UnaryServerInterceptor(rec),
		s.slowUnary,
	}
	stream := []grpc.StreamServerInterceptor{
		logging.StreamServerInterceptor(logger, logOpts...),
		recovery.StreamServerInterceptor(rec),
		s.countStreams,
	}
	unary = append(unary, s.admitUnary, s.gateReads)
	stream = append(stream, s.admitStream)
	if s.admission != nil {
		unary = append(unary, s.admission.admitUnary)
		stream = append(stream, s.admission.admitStream)
	}
	all := []grpc.ServerOption{
		vtcodec.ServerOption(),
		grpc.MaxRecvMsgSize(s.maxRecv),
		grpc.ChainUnaryInterceptor(unary...),
		grpc.ChainStreamInterceptor(stream...),
	}
	if s.tp != nil || s.mp != nil {
		hopts := []otelgrpc.Option{
			otelgrpc.WithPropagators(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})),
			otelgrpc.WithFilter(func(info *stats.RPCTagInfo) bool { return !openMethod(info.FullMethodName) }),
		}
		if s.tp != nil {
			hopts = append(hopts, otelgrpc.WithTracerProvider(s.tp))
		}
		if s.mp != nil {
			hopts = append(hopts, otelgrpc.WithMeterProvider(s.mp))
		}
		all = append(all, grpc.StatsHandler(otelgrpc.NewServerHandler(hopts...)))
	}
	gs := grpc.NewServer(append(all, opts...)...)
	s.Register(gs)
	healthpb.RegisterHealthServer(gs, s.health)
	reflection.Register(gs)
	return gs
}

// traceFields adds the trace id of a traced call to its log line.
func traceFields(ctx context.Context) logging.Fields {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return logging.Fields{"trace_id", sc.TraceID().String()}
	}
	return nil
}

// countStreams keeps the open-streams gauge.
func (s *Server) countStreams(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, next grpc.StreamHandler) error {
	if openMethod(info.FullMethod) {
		return next(srv, ss)
	}
	attrs := metric.WithAttributes(attribute.String("method", shortMethod(info.FullMethod)))
	s.metrics.streams.Add(ss.Context(), 1, attrs)
	defer s.metrics.streams.Add(context.Background(), -1, attrs)
	return next(srv, ss)
}

// recovered turns a handler's panic into INTERNAL, logging the value and the stack.
func (s *Server) recovered(ctx context.Context, p any) error {
	s.log.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
	return withInfo(codes.Internal, ReasonInternal, "internal error")
}

// codeToLevel logs calls that went as a client expects at debug (a missing object, a plan
// conflict, a resync: outcomes of the protocol), calls an operator may have to act on at info
// (a malformed request or batch, refused credentials, limits, a follower asked to write),
// deadlines at warn and server failures at error.
func codeToLevel(c codes.Code) logging.Level {
	switch c {
	case codes.OK, codes.Canceled, codes.NotFound, codes.AlreadyExists, codes.FailedPrecondition,
		codes.Aborted, codes.OutOfRange:
		return logging.LevelDebug
	case codes.InvalidArgument, codes.Unauthenticated, codes.PermissionDenied, codes.ResourceExhausted,
		codes.Unavailable:
		return logging.LevelInfo
	case codes.DeadlineExceeded:
		return logging.LevelWarn
	}
	return logging.LevelError
}

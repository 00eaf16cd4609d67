package service

import (
	"context"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/recovery"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Options configure a Server.
type Options struct {
	// Store holds the clusters' state. Required.
	Store *state.Store
	// Engine runs cycles on Store and keeps plans. Required.
	Engine *engine.Engine
	// Logger receives the service's logs; nil discards them.
	Logger *slog.Logger
	// Clock is the wall clock used for the defaults that depend on time (a job's creation
	// time, a task's start time); nil means time.Now.
	Clock func() time.Time
}

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

	mu    sync.Mutex
	locks map[string]*sync.Mutex
}

// New returns a server over the store and engine of opts. It panics if either is missing.
func New(opts Options) *Server {
	if opts.Store == nil || opts.Engine == nil {
		panic("service: Options.Store and Options.Engine are required")
	}
	s := &Server{
		store:  opts.Store,
		engine: opts.Engine,
		log:    opts.Logger,
		clock:  opts.Clock,
		health: health.NewServer(),
		done:   make(chan struct{}),
		locks:  map[string]*sync.Mutex{},
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.clock == nil {
		s.clock = time.Now
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
// ends with UNAVAILABLE, so that a following grpc.Server.GracefulStop does not wait for them.
// Unary calls in progress finish. It is safe to call more than once.
func (s *Server) Shutdown() {
	s.shutOnce.Do(func() {
		s.health.Shutdown()
		close(s.done)
	})
}

// lockCluster serializes the service's writes to one cluster, so that a batch's
// snapshot-dependent checks (deletes of missing objects, defaults from the stored objects)
// hold until the batch is applied. It returns the unlock function.
func (s *Server) lockCluster(cluster string) func() {
	s.mu.Lock()
	l, ok := s.locks[cluster]
	if !ok {
		l = &sync.Mutex{}
		s.locks[cluster] = l
	}
	s.mu.Unlock()
	l.Lock()
	return l.Unlock
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
// service and reflection. opts are appended to the server's own options.
//
// The chain, outermost first: logging (one slog line per call, with method, cluster, code
// and duration), then panic recovery (a panic becomes INTERNAL and is logged with its stack;
// the server keeps serving). Recovery sits inside logging so that the log line of a call
// that panicked shows its INTERNAL code.
func NewGRPCServer(s *Server, opts ...grpc.ServerOption) *grpc.Server {
	logOpts := []logging.Option{
		logging.WithLogOnEvents(logging.FinishCall),
		logging.WithLevels(codeToLevel),
	}
	logger := slogAdapter(s.log)
	rec := recovery.WithRecoveryHandlerContext(s.recovered)
	all := append([]grpc.ServerOption{
		grpc.ChainUnaryInterceptor(
			logging.UnaryServerInterceptor(logger, logOpts...),
			recovery.UnaryServerInterceptor(rec),
		),
		grpc.ChainStreamInterceptor(
			logging.StreamServerInterceptor(logger, logOpts...),
			recovery.StreamServerInterceptor(rec),
		),
	}, opts...)
	gs := grpc.NewServer(all...)
	s.Register(gs)
	healthpb.RegisterHealthServer(gs, s.health)
	reflection.Register(gs)
	return gs
}

// recovered turns a handler's panic into INTERNAL, logging the value and the stack.
func (s *Server) recovered(ctx context.Context, p any) error {
	s.log.ErrorContext(ctx, "panic in handler", "panic", p, "stack", string(debug.Stack()))
	return withInfo(codes.Internal, ReasonInternal, "internal error")
}

// slogAdapter makes a slog.Logger a go-grpc-middleware logger.
func slogAdapter(l *slog.Logger) logging.Logger {
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		l.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}

// codeToLevel logs client mistakes at info and server failures at error.
func codeToLevel(c codes.Code) logging.Level {
	switch c {
	case codes.OK, codes.Canceled, codes.InvalidArgument, codes.NotFound, codes.AlreadyExists,
		codes.FailedPrecondition, codes.Aborted, codes.OutOfRange, codes.Unauthenticated,
		codes.PermissionDenied, codes.ResourceExhausted, codes.Unavailable:
		return logging.LevelInfo
	case codes.DeadlineExceeded:
		return logging.LevelWarn
	}
	return logging.LevelError
}

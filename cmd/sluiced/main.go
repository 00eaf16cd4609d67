// Command sluiced is the Sluice scheduling-decision server: it serves the sluice.v1 gRPC API
// (cluster state and scheduler services, health and reflection) and an admin HTTP port with
// /healthz, /readyz and /metrics (Prometheus).
//
// Usage:
//
//	sluiced [--listen 127.0.0.1:50051] [--admin-listen 127.0.0.1:9090]
//	        [--config scheduler.yaml] [--plan-ttl 60s] [--schedule-period 1s]
//	        [--tls-cert FILE --tls-key FILE [--client-ca FILE]] [--tokens FILE] [--insecure]
//	        [--rate-limit 1000] [--rate-burst 2000] [--max-recv-bytes 16777216]
//	        [--otlp-endpoint HOST:PORT|URL [--otlp-insecure]]
//	        [--log-level info] [--shutdown-timeout 10s]
//
// The scheduler configuration (Volcano's scheduler-conf YAML) is validated at start; without
// --config the embedded default is used. The --config file is reloaded on SIGHUP and when its
// modification time changes (checked every 2 seconds): a configuration that does not validate
// is refused, with the reason in the log, and the previous one stays in force.
//
// Without credentials (--tokens or --client-ca) the server refuses to listen on an address
// that is not loopback, unless --insecure. Logs are JSON lines on stderr. On SIGTERM or SIGINT
// the server drains: health turns NOT_SERVING, it stops accepting calls, cycles in progress
// finish, Sync and WatchPlans streams end with UNAVAILABLE "server shutting down", calls in
// progress get --shutdown-timeout to finish, and the process exits 0.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/service"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stderr, wiring{}))
}

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// configPollInterval is how often the --config file's modification time is checked.
const configPollInterval = 2 * time.Second

// wiring lets tests replace what main takes from the build: the registry's contents, and a
// hook told the bound addresses once the server is up.
type wiring struct {
	// register fills the registry; nil means every built-in action and plugin.
	register func(*framework.Registry)
	// ready, if set, is called with the gRPC and admin addresses once both listen.
	ready func(grpcAddr, adminAddr string)
	// tracerProvider, if set, replaces the OTLP exporter (tests use an in-memory one).
	tracerProvider trace.TracerProvider
	// hangup, if set, replaces SIGHUP as the signal to reload the configuration.
	hangup chan os.Signal
	// configPoll, if set, replaces configPollInterval.
	configPoll time.Duration
}

// options are the command-line flags.
type options struct {
	listen, adminListen string
	configPath          string
	planTTL             time.Duration
	schedulePeriod      time.Duration
	shutdownTimeout     time.Duration
	logLevel            slog.Level

	tlsCert, tlsKey, clientCA string
	tokensPath                string
	insecure                  bool

	rateLimit    float64
	rateBurst    int
	maxRecvBytes int

	otlpEndpoint string
	otlpInsecure bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("sluiced", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:50051", "gRPC listen address")
	fs.StringVar(&o.adminListen, "admin-listen", "127.0.0.1:9090", "admin HTTP listen address (/healthz, /readyz, /metrics)")
	fs.StringVar(&o.configPath, "config", "", "scheduler configuration file (Volcano scheduler-conf YAML), reloaded on SIGHUP and on change; empty uses the embedded default")
	fs.DurationVar(&o.planTTL, "plan-ttl", 60*time.Second, "how long a proposed plan waits for a commit")
	fs.DurationVar(&o.schedulePeriod, "schedule-period", service.DefaultSchedulePeriod, "longest time between WatchPlans cycles when the request gives no period (Volcano's schedule-period)")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", service.GracefulStopTimeout, "how long a shutdown waits for calls in progress")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "TLS certificate file (PEM); serve TLS with --tls-key")
	fs.StringVar(&o.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&o.clientCA, "client-ca", "", "CA certificates (PEM) that sign client certificates: require mTLS")
	fs.StringVar(&o.tokensPath, "tokens", "", "bearer tokens file (YAML or JSON list of {name, token or sha256, clusters, admin, read_only})")
	fs.BoolVar(&o.insecure, "insecure", false, "serve without credentials on an address that is not loopback")
	fs.Float64Var(&o.rateLimit, "rate-limit", 1000, "calls per second each client may make (a stream counts once); 0 disables")
	fs.IntVar(&o.rateBurst, "rate-burst", 2000, "calls a client may make at once above its rate")
	fs.IntVar(&o.maxRecvBytes, "max-recv-bytes", service.DefaultMaxRecvBytes, "largest message the server accepts, in bytes")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "export traces over OTLP/gRPC to HOST:PORT or a URL (http:// for plaintext); empty exports none")
	fs.BoolVar(&o.otlpInsecure, "otlp-insecure", false, "export OTLP traces to HOST:PORT without TLS")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("--log-level: %w", err)
	}
	switch {
	case o.planTTL <= 0:
		return o, fmt.Errorf("--plan-ttl must be positive, got %s", o.planTTL)
	case o.shutdownTimeout <= 0:
		return o, fmt.Errorf("--shutdown-timeout must be positive, got %s", o.shutdownTimeout)
	case o.schedulePeriod < service.MinWatchPeriod:
		return o, fmt.Errorf("--schedule-period must be at least %s, got %s", service.MinWatchPeriod, o.schedulePeriod)
	case (o.tlsCert == "") != (o.tlsKey == ""):
		return o, errors.New("--tls-cert and --tls-key go together")
	case o.clientCA != "" && o.tlsCert == "":
		return o, errors.New("--client-ca needs TLS: give --tls-cert and --tls-key too")
	case o.rateLimit < 0:
		return o, fmt.Errorf("--rate-limit must not be negative, got %g", o.rateLimit)
	case o.rateBurst < 0:
		return o, fmt.Errorf("--rate-burst must not be negative, got %d", o.rateBurst)
	case o.maxRecvBytes <= 0:
		return o, fmt.Errorf("--max-recv-bytes must be positive, got %d", o.maxRecvBytes)
	}
	return o, nil
}

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stderr io.Writer, w wiring) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "sluiced: %v\n", err)
		return exitUsage
	}
	log := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}))
	if err := serve(ctx, o, log, w); err != nil {
		log.Error("sluiced failed", "error", err.Error())
		return exitError
	}
	return exitOK
}

// serve wires the server, serves until ctx ends or a signal arrives, and drains.
func serve(ctx context.Context, o options, log *slog.Logger, w wiring) error {
	ctx, stopSignals := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stopSignals()

	if err := checkExposure(o); err != nil {
		return err
	}
	var cfgInfo os.FileInfo
	if o.configPath != "" {
		// Taken before the read, so that a change made meanwhile is seen as one.
		cfgInfo, _ = os.Stat(o.configPath)
	}
	cfg, cfgText, err := loadConfig(o.configPath)
	if err != nil {
		return err
	}
	reg := service.NewRegistry()
	if w.register != nil {
		reg = framework.NewRegistry()
		w.register(reg)
	}

	srvOpts := service.Options{
		Logger:         log,
		RateLimit:      o.rateLimit,
		RateBurst:      o.rateBurst,
		MaxRecvBytes:   o.maxRecvBytes,
		SchedulePeriod: o.schedulePeriod,
	}
	var grpcOpts []grpc.ServerOption
	if o.tlsCert != "" {
		tlsCfg, err := service.ServerTLSConfig(o.tlsCert, o.tlsKey, o.clientCA)
		if err != nil {
			return fmt.Errorf("--tls-cert/--tls-key/--client-ca: %w", err)
		}
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(tlsCfg)))
	}
	if o.tokensPath != "" || o.clientCA != "" {
		var entries []service.TokenEntry
		if o.tokensPath != "" {
			if entries, err = service.LoadTokens(o.tokensPath); err != nil {
				return fmt.Errorf("--tokens: %w", err)
			}
		}
		// mTLS without a tokens file: the client CA is the authority, and every client it
		// signed has full access.
		anyCert := o.clientCA != "" && o.tokensPath == ""
		if srvOpts.Auth, err = service.NewAuthenticator(entries, anyCert); err != nil {
			return fmt.Errorf("--tokens: %w", err)
		}
	}

	mp, metricsHandler, err := service.NewPrometheusMetrics()
	if err != nil {
		return err
	}
	defer shutdownWithin(o.shutdownTimeout, mp.Shutdown)
	srvOpts.MeterProvider = mp
	switch {
	case w.tracerProvider != nil:
		srvOpts.TracerProvider = w.tracerProvider
	case o.otlpEndpoint != "":
		tp, err := otlpTracerProvider(ctx, o)
		if err != nil {
			return fmt.Errorf("--otlp-endpoint: %w", err)
		}
		defer shutdownWithin(o.shutdownTimeout, tp.Shutdown)
		srvOpts.TracerProvider = tp
	}

	store := state.New()
	eng, err := engine.New(store, engine.Options{Registry: reg, DefaultConfig: cfg, PlanTTL: o.planTTL, Logger: log})
	if err != nil {
		return fmt.Errorf("scheduler configuration %s: %w", configName(o.configPath), err)
	}
	srvOpts.Store, srvOpts.Engine = store, eng
	srv := service.New(srvOpts)
	gs := service.NewGRPCServer(srv, grpcOpts...)

	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	adminLis, err := net.Listen("tcp", o.adminListen)
	if err != nil {
		lis.Close()
		return fmt.Errorf("--admin-listen: %w", err)
	}
	var draining atomic.Bool
	admin := &http.Server{Handler: adminMux(metricsHandler, &draining), ReadHeaderTimeout: 5 * time.Second}

	errc := make(chan error, 2)
	go func() { errc <- gs.Serve(lis) }()
	go func() {
		if err := admin.Serve(adminLis); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("admin server: %w", err)
		}
	}()
	hup := w.hangup
	if hup == nil {
		hup = make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		defer signal.Stop(hup)
	}
	reloadCtx, stopReload := context.WithCancel(ctx)
	reloadDone := make(chan struct{})
	go func() {
		defer close(reloadDone)
		watchConfig(reloadCtx, o.configPath, cfgInfo, cfgText, srv, log, hup, w.configPoll)
	}()
	log.Info("sluiced serving", "listen", lis.Addr().String(), "admin_listen", adminLis.Addr().String(),
		"config", configName(o.configPath), "plan_ttl", o.planTTL.String(), "schedule_period", o.schedulePeriod.String(),
		"tls", o.tlsCert != "", "mtls", o.clientCA != "", "tokens", o.tokensPath != "",
		"rate_limit", o.rateLimit, "rate_burst", o.rateBurst, "otlp", o.otlpEndpoint != "")
	if o.tokensPath != "" && o.tlsCert == "" && !isLoopback(o.listen) {
		log.Warn("bearer tokens travel in clear text on a non-loopback address: serve TLS with --tls-cert and --tls-key")
	}
	if o.insecure && o.tokensPath == "" && o.clientCA == "" && !isLoopback(o.listen) {
		log.Warn("serving without credentials (--insecure): anyone who can reach the port can change clusters and configurations")
	}
	if w.ready != nil {
		w.ready(lis.Addr().String(), adminLis.Addr().String())
	}

	var serveErr error
	select {
	case <-ctx.Done():
		log.Info("shutting down", "reason", context.Cause(ctx).Error())
	case serveErr = <-errc:
		log.Error("server stopped", "error", serveErr.Error())
	}
	stopReload()
	<-reloadDone
	draining.Store(true)
	srv.Shutdown()
	service.GracefulStop(gs, o.shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	if err := admin.Shutdown(sctx); err != nil {
		admin.Close()
	}
	log.Info("stopped")
	return serveErr
}

// checkExposure refuses to serve without credentials on an address that is not loopback,
// unless --insecure.
func checkExposure(o options) error {
	if o.insecure || o.tokensPath != "" || o.clientCA != "" || isLoopback(o.listen) {
		return nil
	}
	return fmt.Errorf("refusing to serve %s without credentials: anyone who can reach it could change "+
		"clusters and configurations; give --tokens FILE and/or --client-ca FILE (with --tls-cert and --tls-key), "+
		"listen on a loopback address, or pass --insecure to serve anyway", o.listen)
}

// isLoopback reports whether a listen address binds only loopback interfaces.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// otlpTracerProvider exports spans in batches over OTLP/gRPC.
func otlpTracerProvider(ctx context.Context, o options) (*sdktrace.TracerProvider, error) {
	var opts []otlptracegrpc.Option
	if strings.Contains(o.otlpEndpoint, "://") {
		if _, err := url.Parse(o.otlpEndpoint); err != nil {
			return nil, err
		}
		opts = append(opts, otlptracegrpc.WithEndpointURL(o.otlpEndpoint))
	} else {
		opts = append(opts, otlptracegrpc.WithEndpoint(o.otlpEndpoint))
		if o.otlpInsecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
	}
	exp, err := otlptracegrpc.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(semconv.ServiceName("sluiced")))
	if err != nil {
		res = resource.Default()
	}
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res)), nil
}

// shutdownWithin calls a provider's Shutdown with a deadline.
func shutdownWithin(d time.Duration, shutdown func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	_ = shutdown(ctx)
}

// watchConfig reloads the --config file on SIGHUP (hup) and when its modification time or
// size changes (checked every poll), until ctx ends. A configuration that does not validate
// is refused and logged; the previous one stays in force.
func watchConfig(ctx context.Context, path string, last os.FileInfo, lastText []byte, srv *service.Server, log *slog.Logger,
	hup <-chan os.Signal, poll time.Duration) {
	if path == "" {
		for {
			select {
			case <-ctx.Done():
				return
			case <-hup:
				log.Warn("SIGHUP: no --config file to reload")
			}
		}
	}
	if poll <= 0 {
		poll = configPollInterval
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	reload := func(why string) {
		text, err := os.ReadFile(path)
		if err != nil {
			log.Error("scheduler configuration not reloaded; keeping the previous one", "config", path, "trigger", why, "reason", err.Error())
			return
		}
		if why == "file changed" && bytes.Equal(text, lastText) {
			return
		}
		lastText = text
		if err := srv.ReloadConfig(text); err != nil {
			log.Error("scheduler configuration refused; keeping the previous one", "config", path, "trigger", why, "reason", err.Error())
			return
		}
		log.Info("scheduler configuration reloaded", "config", path, "trigger", why)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			last, _ = os.Stat(path)
			reload("SIGHUP")
		case <-tick.C:
			fi, err := os.Stat(path)
			if err != nil {
				continue
			}
			if last != nil && fi.ModTime().Equal(last.ModTime()) && fi.Size() == last.Size() {
				continue
			}
			last = fi
			reload("file changed")
		}
	}
}

// loadConfig reads and parses the scheduler configuration file, and returns it with its
// text; nil (the embedded default) when path is empty. The engine validates it against the
// registry.
func loadConfig(path string) (*conf.Config, []byte, error) {
	if path == "" {
		return nil, nil, nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, fmt.Errorf("--config: %w", err)
	}
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return cfg, text, nil
}

func configName(path string) string {
	if path == "" {
		return "(embedded default)"
	}
	return path
}

// adminMux serves /healthz (the process is up), /readyz (not draining) and /metrics.
func adminMux(metrics http.Handler, draining *atomic.Bool) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if draining.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "shutting down")
			return
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.Handle("GET /metrics", metrics)
	return mux
}

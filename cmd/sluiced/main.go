// Command sluiced is the Sluice scheduling-decision server: it serves the sluice.v1 gRPC API
// (cluster state and scheduler services, health and reflection) and an admin HTTP port with
// /healthz.
//
// Usage:
//
//	sluiced [--listen 127.0.0.1:50051] [--admin-listen 127.0.0.1:9090]
//	        [--config scheduler.yaml] [--plan-ttl 60s] [--log-level info]
//
// The scheduler configuration (Volcano's scheduler-conf YAML) is validated at start; without
// --config the embedded default is used. Logs are JSON lines on stderr. On SIGTERM or SIGINT
// the server drains: health turns NOT_SERVING, Sync and WatchPlans streams end with
// UNAVAILABLE, calls in progress get --shutdown-timeout to finish, and the process exits 0.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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

// wiring lets tests replace what main takes from the build: the registry's contents, and a
// hook told the bound addresses once the server is up.
type wiring struct {
	// register fills the registry; nil means every built-in action and plugin.
	register func(*framework.Registry)
	// ready, if set, is called with the gRPC and admin addresses once both listen.
	ready func(grpcAddr, adminAddr string)
}

// options are the command-line flags.
type options struct {
	listen, adminListen string
	configPath          string
	planTTL             time.Duration
	shutdownTimeout     time.Duration
	logLevel            slog.Level
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("sluiced", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:50051", "gRPC listen address")
	fs.StringVar(&o.adminListen, "admin-listen", "127.0.0.1:9090", "admin HTTP listen address (/healthz)")
	fs.StringVar(&o.configPath, "config", "", "scheduler configuration file (Volcano scheduler-conf YAML); empty uses the embedded default")
	fs.DurationVar(&o.planTTL, "plan-ttl", 60*time.Second, "how long a proposed plan waits for a commit")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", service.GracefulStopTimeout, "how long a shutdown waits for calls in progress")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("--log-level: %w", err)
	}
	if o.planTTL <= 0 {
		return o, fmt.Errorf("--plan-ttl must be positive, got %s", o.planTTL)
	}
	if o.shutdownTimeout <= 0 {
		return o, fmt.Errorf("--shutdown-timeout must be positive, got %s", o.shutdownTimeout)
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

	cfg, err := loadConfig(o.configPath)
	if err != nil {
		return err
	}
	reg := service.NewRegistry()
	if w.register != nil {
		reg = framework.NewRegistry()
		w.register(reg)
	}
	store := state.New()
	eng, err := engine.New(store, engine.Options{Registry: reg, DefaultConfig: cfg, PlanTTL: o.planTTL, Logger: log})
	if err != nil {
		return fmt.Errorf("scheduler configuration %s: %w", configName(o.configPath), err)
	}
	srv := service.New(service.Options{Store: store, Engine: eng, Logger: log})
	gs := service.NewGRPCServer(srv)

	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	adminLis, err := net.Listen("tcp", o.adminListen)
	if err != nil {
		lis.Close()
		return fmt.Errorf("--admin-listen: %w", err)
	}
	admin := &http.Server{Handler: adminMux(), ReadHeaderTimeout: 5 * time.Second}

	errc := make(chan error, 2)
	go func() { errc <- gs.Serve(lis) }()
	go func() {
		if err := admin.Serve(adminLis); !errors.Is(err, http.ErrServerClosed) {
			errc <- fmt.Errorf("admin server: %w", err)
		}
	}()
	log.Info("sluiced serving", "listen", lis.Addr().String(), "admin_listen", adminLis.Addr().String(),
		"config", configName(o.configPath), "plan_ttl", o.planTTL.String())
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

// loadConfig reads and parses the scheduler configuration file; nil (the embedded default)
// when path is empty. The engine validates it against the registry.
func loadConfig(path string) (*conf.Config, error) {
	if path == "" {
		return nil, nil
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return cfg, nil
}

func configName(path string) string {
	if path == "" {
		return "(embedded default)"
	}
	return path
}

// adminMux serves /healthz.
func adminMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok")
	})
	return mux
}

// Command sluiced is the Sluice scheduling-decision server: it serves the sluice.v1 gRPC API
// (cluster state and scheduler services, health and reflection) and an admin HTTP port with
// /healthz, /readyz, /metrics (Prometheus), /raft, the web UI at /ui/ and /debug/pprof/ (Go
// profiles, for admin tokens); the admin port serves HTTPS when the gRPC port serves TLS.
//
// Usage:
//
//	sluiced [--listen 127.0.0.1:50051] [--admin-listen 127.0.0.1:9090]
//	        [--config scheduler.yaml] [--plan-ttl 60s] [--schedule-period 1s]
//	        [--tls-cert FILE --tls-key FILE [--client-ca FILE]] [--tokens FILE] [--insecure]
//	        [--rate-limit 1000] [--rate-burst 2000] [--max-recv-bytes 16777216]
//	        [--max-resync-bytes 1073741824]
//	        [--max-name-bytes 253] [--max-labels 100] [--max-label-bytes 4096]
//	        [--max-config-bytes 1048576] [--max-batch-deltas 1000000]
//	        [--max-objects-per-cluster 1000000] [--max-tasks-per-job 100000] [--max-dry-run-watches 8]
//	        [--otlp-endpoint HOST:PORT|URL [--otlp-insecure]]
//	        [--max-concurrent-cycles 0] [--cycle-quantum 2ms] [--cycle-share 0.5]
//	        [--max-queued-cycles 16] [--background-dry-runs] [--gc-percent 100] [--gc-min-heap 2GiB] [--memory-limit 75%] [--pprof] [--ui] [--ui-refresh 5s] [--metrics-auth]
//	        [--log-level info] [--access-log] [--slow-call 1s] [--log-summary-period 1m]
//	        [--shutdown-timeout 10s]
//	        [--data-dir DIR [--snapshot-threshold 8192] [--snapshot-interval 5s] [--trailing-logs 10240]
//	         [--node-id ID --raft-listen HOST:PORT [--raft-advertise HOST:PORT]
//	          --raft-peers id=raftaddr@grpcaddr,... [--bootstrap] [--raft-timeout 1s]
//	          [--raft-tls | --raft-tls-cert FILE --raft-tls-key FILE --raft-tls-ca FILE]]]
//
// The scheduler configuration (Volcano's scheduler-conf YAML) is validated at start; without
// --config the embedded default is used. The --config file, the --tokens file and the TLS
// certificates (the server's and raft's) are reloaded on SIGHUP and when a file's modification
// time or size changes (checked every 2 seconds): a file that does not load is refused, with
// the reason in the log, and the previous one stays in force. A reload applies to the calls
// and connections that start after it.
//
// Without credentials (--tokens or --client-ca) the server refuses to listen on an address
// that is not loopback, unless --insecure. Logs are JSON lines on stderr, each bounded in
// size; at the default level they hold what an operator acts on (see the README). On SIGTERM or SIGINT
// the server drains: health turns NOT_SERVING, it stops accepting calls, cycles in progress
// finish, Sync and WatchPlans streams end with UNAVAILABLE "server shutting down", calls in
// progress get --shutdown-timeout to finish, and the process exits 0.
//
// Without --data-dir the state lives in memory only. With it, the state store is the state
// machine of a hashicorp/raft log kept in the directory (engine/durable): every acknowledged
// write is on disk, and a restart (even after kill -9) finds the state and revisions again.
// With --raft-listen and --raft-peers, several sluiced form a replicated cluster: the leader
// writes and schedules, and the others answer writes with UNAVAILABLE naming the leader. With
// --raft-tls (or the --raft-tls-* files) the members talk mutual TLS, and a member whose
// certificate the CA did not sign is refused.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
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
	"runtime"
	"strconv"
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
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/durable"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/internal/certs"
	"github.com/sluice-sched/sluice/internal/gcpolicy"
	"github.com/sluice-sched/sluice/internal/vtcodec"
	"github.com/sluice-sched/sluice/service"
	"github.com/sluice-sched/sluice/service/webui"
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
	plansProposed       int
	plansKept           int
	planAge             time.Duration
	schedulePeriod      time.Duration
	shutdownTimeout     time.Duration
	logLevel            slog.Level
	accessLog           bool
	slowCall            time.Duration
	logSummary          time.Duration

	tlsCert, tlsKey, clientCA string
	tokensPath                string
	insecure                  bool

	rateLimit    float64
	rateBurst    int
	maxRecvBytes int
	// maxResyncBytes bounds one chunked resync of a Sync stream.
	maxResyncBytes int
	limits         service.Limits

	maxCycles    int
	cycleQuantum time.Duration
	maxQueued    int
	cycleShare   float64
	background   bool
	// gc is the collector's policy (--gc-percent, --gc-min-heap, --memory-limit, GOGC,
	// GOMEMLIMIT).
	gc gcpolicy.Policy

	otlpEndpoint string
	otlpInsecure bool
	pprof        bool
	// ui serves the web UI on the admin listener; metricsAuth puts /metrics behind the
	// credentials (admin.go).
	ui, metricsAuth bool
	uiRefresh       time.Duration

	dataDir           string
	nodeID            string
	raftListen        string
	raftAdvertise     string
	raftPeers         []durable.Peer
	bootstrap         bool
	snapshotThreshold uint64
	snapshotInterval  time.Duration
	trailingLogs      uint64
	raftTimeout       time.Duration
	// raftTLS turns mutual TLS on between members; raftTLSFiles are its files (the
	// server's, --tls-cert, --tls-key and --client-ca, where not given).
	raftTLS      bool
	raftTLSFiles certs.Files
	// faultInjection serves PartitionPath (tests only; see checkFaultInjection).
	faultInjection bool
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("sluiced", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.listen, "listen", "127.0.0.1:50051", "gRPC listen address")
	fs.StringVar(&o.adminListen, "admin-listen", "127.0.0.1:9090", "admin HTTP listen address (/healthz, /readyz, /metrics, /raft, /ui/, /debug/pprof/); HTTPS with --tls-cert")
	fs.StringVar(&o.configPath, "config", "", "scheduler configuration file (Volcano scheduler-conf YAML), reloaded on SIGHUP and on change; empty uses the embedded default")
	fs.DurationVar(&o.planTTL, "plan-ttl", 60*time.Second, "how long a proposed plan waits for a commit")
	fs.IntVar(&o.plansProposed, "max-proposed-plans", state.DefaultMaxProposedPlans, "proposed plans a cluster may hold; a new proposal beyond it expires the oldest")
	fs.IntVar(&o.plansKept, "finished-plans-kept", state.DefaultMaxFinishedPlans, "committed, discarded and expired plans each cluster keeps (without their decisions)")
	fs.DurationVar(&o.planAge, "finished-plan-age", state.DefaultFinishedPlanAge, "how long a finished plan is kept")
	fs.DurationVar(&o.schedulePeriod, "schedule-period", service.DefaultSchedulePeriod, "accepted for compatibility (Volcano's schedule-period): WatchPlans runs cycles on changes and wake-up times, not on a period")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", service.GracefulStopTimeout, "how long a shutdown waits for calls in progress")
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&o.accessLog, "access-log", false, "log every call at info (by default calls that went as the client expects are logged at debug)")
	fs.DurationVar(&o.slowCall, "slow-call", service.DefaultSlowCall, "log unary calls that take this long or longer at warn; 0 never")
	fs.DurationVar(&o.logSummary, "log-summary-period", service.DefaultLogSummaryPeriod, "log a summary of each active cluster's cycles, binds, commits and rejections this often; 0 never")
	fs.StringVar(&o.tlsCert, "tls-cert", "", "TLS certificate file (PEM); serve TLS with --tls-key")
	fs.StringVar(&o.tlsKey, "tls-key", "", "TLS private key file (PEM)")
	fs.StringVar(&o.clientCA, "client-ca", "", "CA certificates (PEM) that sign client certificates: require mTLS")
	fs.StringVar(&o.tokensPath, "tokens", "", "bearer tokens file (YAML or JSON list of {name, token or sha256, clusters, admin, read_only})")
	fs.BoolVar(&o.insecure, "insecure", false, "serve without credentials on an address that is not loopback")
	fs.Float64Var(&o.rateLimit, "rate-limit", 1000, "calls per second each client may make (a stream counts once); 0 disables")
	fs.IntVar(&o.rateBurst, "rate-burst", 2000, "calls a client may make at once above its rate")
	fs.IntVar(&o.maxRecvBytes, "max-recv-bytes", service.DefaultMaxRecvBytes, "largest message the server accepts, in bytes")
	fs.IntVar(&o.maxResyncBytes, "max-resync-bytes", service.DefaultMaxResyncBytes, "largest chunked resync (all its chunks) a Sync stream may send, in bytes; the server holds it until the last chunk")
	def := service.DefaultLimits
	fs.IntVar(&o.limits.MaxNameBytes, "max-name-bytes", def.MaxNameBytes, "longest name (of an object, a namespace, a reference, a map key), in bytes")
	fs.IntVar(&o.limits.MaxLabels, "max-labels", def.MaxLabels, "most entries of one labels, annotations, selector, attributes or usage map of an object")
	fs.IntVar(&o.limits.MaxLabelBytes, "max-label-bytes", def.MaxLabelBytes, "longest value of a labels, annotations, selector or attributes map, in bytes")
	fs.IntVar(&o.limits.MaxConfigBytes, "max-config-bytes", def.MaxConfigBytes, "largest scheduler configuration (UpdateSchedulerConfig, a dry run's override, the --config file), in bytes")
	fs.IntVar(&o.limits.MaxBatchDeltas, "max-batch-deltas", def.MaxBatchDeltas, "most deltas of one batch or of one chunk of a resync (a replace_all batch carries the whole cluster)")
	fs.IntVar(&o.limits.MaxObjectsPerCluster, "max-objects-per-cluster", def.MaxObjectsPerCluster, "most objects (nodes, queues, jobs, tasks, ...) one cluster may hold")
	fs.IntVar(&o.limits.MaxTasksPerJob, "max-tasks-per-job", def.MaxTasksPerJob, "most tasks one job may have")
	fs.IntVar(&o.limits.MaxDryRunWatches, "max-dry-run-watches", def.MaxDryRunWatches, "most dry-run WatchPlans streams one cluster may have at once")
	fs.IntVar(&o.maxCycles, "max-concurrent-cycles", 0, "cycles run at once across clusters, granted to the least busy cluster first; 0 means one per core (GOMAXPROCS), -1 turns fair admission off")
	fs.DurationVar(&o.cycleQuantum, "cycle-quantum", service.DefaultCycleQuantum, "how long a cycle runs between checkpoints where it gives way to lighter clusters' calls")
	fs.Float64Var(&o.cycleShare, "cycle-share", service.DefaultCycleShare, "share of the time a heavy cluster's cycle runs while a lighter cluster is active (1: no limit)")
	fs.BoolVar(&o.background, "background-dry-runs", true, "run a heavy cluster's dry runs at the operating system's idle priority (Linux SCHED_IDLE) while a lighter cluster is active, so that the kernel gives a core to the lighter cluster's calls at once")
	gcPercent := fs.String("gc-percent", "", "how far the heap grows past the live data before the collector runs, in percent (GOGC; off: only --memory-limit starts a collection); default GOGC if set, else "+strconv.Itoa(gcpolicy.DefaultPercent))
	gcMinHeap := fs.String("gc-min-heap", "", "no collection starts while the heap is smaller than this: a size (2GiB), a percentage of the memory available, or none; default the smaller of 2GiB, a quarter of the memory available and half of --memory-limit")
	memoryLimit := fs.String("memory-limit", "", "soft limit of the memory the Go runtime uses (GOMEMLIMIT): a size (2GiB, 512MiB), a percentage of the machine's memory or of the cgroup's limit when lower, or none; default GOMEMLIMIT if set, else "+gcpolicy.DefaultLimit)
	fs.IntVar(&o.maxQueued, "max-queued-cycles", service.DefaultMaxQueuedCycles, "cycle calls one cluster may have waiting or running; more fail with RESOURCE_EXHAUSTED")
	fs.BoolVar(&o.pprof, "pprof", true, "serve Go profiles on the admin listener at /debug/pprof/ (admin tokens only when sluiced authenticates; without credentials only on a loopback admin address or with --insecure)")
	fs.BoolVar(&o.ui, "ui", true, "serve the read-only web UI on the admin listener at /ui/ (with --tokens or --client-ca it asks for a credential; without, it is served only on a loopback admin address or with --insecure)")
	fs.DurationVar(&o.uiRefresh, "ui-refresh", webui.DefaultRefresh, "how often the web UI's pages refresh their live parts; 0 never")
	fs.BoolVar(&o.metricsAuth, "metrics-auth", false, "with --tokens or --client-ca, /metrics needs a credential too (any token; a Prometheus scrape sends it as a bearer token)")
	fs.StringVar(&o.otlpEndpoint, "otlp-endpoint", "", "export traces over OTLP/gRPC to HOST:PORT or a URL (http:// for plaintext); empty exports none")
	fs.BoolVar(&o.otlpInsecure, "otlp-insecure", false, "export OTLP traces to HOST:PORT without TLS")
	fs.StringVar(&o.dataDir, "data-dir", "", "keep the state in this directory (a raft log and snapshots): durable across restarts; empty keeps it in memory")
	fs.StringVar(&o.nodeID, "node-id", "", "this member's id in a replicated cluster (with --raft-listen)")
	fs.StringVar(&o.raftListen, "raft-listen", "", "HOST:PORT of this member's raft transport; forms a replicated cluster with --raft-peers")
	fs.StringVar(&o.raftAdvertise, "raft-advertise", "", "raft address the other members reach this one at (default --raft-listen)")
	peers := fs.String("raft-peers", "", "the cluster's members, this one included: id=raftaddr@grpcaddr,... (grpcaddr is where followers send writers)")
	fs.BoolVar(&o.bootstrap, "bootstrap", false, "create the cluster from --raft-peers if the data directory is empty (give it to one member, or to all with the same peers)")
	fs.Uint64Var(&o.snapshotThreshold, "snapshot-threshold", 8192, "log entries between state snapshots")
	fs.DurationVar(&o.snapshotInterval, "snapshot-interval", 5*time.Second, "how often the snapshot threshold is checked (raft waits between one and two intervals)")
	fs.Uint64Var(&o.trailingLogs, "trailing-logs", 10240, "log entries kept after a snapshot, for members that lag")
	fs.DurationVar(&o.raftTimeout, "raft-timeout", time.Second, "raft heartbeat and election timeout of a replicated cluster (a leader's failure is noticed within about twice this)")
	fs.BoolVar(&o.raftTLS, "raft-tls", false, "mutual TLS between members, with the server's --tls-cert, --tls-key and --client-ca unless --raft-tls-cert, --raft-tls-key or --raft-tls-ca say otherwise")
	fs.StringVar(&o.raftTLSFiles.Cert, "raft-tls-cert", "", "this member's raft certificate (PEM; for server and client authentication); turns on --raft-tls")
	fs.StringVar(&o.raftTLSFiles.Key, "raft-tls-key", "", "the key of --raft-tls-cert (PEM)")
	fs.StringVar(&o.raftTLSFiles.CA, "raft-tls-ca", "", "CA certificates (PEM) that sign the members' raft certificates; turns on --raft-tls")
	fs.BoolVar(&o.faultInjection, "unsafe-fault-injection", false, "TESTS ONLY: serve "+PartitionPath+" on the admin listener, unauthenticated, to cut this member off from raft peers (loopback admin address and no credentials, unless --insecure)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if *peers != "" {
		ps, err := durable.ParsePeers(*peers)
		if err != nil {
			return o, fmt.Errorf("--raft-peers: %w", err)
		}
		o.raftPeers = ps
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	if err := o.logLevel.UnmarshalText([]byte(*level)); err != nil {
		return o, fmt.Errorf("--log-level: %w", err)
	}
	if err := o.checkLimits(); err != nil {
		return o, err
	}
	var err error
	if o.gc, err = gcpolicy.Resolve(gcpolicy.Settings{
		PercentFlag: *gcPercent, LimitFlag: *memoryLimit, MinHeapFlag: *gcMinHeap,
		PercentEnv: os.Getenv("GOGC"), LimitEnv: os.Getenv("GOMEMLIMIT"),
		Available: gcpolicy.Available(),
	}); err != nil {
		return o, err
	}
	if err := o.resolveRaftTLS(); err != nil {
		return o, err
	}
	if err := checkFaultInjection(o); err != nil {
		return o, err
	}
	switch {
	case o.planTTL <= 0:
		return o, fmt.Errorf("--plan-ttl must be positive, got %s", o.planTTL)
	case o.plansProposed < 1:
		return o, fmt.Errorf("--max-proposed-plans must be at least 1, got %d", o.plansProposed)
	case o.plansKept < 1:
		return o, fmt.Errorf("--finished-plans-kept must be at least 1, got %d", o.plansKept)
	case o.planAge <= 0:
		return o, fmt.Errorf("--finished-plan-age must be positive, got %s", o.planAge)
	case o.slowCall < 0:
		return o, fmt.Errorf("--slow-call must not be negative, got %s", o.slowCall)
	case o.uiRefresh < 0:
		return o, fmt.Errorf("--ui-refresh must not be negative, got %s", o.uiRefresh)
	case o.logSummary < 0:
		return o, fmt.Errorf("--log-summary-period must not be negative, got %s", o.logSummary)
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
	case o.maxResyncBytes <= 0:
		return o, fmt.Errorf("--max-resync-bytes must be positive, got %d", o.maxResyncBytes)
	case o.maxCycles < -1:
		return o, fmt.Errorf("--max-concurrent-cycles must be -1 (off), 0 (one per core) or positive, got %d", o.maxCycles)
	case o.cycleQuantum < 100*time.Microsecond:
		return o, fmt.Errorf("--cycle-quantum must be at least 100µs, got %s", o.cycleQuantum)
	case o.cycleShare <= 0 || o.cycleShare > 1:
		return o, fmt.Errorf("--cycle-share must be in (0, 1], got %g", o.cycleShare)
	case o.maxQueued < 1:
		return o, fmt.Errorf("--max-queued-cycles must be at least 1, got %d", o.maxQueued)
	case o.dataDir == "" && (o.raftListen != "" || o.raftPeers != nil || o.bootstrap || o.nodeID != ""):
		return o, errors.New("--node-id, --raft-listen, --raft-peers and --bootstrap need --data-dir")
	case o.raftListen == "" && (o.raftPeers != nil || o.bootstrap || o.raftAdvertise != ""):
		return o, errors.New("--raft-peers, --raft-advertise and --bootstrap need --raft-listen (a member alone needs none of them)")
	case o.raftListen != "" && (o.nodeID == "" || o.raftPeers == nil):
		return o, errors.New("--raft-listen needs --node-id and --raft-peers")
	case o.snapshotThreshold == 0:
		return o, errors.New("--snapshot-threshold must be positive")
	case o.snapshotInterval <= 0:
		return o, fmt.Errorf("--snapshot-interval must be positive, got %s", o.snapshotInterval)
	case o.raftTimeout < 10*time.Millisecond:
		return o, fmt.Errorf("--raft-timeout must be at least 10ms, got %s", o.raftTimeout)
	}
	return o, nil
}

// checkLimits refuses limits that are not positive.
func (o *options) checkLimits() error {
	for _, l := range []struct {
		flag string
		v    int
	}{
		{"--max-name-bytes", o.limits.MaxNameBytes}, {"--max-labels", o.limits.MaxLabels},
		{"--max-label-bytes", o.limits.MaxLabelBytes}, {"--max-config-bytes", o.limits.MaxConfigBytes},
		{"--max-batch-deltas", o.limits.MaxBatchDeltas}, {"--max-objects-per-cluster", o.limits.MaxObjectsPerCluster},
		{"--max-tasks-per-job", o.limits.MaxTasksPerJob}, {"--max-dry-run-watches", o.limits.MaxDryRunWatches},
	} {
		if l.v <= 0 {
			return fmt.Errorf("%s must be positive, got %d", l.flag, l.v)
		}
	}
	return nil
}

// resolveRaftTLS turns --raft-tls on when a --raft-tls-* file is given, fills in the
// server's files for the ones not given, and checks that raft TLS has what it needs.
func (o *options) resolveRaftTLS() error {
	f := &o.raftTLSFiles
	if f.Cert != "" || f.Key != "" || f.CA != "" {
		o.raftTLS = true
	}
	if !o.raftTLS {
		return nil
	}
	if o.raftListen == "" {
		return errors.New("--raft-tls and --raft-tls-* need --raft-listen")
	}
	if (f.Cert == "") != (f.Key == "") {
		return errors.New("--raft-tls-cert and --raft-tls-key go together")
	}
	if f.Cert == "" {
		f.Cert, f.Key = o.tlsCert, o.tlsKey
	}
	if f.CA == "" {
		f.CA = o.clientCA
	}
	if f.Cert == "" || f.CA == "" {
		return errors.New("--raft-tls needs a certificate and a CA: give --raft-tls-cert, --raft-tls-key and --raft-tls-ca, or --tls-cert, --tls-key and --client-ca to reuse")
	}
	return nil
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
	// No value makes a log line longer than service.DefaultMaxLogValueBytes per value.
	log := slog.New(service.LimitValues(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: o.logLevel}), 0))
	// The collector's policy is the process's: it is put back when run returns (for tests,
	// which run sluiced in their process).
	restoreGC := o.gc.Apply()
	defer restoreGC()
	if err := serve(ctx, o, log, w, stderr); err != nil {
		log.Error("sluiced failed", "error", err.Error())
		return exitError
	}
	return exitOK
}

// serve wires the server, serves until ctx ends or a signal arrives, and drains. raft's own
// logs (JSON lines) go to raftLog.
func serve(ctx context.Context, o options, log *slog.Logger, w wiring, raftLog io.Writer) error {
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
	cfg, cfgText, err := loadConfig(o.configPath, o.limits.MaxConfigBytes)
	if err != nil {
		return err
	}
	reg := builtin.Registry()
	if w.register != nil {
		reg = framework.NewRegistry()
		w.register(reg)
	}

	srvOpts := service.Options{
		Logger:         log,
		AccessLog:      o.accessLog,
		SlowCall:       slowCallOption(o.slowCall),
		RateLimit:      o.rateLimit,
		RateBurst:      o.rateBurst,
		MaxRecvBytes:   o.maxRecvBytes,
		MaxResyncBytes: o.maxResyncBytes,
		SchedulePeriod: o.schedulePeriod,
		Limits:         o.limits,

		MaxConcurrentCycles: o.maxCycles,
		CycleQuantum:        o.cycleQuantum,
		MaxQueuedCycles:     o.maxQueued,
		CycleShare:          o.cycleShare,
		BackgroundDryRuns:   o.background,
	}
	var grpcOpts []grpc.ServerOption
	var serverTLS, raftTLS *certs.Reloader
	if o.tlsCert != "" {
		if serverTLS, err = certs.Load(certs.Files{Cert: o.tlsCert, Key: o.tlsKey, CA: o.clientCA}); err != nil {
			return fmt.Errorf("--tls-cert/--tls-key/--client-ca: %w", err)
		}
		grpcOpts = append(grpcOpts, grpc.Creds(credentials.NewTLS(serverTLS.ServerConfig("h2"))))
	}
	if o.raftTLS {
		if raftTLS, err = certs.Load(o.raftTLSFiles); err != nil {
			return fmt.Errorf("--raft-tls: %w", err)
		}
	}
	if o.tokensPath != "" || o.clientCA != "" {
		if srvOpts.Auth, err = loadAuthenticator(o); err != nil {
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
	eng, err := engine.New(store, engine.Options{Registry: reg, DefaultConfig: cfg, PlanTTL: o.planTTL, Logger: log,
		Retention: state.PlanRetention{MaxProposed: o.plansProposed, MaxFinished: o.plansKept, MaxAge: o.planAge}})
	if err != nil {
		return fmt.Errorf("scheduler configuration %s: %w", configName(o.configPath), err)
	}

	lis, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("--listen: %w", err)
	}
	adminLis, err := net.Listen("tcp", o.adminListen)
	if err != nil {
		lis.Close()
		return fmt.Errorf("--admin-listen: %w", err)
	}
	var node *durable.Node
	if o.dataDir != "" {
		if node, err = openDurable(store, o, raftTLS, lis.Addr().String(), log, raftLog); err != nil {
			lis.Close()
			adminLis.Close()
			return err
		}
		defer func() {
			if err := node.Close(o.shutdownTimeout); err != nil {
				log.Error("raft did not stop cleanly", "error", err.Error())
			}
		}()
	}
	srvOpts.Store, srvOpts.Engine = store, eng
	if node != nil {
		srvOpts.Reads = node
		if o.tlsCert == "" && o.clientCA == "" {
			// Plaintext members forward default reads to the leader, bearer token and all;
			// with TLS a follower answers NOT_LEADER and the client goes to the leader.
			srvOpts.ForwardReads = func(addr string) (grpc.ClientConnInterface, error) {
				return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), vtcodec.DialOption())
			}
		}
	}
	srv := service.New(srvOpts)
	gs := service.NewGRPCServer(srv, grpcOpts...)

	var draining atomic.Bool
	guard, ui := adminUI(o, srv, log)
	if o.metricsAuth {
		metricsHandler = guard(metricsHandler)
	}
	mux := adminMux(metricsHandler, &draining, node, guard)
	if ui != nil {
		mux.Handle(webui.Path, ui)
	}
	if o.faultInjection {
		handlePartition(mux, node, log)
	}
	if o.pprof {
		// Sample 1 in 100 contention events, so that the mutex profile has something to show.
		runtime.SetMutexProfileFraction(100)
		mux.Handle(service.ProfilesPath, service.Profiles(srvOpts.Auth, o.insecure || isLoopback(o.adminListen)))
	}
	// Bounded headers and idle connections: the admin port faces browsers and scrapers. No
	// write timeout: a CPU profile streams for as long as it was asked to run.
	admin := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 64 << 10,
		IdleTimeout: 2 * time.Minute, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelDebug)}
	if serverTLS != nil {
		adminLis = tls.NewListener(adminLis, adminTLSConfig(serverTLS))
	}

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
	files := reloadables(o, cfgText, srv, serverTLS, raftTLS, log)
	go func() {
		defer close(reloadDone)
		watchFiles(reloadCtx, files, cfgInfo, log, hup, w.configPoll)
	}()
	sumCtx, stopSummaries := context.WithCancel(context.Background())
	sumDone := make(chan struct{})
	go func() {
		defer close(sumDone)
		srv.LogSummaries(sumCtx, o.logSummary)
	}()
	version, commit := service.BuildInfo()
	log.Info("sluiced serving", "version", version, "commit", commit, "listen", lis.Addr().String(), "admin_listen", adminLis.Addr().String(),
		"config", configName(o.configPath), "plan_ttl", o.planTTL.String(), "schedule_period", o.schedulePeriod.String(),
		"tls", o.tlsCert != "", "mtls", o.clientCA != "", "tokens", o.tokensPath != "",
		"rate_limit", o.rateLimit, "rate_burst", o.rateBurst, "otlp", o.otlpEndpoint != "",
		"data_dir", o.dataDir, "node_id", o.nodeID, "raft_listen", o.raftListen, "raft_tls", o.raftTLS,
		"gc", o.gc.String())
	if o.raftListen != "" && !o.raftTLS {
		log.Warn("raft traffic between members is plaintext and unauthenticated: anyone who reaches --raft-listen can join the log; give --raft-tls (or --raft-tls-cert, --raft-tls-key and --raft-tls-ca)")
	}
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
	stopSummaries()
	<-sumDone
	log.Info("stopped")
	return serveErr
}

// slowCallOption maps --slow-call to Options.SlowCall: 0 (never) is a negative option.
func slowCallOption(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
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

// reloadable is a group of files that reload together: the --config file, the tokens file,
// the server's TLS files, raft's TLS files.
type reloadable struct {
	paths []string
	// reload reads the files again and puts them in force; on error it logs why and keeps
	// what was in force. trigger says why ("SIGHUP", "file changed").
	reload func(trigger string)
}

// reloadables lists what sluiced reloads on SIGHUP and when a file changes.
func reloadables(o options, cfgText []byte, srv *service.Server, serverTLS, raftTLS *certs.Reloader, log *slog.Logger) []reloadable {
	var out []reloadable
	if o.configPath != "" {
		last := cfgText
		out = append(out, reloadable{paths: []string{o.configPath}, reload: func(why string) {
			text, err := readConfig(o.configPath, o.limits.MaxConfigBytes)
			if err != nil {
				log.Error("scheduler configuration not reloaded; keeping the previous one", "config", o.configPath, "trigger", why, "reason", err.Error())
				return
			}
			if why == triggerChanged && bytes.Equal(text, last) {
				return
			}
			last = text
			if err := srv.ReloadConfig(text); err != nil {
				log.Error("scheduler configuration refused; keeping the previous one", "config", o.configPath, "trigger", why, "reason", err.Error())
				return
			}
			log.Info("scheduler configuration reloaded", "config", o.configPath, "trigger", why)
		}})
	}
	if o.tokensPath != "" {
		out = append(out, reloadable{paths: []string{o.tokensPath}, reload: func(why string) {
			a, err := loadAuthenticator(o)
			if err == nil {
				err = srv.SetAuthenticator(a)
			}
			if err != nil {
				log.Error("tokens file refused; keeping the previous tokens", "tokens", o.tokensPath, "trigger", why, "reason", err.Error())
				return
			}
			log.Info("tokens reloaded", "tokens", o.tokensPath, "trigger", why)
		}})
	}
	for _, c := range []struct {
		what string
		r    *certs.Reloader
	}{{"TLS", serverTLS}, {"raft TLS", raftTLS}} {
		if c.r == nil {
			continue
		}
		out = append(out, reloadable{paths: c.r.Files().Paths(), reload: func(why string) {
			if err := c.r.Reload(); err != nil {
				log.Error(c.what+" certificates refused; keeping the previous ones", "trigger", why, "reason", err.Error())
				return
			}
			leaf := c.r.Leaf()
			log.Info(c.what+" certificates reloaded", "trigger", why, "subject", leaf.Subject.String(),
				"serial", leaf.SerialNumber.String(), "not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
		}})
	}
	return out
}

// Triggers of a reload.
const (
	triggerHUP     = "SIGHUP"
	triggerChanged = "file changed"
)

// watchFiles reloads every group of files on SIGHUP (hup), and a group when the modification
// time or size of one of its files changes (checked every poll), until ctx ends. The
// --config file's state at start is cfgInfo (taken before it was read, so that a change made
// meanwhile is seen).
func watchFiles(ctx context.Context, groups []reloadable, cfgInfo os.FileInfo, log *slog.Logger, hup <-chan os.Signal, poll time.Duration) {
	if poll <= 0 {
		poll = configPollInterval
	}
	type seen struct {
		mod  time.Time
		size int64
		ok   bool
	}
	stat := func(path string) seen {
		fi, err := os.Stat(path)
		if err != nil {
			return seen{}
		}
		return seen{mod: fi.ModTime(), size: fi.Size(), ok: true}
	}
	last := make([][]seen, len(groups))
	for i, g := range groups {
		for j, p := range g.paths {
			last[i] = append(last[i], stat(p))
			if i == 0 && j == 0 && cfgInfo != nil && p != "" {
				last[i][0] = seen{mod: cfgInfo.ModTime(), size: cfgInfo.Size(), ok: true}
			}
		}
	}
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			if len(groups) == 0 {
				log.Warn("SIGHUP: nothing to reload (no --config, --tokens or TLS files)")
			}
			for i, g := range groups {
				for j, p := range g.paths {
					last[i][j] = stat(p)
				}
				g.reload(triggerHUP)
			}
		case <-tick.C:
			for i, g := range groups {
				changed := false
				for j, p := range g.paths {
					now := stat(p)
					if !now.ok {
						continue // gone for a moment (being replaced): wait for it
					}
					if now != last[i][j] {
						last[i][j], changed = now, true
					}
				}
				if changed {
					g.reload(triggerChanged)
				}
			}
		}
	}
}

// loadAuthenticator reads the tokens file (if any) into an authenticator. With --client-ca
// and no tokens file, the client CA is the authority: every client it signed has full access.
func loadAuthenticator(o options) (*service.Authenticator, error) {
	var entries []service.TokenEntry
	if o.tokensPath != "" {
		var err error
		if entries, err = service.LoadTokens(o.tokensPath); err != nil {
			return nil, err
		}
	}
	return service.NewAuthenticator(entries, o.clientCA != "" && o.tokensPath == "")
}

// loadConfig reads and parses the scheduler configuration file, and returns it with its
// text; nil (the embedded default) when path is empty. The engine validates it against the
// registry.
func loadConfig(path string, maxBytes int) (*conf.Config, []byte, error) {
	if path == "" {
		return nil, nil, nil
	}
	text, err := readConfig(path, maxBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("--config: %w", err)
	}
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, nil, fmt.Errorf("scheduler configuration %s: %w", path, err)
	}
	return cfg, text, nil
}

// readConfig reads a configuration file of at most maxBytes (--max-config-bytes); a larger
// one is refused without being read whole.
func readConfig(path string, maxBytes int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	text, err := io.ReadAll(io.LimitReader(f, int64(maxBytes)+1))
	if err != nil {
		return nil, err
	}
	if len(text) > maxBytes {
		return nil, fmt.Errorf("%s is larger than --max-config-bytes (%d bytes)", path, maxBytes)
	}
	return text, nil
}

func configName(path string) string {
	if path == "" {
		return "(embedded default)"
	}
	return path
}

// openDurable opens the data directory and starts raft (over mutual TLS with raftTLS). This
// member's gRPC address, which followers hand to writers, is its peer entry's or else the
// address it listens on.
func openDurable(store *state.Store, o options, raftTLS *certs.Reloader, listenAddr string, log *slog.Logger, raftLog io.Writer) (*durable.Node, error) {
	peers := append([]durable.Peer(nil), o.raftPeers...)
	for i := range peers {
		if peers[i].ID == o.nodeID && peers[i].ClientAddr == "" {
			peers[i].ClientAddr = listenAddr
		}
	}
	opts := durable.Options{
		DataDir:           o.dataDir,
		NodeID:            o.nodeID,
		RaftAddr:          o.raftListen,
		RaftAdvertise:     o.raftAdvertise,
		Peers:             peers,
		Bootstrap:         o.bootstrap,
		SnapshotThreshold: o.snapshotThreshold,
		SnapshotInterval:  o.snapshotInterval,
		TrailingLogs:      o.trailingLogs,
		ElectionTimeout:   raftTimeout(o),
		Logger:            log,
		RaftLogOutput:     raftLog,
		RaftLogLevel:      max(o.logLevel, slog.LevelInfo),
		FaultInjection:    o.faultInjection,
	}
	if raftTLS != nil {
		opts.TLS = raftTLS
	}
	node, err := durable.Open(store, opts)
	if err != nil {
		return nil, fmt.Errorf("--data-dir: %w", err)
	}
	return node, nil
}

// raftTimeout is --raft-timeout for a cluster; a member alone uses the durable package's own
// (short: it has nobody to wait for).
func raftTimeout(o options) time.Duration {
	if o.raftListen == "" {
		return 0
	}
	return o.raftTimeout
}

// adminMux serves /healthz (the process is up), /readyz (not draining; with a replicated
// store, also a leader that caught up or a follower that knows the leader), /metrics, and
// with a replicated store /raft (the member's raft status as JSON, behind guard).
func adminMux(metrics http.Handler, draining *atomic.Bool, node *durable.Node, guard func(http.Handler) http.Handler) *http.ServeMux {
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
		if node != nil {
			if st := node.Status(); !st.Ready {
				w.WriteHeader(http.StatusServiceUnavailable)
				_, _ = fmt.Fprintf(w, "raft %s, no leader ready yet", strings.ToLower(st.State))
				return
			}
		}
		_, _ = io.WriteString(w, "ok")
	})
	mux.Handle("GET /metrics", metrics)
	if node != nil {
		mux.Handle("GET /raft", guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(node.Status())
		})))
	}
	return mux
}

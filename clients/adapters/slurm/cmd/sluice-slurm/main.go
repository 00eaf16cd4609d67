// Command sluice-slurm connects a Slurm controller to Sluice: it streams Slurm's partitions,
// nodes and jobs into a Sluice cluster, asks Sluice for plans, and carries them out with
// scontrol and scancel. See clients/adapters/slurm/README.md.
package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/clients/adapters/slurm"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "sluice-slurm:", err)
		os.Exit(1)
	}
}

type options struct {
	sluice, cluster, tlsCA, tlsServerName, tokenFile string
	useTLS                                           bool
	mapping                                          slurm.Options
	partitions                                       string
	commands                                         slurm.Commands
	commandTimeout, period, cycleTimeout, maxBackoff time.Duration
	dispatchTimeout                                  time.Duration
	schedulerConfig                                  string
	dryRun, once                                     bool
	logLevel, logFormat                              string
}

func parseFlags(args []string, out io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("sluice-slurm", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.StringVar(&o.sluice, "sluice", "127.0.0.1:50051", "Sluice gRPC address (host:port or any gRPC target)")
	fs.StringVar(&o.cluster, "cluster", "slurm", "Sluice cluster this Slurm cluster becomes")
	fs.BoolVar(&o.useTLS, "tls", false, "connect with TLS (system roots unless --tls-ca)")
	fs.StringVar(&o.tlsCA, "tls-ca", "", "CA certificates (PEM) for the server's certificate; implies --tls")
	fs.StringVar(&o.tlsServerName, "tls-server-name", "", "server name to verify, when it differs from the address")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding a bearer token sent with every call (or set SLUICE_TOKEN)")
	qb := fs.String("queue-by", string(slurm.QueueByPartition), "what becomes a Sluice queue: partition or account")
	fs.StringVar(&o.partitions, "partitions", "", "comma-separated partitions to manage (their nodes and jobs); empty means all")
	fs.StringVar(&o.mapping.Namespace, "namespace", "slurm", "Sluice namespace of the jobs and tasks")
	fs.StringVar(&o.mapping.GPUResource, "gpu-resource", "nvidia.com/gpu", "Sluice resource name of GRES gpu (other GRES become gres/NAME)")
	pf := fs.String("priority-from", string(slurm.PriorityFromNice), "job priority source: nice (priority = -nice; works for held jobs) or slurm (Slurm's priority, 0 while held)")
	ev := fs.String("evict", string(slurm.EvictRequeue), "how an eviction is carried out: requeue (scontrol requeuehold) or cancel (scancel)")
	fs.StringVar(&o.commands.Squeue, "squeue", "squeue", "squeue program")
	fs.StringVar(&o.commands.Sinfo, "sinfo", "sinfo", "sinfo program")
	fs.StringVar(&o.commands.Scontrol, "scontrol", "scontrol", "scontrol program")
	fs.StringVar(&o.commands.Scancel, "scancel", "scancel", "scancel program")
	fs.DurationVar(&o.commandTimeout, "command-timeout", 30*time.Second, "timeout of one Slurm command")
	fs.DurationVar(&o.period, "period", 5*time.Second, "time between cycles")
	fs.DurationVar(&o.cycleTimeout, "cycle-timeout", 2*time.Minute, "timeout of one cycle")
	fs.DurationVar(&o.maxBackoff, "max-backoff", 30*time.Second, "longest wait between cycles after failures")
	fs.DurationVar(&o.dispatchTimeout, "dispatch-timeout", 5*time.Minute, "hold a released job again when Slurm has not started it after this long (negative: never)")
	fs.StringVar(&o.schedulerConfig, "scheduler-config", "", "Volcano scheduler configuration (YAML file) to give the cluster on first contact and after every resync; empty keeps the server's")
	fs.BoolVar(&o.dryRun, "dry-run", false, "ask for dry-run plans and log them; change nothing in Slurm")
	fs.BoolVar(&o.once, "once", false, "run one cycle and exit (non-zero when it fails)")
	fs.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&o.logFormat, "log-format", "text", "log format: text or json")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	o.mapping.QueueBy = slurm.QueueBy(*qb)
	o.mapping.PriorityFrom = slurm.PriorityFrom(*pf)
	o.mapping.EvictMode = slurm.EvictMode(*ev)
	for _, p := range strings.Split(o.partitions, ",") {
		if p = strings.TrimSpace(p); p != "" {
			o.mapping.Partitions = append(o.mapping.Partitions, p)
		}
	}
	if err := o.mapping.Validate(); err != nil {
		return nil, err
	}
	return o, nil
}

func newLogger(level, format string, out io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log-level: %w", err)
	}
	ho := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(out, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(out, ho)), nil
	}
	return nil, fmt.Errorf("log-format must be text or json, got %q", format)
}

type bearer struct {
	token  string
	secure bool
}

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.token}, nil
}

func (b bearer) RequireTransportSecurity() bool { return b.secure }

func dialOptions(o *options) ([]grpc.DialOption, error) {
	var dopts []grpc.DialOption
	secure := o.useTLS || o.tlsCA != ""
	if secure {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.tlsServerName}
		if o.tlsCA != "" {
			pem, err := os.ReadFile(o.tlsCA)
			if err != nil {
				return nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("%s: no PEM certificate", o.tlsCA)
			}
			cfg.RootCAs = pool
		}
		dopts = append(dopts, grpc.WithTransportCredentials(credentials.NewTLS(cfg)))
	} else {
		dopts = append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	token := os.Getenv("SLUICE_TOKEN")
	if o.tokenFile != "" {
		b, err := os.ReadFile(o.tokenFile)
		if err != nil {
			return nil, err
		}
		token = strings.TrimSpace(string(b))
	}
	if token != "" {
		dopts = append(dopts, grpc.WithPerRPCCredentials(bearer{token: token, secure: secure}))
	}
	return dopts, nil
}

func run(ctx context.Context, args []string, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(o.logLevel, o.logFormat, stderr)
	if err != nil {
		return err
	}
	var schedConf string
	if o.schedulerConfig != "" {
		b, err := os.ReadFile(o.schedulerConfig)
		if err != nil {
			return err
		}
		schedConf = string(b)
	}
	dopts, err := dialOptions(o)
	if err != nil {
		return err
	}
	// gRPC's default reconnect backoff grows to two minutes; a restarted sluiced should be
	// reached within seconds, since the adapter's own cycles back off already.
	dopts = append(dopts, grpc.WithConnectParams(grpc.ConnectParams{
		Backoff:           backoff.Config{BaseDelay: 250 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: 5 * time.Second},
		MinConnectTimeout: 5 * time.Second,
	}))
	conn, err := grpc.NewClient(o.sluice, dopts...)
	if err != nil {
		return err
	}
	defer conn.Close()
	sl := slurm.NewGRPCSluice(conn, o.cluster)
	defer sl.Close()

	a, err := slurm.New(slurm.Config{
		Mapping:         o.mapping,
		Commands:        o.commands,
		Period:          o.period,
		CycleTimeout:    o.cycleTimeout,
		MaxBackoff:      o.maxBackoff,
		DispatchTimeout: o.dispatchTimeout,
		SchedulerConfig: schedConf,
		DryRun:          o.dryRun,
		Logger:          log.With("cluster", o.cluster),
	}, slurm.ExecRunner{Timeout: o.commandTimeout}, sl)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.once {
		if rep := a.Cycle(ctx); rep.Err != nil {
			return rep.Err
		}
		return nil
	}
	if err := a.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	log.Info("sluice-slurm: stopped")
	return nil
}

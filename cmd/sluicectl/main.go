package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/internal/vtcodec"
	"github.com/sluice-sched/sluice/service"
)

const (
	defaultServer  = "127.0.0.1:50051"
	defaultCluster = "default"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// app holds the global options and streams of one invocation.
type app struct {
	ctx     context.Context
	stdin   io.Reader
	stdout  io.Writer
	stderr  io.Writer
	server  serverFlag
	cluster string

	// Credentials: a bearer token (--token, --token-file or $SLUICE_TOKEN) and TLS.
	token, tokenFile       string
	tls                    bool
	tlsCA, tlsCert, tlsKey string
	tlsServerName          string
	getenv                 func(string) string

	// wait bounds how long a command waits for a server that is starting or electing a
	// leader (--wait); waitDeadline is when the wait of this command ends.
	wait          time.Duration
	waitDeadline  time.Time
	tracker       *dialTracker
	warnedWaiting bool
}

// serverFlag is the --server value; it remembers whether it was given.
type serverFlag struct {
	addr string
	set  bool
}

func (s *serverFlag) String() string { return s.addr }

func (s *serverFlag) Set(v string) error {
	if v == "" {
		return errors.New("empty address")
	}
	s.addr, s.set = v, true
	return nil
}

// Exit statuses, listed in the usage text.
const (
	// exitOK: the command did what it was asked (help included).
	exitOK = 0
	// exitFailure: the command failed: the server refused or could not be reached, a file
	// is invalid, a scenario failed.
	exitFailure = 1
	// exitUsage: a mistake on the command line.
	exitUsage = 2
	// exitRejected: a plan was committed, but the commit rejected some of its decisions
	// (commit, schedule --commit). watch --commit goes on after a rejection, as the next
	// cycle sees what caused it.
	exitRejected = 3
)

// exitError ends the program with a status and no further message (the
// command has printed what it had to say).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: sluicectl [GLOBAL FLAGS] COMMAND [ARGS]

Commands:
  apply -f FILE [--replace] [--with-config]
                                         send a cluster file over Sync: the cluster's keys (nodes,
                                         queues, jobs, ...) at the top or under cluster:, or a
                                         scenario, whose config is set with --with-config
  get nodes|queues|jobs|tasks [NAME]     list objects, or show one
  get clusters [NAME]                    list the clusters the token covers (revision, object counts), or show one
  describe queue NAME                    a queue with its derived figures (allocated, deserved, share, overused)
  describe cluster NAME                  a cluster: revision, configuration, etag, plans, objects by kind
  delete KIND NAME [--ignore-not-found]  delete a node, queue, job, task, priorityclass, quota, pdb or hypernode
  delete cluster NAME [--ignore-not-found]
                                         delete a cluster and everything of it (admin token)
  schedule [--dry-run|--commit]          run one scheduling cycle and print its plan
  commit PLAN_ID                         commit a proposed plan
  discard PLAN_ID                        discard a proposed plan
  explain JOB                            explain a job (namespace/name; namespace defaults to "default")
  watch [--commit] [--period D] [--takeover] [--count N]
                                         stream plans as the cluster changes (WatchPlans); dry runs
                                         unless --commit, which commits each plan
  config get                             print the scheduler configuration and its etag (admin token)
  config set -f FILE [--etag E|--force]  replace the scheduler configuration (admin token), only if its
                                         etag is still the file's "# etag:" line or --etag
  scenario run [--server ADDR] PATH...   play scenario files or directories
  bench [--workload pending|steady-idle|steady-arrivals|preempt|reclaim|big-job] [--arrivals N]
        [--nodes N] [--jobs N] [--tasks-per-job N] [--queues N] [--shapes uniform|mixed]
        [--config FILE] [--seed N] [--cycles N] [--grpc] [--cpuprofile FILE]
                                         generate a cluster and time scheduling cycles in this
                                         process (and with --grpc through Sync and Schedule on
                                         a loopback server); the last line sums up (key=value)
  bench neighbours [--nodes N] [--jobs N] [--callers N] [--rate R] [--phase D] [--rounds N]
                                         a small cluster's Sync ack, Schedule and CommitPlan
                                         latency (p50, p99) with a large cluster idle and
                                         hammered by dry runs, on --server or in this process
  bench ingest [--nodes N] [--jobs N] [--tasks-per-job N] [--batch N] [--rounds N]
                                         stream a generated cluster through Sync into a new
                                         cluster per round, on --server or in this process;
                                         prints the median objects per second
  bench-reads [--clients N] [--duration D] [--consistency linearizable|stale] [--max-staleness D]
                                         read from the server for a while; prints throughput and
                                         latency percentiles (key=value)
  simulate --trace FILE --out DIR [--config FILE]... [--cluster FILE|--from-server]
                                         replay a workload trace (SWF or Sluice's format) in virtual
                                         time through the engine, once per configuration; writes
                                         jobs.csv, timeline.csv, summary.json and report.html
  whatif -f FILE                         where hypothetical jobs, tasks, node removals or drains
                                         would go on the live cluster (a dry run that stores nothing)
  gentrace [--jobs N] [--nodes N] [--cores-per-node N] [--queues N] [--load F] [--seed N]
                                         write a synthetic SWF trace to standard output
  completion bash|zsh                    print a shell completion script

Every command that prints takes -o table|json|yaml (table by default), bench and
bench-reads aside, which take only their own flags (global flags go before them).
'sluicectl COMMAND -h' lists a command's flags.

Global flags (also accepted after the command):
  --server ADDR        server address (default 127.0.0.1:50051)
  --cluster NAME       cluster (default "default")
  --token TOKEN        bearer token (default $SLUICE_TOKEN)
  --token-file FILE    read the bearer token from FILE
  --tls                use TLS with the system's CAs
  --tls-ca FILE        use TLS, trusting the CA certificates in FILE
  --tls-cert FILE      client certificate for mTLS (with --tls-key)
  --tls-key FILE       client certificate's key
  --tls-server-name N  name to verify in the server's certificate
  --wait D             wait up to D for a server that is starting or electing a leader
                       (default 10s; 0 fails at once)

Exit status:
  0  done (and for help)
  1  failed: the server refused the call or could not be reached, a file is invalid,
     a scenario failed
  2  a mistake on the command line
  3  a plan was committed but the commit rejected some of its decisions (commit,
     schedule --commit); the rejections are printed
`

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr,
		server: serverFlag{addr: defaultServer}, cluster: defaultCluster, getenv: os.Getenv, wait: defaultWait}
	err := a.dispatch(args)
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "sluicectl: %s\n", ue.msg)
		fmt.Fprintf(stderr, "run 'sluicectl help' for usage\n")
		return exitUsage
	default:
		fmt.Fprintf(stderr, "sluicectl: %s\n", err)
		return exitFailure
	}
}

// flags returns a flag set for a command, with the global flags on it.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&a.server, "server", "server `address`")
	fs.StringVar(&a.cluster, "cluster", a.cluster, "cluster `name`")
	fs.StringVar(&a.token, "token", a.token, "bearer `token` (default $SLUICE_TOKEN)")
	fs.StringVar(&a.tokenFile, "token-file", a.tokenFile, "read the bearer token from `file`")
	fs.BoolVar(&a.tls, "tls", a.tls, "use TLS with the system's CAs")
	fs.StringVar(&a.tlsCA, "tls-ca", a.tlsCA, "use TLS, trusting the CA certificates (PEM) in `file`")
	fs.StringVar(&a.tlsCert, "tls-cert", a.tlsCert, "client certificate `file` (PEM) for mTLS")
	fs.StringVar(&a.tlsKey, "tls-key", a.tlsKey, "client certificate's key `file` (PEM)")
	fs.StringVar(&a.tlsServerName, "tls-server-name", a.tlsServerName, "`name` to verify in the server's certificate")
	fs.DurationVar(&a.wait, "wait", a.wait, "how long to wait for a server that is starting or electing a leader (0: fail at once)")
	return fs
}

// parse parses args with fs, allowing flags after positional arguments,
// and returns the positional arguments. -h prints the command's flags.
func (a *app) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				// Asked for: standard output, exit status 0.
				fmt.Fprintf(a.stdout, "usage of sluicectl %s:\n", fs.Name())
				fs.SetOutput(a.stdout)
				fs.PrintDefaults()
				return nil, err
			}
			return nil, usagef("%s: %v", fs.Name(), err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if used := len(args) - len(rest); used > 0 && args[used-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

func (a *app) dispatch(args []string) error {
	top := a.flags("sluicectl")
	if err := top.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(a.stdout, usage)
			return err
		}
		return usageError{err.Error()}
	}
	rest := top.Args()
	if len(rest) == 0 {
		// Not asked for: the usage is the error message.
		fmt.Fprint(a.stderr, usage)
		return exitError{exitUsage}
	}
	cmd, args := rest[0], rest[1:]
	switch cmd {
	case "help":
		fmt.Fprint(a.stdout, usage)
		return nil
	case "apply":
		return a.apply(args)
	case "get":
		return a.get(args)
	case "schedule":
		return a.schedule(args)
	case "commit":
		return a.commit(args)
	case "discard":
		return a.discard(args)
	case "explain":
		return a.explain(args)
	case "config":
		return a.config(args)
	case "scenario":
		return a.scenario(args)
	case "describe":
		return a.describe(args)
	case "delete":
		return a.delete(args)
	case "watch":
		return a.watch(args)
	case "bench":
		return a.bench(args)
	case "bench-reads":
		return a.benchReads(args)
	case "simulate":
		return a.simulate(args)
	case "whatif":
		return a.whatif(args)
	case "gentrace":
		return a.gentrace(args)
	case "completion":
		return a.completion(args)
	}
	return usagef("unknown command %q", cmd)
}

// dial connects to the server named by --server, with TLS when a TLS flag is given and the
// bearer token when there is one.
func (a *app) dial() (*grpc.ClientConn, error) {
	creds := insecure.NewCredentials()
	if a.tls || a.tlsCA != "" || a.tlsCert != "" || a.tlsKey != "" || a.tlsServerName != "" {
		cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: a.tlsServerName}
		if a.tlsCA != "" {
			pem, err := os.ReadFile(a.tlsCA)
			if err != nil {
				return nil, fmt.Errorf("--tls-ca: %w", err)
			}
			cfg.RootCAs = x509.NewCertPool()
			if !cfg.RootCAs.AppendCertsFromPEM(pem) {
				return nil, fmt.Errorf("--tls-ca: %s holds no PEM certificate", a.tlsCA)
			}
		}
		if (a.tlsCert == "") != (a.tlsKey == "") {
			return nil, usagef("--tls-cert and --tls-key go together")
		}
		if a.tlsCert != "" {
			cert, err := tls.LoadX509KeyPair(a.tlsCert, a.tlsKey)
			if err != nil {
				return nil, fmt.Errorf("--tls-cert/--tls-key: %w", err)
			}
			cfg.Certificates = []tls.Certificate{cert}
		}
		creds = credentials.NewTLS(cfg)
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(creds), vtcodec.DialOption(),
		grpc.WithChainUnaryInterceptor(a.retryUnary), grpc.WithChainStreamInterceptor(a.retryServerStream),
		// Reconnect quickly to a server that is starting (gRPC's default backoff grows
		// past the whole --wait).
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: 5 * time.Second,
		})}
	a.tracker = nil
	if usesTCP(a.server.addr) {
		a.tracker = &dialTracker{}
		opts = append(opts, grpc.WithContextDialer(a.tracker.dial))
	}
	tok, err := a.bearerToken()
	if err != nil {
		return nil, err
	}
	if tok != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken(tok)))
	}
	if a.wait < 0 {
		return nil, usagef("--wait must not be negative")
	}
	conn, err := grpc.NewClient(a.server.addr, opts...)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", a.server.addr, err)
	}
	a.waitDeadline = time.Now().Add(a.wait)
	if a.wait > 0 {
		if err := a.waitConnected(conn); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// bearerToken returns the token of --token, --token-file or $SLUICE_TOKEN, in that order.
func (a *app) bearerToken() (string, error) {
	switch {
	case a.token != "" && a.tokenFile != "":
		return "", usagef("--token and --token-file exclude each other")
	case a.token != "":
		return a.token, nil
	case a.tokenFile != "":
		b, err := os.ReadFile(a.tokenFile)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok := strings.TrimSpace(string(b))
		if tok == "" || strings.ContainsAny(tok, "\r\n") {
			return "", fmt.Errorf("--token-file: %s must hold one token on one line", a.tokenFile)
		}
		return tok, nil
	}
	return strings.TrimSpace(a.getenv("SLUICE_TOKEN")), nil
}

// bearerToken sends "authorization: Bearer TOKEN" with every call. It is sent over plaintext
// connections too, which sluiced accepts only on loopback addresses unless --insecure.
type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return false }

// rpcError describes a failed call: its code, message and any field
// violations, one per line, and for failures the caller can fix a hint
// of what to do.
func (a *app) rpcError(op string, err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return fmt.Errorf("%s: %w", op, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s: %s", op, st.Code(), st.Message())
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				fmt.Fprintf(&b, "\n  %s: %s", v.GetField(), v.GetDescription())
			}
		}
	}
	if h := a.hint(st); h != "" {
		fmt.Fprintf(&b, "\nhint: %s", h)
	}
	return errors.New(b.String())
}

// reasonOf returns the reason of a status's ErrorInfo detail, or "".
func reasonOf(st *status.Status) string {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info.GetReason()
		}
	}
	return ""
}

// hint says what to do about a failure the caller can fix.
func (a *app) hint(st *status.Status) string {
	msg := st.Message()
	usesTLS := a.tls || a.tlsCA != "" || a.tlsCert != "" || a.tlsServerName != ""
	switch reasonOf(st) {
	case service.ReasonClusterNotFound:
		return fmt.Sprintf("cluster %q does not exist: 'sluicectl get clusters' lists those that do; a cluster is created by its first 'sluicectl apply' (or Sync)", a.cluster)
	case service.ReasonLimitExceeded:
		return "the server bounds the size of clusters and requests (sluiced --max-* flags): see the field and the limit named above"
	}
	switch st.Code() {
	case codes.Unauthenticated:
		if strings.Contains(msg, "invalid bearer token") {
			return "the server does not know this token: check --token/--token-file/$SLUICE_TOKEN against the server's --tokens file"
		}
		return "pass a bearer token with --token-file FILE (or --token TOKEN, or $SLUICE_TOKEN), or a client certificate with --tls-cert and --tls-key"
	case codes.PermissionDenied:
		switch {
		case strings.Contains(msg, "admin"):
			return "this needs a token with admin: true in the server's tokens file"
		case strings.Contains(msg, "read-only"):
			return "use a token without read_only, or --dry-run where the command has it"
		}
		return fmt.Sprintf("the token does not cover cluster %q: pick another with --cluster, or ask for a token whose clusters include it", a.cluster)
	case codes.ResourceExhausted:
		if strings.Contains(msg, "rate") {
			return "the server rate-limits each client (sluiced --rate-limit, --rate-burst): retry later, or batch changes with apply"
		}
		return "the message is larger than the server accepts (sluiced --max-recv-bytes): send smaller batches"
	case codes.AlreadyExists:
		if strings.Contains(msg, "WatchPlans") {
			return "another client is watching this cluster: stop it, or pass --takeover to replace it"
		}
	case codes.Aborted:
		switch {
		case strings.Contains(msg, "took cluster"):
			return "another watch replaced this one (--takeover)"
		case strings.Contains(msg, "etag"):
			return "the configuration changed since it was read: get it again ('sluicectl config get'), redo the change and set it, or pass --force to replace it anyway"
		}
	case codes.Unavailable:
		if info := errorInfo(st.Err()); info != nil {
			switch info.GetReason() {
			case reasonNotLeader:
				if l := info.GetMetadata()[metadataLeader]; l != "" {
					return fmt.Sprintf("this member of a replicated sluiced does not lead it: pass --server %s (the leader)", l)
				}
				return "the members have not elected a leader yet: wait longer with --wait, and check that a majority of them runs"
			case reasonStoreUnavailable:
				return "the server is up but cannot take this yet (see the message): wait longer with --wait, " +
					"or look at its data directory and at /raft on its admin port"
			case reasonShuttingDown:
				return "the server is restarting or stopping: retry in a moment"
			}
		}
		switch {
		case strings.Contains(msg, "first record does not look like a TLS handshake"):
			return "the server does not use TLS: drop --tls, --tls-ca, --tls-cert and --tls-key"
		case strings.Contains(msg, "certificate signed by unknown authority") || strings.Contains(msg, "x509"):
			return "the server's certificate was not verified: pass --tls-ca with the CA that signed it (and --tls-server-name if you connect by another name)"
		case strings.Contains(msg, "certificate required") || strings.Contains(msg, "bad certificate") || strings.Contains(msg, "unknown certificate"):
			return "the server requires a client certificate its CA signed: pass --tls-cert and --tls-key"
		case !usesTLS && (strings.Contains(msg, "server preface") || strings.Contains(msg, "EOF") || strings.Contains(msg, "connection reset")):
			return "the server may require TLS: pass --tls-ca FILE (or --tls for the system's CAs)"
		}
		if connected, _ := a.tracker.state(); !connected {
			return fmt.Sprintf("is sluiced running at %s? start it with 'sluiced', or pass --server ADDR", a.server.addr)
		}
		return fmt.Sprintf("the connection to %s failed after it was made: check that this is sluiced's gRPC address", a.server.addr)
	case codes.DeadlineExceeded:
		return fmt.Sprintf("the server at %s did not answer in time: check it is up and reachable", a.server.addr)
	case codes.Unimplemented:
		return "the server is older than this sluicectl: upgrade sluiced"
	}
	return ""
}

// outputFlag adds -o to fs.
func outputFlag(fs *flag.FlagSet) *string {
	return fs.String("o", "table", "output `format`: table, json or yaml")
}

func checkOutput(o string) error {
	if o != "table" && o != "json" && o != "yaml" {
		return usagef("-o: unknown format %q (expected table, json or yaml)", o)
	}
	return nil
}

// readFileArg reads the -f file of a command that takes no positional argument (pos): its
// name for messages ("<stdin>" for -) and its bytes.
func (a *app) readFileArg(cmd, file string, pos []string) (name string, data []byte, err error) {
	if len(pos) > 0 {
		return "", nil, usagef("%s: unexpected argument %q", cmd, pos[0])
	}
	if file == "" {
		return "", nil, usagef("%s: -f FILE is required", cmd)
	}
	if data, err = a.readInput(file); err != nil {
		return "", nil, err
	}
	if file == "-" {
		return "<stdin>", data, nil
	}
	return file, data, nil
}

// readInput reads a file, or standard input for "-".
func (a *app) readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(a.stdin)
	}
	return os.ReadFile(path)
}

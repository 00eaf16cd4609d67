package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
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

// exitError ends the program with a status and no further message (the
// command has printed what it had to say).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError is a mistake on the command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

const usage = `usage: sluicectl [--server ADDR] [--cluster NAME] COMMAND [ARGS]

Commands:
  apply -f FILE [--replace]              send a cluster file (scenario or cluster section) over Sync
  get nodes|queues|jobs|tasks [NAME] [-o table|json]
  schedule [--dry-run|--commit] [-o table|json]
  commit PLAN_ID [-o table|json]         commit a proposed plan
  discard PLAN_ID                        discard a proposed plan
  explain JOB [-o table|json]            explain a job (namespace/name; namespace defaults to "default")
  config get                             print the scheduler configuration
  config set -f FILE                     replace the scheduler configuration
  scenario run [--server ADDR] PATH...   play scenario files or directories

Global flags (also accepted after the command):
  --server ADDR    server address (default 127.0.0.1:50051)
  --cluster NAME   cluster (default "default")
`

// run executes one command line and returns the exit status.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	a := &app{ctx: ctx, stdin: stdin, stdout: stdout, stderr: stderr,
		server: serverFlag{addr: defaultServer}, cluster: defaultCluster}
	err := a.dispatch(args)
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "sluicectl: %s\n", ue.msg)
		fmt.Fprintf(stderr, "run 'sluicectl help' for usage\n")
		return 1
	default:
		fmt.Fprintf(stderr, "sluicectl: %s\n", err)
		return 1
	}
}

// flags returns a flag set for a command, with the global flags on it.
func (a *app) flags(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(&a.server, "server", "server `address`")
	fs.StringVar(&a.cluster, "cluster", a.cluster, "cluster `name`")
	return fs
}

// parse parses args with fs, allowing flags after positional arguments,
// and returns the positional arguments. -h prints the command's flags.
func (a *app) parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fmt.Fprintf(a.stderr, "usage of sluicectl %s:\n", fs.Name())
				fs.SetOutput(a.stderr)
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
			fmt.Fprint(a.stderr, usage)
			return err
		}
		return usageError{err.Error()}
	}
	rest := top.Args()
	if len(rest) == 0 {
		fmt.Fprint(a.stderr, usage)
		return exitError{1}
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
	}
	return usagef("unknown command %q", cmd)
}

// dial connects to the server named by --server.
func (a *app) dial() (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(a.server.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", a.server.addr, err)
	}
	return conn, nil
}

// rpcError describes a failed call: its code, message and any field
// violations, one per line.
func rpcError(op string, err error) error {
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
	return errors.New(b.String())
}

// outputFlag adds -o to fs.
func outputFlag(fs *flag.FlagSet) *string {
	return fs.String("o", "table", "output `format`: table or json")
}

func checkOutput(o string) error {
	if o != "table" && o != "json" {
		return usagef("-o: unknown format %q (expected table or json)", o)
	}
	return nil
}

// readInput reads a file, or standard input for "-".
func (a *app) readInput(path string) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(a.stdin)
	}
	return os.ReadFile(path)
}

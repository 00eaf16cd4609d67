package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Runner runs a Slurm command and returns its standard output. An implementation other
// than ExecRunner lets tests replay recorded outputs.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Commands names the Slurm programs the adapter calls; empty fields take the program's
// plain name, looked up on PATH.
type Commands struct {
	Squeue   string
	Sinfo    string
	Scontrol string
	Scancel  string
}

func (c Commands) squeue() string   { return orDefault(c.Squeue, "squeue") }
func (c Commands) sinfo() string    { return orDefault(c.Sinfo, "sinfo") }
func (c Commands) scontrol() string { return orDefault(c.Scontrol, "scontrol") }
func (c Commands) scancel() string  { return orDefault(c.Scancel, "scancel") }

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ExecRunner runs commands as processes, each bounded by Timeout (0 means 30 seconds).
// Env, when set, is appended to the adapter's environment (for example SLURM_CONF=...).
type ExecRunner struct {
	Timeout time.Duration
	Env     []string
}

// CommandError is a command that failed, with what it printed on standard error.
type CommandError struct {
	Command string
	Err     error
	Stderr  string
}

func (e *CommandError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		return fmt.Sprintf("%s: %v", e.Command, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", e.Command, e.Err, msg)
}

func (e *CommandError) Unwrap() error { return e.Err }

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	if len(r.Env) > 0 {
		cmd.Env = append(cmd.Environ(), r.Env...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &CommandError{Command: commandLine(name, args), Err: err, Stderr: stderr.String()}
	}
	return stdout.Bytes(), nil
}

func commandLine(name string, args []string) string {
	return strings.TrimSpace(name + " " + strings.Join(args, " "))
}

// Snapshot is what the adapter read from Slurm in one cycle.
type Snapshot struct {
	Partitions []Partition
	Nodes      []Node
	Jobs       []Job
	// Now is when the snapshot was read.
	Now time.Time
}

// Reader reads a Snapshot with squeue, sinfo and scontrol (with --all: hidden partitions
// too).
type Reader struct {
	Runner   Runner
	Commands Commands
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Read reads partitions, nodes and jobs. Any failure fails the whole read: the adapter
// never acts on a partial view (an empty job list from a controller that is down would
// otherwise delete every job from Sluice).
func (r *Reader) Read(ctx context.Context) (*Snapshot, error) {
	now := time.Now()
	if r.Now != nil {
		now = r.Now()
	}
	out, err := r.Runner.Run(ctx, r.Commands.scontrol(), "--all", "--oneliner", "show", "partition")
	if err != nil {
		return nil, fmt.Errorf("read partitions: %w", err)
	}
	parts, err := ParsePartitions(out)
	if err != nil {
		return nil, fmt.Errorf("read partitions: %w", err)
	}
	out, err = r.Runner.Run(ctx, r.Commands.sinfo(), "--all", "--json")
	if err != nil {
		return nil, fmt.Errorf("read nodes: %w", err)
	}
	var nodes SinfoOutput
	if err := decodeJSON(out, &nodes); err != nil {
		return nil, fmt.Errorf("read nodes: sinfo --json: %w", err)
	}
	out, err = r.Runner.Run(ctx, r.Commands.squeue(), "--all", "--json")
	if err != nil {
		return nil, fmt.Errorf("read jobs: %w", err)
	}
	var jobs SqueueOutput
	if err := decodeJSON(out, &jobs); err != nil {
		return nil, fmt.Errorf("read jobs: squeue --json: %w", err)
	}
	return &Snapshot{Partitions: parts, Nodes: nodes.Nodes, Jobs: jobs.Jobs, Now: now}, nil
}

// decodeJSON decodes Slurm's JSON output and fails on the errors it reports.
func decodeJSON(out []byte, v interface{ errs() []json.RawMessage }) error {
	if err := json.Unmarshal(out, v); err != nil {
		return err
	}
	if errs := v.errs(); len(errs) > 0 {
		return fmt.Errorf("slurm reported errors: %s", bytes.Join(rawList(errs), []byte("; ")))
	}
	return nil
}

func rawList(l []json.RawMessage) [][]byte {
	out := make([][]byte, len(l))
	for i, r := range l {
		out[i] = r
	}
	return out
}

func (o *SqueueOutput) errs() []json.RawMessage { return o.Errors }
func (o *SinfoOutput) errs() []json.RawMessage  { return o.Errors }

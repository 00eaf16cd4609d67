package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/state"
)

// simOptions are the flags of "simulate".
type simOptions struct {
	trace, format, cluster, out string
	fromServer                  bool
	configs                     stringList
	swf                         sim.SWFOptions
	queueMap                    string
	memoryPerCore               string
	preemptable                 bool
	period, releaseDelay        time.Duration
	interval, background        time.Duration
	timeScale                   float64
	quiet                       bool
}

// stringList is a repeatable string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// simulateFlags returns the flags of "simulate": the global ones but --cluster, which names
// the cluster file here (the server's cluster is --server-cluster, or the global --cluster
// given before the command).
func (a *app) simulateFlags(o *simOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	a.flags("simulate").VisitAll(func(f *flag.Flag) {
		if f.Name != "cluster" {
			fs.Var(f.Value, f.Name, f.Usage)
		}
	})
	fs.StringVar(&a.cluster, "server-cluster", a.cluster, "with --from-server, the server's cluster to start from")
	fs.StringVar(&o.trace, "trace", "", "workload `file`: SWF 2.2 (.swf) or Sluice's trace format (JSON lines or YAML)")
	fs.StringVar(&o.format, "format", "", "trace `format`: swf or native (default: by the file's extension and content)")
	fs.StringVar(&o.cluster, "cluster", "", "cluster `file` (nodes, queues, priority classes, ... as 'sluicectl apply' takes); "+
		"for SWF without it the header's MaxNodes/MaxProcs make the nodes and the trace's queues get weight 1")
	fs.BoolVar(&o.fromServer, "from-server", false, "start from the nodes, queues, jobs and tasks a running sluiced holds (--server, --server-cluster)")
	fs.Var(&o.configs, "config", "scheduler configuration `file` (Volcano scheduler-conf YAML, or a simulation config with name, scheduler and queues); repeat to compare")
	fs.StringVar(&o.out, "out", "", "output `directory`: jobs.csv, timeline.csv, summary.json and report.html")
	fs.IntVar(&o.swf.CoresPerNode, "cores-per-node", 0, "SWF: processors per node (default: the cluster's largest node, else MaxProcs/MaxNodes)")
	fs.IntVar(&o.swf.ProcsPerTask, "procs-per-task", 0, "SWF: processors per task (default: whole nodes, the last task takes the rest)")
	fs.StringVar(&o.queueMap, "queue-map", "", "SWF: queue names by number, `1=short,2=normal` (others are q<N>, -1 is default)")
	fs.StringVar(&o.swf.Failed, "failed", sim.Keep, "SWF: failed records (status 0): keep or drop")
	fs.StringVar(&o.swf.Cancelled, "cancelled", sim.Keep, "SWF: cancelled records (status 5): keep or drop")
	fs.StringVar(&o.memoryPerCore, "memory-per-core", "", "SWF: memory each task asks for per processor, a `quantity` such as 2Gi (default none)")
	fs.BoolVar(&o.preemptable, "preemptable", false, "SWF: make every task preemptable (preempt and reclaim only take preemptable tasks)")
	fs.DurationVar(&o.period, "period", 0, "also run a cycle every `D` of virtual time between events, for time-based plugins (default: only after events)")
	fs.DurationVar(&o.releaseDelay, "release-delay", time.Second, "virtual time an evicted task takes to stop before it is pending again")
	fs.DurationVar(&o.interval, "interval", 0, "timeline interval (default: a round one giving at most 500 intervals)")
	fs.DurationVar(&o.background, "background-runtime", 0, "how long the jobs the starting cluster already holds keep running (default: throughout)")
	fs.Float64Var(&o.timeScale, "time-scale", 1, "multiply every submit time by `F`: 0.5 replays the trace's jobs twice as fast (about twice the load)")
	fs.BoolVar(&o.quiet, "quiet", false, "no progress lines on stderr")
	return fs
}

// simulate replays a trace in virtual time through the engine, once per configuration, and
// writes the comparison.
func (a *app) simulate(args []string) error {
	var o simOptions
	fs := a.simulateFlags(&o)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("simulate: unexpected argument %q", pos[0])
	}
	if err := o.check(); err != nil {
		return err
	}
	reg := builtin.Registry()

	start, err := a.simCluster(&o)
	if err != nil {
		return err
	}
	tr, err := o.readTrace(start)
	if err != nil {
		return err
	}
	changes, err := o.completeCluster(start, tr)
	if err != nil {
		return err
	}
	configs, err := a.simConfigs(&o, reg)
	if err != nil {
		return err
	}
	problems := sim.Check(changes, tr, configs, reg)
	if err := problems.Err(); err != nil {
		return fmt.Errorf("simulate: the run cannot start:\n%w", err)
	}
	for _, w := range problems.Warnings {
		fmt.Fprintf(a.stderr, "simulate: warning: %s\n", w)
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return fmt.Errorf("simulate: --out: %w", err)
	}

	opts := sim.Options{Registry: reg, Period: o.period, ReleaseDelay: o.releaseDelay, BackgroundRuntime: o.background}
	if !o.quiet {
		opts.Progress = func(p sim.Progress) {
			eta := "?"
			if p.JobsDone > 0 {
				eta = p.ETA().Round(time.Second).String()
			}
			fmt.Fprintf(a.stderr, "simulate: %s: virtual time %s, %d/%d jobs done, %d cycles, %.0f jobs/s, eta %s\n",
				p.Config, p.VirtualTime.Round(time.Second), p.JobsDone, p.JobsTotal, p.Cycles, p.Rate(), eta)
		}
		opts.ProgressEvery = 2 * time.Second
	}
	var results []*sim.Result
	for _, c := range configs {
		r, err := sim.Run(a.ctx, changes, tr, c, opts)
		if err != nil {
			return fmt.Errorf("simulate: %w", err)
		}
		if !o.quiet {
			fmt.Fprintf(a.stderr, "simulate: %s: %d jobs, %d cycles in %s\n", c.Name, len(r.Jobs), r.Cycles, r.Wall.Round(time.Millisecond))
		}
		results = append(results, r)
	}
	doc, err := writeOutputs(o.out, o.trace, tr, results, o.interval)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	printSimSummary(a.stdout, doc, o.out)
	return nil
}

func (o *simOptions) check() error {
	switch {
	case o.trace == "":
		return usagef("simulate: --trace FILE is required")
	case o.out == "":
		return usagef("simulate: --out DIR is required")
	case o.cluster != "" && o.fromServer:
		// Both: the file adds to the server's state (priority classes, quotas, ... the API
		// does not list).
	case o.format != "" && o.format != "swf" && o.format != "native":
		return usagef("simulate: --format must be swf or native, got %q", o.format)
	}
	for _, p := range []*string{&o.swf.Failed, &o.swf.Cancelled} {
		if *p != sim.Keep && *p != sim.Drop {
			return usagef("simulate: --failed and --cancelled take keep or drop, got %q", *p)
		}
	}
	if o.swf.CoresPerNode < 0 || o.swf.ProcsPerTask < 0 {
		return usagef("simulate: --cores-per-node and --procs-per-task must not be negative")
	}
	if !(o.timeScale > 0 && o.timeScale <= 1e6) {
		return usagef("simulate: --time-scale must be positive, got %g", o.timeScale)
	}
	if o.period < 0 || o.releaseDelay < 0 || o.interval < 0 || o.background < 0 {
		return usagef("simulate: durations must not be negative")
	}
	if o.queueMap != "" {
		o.swf.Queues = map[int]string{}
		for _, kv := range strings.Split(o.queueMap, ",") {
			k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
			n, err := strconv.Atoi(k)
			if !ok || err != nil || v == "" {
				return usagef("simulate: --queue-map: expected NUMBER=NAME,..., got %q", kv)
			}
			o.swf.Queues[n] = v
		}
	}
	if o.memoryPerCore != "" {
		q, err := resource.ParseQuantity(o.memoryPerCore)
		if err != nil || q.Sign() < 0 {
			return usagef("simulate: --memory-per-core: expected a quantity such as 2Gi, got %q", o.memoryPerCore)
		}
		o.swf.MemoryPerCore = float64(q.Value())
	}
	return nil
}

// readTrace reads the trace; an SWF trace's tasks fill the cluster's nodes when the cores
// per node are not given.
func (o *simOptions) readTrace(cluster []state.Change) (*sim.Trace, error) {
	f, err := os.Open(o.trace)
	if err != nil {
		return nil, fmt.Errorf("simulate: --trace: %w", err)
	}
	defer f.Close()
	br := bufio.NewReader(f)
	format := o.format
	if format == "" {
		format = sniffFormat(o.trace, br)
	}
	name := filepath.Base(o.trace)
	var tr *sim.Trace
	if format == "swf" {
		opts := o.swf
		opts.Preemptable = o.preemptable
		if opts.CoresPerNode == 0 {
			opts.CoresPerNode = largestNode(cluster)
		}
		tr, err = sim.ReadSWF(name, br, opts)
	} else {
		tr, err = sim.ReadNative(name, br)
	}
	if err != nil {
		return nil, fmt.Errorf("simulate: %w", err)
	}
	if len(tr.Jobs) == 0 {
		return nil, fmt.Errorf("simulate: %s holds no job to replay", o.trace)
	}
	if o.timeScale != 1 {
		tr.ScaleSubmits(o.timeScale)
	}
	return tr, nil
}

// sniffFormat guesses a trace's format: SWF for a .swf file or one whose first significant
// line is a ';' header or a record of numbers, native otherwise.
func sniffFormat(path string, br *bufio.Reader) string {
	if strings.EqualFold(filepath.Ext(path), ".swf") {
		return "swf"
	}
	head, _ := br.Peek(4096)
	for _, l := range bytes.Split(head, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		if l[0] == ';' {
			return "swf"
		}
		if f := strings.Fields(string(l)); len(f) == 18 {
			if _, err := strconv.ParseFloat(f[0], 64); err == nil {
				return "swf"
			}
		}
		break
	}
	return "native"
}

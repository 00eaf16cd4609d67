package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/sim/report"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
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

// simCluster reads the starting cluster: the file's, the server's, or both (the file's
// objects after the server's). It returns nil when neither is given.
func (a *app) simCluster(o *simOptions) ([]state.Change, error) {
	var out []state.Change
	if o.fromServer {
		cs, err := a.serverCluster()
		if err != nil {
			return nil, err
		}
		out = cs
	}
	if o.cluster != "" {
		data, err := os.ReadFile(o.cluster)
		if err != nil {
			return nil, fmt.Errorf("simulate: --cluster: %w", err)
		}
		parse := scenario.ParseCluster
		if o.fromServer {
			parse = scenario.ParseClusterPartial
		}
		c, err := parse(o.cluster, data)
		if err != nil {
			return nil, fmt.Errorf("simulate: %w", withLine(err))
		}
		b, err := service.DecodeBatch(c.Batch(), api.Epoch)
		if err != nil {
			return nil, fmt.Errorf("simulate: %s: %w", o.cluster, err)
		}
		out = append(out, b.Changes...)
	}
	return out, nil
}

// serverCluster reads the nodes, queues, jobs and tasks of --cluster from the server.
func (a *app) serverCluster() ([]state.Change, error) {
	conn, err := a.dial()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	c := sluicev1.NewClusterStateServiceClient(conn)
	b := &sluicev1.DeltaBatch{}
	add := func(d *sluicev1.Delta) { b.Deltas = append(b.Deltas, d) }
	for tok := ""; ; {
		r, err := c.ListNodes(a.ctx, &sluicev1.ListNodesRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, n := range r.GetNodes() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: n}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for tok := ""; ; {
		r, err := c.ListQueues(a.ctx, &sluicev1.ListQueuesRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, q := range r.GetQueues() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: q}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for tok := ""; ; {
		r, err := c.ListJobs(a.ctx, &sluicev1.ListJobsRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, j := range r.GetJobs() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: j}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for tok := ""; ; {
		r, err := c.ListTasks(a.ctx, &sluicev1.ListTasksRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, t := range r.GetTasks() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	if len(b.Deltas) == 0 {
		return nil, fmt.Errorf("simulate --from-server: cluster %q on %s holds nothing", a.cluster, a.server.addr)
	}
	d, err := service.DecodeBatch(b, api.Epoch)
	if err != nil {
		return nil, fmt.Errorf("simulate --from-server: the server's state: %w", err)
	}
	return d.Changes, nil
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

// largestNode returns the cores of the cluster's largest node (0 without nodes).
func largestNode(cluster []state.Change) int {
	cores := 0.0
	for _, c := range cluster {
		if c.Node != nil {
			cores = math.Max(cores, c.Node.Allocatable.MilliCPU/1000)
		}
	}
	return int(cores)
}

// completeCluster adds what the trace implies and the cluster lacks: nodes from an SWF
// header when the cluster has none, and, when it declares no queue, every queue the trace
// names (weight 1).
func (o *simOptions) completeCluster(cluster []state.Change, tr *sim.Trace) ([]state.Change, error) {
	hasNodes, hasQueues := false, false
	for _, c := range cluster {
		hasNodes = hasNodes || c.Node != nil
		hasQueues = hasQueues || c.Queue != nil
	}
	out := slices.Clone(cluster)
	if !hasNodes {
		if tr.Format != "swf" {
			return nil, errors.New("simulate: a native trace needs a cluster: give --cluster FILE or --from-server")
		}
		nodes, err := sim.SWFNodes(tr.Header, o.swf.CoresPerNode, 0)
		if err != nil {
			return nil, fmt.Errorf("simulate: %s: %w", o.trace, err)
		}
		for _, n := range nodes {
			if o.swf.MemoryPerCore > 0 {
				n.Allocatable.Memory = math.Max(n.Allocatable.Memory, o.swf.MemoryPerCore*n.Allocatable.MilliCPU/1000)
			}
			out = append(out, state.Change{Node: n})
		}
	}
	if !hasQueues {
		for _, q := range sim.TraceQueues(tr) {
			out = append(out, state.Change{Queue: q})
		}
	}
	return out, nil
}

// simConfigs reads every --config, or gives the embedded default (or, with --from-server,
// the server's configuration when the token may read it).
func (a *app) simConfigs(o *simOptions, reg *framework.Registry) ([]sim.Config, error) {
	if len(o.configs) == 0 {
		if o.fromServer {
			if cfg, err := a.serverConfig(reg); err == nil {
				return []sim.Config{{Name: "server", Scheduler: cfg}}, nil
			} else {
				fmt.Fprintf(a.stderr, "simulate: the server's configuration could not be read (%v); using the embedded default\n", err)
			}
		}
		return []sim.Config{{Name: "default", Scheduler: conf.Default()}}, nil
	}
	var out []sim.Config
	names := map[string]string{}
	for _, file := range o.configs {
		c, err := readSimConfig(file, reg)
		if err != nil {
			return nil, fmt.Errorf("simulate: --config %s: %w", file, err)
		}
		if prev, ok := names[c.Name]; ok {
			return nil, fmt.Errorf("simulate: --config %s: configuration name %q is also %s's: give each a name of its own", file, c.Name, prev)
		}
		names[c.Name] = file
		out = append(out, c)
	}
	return out, nil
}

func (a *app) serverConfig(reg *framework.Registry) (*conf.Config, error) {
	conn, err := a.dial()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	r, err := sluicev1.NewSchedulerServiceClient(conn).GetSchedulerConfig(a.ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: a.cluster})
	if err != nil {
		return nil, err
	}
	cfg, err := conf.Parse([]byte(r.GetConfig()))
	if err == nil {
		err = reg.Validate(cfg)
	}
	return cfg, err
}

// simConfigKeys are the keys of a simulation config (any other top-level key makes the
// file a plain scheduler-conf).
var simConfigKeys = []string{"name", "scheduler", "queues"}

// readSimConfig reads a configuration file: Volcano scheduler-conf YAML, named after the
// file, or a simulation config: a mapping with "scheduler" (the scheduler-conf, as a mapping
// or as text), and optionally "name" and "queues" (queues in the cluster-file form that
// replace the cluster's queues of the same names, to compare queue weights or capacities).
func readSimConfig(file string, reg *framework.Registry) (sim.Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return sim.Config{}, err
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) == nil && top["scheduler"].Kind != 0 {
		for k := range top {
			if !slices.Contains(simConfigKeys, k) {
				return sim.Config{}, fmt.Errorf("unknown key %q in a simulation config (allowed: %s)", k, strings.Join(simConfigKeys, ", "))
			}
		}
		return readWrappedConfig(file, name, top, reg)
	}
	cfg, err := parseSchedulerConf(data, reg)
	return sim.Config{Name: name, Scheduler: cfg}, err
}

func readWrappedConfig(file, name string, top map[string]yaml.Node, reg *framework.Registry) (sim.Config, error) {
	if n, ok := top["name"]; ok {
		if n.Kind != yaml.ScalarNode || n.Value == "" || strings.ContainsAny(n.Value, ",\n\"") {
			return sim.Config{}, fmt.Errorf("line %d: name must be a plain string", n.Line)
		}
		name = n.Value
	}
	sched := top["scheduler"]
	var text []byte
	if sched.Kind == yaml.ScalarNode {
		text = []byte(sched.Value)
	} else {
		var err error
		if text, err = yaml.Marshal(&sched); err != nil {
			return sim.Config{}, err
		}
	}
	cfg, err := parseSchedulerConf(text, reg)
	if err != nil {
		return sim.Config{}, fmt.Errorf("scheduler (from line %d): %w", sched.Line, err)
	}
	c := sim.Config{Name: name, Scheduler: cfg}
	if qn, ok := top["queues"]; ok {
		text, err := yaml.Marshal(map[string]*yaml.Node{"queues": &qn})
		if err != nil {
			return sim.Config{}, err
		}
		cl, err := scenario.ParseClusterPartial(file+" queues", text)
		if err != nil {
			return sim.Config{}, withLine(err)
		}
		b, err := service.DecodeBatch(cl.Batch(), api.Epoch)
		if err != nil {
			return sim.Config{}, fmt.Errorf("queues: %w", err)
		}
		for _, ch := range b.Changes {
			if ch.Queue != nil {
				c.Queues = append(c.Queues, ch.Queue)
			}
		}
	}
	return c, nil
}

func parseSchedulerConf(text []byte, reg *framework.Registry) (*conf.Config, error) {
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, err
	}
	if err := reg.Validate(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// writeOutputs writes the four outputs into dir and returns summary.json's content.
func writeOutputs(dir, tracePath string, tr *sim.Trace, results []*sim.Result, interval time.Duration) (*sim.Document, error) {
	if interval <= 0 {
		interval = sim.AutoInterval(results)
	}
	r0 := results[0]
	doc := &sim.Document{
		Trace:           sim.TraceInfo{File: filepath.Base(tracePath), Format: tr.Format, Jobs: len(tr.Jobs), Skipped: tr.Skipped},
		Cluster:         sim.Cluster{Nodes: r0.Nodes, Queues: r0.Queues, Capacity: map[string]float64{}},
		IntervalSeconds: interval.Seconds(),
	}
	for x, name := range r0.Resources {
		doc.Cluster.Capacity[name] = float64(r0.Capacity[x]) / sim.Unit(name)
	}
	for _, r := range results {
		doc.Configs = append(doc.Configs, sim.Summarize(r))
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"jobs.csv", func(w io.Writer) error { return sim.WriteJobsCSV(w, results) }},
		{"timeline.csv", func(w io.Writer) error { return sim.WriteTimelineCSV(w, results, interval) }},
		{"summary.json", func(w io.Writer) error { return sim.WriteSummaryJSON(w, doc) }},
		{"report.html", func(w io.Writer) error {
			return report.Write(w, &report.Input{Doc: doc, Results: results, Interval: interval})
		}},
	}
	for _, f := range files {
		if err := writeOutput(filepath.Join(dir, f.name), f.write); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// writeOutput writes a file through a buffer, and reports the first error.
func writeOutput(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printSimSummary prints the configurations side by side.
func printSimSummary(w io.Writer, doc *sim.Document, dir string) {
	head := []string{""}
	for _, c := range doc.Configs {
		head = append(head, c.Config)
	}
	tw := newTable(w, head...)
	for _, r := range report.Rows(doc) {
		tw.row(append([]string{r.Name}, r.Values...)...)
	}
	tw.flush()
	fmt.Fprintf(w, "\nwrote %s\n", strings.Join([]string{filepath.Join(dir, "jobs.csv"), filepath.Join(dir, "timeline.csv"),
		filepath.Join(dir, "summary.json"), filepath.Join(dir, "report.html")}, ", "))
}

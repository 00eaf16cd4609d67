package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/cmd/sluicectl/internal/synthpb"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/vtcodec"
	"github.com/sluice-sched/sluice/service"
)

// benchOptions are the flags of "bench".
type benchOptions struct {
	spec       synth.Spec
	workload   string
	arrivals   int
	watch      bool
	gap        time.Duration
	shapes     string
	configFile string
	cycles     int
	grpc       bool
	batch      int
	cpuProfile string
	memProfile string
}

func (a *app) benchFlags(o *benchOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.workload, "workload", wlPending, "`workload`: pending, steady-idle, steady-arrivals, preempt, reclaim or big-job")
	fs.IntVar(&o.arrivals, "arrivals", 100, "gangs that arrive before each cycle (steady-arrivals), or that must preempt (preempt) or reclaim (reclaim)")
	fs.BoolVar(&o.watch, "watch", false, "steady-arrivals through a loopback server's WatchPlans stream: measure the delta -> plan latency")
	fs.DurationVar(&o.gap, "gap", 300*time.Millisecond, "with --watch, the quiet `time` before each arrival")
	fs.IntVar(&o.spec.Nodes, "nodes", 1000, "`number` of nodes")
	fs.IntVar(&o.spec.Jobs, "jobs", 1000, "`number` of gang jobs")
	fs.IntVar(&o.spec.TasksPerJob, "tasks-per-job", 10, "tasks per job (the gang size)")
	fs.IntVar(&o.spec.Queues, "queues", 1, "`number` of queues (jobs are spread round-robin)")
	fs.StringVar(&o.shapes, "shapes", string(synth.Uniform), "node and task `shapes`: uniform, or mixed (several task sizes, 10% GPU tasks, several node classes)")
	fs.Uint64Var(&o.spec.Seed, "seed", 1, "generator `seed`; the same flags and seed give the same cluster")
	fs.StringVar(&o.configFile, "config", "", "scheduler configuration `file` (Volcano scheduler-conf YAML); the embedded default otherwise")
	fs.IntVar(&o.cycles, "cycles", 5, "measured cycles per path, after one warm-up cycle (cycle=0)")
	fs.BoolVar(&o.grpc, "grpc", false, "also ingest through Sync and schedule through gRPC on a loopback server")
	fs.IntVar(&o.batch, "batch", 1000, "deltas per Sync batch (with --grpc)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the cycles (warm-up included) to `file`")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile to `file` after the cycles")
	return fs
}

// bench generates a cluster from a seed (engine/synth) and runs full Schedule cycles on it in
// this process, dry runs unless the workload commits. The workload (--workload) says what the
// cluster looks like when the measured cycles run:
//   - pending (the default): every generated job pending, nothing running;
//   - steady-idle: the generated jobs bound by a committed first plan, nothing pending;
//   - steady-arrivals: the same, then --arrivals new gangs arrive as deltas before each cycle,
//     and each cycle's plan is proposed (cycle_ms) and committed (commit_ms);
//   - preempt: nodes full of low-priority running gangs (elastic to half their size), and
//     --arrivals high-priority gangs that run only by preempting (a configuration with
//     preempt unless --config gives one);
//   - reclaim: 4 queues of equal weight, the first holding every node with running gangs, the
//     others --arrivals pending gangs between them (a configuration with reclaim);
//   - big-job: one job of --tasks-per-job tasks (--jobs is ignored).
//
// With --grpc (pending and big-job) it also starts a real server on a loopback port, streams
// the cluster through Sync in batches and runs the same cycles through the Schedule RPC (dry
// runs, so every cycle sees the same state), alternating in-process and gRPC cycles so that
// both see the same machine load. Every cycle, in either path, must decide as the first did.
//
// It prints a line per cycle, then a last line of key=value pairs: workload, nodes, queues,
// jobs, tasks, placed (binds), pipelined, evicted, cycles, cycle_ms (median in-process
// cycle), cpu_ms (median CPU time of the process during an in-process cycle, GC workers
// included: on a shared machine it moves less than the wall time), tasks_per_s (tasks placed
// or pipelined per second of the median cycle), session_ms (median of the engine's session
// time within the cycle), plan_fp (a fingerprint of the last cycle's decisions: builds that
// decide alike print the same), rss_mib (the process's peak RSS, VmHWM), and with --grpc grpc_cycle_ms (median, as the
// client sees the call), grpc_session_ms (median session time on the server), ingest_s,
// ingest_objects_per_s and grpc_overhead_pct (median gRPC cycle against median in-process
// cycle). A cycle minus its session is the snapshot and, through gRPC, the plan's conversion,
// encoding, transfer and decoding.
func (a *app) bench(args []string) error {
	if len(args) > 0 {
		switch args[0] {
		case "neighbours":
			return a.benchNeighbours(args[1:])
		case "ingest":
			return a.benchIngest(args[1:])
		}
	}
	var o benchOptions
	fs := a.benchFlags(&o)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench: unexpected argument %q", pos[0])
	}
	o.spec.Shapes = synth.Shapes(o.shapes)
	if err := o.spec.Validate(); err != nil {
		return usagef("bench: %v", err)
	}
	if err := checkWorkload(&o); err != nil {
		return usagef("bench: %v", err)
	}
	if o.cycles < 1 {
		return usagef("bench: --cycles must be at least 1, got %d", o.cycles)
	}
	if o.batch < 1 {
		return usagef("bench: --batch must be at least 1, got %d", o.batch)
	}
	reg := builtin.Registry()
	var cfg *conf.Config
	var cfgText []byte
	if o.configFile != "" {
		cfgText, err = os.ReadFile(o.configFile)
		if err != nil {
			return fmt.Errorf("bench: --config: %w", err)
		}
		if cfg, err = conf.Parse(cfgText); err == nil {
			err = reg.Validate(cfg)
		}
		if err != nil {
			return fmt.Errorf("bench: --config %s: %v", o.configFile, err)
		}
	}
	b := &benchRun{a: a, o: o, reg: reg, cfg: cfg, cfgText: cfgText, cluster: a.cluster}
	if err := b.parseWorkloadConfig(); err != nil {
		return err
	}
	if o.watch {
		c, err := synth.Generate(o.spec)
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		b.c = c
		return b.runWatch(a.ctx)
	}
	return b.run()
}

// benchRun is one run of "bench".
type benchRun struct {
	a       *app
	o       benchOptions
	reg     *framework.Registry
	cfg     *conf.Config
	cfgText []byte
	cluster string
	c       *synth.Cluster
	now     time.Time

	st     *state.Store
	eng    *engine.Engine
	conn   *grpc.ClientConn
	client sluicev1.SchedulerServiceClient

	cpuProfile *os.File // nil without --cpuprofile

	// fingerprint of the first cycle's decisions; every later cycle, in either path, must
	// decide the same.
	fingerprint uint64
	fpSet       bool
}

// cycleResult is one measured cycle.
type cycleResult struct {
	wall    time.Duration // the call, as its caller sees it
	cpu     time.Duration // the process's CPU time (user and system, GC included) during the call
	session time.Duration // the engine's own session time (open, actions, close)
	placed  int           // bind decisions
	piped   int           // pipeline decisions
	evicted int           // evict decisions
	decided int           // all decisions
	commit  time.Duration // steady-arrivals: committing the plan
	arrive  time.Duration // steady-arrivals: applying the arrivals before the cycle
	fp      uint64
	respMiB float64 // gRPC only: the response's size
}

func (b *benchRun) printf(format string, args ...any) { fmt.Fprintf(b.a.stdout, format, args...) }

func (b *benchRun) run() (err error) {
	ctx := b.a.ctx
	// The profiles' files are created first, so that a bad path fails before the work.
	var cpuProfile, memProfile *os.File
	for _, p := range []struct {
		flag, path string
		f          **os.File
	}{{"--cpuprofile", b.o.cpuProfile, &cpuProfile}, {"--memprofile", b.o.memProfile, &memProfile}} {
		if p.path == "" {
			continue
		}
		f, err := os.Create(p.path)
		if err != nil {
			return fmt.Errorf("bench: %s: %w", p.flag, err)
		}
		defer func() {
			if cerr := f.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("bench: %s: %w", p.flag, cerr)
			}
		}()
		*p.f = f
	}
	b.cpuProfile = cpuProfile
	start := time.Now()
	c, err := synth.Generate(b.o.spec)
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	b.c, b.now = c, c.Now()
	b.printf("generate seed=%d shapes=%s nodes=%d queues=%d jobs=%d tasks=%d objects=%d generate_s=%.3f\n",
		b.o.spec.Seed, b.o.spec.Shapes, len(c.Nodes), len(c.Queues), len(c.Jobs), len(c.Tasks), c.Objects(), time.Since(start).Seconds())

	var ingest time.Duration
	if b.o.grpc {
		sctx, cancel := context.WithCancel(ctx)
		defer cancel()
		addr, stop, err := service.StartInProcess(sctx, builtin.Registry())
		if err != nil {
			return fmt.Errorf("bench: %w", err)
		}
		defer stop()
		b.conn, err = grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), vtcodec.DialOption(),
			grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(math.MaxInt32), grpc.MaxCallSendMsgSize(service.DefaultMaxRecvBytes)))
		if err != nil {
			return fmt.Errorf("bench: connect to %s: %w", addr, err)
		}
		defer b.conn.Close()
		b.client = sluicev1.NewSchedulerServiceClient(b.conn)
		if ingest, err = b.ingest(ctx); err != nil {
			return err
		}
		if b.cfgText != nil {
			if _, err := b.client.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: b.cluster, Config: string(b.cfgText)}); err != nil {
				return b.a.rpcError("bench: --config", err)
			}
		}
	}
	start = time.Now()
	b.st = state.New()
	if err := c.Load(b.st, b.cluster); err != nil {
		return fmt.Errorf("bench: load: %w", err)
	}
	b.eng, err = engine.New(b.st, engine.Options{Registry: b.reg, DefaultConfig: b.cfg})
	if err != nil {
		return fmt.Errorf("bench: %w", err)
	}
	b.printf("load path=inprocess objects=%d load_s=%.3f\n", c.Objects(), time.Since(start).Seconds())
	if err := b.prepare(ctx); err != nil {
		return err
	}

	runtime.GC()
	debug.FreeOSMemory()

	local, remote, err := b.cycles(ctx)
	if err != nil {
		return err
	}
	if memProfile != nil {
		runtime.GC()
		if err := pprof.WriteHeapProfile(memProfile); err != nil {
			return fmt.Errorf("bench: --memprofile: %w", err)
		}
	}

	med := median(local, func(r cycleResult) time.Duration { return r.wall })
	last := local[len(local)-1]
	kv := []string{
		"workload=" + b.o.workload,
		"nodes=" + strconv.Itoa(len(b.c.Nodes)),
		"queues=" + strconv.Itoa(len(b.c.Queues)),
		"jobs=" + strconv.Itoa(len(b.c.Jobs)),
		"tasks=" + strconv.Itoa(len(b.c.Tasks)),
		"placed=" + strconv.Itoa(last.placed),
		"pipelined=" + strconv.Itoa(last.piped),
		"evicted=" + strconv.Itoa(last.evicted),
		"cycles=" + strconv.Itoa(b.o.cycles),
		"cycle_ms=" + msText(med),
		"cpu_ms=" + msText(median(local, func(r cycleResult) time.Duration { return r.cpu })),
		fmt.Sprintf("tasks_per_s=%.0f", float64(last.placed+last.piped)/med.Seconds()),
		"session_ms=" + msText(median(local, func(r cycleResult) time.Duration { return r.session })),
		"rss_mib=" + peakRSS(),
		fmt.Sprintf("plan_fp=%016x", last.fp),
	}
	if b.o.workload == wlSteadyArrivals {
		kv = append(kv,
			fmt.Sprintf("commit_ms=%.1f", ms(median(local, func(r cycleResult) time.Duration { return r.commit }))),
			fmt.Sprintf("arrive_ms=%.1f", ms(median(local, func(r cycleResult) time.Duration { return r.arrive }))))
	}
	if b.o.grpc {
		gmed := median(remote, func(r cycleResult) time.Duration { return r.wall })
		kv = append(kv,
			fmt.Sprintf("grpc_cycle_ms=%.1f", ms(gmed)),
			fmt.Sprintf("grpc_session_ms=%.1f", ms(median(remote, func(r cycleResult) time.Duration { return r.session }))),
			fmt.Sprintf("ingest_s=%.3f", ingest.Seconds()),
			fmt.Sprintf("ingest_objects_per_s=%.0f", float64(b.c.Objects())/ingest.Seconds()),
			fmt.Sprintf("grpc_overhead_pct=%.1f", 100*(gmed.Seconds()-med.Seconds())/med.Seconds()),
		)
	}
	b.printf("%s\n", strings.Join(kv, " "))
	return nil
}

// cycles runs a warm-up cycle (cycle 0, not counted) and the measured cycles on each path,
// alternating the paths, under the CPU profile when there is one.
func (b *benchRun) cycles(ctx context.Context) (local, remote []cycleResult, err error) {
	if b.cpuProfile != nil {
		if err := pprof.StartCPUProfile(b.cpuProfile); err != nil {
			return nil, nil, fmt.Errorf("bench: --cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	for i := 0; i <= b.o.cycles; i++ {
		arrive, err := b.arrive(i)
		if err != nil {
			return nil, nil, err
		}
		r, err := b.cycleInProcess(ctx)
		r.arrive = arrive
		if err == nil {
			err = b.check(i, "inprocess", r)
		}
		if err != nil {
			return nil, nil, err
		}
		if i > 0 {
			local = append(local, r)
		}
		b.printf("cycle=%d path=inprocess cycle_ms=%s cpu_ms=%s session_ms=%s placed=%d pipelined=%d evicted=%d decisions=%d\n",
			i, msText(r.wall), msText(r.cpu), msText(r.session), r.placed, r.piped, r.evicted, r.decided)
		if !b.o.grpc {
			continue
		}
		r, err = b.cycleGRPC(ctx)
		if err == nil {
			err = b.check(i, "grpc", r)
		}
		if err != nil {
			return nil, nil, err
		}
		if i > 0 {
			remote = append(remote, r)
		}
		b.printf("cycle=%d path=grpc cycle_ms=%.1f server_session_ms=%.1f response_mib=%.2f placed=%d decisions=%d\n",
			i, ms(r.wall), ms(r.session), r.respMiB, r.placed, r.decided)
	}
	return local, remote, nil
}

// check requires a cycle to decide as the first one did, when every cycle sees the same state.
func (b *benchRun) check(i int, path string, r cycleResult) error {
	if !repeatable(b.o.workload) {
		return nil
	}
	if !b.fpSet {
		b.fingerprint, b.fpSet = r.fp, true
		return nil
	}
	if r.fp != b.fingerprint {
		return fmt.Errorf("bench: cycle %d (%s) decided differently from the first cycle on the same state", i, path)
	}
	return nil
}

// cycleInProcess runs one cycle through the engine: a dry run, or for steady-arrivals a
// proposed plan, committed after the cycle's clock stopped.
func (b *benchRun) cycleInProcess(ctx context.Context) (cycleResult, error) {
	mode := engine.DryRun
	if b.o.workload == wlSteadyArrivals {
		mode = engine.Propose
	}
	start, cpu0 := time.Now(), cpuTime()
	p, err := b.eng.Schedule(ctx, b.cluster, engine.ScheduleRequest{Mode: mode, Now: b.now})
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		return cycleResult{}, fmt.Errorf("bench: schedule: %w", err)
	}
	r := cycleResult{wall: wall, cpu: cpu, session: p.Duration, decided: len(p.Result.Decisions)}
	h := fnv.New64a()
	for _, d := range p.Result.Decisions {
		switch d.Kind {
		case framework.DecisionBind:
			r.placed++
		case framework.DecisionPipeline:
			r.piped++
		case framework.DecisionEvict:
			r.evicted++
		}
		hashDecision(h, int(d.Kind), d.Task, d.Node)
	}
	r.fp = h.Sum64()
	if mode == engine.Propose {
		start = time.Now()
		if _, err := b.eng.CommitPlan(ctx, b.cluster, p.ID); err != nil {
			return cycleResult{}, fmt.Errorf("bench: commit: %w", err)
		}
		r.commit = time.Since(start)
	}
	return r, nil
}

func (b *benchRun) cycleGRPC(ctx context.Context) (cycleResult, error) {
	req := &sluicev1.ScheduleRequest{Cluster: b.cluster, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, Now: timestamppb.New(b.now),
		PageSize: maxPageSize}
	start := time.Now()
	resp, err := b.client.Schedule(ctx, req)
	if err != nil {
		return cycleResult{}, b.a.rpcError("bench: schedule", err)
	}
	p := resp.GetPlan()
	size := proto.Size(resp)
	// The response holds the plan's first page; the rest comes from GetPlan, as a client
	// that wants every decision fetches it.
	decisions := p.GetDecisions()
	for token := resp.GetNextPageToken(); token != ""; {
		page, err := b.client.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: b.cluster, PlanId: p.GetId(), PageSize: maxPageSize, PageToken: token})
		if err != nil {
			return cycleResult{}, b.a.rpcError("bench: plan page", err)
		}
		size += proto.Size(page)
		decisions = append(decisions, page.GetPlan().GetDecisions()...)
		token = page.GetNextPageToken()
	}
	wall := time.Since(start)
	r := cycleResult{wall: wall, session: p.GetStats().GetTotal().AsDuration(), decided: len(decisions),
		respMiB: float64(size) / (1 << 20)}
	h := fnv.New64a()
	for _, d := range decisions {
		switch k := d.GetKind().(type) {
		case *sluicev1.Decision_Bind:
			r.placed++
			hashDecision(h, int(framework.DecisionBind), sluice.FullName(k.Bind.GetTask()), k.Bind.GetNode())
		case *sluicev1.Decision_Pipeline:
			r.piped++
			hashDecision(h, int(framework.DecisionPipeline), sluice.FullName(k.Pipeline.GetTask()), k.Pipeline.GetNode())
		case *sluicev1.Decision_Evict:
			r.evicted++
			hashDecision(h, int(framework.DecisionEvict), sluice.FullName(k.Evict.GetTask()), k.Evict.GetNode())
		}
	}
	r.fp = h.Sum64()
	return r, nil
}

// maxPageSize is the most decisions a plan page may hold (ScheduleRequest.page_size).
const maxPageSize = 5000

// hashDecision adds a decision's kind, task and node to a plan's fingerprint.
func hashDecision(h hash.Hash64, kind int, task, node string) {
	_, _ = h.Write([]byte{byte(kind), 0})
	_, _ = io.WriteString(h, task)
	_, _ = h.Write([]byte{0})
	_, _ = io.WriteString(h, node)
	_, _ = h.Write([]byte{0})
}

// ingest streams the cluster through one Sync stream in batches, the first replacing the
// cluster, and waits until the server acknowledged every batch.
func (b *benchRun) ingest(ctx context.Context) (time.Duration, error) {
	batches := synthpb.Batches(b.c, b.o.batch)
	elapsed, err := syncBatches(ctx, sluicev1.NewClusterStateServiceClient(b.conn), b.cluster, batches)
	if err != nil {
		return 0, b.a.rpcError("bench: sync", err)
	}
	b.printf("ingest path=grpc objects=%d batches=%d ingest_s=%.3f ingest_objects_per_s=%.0f\n",
		b.c.Objects(), len(batches), elapsed.Seconds(), float64(b.c.Objects())/elapsed.Seconds())
	return elapsed, nil
}

// cpuTime returns the CPU time (user and system) the process used so far, 0 where that is not
// available.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// msText formats a duration in milliseconds: one decimal, three below a millisecond (an idle
// cycle on kept views takes tens of microseconds).
func msText(d time.Duration) string {
	if d < time.Millisecond {
		return strconv.FormatFloat(ms(d), 'f', 3, 64)
	}
	return strconv.FormatFloat(ms(d), 'f', 1, 64)
}

// median returns the median of the values (the mean of the middle two for an even count).
func median[T any](rs []T, value func(T) time.Duration) time.Duration {
	vs := make([]time.Duration, len(rs))
	for i, r := range rs {
		vs[i] = value(r)
	}
	slices.Sort(vs)
	n := len(vs)
	if n%2 == 1 {
		return vs[n/2]
	}
	return (vs[n/2-1] + vs[n/2]) / 2
}

// peakRSS returns the process's peak resident set size in MiB (VmHWM of /proc/self/status),
// or "NA" where that is not available.
func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "NA"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmHWM:")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return "NA"
		}
		kb, err := strconv.ParseFloat(fields[0], 64)
		if err != nil {
			return "NA"
		}
		return strconv.FormatFloat(kb/1024, 'f', 0, 64)
	}
	return "NA"
}

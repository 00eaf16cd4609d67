package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/cmd/sluicectl/internal/synthpb"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// neighbourOptions are the flags of "bench neighbours".
type neighbourOptions struct {
	large      synth.Spec
	shapes     string
	callers    int
	smallNodes int
	gang       int
	keep       int
	rate       float64
	phase      time.Duration
	rounds     int
	timeout    time.Duration
	largeName  string
	smallName  string
	batch      int
	skipIngest bool
}

func neighbourFlags(o *neighbourOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench neighbours", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&o.large.Nodes, "nodes", 5000, "`number` of nodes of the large cluster")
	fs.IntVar(&o.large.Jobs, "jobs", 5000, "`number` of pending gang jobs of the large cluster")
	fs.IntVar(&o.large.TasksPerJob, "tasks-per-job", 10, "tasks per job of the large cluster")
	fs.IntVar(&o.large.Queues, "queues", 20, "`number` of queues of the large cluster")
	fs.StringVar(&o.shapes, "shapes", string(synth.Mixed), "the large cluster's `shapes`: uniform or mixed")
	fs.Uint64Var(&o.large.Seed, "seed", 1, "generator `seed` of the large cluster")
	fs.IntVar(&o.callers, "callers", 2, "`number` of callers running back-to-back dry runs on the large cluster in the noisy phases")
	fs.IntVar(&o.smallNodes, "small-nodes", 50, "`number` of nodes of the small cluster")
	fs.IntVar(&o.gang, "small-gang", 4, "tasks of each job the small cluster's client submits")
	fs.IntVar(&o.keep, "small-keep", 20, "jobs the small cluster keeps: each iteration deletes the job submitted this many iterations before")
	fs.Float64Var(&o.rate, "rate", 20, "iterations per second of the small cluster's client (Sync batch, Schedule, CommitPlan)")
	fs.DurationVar(&o.phase, "phase", 15*time.Second, "`duration` of each phase")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds of one idle and one noisy phase")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "deadline of each call of the small cluster's client")
	fs.StringVar(&o.largeName, "large-cluster", "noisy-large", "`name` of the large cluster")
	fs.StringVar(&o.smallName, "small-cluster", "noisy-small", "`name` of the small cluster")
	fs.IntVar(&o.batch, "batch", 1000, "deltas per Sync batch when loading the large cluster")
	fs.BoolVar(&o.skipIngest, "skip-ingest", false, "do not load the large cluster (the server has it from an earlier run)")
	return fs
}

// benchNeighbours measures how a busy cluster slows another one on the same server: a small
// cluster's client submits a gang, schedules and commits, at a steady rate, through the
// whole run; the phases alternate between the large cluster idle and the large cluster
// hammered by back-to-back dry runs from several callers. It prints a line per phase, then,
// per operation of the small cluster (sync_ack, schedule, commit), the p50 and p99 of the idle
// and of the noisy phases and their ratio, and a last line of key=value pairs.
//
// Without --server it starts a server in this process; with --server it measures that server
// (a real sluiced), which is the measure to record, since then the clients' own work does not
// share the server's Go scheduler.
func (a *app) benchNeighbours(args []string) error {
	var o neighbourOptions
	fs := neighbourFlags(&o)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench neighbours: unexpected argument %q", pos[0])
	}
	o.large.Shapes = synth.Shapes(o.shapes)
	switch err := o.large.Validate(); {
	case err != nil:
		return usagef("bench neighbours: %v", err)
	case o.callers < 1, o.smallNodes < 1, o.gang < 1, o.keep < 1, o.rounds < 1, o.batch < 1:
		return usagef("bench neighbours: --callers, --small-nodes, --small-gang, --small-keep, --rounds and --batch must be at least 1")
	case o.rate <= 0 || o.phase <= 0 || o.timeout <= 0:
		return usagef("bench neighbours: --rate, --phase and --timeout must be positive")
	}
	ctx := a.ctx
	dial, _, stop, err := a.benchServer(ctx)
	if err != nil {
		return fmt.Errorf("bench neighbours: %w", err)
	}
	defer stop()
	// Each client has a connection of its own, as the resource managers of different
	// clusters would: the small cluster's calls do not queue behind the large one's frames.
	n := &neighbours{a: a, o: o}
	for i := 0; i <= o.callers; i++ {
		conn, err := dial()
		if err != nil {
			return fmt.Errorf("bench neighbours: %w", err)
		}
		defer conn.Close()
		n.conns = append(n.conns, conn)
	}
	n.cs, n.sc = sluicev1.NewClusterStateServiceClient(n.conns[0]), sluicev1.NewSchedulerServiceClient(n.conns[0])
	return n.run(ctx)
}

// neighbours is one run of "bench neighbours".
type neighbours struct {
	a *app
	o neighbourOptions
	// conns[0] is the small cluster's client's (cs, sc), conns[1:] the large cluster's
	// callers'.
	conns []*grpc.ClientConn
	cs    sluicev1.ClusterStateServiceClient
	sc    sluicev1.SchedulerServiceClient

	// The small cluster's Sync stream and the sequence of its last batch.
	sync sluicev1.ClusterStateService_SyncClient
	seq  uint64
	iter int
}

// The small cluster's operations, in the order of an iteration.
var neighbourOps = []string{"sync_ack", "schedule", "commit"}

// phaseResult is what one phase measured.
type phaseResult struct {
	lat      map[string][]time.Duration // by operation
	errs     map[string]int             // failed calls of the small cluster, by code
	dryRuns  []time.Duration            // the large cluster's completed dry runs
	dryErrs  map[string]int             // its failed ones, by code
	behind   int                        // iterations that started late (the client could not keep the rate)
	duration time.Duration
}

func newPhaseResult() *phaseResult {
	return &phaseResult{lat: map[string][]time.Duration{}, errs: map[string]int{}, dryErrs: map[string]int{}}
}

func (n *neighbours) printf(format string, args ...any) { fmt.Fprintf(n.a.stdout, format, args...) }

func (n *neighbours) run(ctx context.Context) error {
	if err := n.loadLarge(ctx); err != nil {
		return err
	}
	if err := n.openSmall(ctx); err != nil {
		return err
	}
	defer func() { _ = n.sync.CloseSend() }()
	// Warm-up: a few seconds of the small client alone, not counted.
	if _, err := n.phase(ctx, "warmup", 0, min(n.o.phase, 3*time.Second), false); err != nil {
		return err
	}
	idle, noisy := newPhaseResult(), newPhaseResult()
	for r := 1; r <= n.o.rounds; r++ {
		for _, noisyPhase := range []bool{false, true} {
			name, into := "idle", idle
			if noisyPhase {
				name, into = "noisy", noisy
			}
			res, err := n.phase(ctx, name, r, n.o.phase, noisyPhase)
			if err != nil {
				return err
			}
			into.merge(res)
		}
	}
	return n.report(idle, noisy)
}

// loadLarge generates the large cluster and streams it in.
func (n *neighbours) loadLarge(ctx context.Context) error {
	if n.o.skipIngest {
		return nil
	}
	start := time.Now()
	c, err := synth.Generate(n.o.large)
	if err != nil {
		return fmt.Errorf("bench neighbours: %w", err)
	}
	stream, err := n.cs.Sync(ctx)
	if err != nil {
		return n.a.rpcError("bench neighbours: sync", err)
	}
	defer func() { _ = stream.CloseSend() }()
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: n.o.largeName}}}); err != nil {
		return n.a.streamError(stream.RecvMsg, err)
	}
	if _, err := stream.Recv(); err != nil { // welcome
		return n.a.rpcError("bench neighbours: sync", err)
	}
	// One batch at a time: the large cluster is loaded once, before anything is measured.
	for _, b := range synthpb.Batches(c, n.o.batch) {
		if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: b}}); err != nil {
			return n.a.streamError(stream.RecvMsg, err)
		}
		m, err := stream.Recv()
		if err != nil {
			return n.a.rpcError("bench neighbours: sync", err)
		}
		if m.GetAck() == nil {
			return fmt.Errorf("bench neighbours: batch %d of the large cluster not acknowledged: %v", b.GetSequence(), m)
		}
	}
	n.printf("large cluster=%s nodes=%d jobs=%d tasks=%d load_s=%.1f\n", n.o.largeName, len(c.Nodes), len(c.Jobs), len(c.Tasks), time.Since(start).Seconds())
	return nil
}

// openSmall opens the small cluster's Sync stream and sends its nodes.
func (n *neighbours) openSmall(ctx context.Context) error {
	stream, err := n.cs.Sync(ctx)
	if err != nil {
		return n.a.rpcError("bench neighbours: sync", err)
	}
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: n.o.smallName}}}); err != nil {
		return n.a.streamError(stream.RecvMsg, err)
	}
	if _, err := stream.Recv(); err != nil { // welcome
		return n.a.rpcError("bench neighbours: sync", err)
	}
	n.sync = stream
	var nodes []*sluicev1.Delta
	for i := 0; i < n.o.smallNodes; i++ {
		nodes = append(nodes, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name:        fmt.Sprintf("small-%03d", i),
			Allocatable: map[string]string{"cpu": "32", "memory": "128Gi", "pods": "110"},
		}}})
	}
	_, err = n.send(ctx, &sluicev1.DeltaBatch{ReplaceAll: true, Deltas: nodes})
	return err
}

// send sends a batch on the small cluster's stream and waits for its acknowledgement.
func (n *neighbours) send(ctx context.Context, b *sluicev1.DeltaBatch) (time.Duration, error) {
	n.seq++
	b.Sequence = n.seq
	start := time.Now()
	if err := n.sync.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: b}}); err != nil {
		return 0, n.a.streamError(n.sync.RecvMsg, err)
	}
	m, err := n.sync.Recv()
	d := time.Since(start)
	if err != nil {
		return 0, n.a.rpcError("bench neighbours: sync", err)
	}
	if m.GetAck() == nil {
		return 0, fmt.Errorf("bench neighbours: batch %d of the small cluster not acknowledged: %v", b.Sequence, m)
	}
	return d, nil
}

// phase runs the small cluster's client for d at the steady rate, with the large cluster's
// callers hammering it when noisy.
func (n *neighbours) phase(ctx context.Context, name string, round int, d time.Duration, noisy bool) (*phaseResult, error) {
	res := newPhaseResult()
	var wg sync.WaitGroup
	var mu sync.Mutex
	lctx, stopLarge := context.WithCancel(ctx)
	if noisy {
		for c := 1; c <= n.o.callers; c++ {
			sc := sluicev1.NewSchedulerServiceClient(n.conns[c])
			wg.Add(1)
			go func() {
				defer wg.Done()
				n.hammer(lctx, sc, res, &mu)
			}()
		}
	}
	start := time.Now()
	interval := time.Duration(float64(time.Second) / n.o.rate)
	next := start
	var err error
	for time.Since(start) < d && err == nil {
		if wait := time.Until(next); wait > 0 {
			select {
			case <-ctx.Done():
				err = ctx.Err()
				continue
			case <-time.After(wait):
			}
		} else if wait < -interval {
			res.behind++
		}
		next = next.Add(interval)
		err = n.iteration(ctx, res, &mu)
	}
	stopLarge()
	wg.Wait()
	if err != nil {
		return nil, err
	}
	res.duration = time.Since(start)
	if name != "warmup" {
		n.printPhase(name, round, res)
	}
	return res, nil
}

// hammer runs back-to-back dry runs on the large cluster until ctx ends.
func (n *neighbours) hammer(ctx context.Context, sc sluicev1.SchedulerServiceClient, res *phaseResult, mu *sync.Mutex) {
	for ctx.Err() == nil {
		start := time.Now()
		_, err := sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: n.o.largeName, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, PageSize: 1})
		d := time.Since(start)
		mu.Lock()
		switch {
		case err == nil:
			res.dryRuns = append(res.dryRuns, d)
		case ctx.Err() == nil:
			res.dryErrs[status.Code(err).String()]++
		}
		mu.Unlock()
		if status.Code(err) == codes.ResourceExhausted {
			// Back off as the server says (RetryInfo), at most a second.
			wait := time.Second
			for _, det := range status.Convert(err).Details() {
				if ri, ok := det.(*errdetails.RetryInfo); ok {
					wait = min(wait, ri.GetRetryDelay().AsDuration())
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
		}
	}
}

// iteration is one round trip of the small cluster's client: a batch with a new gang (and
// the deletion of an old one), a proposed cycle, and its commit.
func (n *neighbours) iteration(ctx context.Context, res *phaseResult, mu *sync.Mutex) error {
	n.iter++
	job := fmt.Sprintf("churn-%06d", n.iter)
	deltas := []*sluicev1.Delta{{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: job, MinAvailable: proto.Int32(int32(n.o.gang))}}}}
	for t := 0; t < n.o.gang; t++ {
		deltas = append(deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{
			Name: fmt.Sprintf("%s-%d", job, t), Job: job, Role: "worker",
			Resources: map[string]string{"cpu": "1", "memory": "2Gi"},
		}}})
	}
	if old := n.iter - n.o.keep; old > 0 {
		deltas = append(deltas, &sluicev1.Delta{Change: &sluicev1.Delta_Delete{Delete: &sluicev1.ObjectRef{
			Kind: sluicev1.ObjectKind_OBJECT_KIND_JOB, Name: fmt.Sprintf("churn-%06d", old)}}})
	}
	d, err := n.send(ctx, &sluicev1.DeltaBatch{Deltas: deltas})
	if err != nil {
		return err
	}
	record := func(op string, d time.Duration, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			res.errs[op+":"+status.Code(err).String()]++
			return
		}
		res.lat[op] = append(res.lat[op], d)
	}
	record("sync_ack", d, nil)

	cctx, cancel := context.WithTimeout(ctx, n.o.timeout)
	defer cancel()
	start := time.Now()
	sr, err := n.sc.Schedule(cctx, &sluicev1.ScheduleRequest{Cluster: n.o.smallName, PageSize: 100})
	record("schedule", time.Since(start), err)
	if err != nil {
		return nil
	}
	start = time.Now()
	_, err = n.sc.CommitPlan(cctx, &sluicev1.CommitPlanRequest{Cluster: n.o.smallName, PlanId: sr.GetPlan().GetId(), PageSize: 1})
	record("commit", time.Since(start), err)
	return nil
}

// merge adds another phase's figures.
func (p *phaseResult) merge(q *phaseResult) {
	for op, ds := range q.lat {
		p.lat[op] = append(p.lat[op], ds...)
	}
	for k, v := range q.errs {
		p.errs[k] += v
	}
	for k, v := range q.dryErrs {
		p.dryErrs[k] += v
	}
	p.dryRuns = append(p.dryRuns, q.dryRuns...)
	p.behind += q.behind
	p.duration += q.duration
}

// quantile returns the q-quantile (nearest rank) of ds, or 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func (n *neighbours) printPhase(name string, round int, r *phaseResult) {
	var b strings.Builder
	fmt.Fprintf(&b, "phase=%s round=%d", name, round)
	for _, op := range neighbourOps {
		fmt.Fprintf(&b, " %s_n=%d %s_p50_ms=%.2f %s_p99_ms=%.2f", op, len(r.lat[op]), op, ms(quantile(r.lat[op], .5)), op, ms(quantile(r.lat[op], .99)))
	}
	fmt.Fprintf(&b, " large_dry_runs=%d large_dry_run_ms=%.0f behind=%d", len(r.dryRuns), ms(quantile(r.dryRuns, .5)), r.behind)
	if e := errText(r); e != "" {
		fmt.Fprintf(&b, " errors=%s", e)
	}
	n.printf("%s\n", b.String())
}

// errText lists a phase's failed calls as "op:code:count,..." (the large cluster's dry
// runs as "dry_run:code:count"), or "" when there were none.
func errText(r *phaseResult) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(r.errs)) {
		parts = append(parts, fmt.Sprintf("%s:%d", k, r.errs[k]))
	}
	for _, k := range slices.Sorted(maps.Keys(r.dryErrs)) {
		parts = append(parts, fmt.Sprintf("dry_run:%s:%d", k, r.dryErrs[k]))
	}
	return strings.Join(parts, ",")
}

// report prints the table of the small cluster's latencies, idle against noisy, and the
// summary line.
func (n *neighbours) report(idle, noisy *phaseResult) error {
	n.printf("%-9s %8s %8s %8s %8s %8s %8s\n", "op", "idle_p50", "idle_p99", "noisy_p50", "noisy_p99", "p99_x", "samples")
	kv := []string{fmt.Sprintf("rounds=%d", n.o.rounds), fmt.Sprintf("phase_s=%.0f", n.o.phase.Seconds())}
	for _, op := range neighbourOps {
		i50, i99 := quantile(idle.lat[op], .5), quantile(idle.lat[op], .99)
		n50, n99 := quantile(noisy.lat[op], .5), quantile(noisy.lat[op], .99)
		ratio := 0.0
		if i99 > 0 {
			ratio = float64(n99) / float64(i99)
		}
		n.printf("%-9s %8.2f %8.2f %8.2f %8.2f %8.2f %4d/%-4d\n", op, ms(i50), ms(i99), ms(n50), ms(n99), ratio, len(idle.lat[op]), len(noisy.lat[op]))
		kv = append(kv, fmt.Sprintf("%s_idle_p50_ms=%.2f %s_idle_p99_ms=%.2f %s_noisy_p50_ms=%.2f %s_noisy_p99_ms=%.2f %s_p99_ratio=%.2f",
			op, ms(i50), op, ms(i99), op, ms(n50), op, ms(n99), op, ratio))
	}
	kv = append(kv, fmt.Sprintf("large_dry_runs=%d large_dry_runs_per_s=%.2f large_dry_run_p50_ms=%.0f",
		len(noisy.dryRuns), float64(len(noisy.dryRuns))/noisy.duration.Seconds(), ms(quantile(noisy.dryRuns, .5))))
	if e := errText(noisy); e != "" {
		kv = append(kv, "noisy_errors="+e)
	}
	if e := errText(idle); e != "" {
		kv = append(kv, "idle_errors="+e)
	}
	n.printf("%s\n", strings.Join(kv, " "))
	if len(idle.lat["commit"]) == 0 || len(noisy.lat["commit"]) == 0 {
		return errors.New("bench neighbours: no commit of the small cluster succeeded in a phase")
	}
	return nil
}

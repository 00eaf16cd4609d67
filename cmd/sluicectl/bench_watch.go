package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/cmd/sluicectl/internal/synthpb"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/vtcodec"
	"github.com/sluice-sched/sluice/service"
)

// watched is one plan as the WatchPlans client received it.
type watched struct {
	at       time.Time
	revision uint64
	binds    int
	session  time.Duration
}

// runWatch is "bench --watch": the steady-arrivals workload as a resource manager lives it. A
// loopback server ingests the cluster through Sync and binds it with a first auto-committed
// plan (its tasks then reported Running); a WatchPlans stream in auto-commit mode is opened;
// then, --cycles times (after a warm-up), --gap after the last plan, --arrivals new gangs are
// applied through ApplyDeltas and the time from sending them to receiving the plan of their
// revision is measured. The summary gives the percentiles of that delta -> plan latency
// (delta_p50_ms, delta_p90_ms, delta_p99_ms, delta_max_ms), the server's median session time
// (server_session_ms) and the plans the idle stream sent beside them (extra_plans: an idle-free
// watch sends none).
func (b *benchRun) runWatch(ctx context.Context) error {
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
	state := sluicev1.NewClusterStateServiceClient(b.conn)
	if _, err := b.ingest(ctx); err != nil {
		return err
	}
	if b.cfgText != nil {
		if _, err := b.client.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: b.cluster, Config: string(b.cfgText)}); err != nil {
			return b.a.rpcError("bench: --config", err)
		}
	}
	first, err := b.client.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: b.cluster, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT, PageSize: 5000})
	if err != nil {
		return b.a.rpcError("bench: first plan", err)
	}
	binds := first.GetPlan().GetDecisions()
	for token := first.GetNextPageToken(); token != ""; {
		page, err := b.client.GetPlan(ctx, &sluicev1.GetPlanRequest{Cluster: b.cluster, PlanId: first.GetPlan().GetId(), PageSize: 5000, PageToken: token})
		if err != nil {
			return b.a.rpcError("bench: first plan", err)
		}
		binds = append(binds, page.GetPlan().GetDecisions()...)
		token = page.GetNextPageToken()
	}
	if err := b.reportRunning(ctx, state, binds); err != nil {
		return err
	}

	stream, err := b.client.WatchPlans(sctx, &sluicev1.WatchPlansRequest{Cluster: b.cluster, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT})
	if err != nil {
		return b.a.rpcError("bench: watch", err)
	}
	plans := make(chan watched, 1024)
	errc := make(chan error, 1)
	go func() {
		for {
			m, err := stream.Recv()
			if err != nil {
				errc <- err
				return
			}
			p := m.GetPlan()
			w := watched{at: time.Now(), revision: p.GetBaseRevision(), session: p.GetStats().GetTotal().AsDuration()}
			for _, d := range p.GetDecisions() {
				if d.GetBind() != nil {
					w.binds++
				}
			}
			plans <- w
		}
	}()
	next := func() (watched, error) {
		select {
		case w := <-plans:
			return w, nil
		case err := <-errc:
			return watched{}, b.a.rpcError("bench: watch", err)
		case <-time.After(time.Minute):
			return watched{}, fmt.Errorf("bench: watch: no plan within a minute")
		}
	}
	if _, err := next(); err != nil { // the watch's first cycle: nothing to do
		return err
	}

	var latencies, sessions []time.Duration
	extra := 0
	for i := 0; i <= b.o.cycles; i++ {
		time.Sleep(b.o.gap)
		g := synth.Gangs{Prefix: fmt.Sprintf("arrive-%03d", i), Count: b.o.arrivals, Size: b.o.spec.TasksPerJob,
			Queues: []string{b.c.Queues[i%len(b.c.Queues)].Name}, CreatedAt: b.c.Now()}
		batch := b.c.Add(g)
		deltas := make([]*sluicev1.Delta, 0, len(batch.Changes))
		for _, ch := range batch.Changes {
			if ch.Job != nil {
				deltas = append(deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: synthpb.Job(ch.Job)}})
			} else {
				deltas = append(deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: synthpb.Task(ch.Task)}})
			}
		}
		start := time.Now()
		resp, err := state.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: b.cluster, Batch: &sluicev1.DeltaBatch{Deltas: deltas}})
		if err != nil {
			return b.a.rpcError("bench: apply arrivals", err)
		}
		var w watched
		for {
			if w, err = next(); err != nil {
				return err
			}
			if w.revision >= resp.GetRevision() {
				break
			}
			extra++
		}
		lat := w.at.Sub(start)
		b.printf("delta=%d latency_ms=%.1f server_session_ms=%.1f placed=%d revision=%d\n", i, ms(lat), ms(w.session), w.binds, w.revision)
		if i > 0 {
			latencies = append(latencies, lat)
			sessions = append(sessions, w.session)
		}
	}
	// An idle-free watch sends nothing more once the arrivals are placed.
	select {
	case <-plans:
		extra++
	case <-time.After(2 * b.o.gap):
	}
	slices.Sort(latencies)
	pct := func(p float64) time.Duration {
		return latencies[min(len(latencies)-1, int(math.Ceil(p*float64(len(latencies))))-1)]
	}
	kv := []string{
		"workload=" + b.o.workload, "watch=true",
		"nodes=" + strconv.Itoa(len(b.c.Nodes)),
		"tasks=" + strconv.Itoa(len(b.c.Tasks)),
		"deltas=" + strconv.Itoa(len(latencies)),
		"arrivals=" + strconv.Itoa(b.o.arrivals),
		fmt.Sprintf("delta_p50_ms=%.1f", ms(pct(0.5))),
		fmt.Sprintf("delta_p90_ms=%.1f", ms(pct(0.9))),
		fmt.Sprintf("delta_p99_ms=%.1f", ms(pct(0.99))),
		fmt.Sprintf("delta_max_ms=%.1f", ms(latencies[len(latencies)-1])),
		fmt.Sprintf("server_session_ms=%.1f", ms(median(sessions, func(d time.Duration) time.Duration { return d }))),
		"extra_plans=" + strconv.Itoa(extra),
		"rss_mib=" + peakRSS(),
	}
	b.printf("%s\n", strings.Join(kv, " "))
	return nil
}

// reportRunning reports, through ApplyDeltas and as a resource manager would, the tasks a
// committed plan bound as Running on their nodes.
func (b *benchRun) reportRunning(ctx context.Context, state sluicev1.ClusterStateServiceClient, decisions []*sluicev1.Decision) error {
	tasks := make(map[string]*api.Task, len(b.c.Tasks))
	for _, t := range b.c.Tasks {
		tasks[t.Key()] = t
	}
	var deltas []*sluicev1.Delta
	flush := func() error {
		if len(deltas) == 0 {
			return nil
		}
		_, err := state.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: b.cluster, Batch: &sluicev1.DeltaBatch{Deltas: deltas}})
		deltas = nil
		if err != nil {
			return b.a.rpcError("bench: report running", err)
		}
		return nil
	}
	for _, d := range decisions {
		bind := d.GetBind()
		if bind == nil {
			continue
		}
		t, ok := tasks[sluice.FullName(bind.GetTask())]
		if !ok {
			continue
		}
		run := *t
		run.Status, run.Node = api.Running, bind.GetNode()
		deltas = append(deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: synthpb.Task(&run)}})
		if len(deltas) == b.o.batch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

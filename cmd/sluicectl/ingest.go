package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/cmd/sluicectl/internal/synthpb"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/vtcodec"
	"github.com/sluice-sched/sluice/service"
)

// ingestOptions are the flags of "bench ingest".
type ingestOptions struct {
	spec    synth.Spec
	shapes  string
	batch   int
	rounds  int
	warmup  int
	cluster string
}

func ingestFlags(o *ingestOptions) *flag.FlagSet {
	fs := flag.NewFlagSet("bench ingest", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&o.spec.Nodes, "nodes", 10_000, "`number` of nodes")
	fs.IntVar(&o.spec.Jobs, "jobs", 10_000, "`number` of jobs")
	fs.IntVar(&o.spec.TasksPerJob, "tasks-per-job", 10, "tasks per job")
	fs.IntVar(&o.spec.Queues, "queues", 1, "`number` of queues")
	fs.StringVar(&o.shapes, "shapes", string(synth.Uniform), "node and task `shapes`: uniform or mixed")
	fs.Uint64Var(&o.spec.Seed, "seed", 1, "generator `seed`")
	fs.IntVar(&o.batch, "batch", 1000, "deltas per Sync batch")
	fs.IntVar(&o.rounds, "rounds", 5, "`number` of measured ingestions, each into a new cluster deleted after it")
	fs.IntVar(&o.warmup, "warmup", 0, "`number` of rounds before the measured ones, not measured (a fresh server's first rounds fault in the memory its heap grows into)")
	fs.StringVar(&o.cluster, "cluster", "bench-ingest", "`prefix` of the clusters' names (round r ingests PREFIX-r)")
	return fs
}

// benchIngest measures Sync ingestion: it generates a cluster from a seed, and in each round
// streams all of it through one Sync stream into a new cluster (the first batch a replace_all,
// as a client without state starts), waits for every batch's ack, and deletes the cluster
// (untimed), so that every round finds the server as the first did. --warmup rounds run first
// and are not measured. It prints a line per round and a last line of key=value pairs: objects,
// batches, rounds, and objects_per_s (the median round; min and max beside it).
//
// Without --server it starts a server in this process; with --server it measures that server
// (a real sluiced, over loopback): the measure to record, since then the server's heap and
// collector hold only the server's state, not the client's messages too.
func (a *app) benchIngest(args []string) error {
	var o ingestOptions
	fs := ingestFlags(&o)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench ingest: unexpected argument %q", pos[0])
	}
	o.spec.Shapes = synth.Shapes(o.shapes)
	switch err := o.spec.Validate(); {
	case err != nil:
		return usagef("bench ingest: %v", err)
	case o.batch < 1 || o.rounds < 1:
		return usagef("bench ingest: --batch and --rounds must be at least 1")
	case o.warmup < 0:
		return usagef("bench ingest: --warmup must not be negative")
	case o.cluster == "":
		return usagef("bench ingest: --cluster must not be empty")
	}
	ctx := a.ctx
	dial, where, stop, err := a.benchServer(ctx)
	if err != nil {
		return fmt.Errorf("bench ingest: %w", err)
	}
	defer stop()
	conn, err := dial()
	if err != nil {
		return fmt.Errorf("bench ingest: %w", err)
	}
	defer conn.Close()

	c, err := synth.Generate(o.spec)
	if err != nil {
		return fmt.Errorf("bench ingest: %w", err)
	}
	batches := synthpb.Batches(c, o.batch)
	objects := c.Objects()
	cs := sluicev1.NewClusterStateServiceClient(conn)
	rates := make([]float64, 0, o.rounds)
	for r := 1; r <= o.warmup+o.rounds; r++ {
		name := fmt.Sprintf("%s-%d", o.cluster, r)
		elapsed, err := syncBatches(ctx, cs, name, batches)
		if err != nil {
			return a.rpcError("bench ingest: sync", err)
		}
		// Deleted at once, so that every round finds the server as the first did.
		if _, err := cs.DeleteCluster(ctx, &sluicev1.DeleteClusterRequest{Cluster: name}); err != nil {
			return a.rpcError("bench ingest: delete cluster "+name, err)
		}
		rate := float64(objects) / elapsed.Seconds()
		what := "round"
		if r <= o.warmup {
			what = "warmup"
		} else {
			rates = append(rates, rate)
		}
		fmt.Fprintf(a.stdout, "%s=%d cluster=%s objects=%d batches=%d ingest_s=%.3f objects_per_s=%.0f\n",
			what, r, name, objects, len(batches), elapsed.Seconds(), rate)
	}
	slices.Sort(rates)
	fmt.Fprintf(a.stdout, "server=%s nodes=%d jobs=%d tasks=%d objects=%d batches=%d warmup=%d rounds=%d objects_per_s=%.0f min_objects_per_s=%.0f max_objects_per_s=%.0f\n",
		where, len(c.Nodes), len(c.Jobs), len(c.Tasks), objects, len(batches), o.warmup, o.rounds,
		rates[len(rates)/2], rates[0], rates[len(rates)-1])
	return nil
}

// benchServer returns how a benchmark reaches its server: --server's (where "external"), or
// one it starts in this process ("inprocess"), which stop ends.
func (a *app) benchServer(ctx context.Context) (dial func() (*grpc.ClientConn, error), where string, stop func(), err error) {
	if a.server.set {
		return a.dial, "external", func() {}, nil
	}
	sctx, cancel := context.WithCancel(ctx)
	addr, stopServer, err := service.StartInProcess(sctx, builtin.Registry())
	if err != nil {
		cancel()
		return nil, "", nil, err
	}
	dial = func() (*grpc.ClientConn, error) {
		return grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()), vtcodec.DialOption())
	}
	return dial, "inprocess", func() { stopServer(); cancel() }, nil
}

// syncBatches streams batches into cluster through one Sync stream, sending while a reader
// counts the acks, and returns the time from opening the stream to the last ack. A rejected
// batch or a resync request is an error.
func syncBatches(ctx context.Context, cs sluicev1.ClusterStateServiceClient, cluster string, batches []*sluicev1.DeltaBatch) (time.Duration, error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	stream, err := cs.Sync(sctx)
	if err != nil {
		return 0, err
	}
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: cluster}}}); err != nil {
		return 0, sendStatus(stream.RecvMsg, err)
	}
	done := make(chan error, 1)
	go func() {
		acked := 0
		for acked < len(batches) {
			m, err := stream.Recv()
			if err != nil {
				done <- err
				return
			}
			switch m := m.GetMessage().(type) {
			case *sluicev1.SyncResponse_Ack:
				acked++
			case *sluicev1.SyncResponse_Rejected:
				done <- fmt.Errorf("batch %d rejected: %s", m.Rejected.GetSequence(), rejectionText(m.Rejected))
				return
			case *sluicev1.SyncResponse_ResyncRequired:
				done <- fmt.Errorf("the server asked for a resync: %s", m.ResyncRequired.GetReason())
				return
			}
		}
		done <- nil
	}()
	for _, bt := range batches {
		if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: bt}}); err != nil {
			cancel()
			if rerr := <-done; rerr != nil {
				return 0, rerr
			}
			return 0, err
		}
	}
	if err := <-done; err != nil {
		return 0, err
	}
	elapsed := time.Since(start)
	_ = stream.CloseSend()
	return elapsed, nil
}

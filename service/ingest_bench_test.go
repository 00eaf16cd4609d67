package service_test

import (
	"context"
	"fmt"
	"runtime/metrics"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/gcpolicy"
	"github.com/sluice-sched/sluice/internal/vtcodec"
	"github.com/sluice-sched/sluice/service"
)

// ingestBatches builds nodes and gang jobs of 10 tasks as delta batches of about size deltas.
func ingestBatches(nodes, tasks, size int) [][]*sluicev1.Delta {
	var all []*sluicev1.Delta
	for i := 0; i < nodes; i++ {
		all = append(all, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name:        fmt.Sprintf("node-%05d", i),
			Allocatable: map[string]string{"cpu": "32", "memory": "128Gi", "pods": "110"},
			Labels:      map[string]string{"pool": "general"},
		}}})
	}
	for j := 0; j < tasks/10; j++ {
		job := fmt.Sprintf("job-%05d", j)
		all = append(all, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: job, MinAvailable: proto.Int32(10)}}})
		for t := 0; t < 10; t++ {
			all = append(all, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{
				Name: fmt.Sprintf("%s-%d", job, t), Job: job, Role: "worker",
				Resources: map[string]string{"cpu": "2", "memory": "4Gi"},
			}}})
		}
	}
	var out [][]*sluicev1.Delta
	for len(all) > 0 {
		n := min(size, len(all))
		out = append(out, all[:n])
		all = all[n:]
	}
	return out
}

// BenchmarkSyncIngest streams 10,000 nodes and 100,000 tasks (plus their 10,000 jobs) into a
// real server over loopback gRPC through one Sync stream, in batches of 1,000 deltas; the
// client sends batches while a reader checks that every one is acknowledged. The client
// encodes with Sluice's codec, as the Go client does (client=sluice), or with gRPC's default
// protobuf codec, as a client of the bare generated stubs does (client=runtime); the server
// always decodes with Sluice's codec. Both run with Go's default collector (GOGC=100, or the
// environment's).
//
// client=sluice,gc=sluiced sets the collector as sluiced does without flags or environment
// (internal/gcpolicy's defaults: a 2 GiB heap floor), and measures a server that has run a
// while: untimed ingestions first, until the first collection, so that the heap has been
// filled to the floor once (a fresh process pays the kernel for every page it touches first:
// 2 GiB of page faults, once in a server's life).
func BenchmarkSyncIngest(b *testing.B) {
	b.Run("client=sluice", func(b *testing.B) { benchSyncIngest(b, false, vtcodec.DialOption()) })
	b.Run("client=runtime", func(b *testing.B) { benchSyncIngest(b, false) })
	b.Run("client=sluice,gc=sluiced", func(b *testing.B) {
		p, err := gcpolicy.Resolve(gcpolicy.Settings{Available: gcpolicy.Available()})
		if err != nil {
			b.Fatal(err)
		}
		defer p.Apply()()
		benchSyncIngest(b, true, vtcodec.DialOption())
	})
}

// gcCycles returns how many collections the process has completed.
func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func benchSyncIngest(b *testing.B, warm bool, dopts ...grpc.DialOption) {
	batches := ingestBatches(10_000, 100_000, 1000)
	objects := 0
	for _, bt := range batches {
		objects += len(bt)
	}
	if warm {
		b.StopTimer()
		for start, i := gcCycles(), 0; gcCycles() == start && i < 50; i++ {
			ingestOnce(b, batches, dopts, false)
		}
		b.StartTimer()
	}
	gcs := gcCycles()
	for i := 0; i < b.N; i++ {
		ingestOnce(b, batches, dopts, true)
	}
	b.ReportMetric(float64(objects)*float64(b.N)/b.Elapsed().Seconds(), "objects/s")
	// Collections per run: a timed window without any would flatter a large heap.
	b.ReportMetric(float64(gcCycles()-gcs)/float64(b.N), "gc/op")
}

// ingestOnce starts a server and streams batches into it; with timed, the stream is timed.
func ingestOnce(b *testing.B, batches [][]*sluicev1.Delta, dopts []grpc.DialOption, timed bool) {
	b.StopTimer()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, stop, err := service.StartInProcess(ctx, builtin.Registry())
	if err != nil {
		b.Fatal(err)
	}
	defer stop()
	conn, err := grpc.NewClient(addr, append(dopts, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallSendMsgSize(64<<20)))...)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	if timed {
		b.StartTimer()
	}
	stream, err := sluicev1.NewClusterStateServiceClient(conn).Sync(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "bench"}}}); err != nil {
		b.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil { // welcome
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		for range batches {
			m, err := stream.Recv()
			if err != nil {
				done <- err
				return
			}
			if m.GetAck() == nil {
				done <- fmt.Errorf("batch not acknowledged: %v", m)
				return
			}
		}
		done <- nil
	}()
	for k, bt := range batches {
		if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: &sluicev1.DeltaBatch{Sequence: uint64(k + 1), Deltas: bt}}}); err != nil {
			b.Fatal(err)
		}
	}
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	_ = stream.CloseSend()
}

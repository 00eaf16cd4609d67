// Command sluice-roundtrip is what a resource manager written in Go does with the Go
// client, in a module of its own (see go.mod): it streams a small cluster into Sluice with
// a Syncer, schedules and commits one cycle, and prints the binds.
//
//	go run . --server 127.0.0.1:50051 [--token TOKEN]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func main() {
	server := flag.String("server", "127.0.0.1:50051", "sluiced's gRPC address (plaintext)")
	token := flag.String("token", "", "bearer token, if the server wants one")
	cluster := flag.String("cluster", "go-roundtrip", "cluster to write")
	flag.Parse()
	if err := run(*server, *token, *cluster); err != nil {
		fmt.Fprintln(os.Stderr, "sluice-roundtrip:", err)
		os.Exit(1)
	}
}

// objects is the resource manager's whole view: one node and a gang of two tasks.
func objects() []*sluicev1.Delta {
	return []*sluicev1.Delta{
		sluice.UpsertNode(&sluicev1.Node{Name: "n1", Allocatable: map[string]string{"cpu": "8", "memory": "32Gi", "pods": "110"}}),
		sluice.UpsertJob(&sluicev1.Job{Name: "j", MinAvailable: proto.Int32(2)}),
		sluice.UpsertTask(&sluicev1.Task{Name: "j-0", Job: "j", Resources: map[string]string{"cpu": "2", "memory": "1Gi"}}),
		sluice.UpsertTask(&sluicev1.Task{Name: "j-1", Job: "j", Resources: map[string]string{"cpu": "2", "memory": "1Gi"}}),
	}
}

func run(server, token, cluster string) error {
	opts := []sluice.Option{sluice.WithInsecure()}
	if token != "" {
		opts = append(opts, sluice.WithBearerToken(token))
	}
	c, err := sluice.Dial(server, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// A Syncer without a resume revision starts by sending the whole view (replace_all).
	s, err := c.NewSyncer(sluice.SyncOptions{Cluster: cluster, Snapshot: objects})
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { done <- s.Run(sctx) }()
	defer func() { stop(); <-done }()
	rev, err := s.Flush(ctx)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}

	res, err := c.ScheduleAndCommit(ctx, cluster)
	if err != nil {
		return fmt.Errorf("schedule: %w", err)
	}
	var binds []string
	for _, d := range res.Applied {
		if b := d.GetBind(); b != nil {
			binds = append(binds, sluice.FullName(b.GetTask())+"->"+b.GetNode())
		}
	}
	sort.Strings(binds)
	if len(binds) != 2 {
		return fmt.Errorf("want the gang's two tasks bound, got %v", binds)
	}
	fmt.Printf("go client round trip: cluster %s synced at revision %d, bound %v\n", cluster, rev, binds)
	return nil
}

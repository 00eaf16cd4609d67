package main

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// benchReads measures read latency and throughput against the server of --server: --clients
// callers read one queue of --cluster (created first) with the chosen consistency for
// --duration, and the command prints calls, errors, ops_per_s and the p50/p90/p99 latency as
// key=value pairs. It sends no credentials of its own beyond the global flags'.
func (a *app) benchReads(args []string) error {
	fs := flag.NewFlagSet("bench-reads", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	clients := fs.Int("clients", 8, "concurrent callers")
	duration := fs.Duration("duration", 10*time.Second, "how long to read")
	consistency := fs.String("consistency", "linearizable", "linearizable or stale")
	maxStale := fs.Duration("max-staleness", 0, "with --consistency stale, the bound (0: none)")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("bench-reads: unexpected argument %q", pos[0])
	}
	ro := &sluicev1.ReadOptions{}
	switch *consistency {
	case "linearizable":
	case "stale":
		ro.Consistency = sluicev1.ReadConsistency_READ_CONSISTENCY_STALE
		if *maxStale > 0 {
			ro.MaxStaleness = durationpb.New(*maxStale)
		}
	default:
		return usagef("bench-reads: --consistency must be linearizable or stale, got %q", *consistency)
	}
	if *clients < 1 || *duration <= 0 {
		return usagef("bench-reads: --clients and --duration must be positive")
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	cs := sluicev1.NewClusterStateServiceClient(conn)
	// Calls run without a deadline of their own, so that none fails because the run ended.
	ctx := a.ctx
	end := time.Now().Add(*duration)
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	var firstErr error
	var wg sync.WaitGroup
	start := time.Now()
	for range *clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			var seen error
			for ctx.Err() == nil && time.Now().Before(end) {
				t0 := time.Now()
				_, err := cs.ListQueues(ctx, &sluicev1.ListQueuesRequest{Cluster: a.cluster, PageSize: 1, Read: ro})
				if err != nil {
					if ctx.Err() == nil {
						bad++
						seen = err
					}
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			if firstErr == nil {
				firstErr = seen
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return ms(lat[min(len(lat)-1, int(p*float64(len(lat))))])
	}
	fmt.Fprintf(a.stdout, "consistency=%s clients=%d calls=%d errors=%d ops_per_s=%.0f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f\n",
		*consistency, *clients, len(lat), errs, float64(len(lat))/elapsed.Seconds(), pct(0.5), pct(0.9), pct(0.99))
	if firstErr != nil {
		fmt.Fprintf(a.stderr, "bench-reads: %d calls failed, for example: %v\n", errs, firstErr)
	}
	return nil
}

package sim_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/state"
)

// benchTrace reads an SWF trace and makes its cluster from the header and its queues.
func benchTrace(b *testing.B, name string, r io.Reader) (*sim.Trace, []state.Change) {
	b.Helper()
	tr, err := sim.ReadSWF(name, r, sim.SWFOptions{})
	if err != nil {
		b.Fatal(err)
	}
	nodes, err := sim.SWFNodes(tr.Header, 0, 0)
	if err != nil {
		b.Fatal(err)
	}
	var cl []state.Change
	for _, n := range nodes {
		cl = append(cl, state.Change{Node: n})
	}
	for _, q := range sim.TraceQueues(tr) {
		cl = append(cl, state.Change{Queue: q})
	}
	return tr, cl
}

// benchRun simulates the trace with the embedded default configuration b.N times and
// reports cycles and jobs per second of wall time.
func benchRun(b *testing.B, tr *sim.Trace, cl []state.Change) {
	reg := builtin.Registry()
	cfg := sim.Config{Name: "default", Scheduler: conf.Default()}
	var cycles int
	var wall time.Duration
	b.ResetTimer()
	for range b.N {
		r, err := sim.Run(context.Background(), cl, tr, cfg, sim.Options{Registry: reg, ReleaseDelay: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		cycles, wall = cycles+r.Cycles, wall+r.Wall
	}
	b.ReportMetric(float64(cycles)/float64(b.N), "cycles/op")
	b.ReportMetric(wall.Seconds()*1000/float64(cycles), "ms/cycle")
	b.ReportMetric(float64(len(tr.Jobs)*b.N)/wall.Seconds(), "jobs/s")
}

// BenchmarkSynthetic2k replays ../shared/traces/synthetic-2k.swf (SLUICE_SHARED names the
// shared directory; skipped without it).
func BenchmarkSynthetic2k(b *testing.B) {
	shared := os.Getenv("SLUICE_SHARED")
	if shared == "" {
		shared = "../../../shared"
	}
	f, err := os.Open(filepath.Join(shared, "traces", "synthetic-2k.swf"))
	if err != nil {
		b.Skipf("no shared trace: %v", err)
	}
	defer f.Close()
	tr, cl := benchTrace(b, "synthetic-2k.swf", f)
	benchRun(b, tr, cl)
}

// BenchmarkGenerated replays generated traces of the same kind on 8,192 processors (256
// nodes of 32): 2,000 jobs at the sample's load and at a heavier one. The 20,000-job runs of
// BENCHMARKS.md use sluicectl gentrace and simulate.
func BenchmarkGenerated(b *testing.B) {
	for _, load := range []struct {
		name string
		load float64
	}{{"load045", 0.45}, {"load070", 0.7}} {
		b.Run(load.name, func(b *testing.B) {
			var buf bytes.Buffer
			if err := sim.GenerateSWF(&buf, sim.GenerateSpec{Seed: 1, Jobs: 2000, Nodes: 256, CoresPerNode: 32, Queues: 4, Load: load.load}); err != nil {
				b.Fatal(err)
			}
			tr, cl := benchTrace(b, "gen.swf", &buf)
			benchRun(b, tr, cl)
		})
	}
}

package sim

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
)

// GenerateSpec describes a synthetic SWF trace.
type GenerateSpec struct {
	Seed uint64
	// Jobs is the number of records; Nodes and CoresPerNode the machine.
	Jobs, Nodes, CoresPerNode int
	// Queues is the number of queues (numbered from 1).
	Queues int
	// Load is the offered load: the processor-seconds asked for over those the machine has
	// during the arrivals (0 means 0.45, about that of ../shared/traces/synthetic-2k.swf).
	Load float64
}

// GenerateSWF writes a synthetic trace in SWF 2.2 of the kind of the shared sample
// (synthetic-2k.swf): Poisson arrivals whose rate follows a day cycle, power-of-two sizes up
// to a sixteenth of the machine (one processor twice as likely as each other size),
// log-uniform run times from 30 s to 12 h, requested times 1-3 times the run time, queues
// drawn with weights 2, 3, 1, 1, 2, 3, 1, 1, ... The same spec always writes the same bytes.
func GenerateSWF(w io.Writer, spec GenerateSpec) error {
	if spec.Jobs < 1 || spec.Nodes < 1 || spec.CoresPerNode < 1 {
		return fmt.Errorf("generate: jobs, nodes and cores per node must be at least 1")
	}
	if spec.Queues < 1 {
		spec.Queues = 1
	}
	if spec.Load <= 0 {
		spec.Load = 0.45
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 0x5157))
	procs := spec.Nodes * spec.CoresPerNode
	maxExp := 0
	for 1<<(maxExp+1) <= max(procs/16, 1) {
		maxExp++
	}
	var qweights []float64
	qtotal := 0.0
	for q := range spec.Queues {
		w := []float64{2, 3, 1, 1}[q%4]
		qweights = append(qweights, w)
		qtotal += w
	}
	type rec struct {
		size   int
		run    float64
		queue  int
		submit float64
	}
	recs := make([]rec, spec.Jobs)
	work := 0.0
	for i := range recs {
		k := 0
		if x := rng.IntN(maxExp + 2); x > 1 {
			k = x - 1
		}
		run := math.Round(math.Exp(math.Log(30) + rng.Float64()*(math.Log(12*3600)-math.Log(30))))
		recs[i] = rec{size: 1 << k, run: run, queue: 1 + pick(rng, qweights, qtotal)}
		work += float64(recs[i].size) * run
	}
	// Mean gap so that the work offered over the arrival span is Load times the machine's.
	gap := work / (spec.Load * float64(procs)) / float64(spec.Jobs)
	t := 0.0
	for i := range recs {
		day := math.Mod(t, 86400) / 86400
		rate := 1 + 0.6*math.Sin(2*math.Pi*(day-0.25)) // busier by day
		t += rng.ExpFloat64() * gap / rate
		recs[i].submit = math.Round(t)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "; Version: 2.2\n; Computer: synthetic cluster (generated, seed %d)\n", spec.Seed)
	fmt.Fprintf(bw, "; Note: Poisson arrivals with a day cycle, power-of-two sizes, log-uniform run times, offered load %.2f\n", spec.Load)
	fmt.Fprintf(bw, "; MaxJobs: %d\n; MaxRecords: %d\n; MaxNodes: %d\n; MaxProcs: %d\n; MaxQueues: %d\n",
		spec.Jobs, spec.Jobs, spec.Nodes, procs, spec.Queues)
	for i, r := range recs {
		req := math.Round(r.run * (1 + 2*rng.Float64()))
		fmt.Fprintf(bw, "%d %.0f -1 %.0f %d -1 -1 %d %.0f -1 1 %d %d %d %d 1 -1 -1\n",
			i+1, r.submit, r.run, r.size, r.size, req, 1+rng.IntN(40), 1+rng.IntN(6), 1+rng.IntN(30), r.queue)
	}
	return bw.Flush()
}

// pick draws an index with the given weights.
func pick(rng *rand.Rand, weights []float64, total float64) int {
	x := rng.Float64() * total
	for i, w := range weights {
		x -= w
		if x < 0 {
			return i
		}
	}
	return len(weights) - 1
}

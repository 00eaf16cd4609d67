package main

import (
	"bufio"
	"flag"
	"io"

	"github.com/sluice-sched/sluice/engine/sim"
)

// gentrace writes a synthetic SWF trace (engine/sim.GenerateSWF) to standard output: the
// same flags and seed always write the same bytes.
func (a *app) gentrace(args []string) error {
	var spec sim.GenerateSpec
	fs := flag.NewFlagSet("gentrace", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&spec.Jobs, "jobs", 2000, "`number` of jobs")
	fs.IntVar(&spec.Nodes, "nodes", 128, "`number` of nodes (the header's MaxNodes)")
	fs.IntVar(&spec.CoresPerNode, "cores-per-node", 32, "processors per node")
	fs.IntVar(&spec.Queues, "queues", 4, "`number` of queues")
	fs.Float64Var(&spec.Load, "load", 0.45, "offered load: processor-seconds asked for over those the machine has while jobs arrive")
	fs.Uint64Var(&spec.Seed, "seed", 1, "generator `seed`")
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("gentrace: unexpected argument %q", pos[0])
	}
	if spec.Jobs < 1 || spec.Nodes < 1 || spec.CoresPerNode < 1 || spec.Queues < 1 || !(spec.Load > 0 && spec.Load <= 100) {
		return usagef("gentrace: --jobs, --nodes, --cores-per-node and --queues must be at least 1, --load positive")
	}
	w := bufio.NewWriter(a.stdout)
	if err := sim.GenerateSWF(w, spec); err != nil {
		return err
	}
	return w.Flush()
}

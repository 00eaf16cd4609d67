package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/sim/report"
)

// writeOutputs writes the four outputs into dir and returns summary.json's content.
func writeOutputs(dir, tracePath string, tr *sim.Trace, results []*sim.Result, interval time.Duration) (*sim.Document, error) {
	if interval <= 0 {
		interval = sim.AutoInterval(results)
	}
	r0 := results[0]
	doc := &sim.Document{
		Trace:           sim.TraceInfo{File: filepath.Base(tracePath), Format: tr.Format, Jobs: len(tr.Jobs), Skipped: tr.Skipped},
		Cluster:         sim.Cluster{Nodes: r0.Nodes, Queues: r0.Queues, Capacity: map[string]float64{}},
		IntervalSeconds: interval.Seconds(),
	}
	for x, name := range r0.Resources {
		doc.Cluster.Capacity[name] = float64(r0.Capacity[x]) / sim.Unit(name)
	}
	for _, r := range results {
		doc.Configs = append(doc.Configs, sim.Summarize(r))
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"jobs.csv", func(w io.Writer) error { return sim.WriteJobsCSV(w, results) }},
		{"timeline.csv", func(w io.Writer) error { return sim.WriteTimelineCSV(w, results, interval) }},
		{"summary.json", func(w io.Writer) error { return sim.WriteSummaryJSON(w, doc) }},
		{"report.html", func(w io.Writer) error {
			return report.Write(w, &report.Input{Doc: doc, Results: results, Interval: interval})
		}},
	}
	for _, f := range files {
		if err := writeOutput(filepath.Join(dir, f.name), f.write); err != nil {
			return nil, err
		}
	}
	return doc, nil
}

// writeOutput writes a file through a buffer, and reports the first error.
func writeOutput(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	err = write(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// printSimSummary prints the configurations side by side.
func printSimSummary(w io.Writer, doc *sim.Document, dir string) {
	head := []string{""}
	for _, c := range doc.Configs {
		head = append(head, c.Config)
	}
	tw := newTable(w, head...)
	for _, r := range report.Rows(doc) {
		tw.row(append([]string{r.Name}, r.Values...)...)
	}
	tw.flush()
	fmt.Fprintf(w, "\nwrote %s\n", strings.Join([]string{filepath.Join(dir, "jobs.csv"), filepath.Join(dir, "timeline.csv"),
		filepath.Join(dir, "summary.json"), filepath.Join(dir, "report.html")}, ", "))
}

// Package report renders a simulation's results as one self-contained HTML page: a summary
// table and side-by-side plots, drawn as inline SVG with no script and no external resource,
// so that the file opens anywhere, offline. The same results always render the same bytes.
package report

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/sluice-sched/sluice/engine/sim"
)

// Input is what the report shows.
type Input struct {
	// Doc is summary.json's content; Results the runs, in the same order as Doc.Configs.
	Doc      *sim.Document
	Results  []*sim.Result
	Interval time.Duration
}

// Plot is one figure of the report.
type Plot struct {
	ID, Caption string
	SVG         template.HTML
}

// Plots returns the report's figures, in order: utilization over time per measured
// resource, each configuration's queue allocation against deserved over time, the wait-time
// CDF, and the mean wait per size class.
func Plots(in *Input) []Plot {
	var out []Plot
	timelines := make([][]sim.Interval, len(in.Results))
	for i, r := range in.Results {
		timelines[i] = sim.Timeline(r, in.Interval)
	}
	out = append(out, utilizationPlots(in, timelines)...)
	out = append(out, queuePlots(in, timelines)...)
	out = append(out, cdfPlot(in), sizePlot(in))
	return out
}

// span is the longest run's end.
func span(results []*sim.Result) time.Duration {
	var d time.Duration
	for _, r := range results {
		d = max(d, r.End)
	}
	return max(d, time.Second)
}

func percent(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/10, 'f', -1, 64) + "%" }

// utilizationPlots draws, per resource that something used, every configuration's
// utilization over time.
func utilizationPlots(in *Input, timelines [][]sim.Interval) []Plot {
	if len(in.Results) == 0 {
		return nil
	}
	var out []Plot
	r0 := in.Results[0]
	for x, name := range r0.Resources {
		if r0.Capacity[x] == 0 || !used(in.Results, x) {
			continue
		}
		c := newChart("utilization-"+slug(name), "Utilization: "+name, 920, 260)
		c.x1, c.y1 = span(in.Results).Seconds(), 1
		c.xTicks, c.yTicks = timeTicks(span(in.Results), 10), niceTicks(0, 1, 4, percent)
		c.xLabel, c.yLabel = "virtual time", "allocated / capacity"
		for i, r := range in.Results {
			c.legend = append(c.legend, legendItem{label: r.Config, color: color(i)})
		}
		c.open()
		for i, r := range in.Results {
			capacity := float64(r.Capacity[x]) / sim.Unit(name)
			var xs, ys []float64
			for _, iv := range timelines[i] {
				held := 0.0
				for q := range iv.Allocated {
					held += iv.Allocated[q][x]
				}
				xs = append(xs, (iv.Start + in.Interval/2).Seconds())
				ys = append(ys, held/capacity)
			}
			c.line(xs, ys, color(i), false)
		}
		out = append(out, Plot{ID: c.id, Caption: "Share of the cluster's " + name + " held by running tasks, per configuration (mean over each interval).",
			SVG: template.HTML(c.close())})
	}
	return out
}

// used reports whether any run allocated some of resource x.
func used(results []*sim.Result, x int) bool {
	for _, r := range results {
		for _, st := range r.Steps {
			for q := range st.Allocated {
				if st.Allocated[q][x] > 0 {
					return true
				}
			}
		}
	}
	return false
}

// queuePlots draws, per configuration, each queue's allocated cpu (solid) against its
// deserved cpu (dashed) over time.
func queuePlots(in *Input, timelines [][]sim.Interval) []Plot {
	var out []Plot
	for i, r := range in.Results {
		top := 0.0
		for _, iv := range timelines[i] {
			for q := range r.Queues {
				top = math.Max(top, math.Max(iv.Allocated[q][0], iv.Deserved[q][0]))
			}
		}
		c := newChart("queues-"+strconv.Itoa(i), r.Config, queuePlotWidth(len(in.Results)), 260)
		c.right = 10
		c.x1, c.y1 = span(in.Results).Seconds(), math.Max(top*1.05, 1)
		c.xTicks, c.yTicks = timeTicks(span(in.Results), 5), niceTicks(0, c.y1, 4, func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) })
		c.xLabel, c.yLabel = "virtual time", "cpu (cores)"
		for q, name := range r.Queues {
			c.legend = append(c.legend, legendItem{label: name, color: color(q)})
		}
		c.open()
		for q := range r.Queues {
			var xs, alloc, des []float64
			for _, iv := range timelines[i] {
				xs = append(xs, (iv.Start + in.Interval/2).Seconds())
				alloc = append(alloc, iv.Allocated[q][0])
				des = append(des, iv.Deserved[q][0])
			}
			c.line(xs, des, color(q), true)
			c.line(xs, alloc, color(q), false)
		}
		out = append(out, Plot{ID: c.id, Caption: "Queues under " + r.Config + ".", SVG: template.HTML(c.close())})
	}
	return out
}

// queuePlotWidth fits up to three configurations' queue plots on one row of the page.
func queuePlotWidth(n int) float64 {
	return math.Max(290, math.Min(450, (900-16*float64(n-1))/float64(max(n, 1))))
}

// cdfPoints is how many points draw each configuration's wait CDF.
const cdfPoints = 400

// cdfPlot draws the fraction of started jobs that waited at most w, against w on a log
// scale (0 at the left edge).
func cdfPlot(in *Input) Plot {
	maxWait := 1.0
	waits := make([][]float64, len(in.Results))
	for i, r := range in.Results {
		for _, j := range r.Jobs {
			if j.Finished {
				waits[i] = append(waits[i], j.Wait.Seconds())
			}
		}
		slices.Sort(waits[i])
		if n := len(waits[i]); n > 0 {
			maxWait = math.Max(maxWait, waits[i][n-1])
		}
	}
	lx := func(w float64) float64 { return math.Log10(1 + w) }
	c := newChart("wait-cdf", "Wait-time distribution", 450, 300)
	c.right = 10
	c.x1, c.y1 = lx(maxWait), 1
	for _, t := range []time.Duration{0, 10 * time.Second, time.Minute, 10 * time.Minute, time.Hour, 10 * time.Hour,
		24 * time.Hour, 10 * 24 * time.Hour, 100 * 24 * time.Hour} {
		if t.Seconds() <= maxWait*1.01 {
			c.xTicks = append(c.xTicks, tick{at: lx(t.Seconds()), label: shortDuration(t)})
		}
	}
	c.yTicks = niceTicks(0, 1, 4, percent)
	c.xLabel, c.yLabel = "wait (log scale)", "jobs that waited at most"
	for i, r := range in.Results {
		c.legend = append(c.legend, legendItem{label: r.Config, color: color(i)})
	}
	c.open()
	for i := range in.Results {
		ws := waits[i]
		if len(ws) == 0 {
			continue
		}
		var xs, ys []float64
		for k := 0; k <= cdfPoints; k++ {
			p := float64(k) / cdfPoints
			v := ws[0]
			if k > 0 {
				v = sim.Percentile(ws, p)
			}
			xs = append(xs, lx(v))
			ys = append(ys, p)
		}
		c.line(xs, ys, color(i), false)
	}
	return Plot{ID: c.id, Caption: "Cumulative distribution of the wait of every job that started, per configuration.", SVG: template.HTML(c.close())}
}

// sizePlot draws the mean wait per size class, one bar per configuration.
func sizePlot(in *Input) Plot {
	var classes []string
	mean := map[string][]float64{}
	top := 1.0
	for i, s := range in.Doc.Configs {
		for _, cs := range s.WaitBySize {
			if !slices.Contains(classes, cs.Class) {
				classes = append(classes, cs.Class)
			}
			if mean[cs.Class] == nil {
				mean[cs.Class] = make([]float64, len(in.Doc.Configs))
			}
			mean[cs.Class][i] = cs.Mean
			top = math.Max(top, cs.Mean)
		}
	}
	order := map[string]int{}
	for i, c := range sim.SizeClasses {
		order[c.Name] = i
	}
	slices.SortFunc(classes, func(a, b string) int { return order[a] - order[b] })
	c := newChart("wait-by-size", "Mean wait per job size (cores)", 450, 300)
	c.right = 10
	c.x1, c.y1 = float64(max(len(classes), 1)), top*1.1
	c.yTicks = timeTicks(time.Duration(c.y1*float64(time.Second)), 4)
	for k, name := range classes {
		c.xTicks = append(c.xTicks, tick{at: float64(k) + 0.5, label: name})
	}
	c.xLabel, c.yLabel = "job size (cores)", "mean wait"
	for i, s := range in.Doc.Configs {
		c.legend = append(c.legend, legendItem{label: s.Config, color: color(i)})
	}
	c.open()
	n := float64(max(len(in.Doc.Configs), 1))
	for k, name := range classes {
		for i, s := range in.Doc.Configs {
			w := 0.8 / n
			c.bar(float64(k)+0.1+float64(i)*w, w, mean[name][i], color(i),
				fmt.Sprintf("%s, %s cores: mean wait %s", s.Config, name, humanSeconds(mean[name][i])))
		}
	}
	return Plot{ID: c.id, Caption: "Mean wait of the jobs of each size class that started, per configuration.", SVG: template.HTML(c.close())}
}

// slug makes a resource name usable in an id.
func slug(s string) string {
	out := []rune{}
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			out = append(out, r)
		} else {
			out = append(out, '-')
		}
	}
	return string(out)
}

// Row is one line of the summary table: a figure, per configuration.
type Row struct {
	Name   string
	Values []string
}

// Rows returns the summary table.
func Rows(doc *sim.Document) []Row {
	row := func(name string, fn func(s *sim.Summary) string) Row {
		r := Row{Name: name}
		for i := range doc.Configs {
			r.Values = append(r.Values, fn(&doc.Configs[i]))
		}
		return r
	}
	rows := []Row{
		row("jobs finished", func(s *sim.Summary) string { return fmt.Sprintf("%d of %d", s.Finished, s.Jobs) }),
		row("never started", func(s *sim.Summary) string { return strconv.Itoa(len(s.NeverStarted)) }),
		row("mean wait", func(s *sim.Summary) string { return humanSeconds(s.Wait.Mean) }),
		row("median wait", func(s *sim.Summary) string { return humanSeconds(s.Wait.Median) }),
		row("p95 wait", func(s *sim.Summary) string { return humanSeconds(s.Wait.P95) }),
		row("max wait", func(s *sim.Summary) string { return humanSeconds(s.Wait.Max) }),
		row("mean bounded slowdown", func(s *sim.Summary) string {
			return strconv.FormatFloat(math.Round(s.BoundedSlowdown.Mean*100)/100, 'f', -1, 64)
		}),
	}
	var resources []string // those some configuration used
	for _, s := range doc.Configs {
		for name, u := range s.Utilization {
			if u > 0 && !slices.Contains(resources, name) {
				resources = append(resources, name)
			}
		}
	}
	slices.Sort(resources)
	for _, name := range resources {
		rows = append(rows, row("utilization "+name, func(s *sim.Summary) string { return percent(s.Utilization[name]) }))
	}
	rows = append(rows,
		row("makespan", func(s *sim.Summary) string { return humanSeconds(s.MakespanSeconds) }),
		row("fairness (Jain)", func(s *sim.Summary) string {
			if s.Fairness == nil {
				return "n/a"
			}
			return strconv.FormatFloat(*s.Fairness, 'f', 3, 64)
		}),
		row("evictions", func(s *sim.Summary) string { return strconv.Itoa(s.Evictions) }),
		row("restarts", func(s *sim.Summary) string { return strconv.Itoa(s.Restarts) }),
		row("cycles", func(s *sim.Summary) string { return strconv.Itoa(s.Cycles) }),
	)
	return rows
}

var page = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Sluice simulation: {{.Doc.Trace.File}}</title>
<style>
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: #222; margin: 24px auto; max-width: 960px; padding: 0 16px; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p.meta { color: #555; margin: 0 0 8px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { padding: 4px 12px; border-bottom: 1px solid #eee; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th .swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; border-radius: 2px; }
figure { margin: 12px 0; }
figcaption { color: #555; font-size: 12.5px; max-width: 900px; }
.grid2 { display: flex; flex-wrap: wrap; gap: 12px 20px; }
.grid2 figure { margin: 0; width: min-content; }
svg.plot { background: #fff; border: 1px solid #e4e4e4; border-radius: 4px; display: block; }
svg .title { font-weight: 600; font-size: 13px; }
svg .tick, svg .legend { font-size: 11px; fill: #444; }
svg .label { font-size: 11.5px; fill: #555; }
svg .grid { stroke: #eee; }
svg .axis { stroke: #999; }
ul.never { font-size: 12.5px; color: #444; }
</style>
</head>
<body>
<h1>Sluice simulation report</h1>
<p class="meta">Trace <b>{{.Doc.Trace.File}}</b> ({{.Doc.Trace.Format}}, {{.Doc.Trace.Jobs}} jobs{{range $k, $v := .Doc.Trace.Skipped}}; skipped {{$v}} {{$k}}{{end}}) on {{.Doc.Cluster.Nodes}} nodes ({{.Capacity}}); queues {{.Queues}}. Timeline interval {{.Interval}}.</p>
<h2>Summary</h2>
<table id="summary">
<tr><th></th>{{range $i, $c := .Doc.Configs}}<th><span class="swatch" style="background:{{index $.Colors $i}}"></span>{{$c.Config}}</th>{{end}}</tr>
{{range .Rows}}<tr><td>{{.Name}}</td>{{range .Values}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
<h2>Utilization over time</h2>
{{range .Utilization}}<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}<h2>Queue share against deserved</h2>
<p class="meta">Per configuration: the cpu each queue's running tasks hold (solid) and the cpu it deserves (dashed), as the queue plugins (proportion, capacity) computed it in the last cycle.</p>
<div class="grid2">{{range .Queues2}}<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</div>
<h2>Waits</h2>
<div class="grid2">{{range .Waits}}<figure>{{.SVG}}<figcaption>{{.Caption}}</figcaption></figure>
{{end}}</div>
{{range .Doc.Configs}}{{if .NeverStarted}}<h2>Never started: {{.Config}}</h2>
<ul class="never">{{range .NeverStarted}}<li>{{.Job}}{{if .Line}} (line {{.Line}}){{end}}: {{.Reason}}</li>
{{end}}</ul>
{{end}}{{end}}<p class="meta">Made by sluicectl simulate: every configuration replayed the same trace on the same cluster through Sluice's engine, in virtual time.</p>
</body>
</html>
`))

// maxNeverStartedListed bounds the never-started jobs listed per configuration.
const maxNeverStartedListed = 50

// Write renders the report.
func Write(w io.Writer, in *Input) error {
	plots := Plots(in)
	var util, queues, waits []Plot
	for _, p := range plots {
		switch {
		case len(p.ID) > 12 && p.ID[:12] == "utilization-":
			util = append(util, p)
		case len(p.ID) > 7 && p.ID[:7] == "queues-":
			queues = append(queues, p)
		default:
			waits = append(waits, p)
		}
	}
	doc := *in.Doc
	doc.Configs = slices.Clone(doc.Configs)
	for i := range doc.Configs {
		if ns := doc.Configs[i].NeverStarted; len(ns) > maxNeverStartedListed {
			doc.Configs[i].NeverStarted = append(ns[:maxNeverStartedListed:maxNeverStartedListed],
				sim.NeverStarted{Job: "...", Reason: fmt.Sprintf("and %d more (summary.json lists them all)", len(ns)-maxNeverStartedListed)})
		}
	}
	capText := ""
	for _, name := range []string{"cpu", "memory"} {
		if v, ok := doc.Cluster.Capacity[name]; ok {
			if capText != "" {
				capText += ", "
			}
			if name == "memory" {
				capText += fmt.Sprintf("%.0f GiB memory", v/(1<<30))
			} else {
				capText += fmt.Sprintf("%s cpu", strconv.FormatFloat(v, 'f', -1, 64))
			}
		}
	}
	colors := make([]string, len(doc.Configs))
	for i := range colors {
		colors[i] = color(i)
	}
	return page.Execute(w, map[string]any{
		"Doc": &doc, "Rows": Rows(&doc), "Utilization": util, "Queues2": queues, "Waits": waits,
		"Capacity": capText, "Queues": fmt.Sprint(doc.Cluster.Queues), "Interval": shortDuration(in.Interval),
		"Colors": colors,
	})
}

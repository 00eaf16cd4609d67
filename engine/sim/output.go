package sim

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"time"
)

// The outputs of a simulation: jobs.csv, timeline.csv and summary.json (report.html is
// engine/sim/report's). Every number is formatted the same way on every run, so the same
// inputs give byte-identical files.

// JobState is a job's end state in jobs.csv.
func (r *JobRecord) JobState() string {
	switch {
	case r.Finished:
		return "finished"
	case r.NeverFits != "":
		return "never_fits"
	}
	return "never_started"
}

// secs formats a duration in seconds, to the millisecond, without trailing zeros.
func secs(d time.Duration) string { return num(d.Seconds()) }

// num formats a number with at most three decimals, without trailing zeros.
func num(x float64) string { return strconv.FormatFloat(round3(x), 'f', -1, 64) }

// WriteJobsCSV writes one row per job and configuration: config, job, queue, size (cores),
// size_class, tasks, submit, start, end, wait (seconds; start and end empty for a job that
// never started), run (its run time), bounded_slowdown, evictions, restarts, state
// (finished, never_started, never_fits).
func WriteJobsCSV(w io.Writer, results []*Result) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"config", "job", "queue", "size", "size_class", "tasks", "submit", "start", "end", "wait",
		"run", "bounded_slowdown", "evictions", "restarts", "state"})
	for _, r := range results {
		for i := range r.Jobs {
			j := &r.Jobs[i]
			start, end, bsld := "", "", ""
			if j.Started {
				start = secs(j.Start)
			}
			if j.Finished {
				end, bsld = secs(j.End), num(j.BoundedSlowdown())
			}
			_ = cw.Write([]string{r.Config, j.Job.Key(), j.Job.Queue, num(j.Job.Size()), SizeClass(j.Job),
				strconv.Itoa(j.Job.TaskCount()), secs(j.Job.Submit), start, end, secs(j.Wait), secs(j.Job.Duration),
				bsld, strconv.Itoa(j.Evictions), strconv.Itoa(j.Restarts), j.JobState()})
		}
	}
	cw.Flush()
	return cw.Error()
}

// niceIntervals are the intervals AutoInterval picks from (then whole days).
var niceIntervals = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// MaxIntervals is about how many intervals AutoInterval makes of the longest run.
const MaxIntervals = 500

// AutoInterval picks the timeline's interval: the shortest nice one (1 s, 2 s, 5 s, ...,
// 12 h, then whole days) that cuts the longest run into at most MaxIntervals intervals.
func AutoInterval(results []*Result) time.Duration {
	var span time.Duration
	for _, r := range results {
		span = max(span, r.End)
	}
	for _, d := range niceIntervals {
		if span <= d*MaxIntervals {
			return d
		}
	}
	day := 24 * time.Hour
	return day * ((span/MaxIntervals + day - 1) / day)
}

// Interval is the state of the cluster over one interval of a timeline, as time-weighted
// means.
type Interval struct {
	Start time.Duration
	// Per queue (Result.Queues order): jobs pending and running, allocated and deserved (per
	// resource, in Unit's units), share.
	Pending, Running    []float64
	Allocated, Deserved [][]float64
	Share               []float64
}

// Timeline cuts a run into intervals of the given length, from 0 to its end, and averages
// each over time.
func Timeline(r *Result, interval time.Duration) []Interval {
	n := max(1, int((r.End+interval-1)/interval))
	nq, nr := len(r.Queues), len(r.Resources)
	out := make([]Interval, n)
	for k := range out {
		out[k] = Interval{Start: time.Duration(k) * interval, Pending: make([]float64, nq), Running: make([]float64, nq),
			Allocated: floatMatrix(nq, nr), Deserved: floatMatrix(nq, nr), Share: make([]float64, nq)}
	}
	for i := range r.Steps {
		st := &r.Steps[i]
		end := r.End
		if i+1 < len(r.Steps) {
			end = r.Steps[i+1].At
		}
		for a := st.At; a < end; {
			k := int(a / interval)
			if k >= n {
				break
			}
			b := min(end, time.Duration(k+1)*interval)
			w := float64(b-a) / float64(interval)
			iv := &out[k]
			for q := range nq {
				iv.Pending[q] += w * float64(st.Pending[q])
				iv.Running[q] += w * float64(st.Running[q])
				iv.Share[q] += w * st.Share[q]
				for x := range nr {
					iv.Allocated[q][x] += w * float64(st.Allocated[q][x]) / Unit(r.Resources[x])
					iv.Deserved[q][x] += w * float64(st.Deserved[q][x]) / Unit(r.Resources[x])
				}
			}
			a = b
		}
	}
	return out
}

func floatMatrix(rows, cols int) [][]float64 {
	m := make([][]float64, rows)
	for i := range m {
		m[i] = make([]float64, cols)
	}
	return m
}

// WriteTimelineCSV writes each run's timeline: per configuration, interval and queue, then
// for the whole cluster (queue "*": deserved is the capacity, share is empty), the interval's
// start (seconds), pending and running jobs, allocated and deserved per resource, share, and
// utilization per resource (allocated over the cluster's capacity). Values are time-weighted
// means over the interval.
func WriteTimelineCSV(w io.Writer, results []*Result, interval time.Duration) error {
	cw := csv.NewWriter(w)
	if len(results) == 0 {
		cw.Flush()
		return cw.Error()
	}
	res := results[0].Resources
	head := []string{"config", "time", "queue", "pending_jobs", "running_jobs"}
	for _, p := range []string{"allocated_", "deserved_"} {
		for _, name := range res {
			head = append(head, p+name)
		}
	}
	head = append(head, "share")
	for _, name := range res {
		head = append(head, "utilization_"+name)
	}
	_ = cw.Write(head)
	for _, r := range results {
		capacity := make([]float64, len(res))
		for x := range res {
			capacity[x] = float64(r.Capacity[x]) / Unit(res[x])
		}
		for _, iv := range Timeline(r, interval) {
			total := Interval{Pending: []float64{0}, Running: []float64{0}, Allocated: floatMatrix(1, len(res))}
			for q, name := range r.Queues {
				total.Pending[0] += iv.Pending[q]
				total.Running[0] += iv.Running[q]
				addFloats(total.Allocated[0], iv.Allocated[q])
				_ = cw.Write(timelineRow(r.Config, iv.Start, name, iv.Pending[q], iv.Running[q], iv.Allocated[q],
					iv.Deserved[q], num(iv.Share[q]), capacity))
			}
			_ = cw.Write(timelineRow(r.Config, iv.Start, "*", total.Pending[0], total.Running[0], total.Allocated[0],
				capacity, "", capacity))
		}
	}
	cw.Flush()
	return cw.Error()
}

func timelineRow(config string, at time.Duration, queue string, pending, running float64, alloc, deserved []float64,
	share string, capacity []float64) []string {
	row := []string{config, secs(at), queue, num(pending), num(running)}
	for _, v := range alloc {
		row = append(row, num(v))
	}
	for _, v := range deserved {
		row = append(row, num(v))
	}
	row = append(row, share)
	for x, v := range alloc {
		row = append(row, num(ratio(v, capacity[x])))
	}
	return row
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

func addFloats(dst, v []float64) {
	for i := range dst {
		dst[i] += v[i]
	}
}

// Document is summary.json: the inputs and every configuration's figures.
type Document struct {
	Trace           TraceInfo `json:"trace"`
	Cluster         Cluster   `json:"cluster"`
	IntervalSeconds float64   `json:"timeline_interval_seconds"`
	Configs         []Summary `json:"configs"`
}

// TraceInfo describes the trace replayed.
type TraceInfo struct {
	File    string         `json:"file"`
	Format  string         `json:"format"`
	Jobs    int            `json:"jobs"`
	Skipped map[string]int `json:"skipped_records,omitempty"`
}

// Cluster describes the cluster simulated.
type Cluster struct {
	Nodes    int                `json:"nodes"`
	Queues   []string           `json:"queues"`
	Capacity map[string]float64 `json:"capacity"`
}

// Summary is one configuration's figures. Waits are in seconds, over the jobs that started
// (the others are listed in NeverStarted).
type Summary struct {
	Config          string             `json:"config"`
	Jobs            int                `json:"jobs"`
	Finished        int                `json:"finished"`
	NeverStarted    []NeverStarted     `json:"never_started"`
	Wait            Stats              `json:"wait_seconds"`
	BoundedSlowdown Stats              `json:"bounded_slowdown"`
	WaitByQueue     map[string]Stats   `json:"wait_seconds_by_queue"`
	WaitBySize      []ClassStats       `json:"wait_seconds_by_size"`
	Utilization     map[string]float64 `json:"utilization"`
	MakespanSeconds float64            `json:"makespan_seconds"`
	Evictions       int                `json:"evictions"`
	Restarts        int                `json:"restarts"`
	// Fairness is Jain's index of the queues' shares (see Fairness); null when no plugin
	// computes deserved amounts.
	Fairness *float64 `json:"fairness_jain"`
	Cycles   int      `json:"cycles"`
	Binds    int      `json:"binds"`
	Rejected int      `json:"rejected_decisions"`
}

// NeverStarted is a job that never ran to its end, and why.
type NeverStarted struct {
	Job    string `json:"job"`
	Line   int    `json:"line,omitempty"`
	Reason string `json:"reason"`
}

// ClassStats are the waits of one size class.
type ClassStats struct {
	Class string `json:"class"`
	Stats
}

// Summarize computes a run's figures.
func Summarize(r *Result) Summary {
	s := Summary{Config: r.Config, Jobs: len(r.Jobs), Cycles: r.Cycles, Binds: r.Binds, Rejected: r.Rejected,
		NeverStarted: []NeverStarted{}, WaitByQueue: map[string]Stats{}, Utilization: map[string]float64{}}
	var waits, bsld []float64
	byQueue := map[string][]float64{}
	bySize := map[string][]float64{}
	first, last := time.Duration(math.MaxInt64), time.Duration(0)
	for i := range r.Jobs {
		j := &r.Jobs[i]
		first = min(first, j.Job.Submit)
		s.Evictions += j.Evictions
		s.Restarts += j.Restarts
		if !j.Finished {
			reason := j.NeverFits
			if reason == "" {
				reason = "still waiting at the end of the trace: " + j.Reason
			}
			s.NeverStarted = append(s.NeverStarted, NeverStarted{Job: j.Job.Key(), Line: j.Job.Line, Reason: reason})
			continue
		}
		s.Finished++
		last = max(last, j.End)
		w := j.Wait.Seconds()
		waits = append(waits, w)
		bsld = append(bsld, j.BoundedSlowdown())
		byQueue[j.Job.Queue] = append(byQueue[j.Job.Queue], w)
		bySize[SizeClass(j.Job)] = append(bySize[SizeClass(j.Job)], w)
	}
	s.Wait, s.BoundedSlowdown = StatsOf(waits), StatsOf(bsld)
	for q, ws := range byQueue {
		s.WaitByQueue[q] = StatsOf(ws)
	}
	for _, c := range SizeClasses {
		if ws := bySize[c.Name]; len(ws) > 0 {
			s.WaitBySize = append(s.WaitBySize, ClassStats{Class: c.Name, Stats: StatsOf(ws)})
		}
	}
	if s.Finished > 0 {
		s.MakespanSeconds = round3((last - first).Seconds())
		for x, name := range r.Resources {
			if r.Capacity[x] > 0 {
				s.Utilization[name] = round3(r.meanAllocated(x, first, last) / float64(r.Capacity[x]))
			}
		}
	}
	if f, ok := r.Fairness(); ok {
		f = round3(f)
		s.Fairness = &f
	}
	return s
}

// meanAllocated is the time-weighted mean of what every queue holds of resource x over
// [from, to).
func (r *Result) meanAllocated(x int, from, to time.Duration) float64 {
	if to <= from {
		return 0
	}
	sum := 0.0
	for i := range r.Steps {
		st := &r.Steps[i]
		end := r.End
		if i+1 < len(r.Steps) {
			end = r.Steps[i+1].At
		}
		a, b := max(st.At, from), min(end, to)
		if b <= a {
			continue
		}
		var held int64
		for q := range st.Allocated {
			held += st.Allocated[q][x]
		}
		sum += float64(held) * float64(b-a)
	}
	return sum / float64(to-from)
}

// Fairness is Jain's index of the shares (allocated over deserved, on the dominant
// resource, as the last cycle's plugins computed them) of the queues that have jobs waiting
// or running and a deserved amount, averaged over the time at least one queue does. ok is
// false when there is no such time (no plugin computes deserved amounts, or nothing ran).
func (r *Result) Fairness() (float64, bool) {
	sum, weight := 0.0, 0.0
	var xs []float64
	for i := range r.Steps {
		st := &r.Steps[i]
		end := r.End
		if i+1 < len(r.Steps) {
			end = r.Steps[i+1].At
		}
		if end <= st.At {
			continue
		}
		xs = xs[:0]
		for q := range st.Share {
			if st.Pending[q]+st.Running[q] > 0 && anyPositive(st.Deserved[q]) {
				xs = append(xs, st.Share[q])
			}
		}
		if j := Jain(xs); !math.IsNaN(j) {
			w := float64(end - st.At)
			sum += j * w
			weight += w
		}
	}
	if weight == 0 {
		return 0, false
	}
	return sum / weight, true
}

func anyPositive(v []int64) bool {
	for _, x := range v {
		if x > 0 {
			return true
		}
	}
	return false
}

// WriteSummaryJSON writes summary.json, indented.
func WriteSummaryJSON(w io.Writer, doc *Document) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

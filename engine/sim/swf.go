package sim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// SWFHeader is what the header of an SWF file says about the machine.
type SWFHeader struct {
	Version       string
	MaxNodes      int
	MaxProcs      int
	UnixStartTime int64
}

// Record policies for failed and cancelled SWF records.
const (
	// Keep replays the record with its recorded run time.
	Keep = "keep"
	// Drop leaves the record out (counted in Trace.Skipped).
	Drop = "drop"
)

// SWFOptions map SWF records to jobs.
type SWFOptions struct {
	// CoresPerNode is the processors of one node; 0 takes MaxProcs/MaxNodes from the header.
	CoresPerNode int
	// ProcsPerTask is the processors of one task; 0 fills whole nodes: a job of P processors
	// becomes ceil(P/CoresPerNode) tasks, all of CoresPerNode processors but the last, which
	// takes the rest.
	ProcsPerTask int
	// Queues names queue numbers (field 15); an unnamed number n becomes "q<n>", and an
	// unknown queue (-1) "default".
	Queues map[int]string
	// Failed and Cancelled say what to do with records of status 0 and 5: Keep (the
	// default, "") or Drop.
	Failed, Cancelled string
	// Namespace of the jobs; "" means "default".
	Namespace string
	// MemoryPerCore, when positive, makes each task request this many bytes per processor.
	MemoryPerCore float64
	// Preemptable marks every task preemptable (preempt and reclaim take only those).
	Preemptable bool
}

// The 18 fields of an SWF 2.2 record, as the Parallel Workloads Archive names them.
var swfFields = [18]string{
	"job_number", "submit_time", "wait_time", "run_time", "allocated_processors",
	"average_cpu_time", "used_memory", "requested_processors", "requested_time",
	"requested_memory", "status", "user_id", "group_id", "executable", "queue",
	"partition", "preceding_job", "think_time",
}

// Reasons a record is skipped (Trace.Skipped keys).
const (
	SkipNoRunTime    = "no run time"
	SkipNoProcessors = "no processors"
	SkipFailed       = "failed (dropped)"
	SkipCancelled    = "cancelled (dropped)"
)

// maxSWFLine bounds a line of an SWF file.
const maxSWFLine = 1 << 20

// ReadSWF reads a trace in the Standard Workload Format (version 2.2): header lines start
// with ';' ("; MaxNodes: 128"), every other non-blank line is a record of 18
// whitespace-separated numbers, -1 where unknown. A malformed record is refused with a
// *LineError naming its line and field. file names the input in errors.
//
// A record becomes a job named "swf-N" (N its job number, zero-padded to seven digits so that
// names sort as numbers do) submitted at its submit time (field 2) and running for its run
// time (field 4), of its allocated processors (field 5, or when unknown the requested ones,
// field 8) in tasks of 1 CPU per processor (see SWFOptions.ProcsPerTask), every task needed at
// once (a gang), in the queue of field 15. Records without run time or processors are skipped
// and counted.
func ReadSWF(file string, r io.Reader, opts SWFOptions) (*Trace, error) {
	tr := &Trace{Format: "swf", Skipped: map[string]int{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), maxSWFLine)
	var recs []swfRecord
	seen := map[int64]int{}
	line := 0
	for sc.Scan() {
		line++
		text := bytes.TrimSpace(sc.Bytes())
		if len(text) == 0 {
			continue
		}
		if text[0] == ';' {
			if err := tr.Header.parse(file, line, string(text[1:])); err != nil {
				return nil, err
			}
			continue
		}
		rec, err := parseSWFRecord(file, line, string(text))
		if err != nil {
			return nil, err
		}
		if prev, ok := seen[rec.number]; ok {
			return nil, &LineError{File: file, Line: line, Field: swfFields[0],
				Msg: fmt.Sprintf("job number %d already used on line %d", rec.number, prev)}
		}
		seen[rec.number] = line
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return nil, &LineError{File: file, Line: line + 1, Msg: fmt.Sprintf("line longer than %d bytes", maxSWFLine)}
		}
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	cores := opts.CoresPerNode
	if cores <= 0 && tr.Header.MaxNodes > 0 && tr.Header.MaxProcs > 0 {
		cores = tr.Header.MaxProcs / tr.Header.MaxNodes
	}
	per := opts.ProcsPerTask
	if per <= 0 {
		per = cores
	}
	if per <= 0 {
		return nil, fmt.Errorf("%s: the header gives no MaxNodes and MaxProcs: give the cores per node or the processors per task", file)
	}
	ns := opts.Namespace
	if ns == "" {
		ns = "default"
	}
	for _, rec := range recs {
		if reason := rec.skip(opts); reason != "" {
			tr.Skipped[reason]++
			continue
		}
		if tasks := (rec.procs() + int64(per) - 1) / int64(per); tasks > maxTasksPerJob {
			return nil, &LineError{File: file, Line: rec.line, Field: swfFields[4],
				Msg: fmt.Sprintf("%d processors make %d tasks of %d, more than the %d a job may have", rec.procs(), tasks, per, maxTasksPerJob)}
		}
		tr.Jobs = append(tr.Jobs, rec.job(ns, per, opts))
	}
	sortBySubmit(tr.Jobs)
	return tr, nil
}

// parse reads one header line ("Key: value"); unknown keys are ignored, as SWF allows.
func (h *SWFHeader) parse(file string, line int, text string) error {
	k, v, ok := strings.Cut(text, ":")
	if !ok {
		return nil
	}
	k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
	num := func() (int64, error) {
		f := strings.Fields(v)
		if len(f) == 0 {
			return 0, &LineError{File: file, Line: line, Field: k, Msg: "missing value"}
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			return 0, &LineError{File: file, Line: line, Field: k, Msg: fmt.Sprintf("expected a non-negative integer, got %q", f[0])}
		}
		return n, nil
	}
	var err error
	var n int64
	switch k {
	case "version":
		h.Version = v
	case "maxnodes":
		n, err = num()
		h.MaxNodes = int(min(n, math.MaxInt32))
	case "maxprocs":
		n, err = num()
		h.MaxProcs = int(min(n, math.MaxInt32))
	case "unixstarttime":
		h.UnixStartTime, err = num()
	}
	return err
}

// swfRecord is one parsed SWF line.
type swfRecord struct {
	line                 int
	number               int64
	submit, run          float64
	allocProcs, reqProcs int64
	status, queue        int64
}

// swfMaxSeconds bounds times: about 290 years, within a time.Duration.
const swfMaxSeconds = 9e9

// parseSWFRecord parses the 18 fields of a record.
func parseSWFRecord(file string, line int, text string) (swfRecord, error) {
	f := strings.Fields(text)
	if len(f) != len(swfFields) {
		field := ""
		if len(f) < len(swfFields) {
			field = swfFields[len(f)]
		}
		return swfRecord{}, &LineError{File: file, Line: line, Field: field,
			Msg: fmt.Sprintf("expected %d fields, got %d", len(swfFields), len(f))}
	}
	var vals [18]float64
	for i, s := range f {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return swfRecord{}, &LineError{File: file, Line: line, Field: swfFields[i], Msg: fmt.Sprintf("expected a number, got %q", s)}
		}
		if v < 0 && v != -1 {
			return swfRecord{}, &LineError{File: file, Line: line, Field: swfFields[i], Msg: fmt.Sprintf("must be -1 (unknown) or at least 0, got %s", s)}
		}
		if v > swfMaxSeconds {
			return swfRecord{}, &LineError{File: file, Line: line, Field: swfFields[i], Msg: fmt.Sprintf("%s is too large", s)}
		}
		vals[i] = v
	}
	for _, i := range []int{0, 4, 7, 10, 14} {
		if vals[i] != math.Trunc(vals[i]) {
			return swfRecord{}, &LineError{File: file, Line: line, Field: swfFields[i], Msg: fmt.Sprintf("expected an integer, got %q", f[i])}
		}
	}
	if vals[1] < 0 {
		return swfRecord{}, &LineError{File: file, Line: line, Field: swfFields[1], Msg: "the submit time must be known"}
	}
	return swfRecord{line: line, number: int64(vals[0]), submit: vals[1], run: vals[3],
		allocProcs: int64(vals[4]), reqProcs: int64(vals[7]), status: int64(vals[10]), queue: int64(vals[14])}, nil
}

// skip says why a record is left out, or "".
func (r *swfRecord) skip(opts SWFOptions) string {
	switch {
	case r.run < 0:
		return SkipNoRunTime
	case r.procs() <= 0:
		return SkipNoProcessors
	case r.status == 0 && opts.Failed == Drop:
		return SkipFailed
	case r.status == 5 && opts.Cancelled == Drop:
		return SkipCancelled
	}
	return ""
}

func (r *swfRecord) procs() int64 {
	if r.allocProcs > 0 {
		return r.allocProcs
	}
	return r.reqProcs
}

// job makes the record's job, in tasks of at most per processors.
func (r *swfRecord) job(ns string, per int, opts SWFOptions) *Job {
	p := int(min(r.procs(), math.MaxInt32))
	j := &Job{
		Name: fmt.Sprintf("swf-%07d", r.number), Namespace: ns, Line: r.line,
		Submit: seconds(r.submit), Duration: seconds(r.run), Queue: swfQueue(r.queue, opts.Queues),
		Processors: p,
	}
	task := func(procs int) api.Resource {
		res := api.Resource{MilliCPU: float64(procs) * 1000}
		if opts.MemoryPerCore > 0 {
			res.Memory = opts.MemoryPerCore * float64(procs)
		}
		return res
	}
	if full := p / per; full > 0 {
		j.Tasks = append(j.Tasks, TaskGroup{Replicas: full, Resources: task(per), Preemptable: opts.Preemptable})
	}
	if rest := p % per; rest > 0 {
		j.Tasks = append(j.Tasks, TaskGroup{Replicas: 1, Resources: task(rest), Preemptable: opts.Preemptable})
	}
	return j
}

// swfQueue names a queue number.
func swfQueue(n int64, names map[int]string) string {
	if name, ok := names[int(n)]; ok && n <= math.MaxInt32 {
		return name
	}
	if n < 0 {
		return "default"
	}
	return fmt.Sprintf("q%d", n)
}

// seconds converts seconds to a duration, to the millisecond.
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s*1000)) * time.Millisecond
}

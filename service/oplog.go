package service

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/sluice-sched/sluice/engine"
)

// What the server logs. At the default level (info) a healthy server writes what an operator
// acts on: start and stop, leadership and configuration changes, deleted clusters, rejected
// batches and commits, errors, slow calls, and a summary per active cluster once a period.
// Every call's line ("finished call") and every cycle's are debug; Options.AccessLog raises
// the calls' lines to info. Lines of one kind (a method and code's calls, a cluster's rejected
// batches, ...) are written at most logBurst times per logWindow, the rest counted and
// reported by the next summary; values in lines are bounded (LimitValues).

// Log defaults.
const (
	// DefaultSlowCall is the duration from which a unary call is logged as slow (warn).
	DefaultSlowCall = time.Second
	// DefaultLogSummaryPeriod is how often the activity summary per cluster is logged.
	DefaultLogSummaryPeriod = time.Minute
	// logBurst lines of one kind are written per logWindow; the rest are counted.
	logBurst  = 10
	logWindow = time.Minute
	// maxSummaryClusters bounds the summary lines of one period; the rest are summed up.
	maxSummaryClusters = 50
	// maxReasonLen bounds a reason quoted in a line.
	maxReasonLen = 512
)

// logSampler lets through logBurst lines per key and window, and counts the others.
type logSampler struct {
	now func() time.Time

	mu         sync.Mutex
	window     time.Time
	counts     map[string]int
	suppressed int64
}

func newLogSampler(now func() time.Time) *logSampler {
	return &logSampler{now: now, counts: map[string]int{}}
}

// allow reports whether a line of this key may be written now.
func (l *logSampler) allow(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.window) >= logWindow {
		l.window = now
		clear(l.counts)
	}
	l.counts[key]++
	if l.counts[key] > logBurst {
		l.suppressed++
		return false
	}
	return true
}

// takeSuppressed returns the number of lines suppressed since the last call.
func (l *logSampler) takeSuppressed() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.suppressed
	l.suppressed = 0
	return n
}

// clip bounds a text quoted in a log line.
func clip(s string) string { return cut(s, maxReasonLen) }

// errorText is an error's message without the gRPC prefix, bounded.
func errorText(err error) string {
	if st, ok := status.FromError(err); ok {
		return clip(st.Code().String() + ": " + st.Message())
	}
	return clip(err.Error())
}

// batchRejected logs a delta batch that was refused (sampled per cluster).
func (s *Server) batchRejected(cluster string, b interface{ GetSequence() uint64 }, err error) {
	if !s.sampler.allow("batch\x00" + cluster) {
		return
	}
	s.log.Info("delta batch rejected", "cluster", cluster, "sequence", b.GetSequence(), "reason", errorText(toStatus(err)))
}

// commitRefused logs a commit that failed as a whole: the plan expired, was discarded, or the
// store refused it (sampled per cluster).
func (s *Server) commitRefused(ctx context.Context, cluster, plan string, err error) {
	if !s.sampler.allow("commit\x00" + cluster) {
		return
	}
	s.log.InfoContext(ctx, "plan commit refused", "cluster", cluster, "plan", plan, "reason", errorText(toStatus(err)))
}

// commitConflicts logs a commit that rejected some decisions because the cluster changed
// since the plan's revision (sampled per cluster).
func (s *Server) commitConflicts(ctx context.Context, cluster string, res *engine.CommitResult) {
	if res == nil || len(res.Rejected) == 0 || res.Repeated || !s.sampler.allow("conflict\x00"+cluster) {
		return
	}
	plan := ""
	if res.Plan != nil {
		plan = res.Plan.ID
	}
	s.log.InfoContext(ctx, "plan commit rejected decisions", "cluster", cluster, "plan", plan,
		"applied", len(res.Applied), "rejected", len(res.Rejected),
		"first_task", clip(res.Rejected[0].Decision.Task), "first_reason", clip(res.Rejected[0].Reason))
}

// callLevel is the level of a call's "finished call" line: codeToLevel's, with the debug
// lines (calls that went as a client expects) raised to info by Options.AccessLog.
func (s *Server) callLevel(c codes.Code) logging.Level {
	l := codeToLevel(c)
	if s.accessLog && l < logging.LevelInfo {
		return logging.LevelInfo
	}
	return l
}

// callLogger writes the logging middleware's lines to the server's logger: the lines of calls
// refused for their credentials or rate are rate-limited (refusedLogs, the next line let
// through says how many were "suppressed"), the other lines at info and above are sampled
// per method and code (logSampler).
func (s *Server) callLogger() logging.Logger {
	refused := newRefusedLogs()
	return logging.LoggerFunc(func(ctx context.Context, lvl logging.Level, msg string, fields ...any) {
		if refusedCall(fields) {
			ok, suppressed := refused.allow(fields)
			if !ok {
				return
			}
			if suppressed > 0 {
				fields = append(fields, "suppressed", suppressed)
			}
		} else if slog.Level(lvl) >= slog.LevelInfo && !s.sampler.allow(callKey(fields)) {
			return
		}
		s.log.Log(ctx, slog.Level(lvl), msg, fields...)
	})
}

// refusedCall reports whether a call's line is of a call refused for its credentials or rate
// (refusedCodes).
func refusedCall(fields []any) bool {
	for i := 0; i+1 < len(fields); i += 2 {
		if k, _ := fields[i].(string); k == "grpc.code" {
			v, _ := fields[i+1].(string)
			return refusedCodes[v]
		}
	}
	return false
}

// callKey is the sampling key of a call's line: its method and code.
func callKey(fields []any) string {
	var method, code string
	for i := 0; i+1 < len(fields); i += 2 {
		switch fields[i] {
		case logging.MethodFieldKey:
			method, _ = fields[i+1].(string)
		case "grpc.code":
			code, _ = fields[i+1].(string)
		}
	}
	return "call\x00" + method + "\x00" + code
}

// slowUnary logs a unary call that took at least Options.SlowCall, at warn, with the fields
// the handlers added (cluster, plan, client); sampled per method.
func (s *Server) slowUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
	start := time.Now()
	resp, err := next(ctx, req)
	if d := time.Since(start); s.slowCall > 0 && d >= s.slowCall && s.sampler.allow("slow\x00"+info.FullMethod) {
		args := []any{"grpc.method", shortMethod(info.FullMethod), "grpc.code", status.Code(err).String(),
			"grpc.time_ms", float64(d.Microseconds()) / 1000, "slow_call_ms", s.slowCall.Milliseconds()}
		fields := logging.ExtractFields(ctx)
		for i := 0; i+1 < len(fields); i += 2 {
			if k, ok := fields[i].(string); ok && (k == "cluster" || k == "plan" || k == "client" || k == "trace_id") {
				args = append(args, k, fields[i+1])
			}
		}
		s.log.WarnContext(ctx, "slow call", args...)
	}
	return resp, err
}

// clusterActivity is what one cluster did in a summary period (or, cumulated, since it was
// first seen).
type clusterActivity struct {
	Cycles, DryRuns, Binds, Pipelines, Evicts int64
	Commits, CommitFailures, Conflicts        int64
	Batches, BatchRejections                  int64
	CycleRefusals, CyclePauses                int64
}

func (a clusterActivity) minus(b clusterActivity) clusterActivity {
	d := clusterActivity{a.Cycles - b.Cycles, a.DryRuns - b.DryRuns, a.Binds - b.Binds, a.Pipelines - b.Pipelines,
		a.Evicts - b.Evicts, a.Commits - b.Commits, a.CommitFailures - b.CommitFailures, a.Conflicts - b.Conflicts,
		a.Batches - b.Batches, a.BatchRejections - b.BatchRejections, a.CycleRefusals - b.CycleRefusals,
		a.CyclePauses - b.CyclePauses}
	if d.Cycles < 0 || d.DryRuns < 0 || d.Batches < 0 || d.Commits < 0 {
		// The cluster was deleted and made again: its counts started over.
		return a
	}
	return d
}

func (a clusterActivity) plus(b clusterActivity) clusterActivity {
	return clusterActivity{a.Cycles + b.Cycles, a.DryRuns + b.DryRuns, a.Binds + b.Binds, a.Pipelines + b.Pipelines,
		a.Evicts + b.Evicts, a.Commits + b.Commits, a.CommitFailures + b.CommitFailures, a.Conflicts + b.Conflicts,
		a.Batches + b.Batches, a.BatchRejections + b.BatchRejections, a.CycleRefusals + b.CycleRefusals,
		a.CyclePauses + b.CyclePauses}
}

func (a clusterActivity) attrs() []any {
	return []any{"cycles", a.Cycles, "dry_runs", a.DryRuns, "binds", a.Binds, "pipelines", a.Pipelines,
		"evicts", a.Evicts, "commits", a.Commits, "commit_failures", a.CommitFailures, "conflicts", a.Conflicts,
		"batches", a.Batches, "batch_rejections", a.BatchRejections, "cycle_refusals", a.CycleRefusals,
		"cycle_pauses", a.CyclePauses}
}

// activity returns every cluster's cumulated activity: the metrics' counts and the
// admission's.
func (s *Server) activity() map[string]clusterActivity {
	out := s.metrics.activity()
	for cluster, adm := range s.admission.activity() {
		a := out[cluster]
		a.CycleRefusals, a.CyclePauses = adm.CycleRefusals, adm.CyclePauses
		out[cluster] = a
	}
	return out
}

// summary remembers the activity at the last summary.
type summary struct {
	mu   sync.Mutex
	last map[string]clusterActivity
	at   time.Time
}

// LogSummaries logs, every period until ctx ends (and once more then), one line per cluster
// that did something in the period ("cluster activity": cycles, dry runs, binds, pipelines,
// evicts, commits, failed commits, conflicts, batches, rejected batches, refused and paused
// cycles), at most maxSummaryClusters of them (the busiest; the rest in one line), and a line
// with the number of log lines suppressed by sampling, if any. A period of 0 or less logs
// nothing.
func (s *Server) LogSummaries(ctx context.Context, period time.Duration) {
	if period <= 0 {
		return
	}
	s.logSummary() // the starting point
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			s.logSummary()
			return
		case <-t.C:
			s.logSummary()
		}
	}
}

// logSummary logs the activity since the previous call (nothing the first time).
func (s *Server) logSummary() {
	s.summary.mu.Lock()
	defer s.summary.mu.Unlock()
	now := time.Now()
	cur := s.activity()
	first := s.summary.last == nil
	prev, since := s.summary.last, s.summary.at
	s.summary.last, s.summary.at = cur, now
	if first {
		return
	}
	period := now.Sub(since).Round(time.Second).String()
	type entry struct {
		cluster string
		d       clusterActivity
	}
	var active []entry
	for _, cluster := range slices.Sorted(maps.Keys(cur)) {
		d := cur[cluster].minus(prev[cluster])
		if d != (clusterActivity{}) {
			active = append(active, entry{cluster, d})
		}
	}
	// The busiest first, when they must be cut.
	if len(active) > maxSummaryClusters {
		slices.SortStableFunc(active, func(a, b entry) int {
			return int((b.d.Cycles + b.d.Batches + b.d.DryRuns) - (a.d.Cycles + a.d.Batches + a.d.DryRuns))
		})
	}
	var rest clusterActivity
	for i, e := range active {
		if i >= maxSummaryClusters {
			rest = rest.plus(e.d)
			continue
		}
		s.log.Info("cluster activity", append([]any{"cluster", e.cluster, "period", period}, e.d.attrs()...)...)
	}
	if n := len(active) - maxSummaryClusters; n > 0 {
		s.log.Info("cluster activity of the other clusters", append([]any{"clusters", n, "period", period}, rest.attrs()...)...)
	}
	if n := s.sampler.takeSuppressed(); n > 0 {
		s.log.Info("log lines suppressed", "lines", n, "period", period,
			"limit", fmt.Sprintf("%d lines of one kind per %s", logBurst, logWindow))
	}
}

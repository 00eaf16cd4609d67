package service

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// logLines parses JSON log lines.
func logLines(t *testing.T, text string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		out = append(out, m)
	}
	return out
}

// withMsg returns the lines with the message.
func withMsg(lines []map[string]any, msg string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["msg"] == msg {
			out = append(out, l)
		}
	}
	return out
}

// infoHarness is a harness whose server logs at info, as sluiced does by default, into logs.
func infoHarness(t *testing.T, logs *syncBuffer, su setup) *harness {
	t.Helper()
	opts := su.opts
	su.opts = func(o *Options) {
		o.Logger = slog.New(LimitValues(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}), 0))
		if opts != nil {
			opts(o)
		}
	}
	return newHarnessWith(t, su)
}

// TestHealthyTrafficIsQuietAtInfo: hundreds of committed cycles and reads of a healthy client
// write nothing at info; the summary then says what happened in one line per cluster.
func TestHealthyTrafficIsQuietAtInfo(t *testing.T) {
	logs := &syncBuffer{}
	h := infoHarness(t, logs, setup{})
	ctx := ctxT(t)
	h.apply("c1", node("n1", cpu("1000")))
	h.srv.logSummary() // the starting point
	for i := 0; i < 200; i++ {
		h.apply("c1", job(fmt.Sprintf("j%d", i), "", 1), task(fmt.Sprintf("j%d-0", i), fmt.Sprintf("j%d", i), cpu("1")))
		p, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetPlan().GetId()}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.cs.ListNodes(ctx, &sluicev1.ListNodesRequest{Cluster: "c1"}); err != nil {
			t.Fatal(err)
		}
		if _, err := h.cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n1"}); err != nil {
			t.Fatal(err)
		}
	}
	if text := logs.String(); text != "" {
		t.Fatalf("800 healthy calls and 200 cycles logged at info:\n%s", text)
	}
	h.srv.logSummary()
	lines := logLines(t, logs.String())
	if len(lines) != 1 || lines[0]["msg"] != "cluster activity" {
		t.Fatalf("the summary is not one line:\n%s", logs.String())
	}
	l := lines[0]
	for k, want := range map[string]float64{"cycles": 200, "binds": 200, "commits": 200, "batches": 200, "dry_runs": 0, "batch_rejections": 0} {
		if l[k] != want {
			t.Errorf("summary %s = %v, want %v", k, l[k], want)
		}
	}
	if l["cluster"] != "c1" || l["level"] != "INFO" {
		t.Errorf("summary line %v", l)
	}
	// A period without activity logs nothing.
	h.srv.logSummary()
	if n := len(logLines(t, logs.String())); n != 1 {
		t.Fatalf("an idle period logged %d lines", n-1)
	}
}

// TestRejectionsAreLoggedAndSampled: rejected batches, refused commits and commits that
// rejected decisions are logged at info, each kind at most logBurst times per window; the
// summary counts what was suppressed.
func TestRejectionsAreLoggedAndSampled(t *testing.T) {
	logs := &syncBuffer{}
	h := infoHarness(t, logs, setup{})
	ctx := ctxT(t)
	smallCluster(h, "c1")
	h.srv.logSummary()
	for i := 0; i < 3*logBurst; i++ {
		_, err := h.cs.ApplyDeltas(ctx, &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: &sluicev1.DeltaBatch{
			Deltas: []*sluicev1.Delta{task("orphan", "no-such-job", cpu("1"))}}})
		if err == nil {
			t.Fatal("a batch with a dangling reference was applied")
		}
	}
	if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: "no-such-plan"}); err == nil {
		t.Fatal("committed a plan that does not exist")
	}
	p1, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []*sluicev1.ScheduleResponse{p1, p2} {
		if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p.GetPlan().GetId()}); err != nil {
			t.Fatal(err)
		}
	}
	lines := logLines(t, logs.String())
	rejected := withMsg(lines, "delta batch rejected")
	if len(rejected) != logBurst {
		t.Errorf("%d lines of rejected batches for %d rejections, want %d (sampled)", len(rejected), 3*logBurst, logBurst)
	}
	if len(rejected) > 0 && (rejected[0]["cluster"] != "c1" || !strings.Contains(fmt.Sprint(rejected[0]["reason"]), "no-such-job")) {
		t.Errorf("rejected batch line %v", rejected[0])
	}
	// The call's own line (INVALID_ARGUMENT, info) is sampled too.
	if n := len(withMsg(lines, "finished call")); n != logBurst {
		t.Errorf("%d finished-call lines for %d refused batches, want %d", n, 3*logBurst, logBurst)
	}
	if refused := withMsg(lines, "plan commit refused"); len(refused) != 1 || refused[0]["plan"] != "no-such-plan" {
		t.Errorf("refused commit lines: %v", refused)
	}
	if conflicts := withMsg(lines, "plan commit rejected decisions"); len(conflicts) != 1 || conflicts[0]["plan"] != p2.GetPlan().GetId() ||
		conflicts[0]["rejected"] != float64(2) || conflicts[0]["first_reason"] == "" {
		t.Errorf("conflict lines: %v", conflicts)
	}
	h.srv.logSummary()
	lines = logLines(t, logs.String())
	sup := withMsg(lines, "log lines suppressed")
	if len(sup) != 1 || sup[0]["lines"] != float64(2*(2*logBurst)) {
		t.Errorf("suppressed lines: %v", sup)
	}
	act := withMsg(lines, "cluster activity")
	if len(act) != 1 || act[0]["batch_rejections"] != float64(3*logBurst) || act[0]["conflicts"] != float64(2) || act[0]["commits"] != float64(2) {
		t.Errorf("activity: %v", act)
	}
}

// sleepAction sleeps in each cycle.
type sleepAction struct{ d time.Duration }

func (sleepAction) Name() string                 { return "sleep" }
func (a sleepAction) Execute(*framework.Session) { time.Sleep(a.d) }

// TestSlowCallsAreLogged: a call over Options.SlowCall is logged at warn with its method,
// cluster and duration; with AccessLog every call is logged at info.
func TestSlowCallsAreLogged(t *testing.T) {
	reg := testRegistry()
	reg.RegisterAction("sleep", func(conf.Arguments) (framework.Action, error) { return sleepAction{d: 30 * time.Millisecond}, nil })
	logs := &syncBuffer{}
	h := infoHarness(t, logs, setup{reg: reg, config: "actions: \"sleep\"\ntiers:\n- plugins:\n  - name: fakenoop\n",
		opts: func(o *Options) { o.SlowCall = 20 * time.Millisecond; o.AccessLog = true }})
	ctx := ctxT(t)
	smallCluster(h, "c1")
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
		t.Fatal(err)
	}
	lines := logLines(t, logs.String())
	slow := withMsg(lines, "slow call")
	if len(slow) != 1 || slow[0]["level"] != "WARN" || slow[0]["grpc.method"] != "Schedule" || slow[0]["cluster"] != "c1" ||
		slow[0]["grpc.code"] != "OK" || slow[0]["grpc.time_ms"].(float64) < 20 {
		t.Fatalf("slow call lines: %v\n%s", slow, logs.String())
	}
	var methods []string
	for _, l := range withMsg(lines, "finished call") {
		if l["level"] == "INFO" {
			methods = append(methods, fmt.Sprint(l["grpc.method"]))
		}
	}
	if strings.Join(methods, ",") != "ApplyDeltas,Schedule" {
		t.Fatalf("access log at info: %v", methods)
	}
}

// TestLimitValuesBoundsLines: values, messages and attribute counts are bounded.
func TestLimitValuesBoundsLines(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LimitValues(slog.NewJSONHandler(&buf, nil), 100))
	huge := strings.Repeat("é", 1<<20) // 2 MiB of two-byte characters
	log.Info(huge, "value", huge, "err", errors.New(huge), "group", slog.GroupValue(slog.String("inner", huge)))
	line := buf.String()
	if len(line) > 1000 {
		t.Fatalf("a line of %d bytes", len(line))
	}
	m := logLines(t, line)[0]
	for _, v := range []any{m["msg"], m["value"], m["err"], m["group"].(map[string]any)["inner"]} {
		s := fmt.Sprint(v)
		if !strings.HasPrefix(s, "éé") || !strings.Contains(s, "more bytes]") || strings.ContainsRune(s, '\uFFFD') {
			t.Errorf("value %q not cut at a character with a note", s)
		}
	}
	buf.Reset()
	var args []any
	for i := 0; i < 100; i++ {
		args = append(args, fmt.Sprintf("k%d", i), i)
	}
	log.Info("many", args...)
	m = logLines(t, buf.String())[0]
	if m["attrs_dropped"] != float64(100-maxLogAttrs) || m["k31"] == nil || m["k32"] != nil {
		t.Fatalf("100 attributes: %v", m)
	}
}

// TestLogSampler: logBurst lines per key and window, counted beyond, a new window starts over.
func TestLogSampler(t *testing.T) {
	clock := &fakeClock{now: time.Unix(0, 0)}
	l := newLogSampler(clock.Now)
	allowed := 0
	for i := 0; i < 25; i++ {
		if l.allow("a") {
			allowed++
		}
	}
	if !l.allow("b") || allowed != logBurst {
		t.Fatalf("allowed %d of 25, want %d; another key must pass", allowed, logBurst)
	}
	if n := l.takeSuppressed(); n != 25-logBurst {
		t.Fatalf("suppressed %d", n)
	}
	clock.Add(logWindow)
	if !l.allow("a") {
		t.Fatal("a new window does not start over")
	}
}

package service

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// scrape fetches /metrics from h and parses it with the Prometheus text parser.
func scrape(t *testing.T, h http.Handler) map[string]*dto.MetricFamily {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return fams
}

// value returns the value of the family's series whose labels include want, and whether
// there is one; for a histogram, its count.
func value(fams map[string]*dto.MetricFamily, name string, want map[string]string) (float64, bool) {
	f, ok := fams[name]
	if !ok {
		return 0, false
	}
next:
	for _, m := range f.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		for k, v := range want {
			if labels[k] != v {
				continue next
			}
		}
		switch {
		case m.Counter != nil:
			return m.GetCounter().GetValue(), true
		case m.Gauge != nil:
			return m.GetGauge().GetValue(), true
		case m.Histogram != nil:
			return float64(m.GetHistogram().GetSampleCount()), true
		}
	}
	return 0, false
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func TestMetricsOnPrometheusEndpoint(t *testing.T) {
	mp, handler, err := NewPrometheusMetrics()
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Shutdown(t.Context())
	clock := &fakeClock{now: time.Now()}
	h := newHarnessWith(t, setup{clock: clock.Now, planTTL: time.Minute, opts: func(o *Options) { o.MeterProvider = mp }})
	ctx := ctxT(t)
	h.apply("c1", queue("q1", 1))
	smallCluster(h, "c1")

	// A proposed plan that is committed, one that conflicts, one that expires, a dry run and
	// an auto-commit.
	p1, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	p2, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p1.GetPlan().GetId()}); err != nil {
		t.Fatal(err)
	}
	c2, err := h.sc.CommitPlan(ctx, &sluicev1.CommitPlanRequest{Cluster: "c1", PlanId: p2.GetPlan().GetId()})
	if err != nil || len(c2.GetRejected()) != 2 {
		t.Fatalf("conflicting commit: %v, %v", c2, err)
	}
	h.apply("c1", job("c", "q1", 1), task("c-0", "c", cpu("1")))
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"}); err != nil {
		t.Fatal(err)
	}
	clock.Add(2 * time.Minute)
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT}); err != nil {
		t.Fatal(err)
	}
	h.apply("c2")
	w, err := h.sc.WatchPlans(ctx, &sluicev1.WatchPlansRequest{Cluster: "c2", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "ghost", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN}); status.Code(err) != codes.NotFound {
		t.Fatalf("Schedule of a cluster nobody created: %v, want NotFound", err)
	}

	fams := scrape(t, handler)
	for name := range fams {
		if !strings.HasPrefix(name, "sluice_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") {
			t.Errorf("metric %s is neither Sluice's (sluice_) nor the runtime's (go_, process_)", name)
		}
	}
	c1 := map[string]string{"cluster": "c1"}
	checks := []struct {
		name   string
		labels map[string]string
		want   float64 // -1: any value
	}{
		{"sluice_cycle_duration_seconds", map[string]string{"cluster": "c1", "mode": "propose"}, 3},
		{"sluice_cycle_duration_seconds", map[string]string{"cluster": "c1", "mode": "dry_run"}, 1},
		{"sluice_action_duration_seconds", map[string]string{"cluster": "c1", "action": "fakealloc"}, 5},
		{"sluice_plugin_open_duration_seconds", map[string]string{"cluster": "c1", "plugin": "fakenoop"}, 5},
		{"sluice_decisions_total", map[string]string{"cluster": "c1", "kind": "bind"}, 2 + 2 + 1 + 1},
		{"sluice_unschedulable_jobs", c1, 1},
		{"sluice_plan_commits_total", map[string]string{"cluster": "c1", "result": "committed"}, 3},
		{"sluice_plan_conflicts_total", c1, 2},
		{"sluice_plan_expiries_total", c1, 1},
		{"sluice_streams", map[string]string{"method": "WatchPlans"}, 1},
		{"sluice_deltas_total", map[string]string{"cluster": "c1", "op": "upsert"}, 1 + 7 + 2},
		{"sluice_delta_batches_total", map[string]string{"cluster": "c1", "result": "applied"}, 3},
		{"sluice_queue_allocated_milli_cpu", map[string]string{"cluster": "c1", "queue": "q1"}, 1000},
		{"sluice_queue_allocated_milli_cpu", map[string]string{"cluster": "c1", "queue": "default"}, 2000},
		{"sluice_queue_allocated_memory_bytes", map[string]string{"cluster": "c1", "queue": "q1"}, 0},
		{"sluice_queue_deserved_milli_cpu", map[string]string{"cluster": "c1", "queue": "q1"}, -1},
		{"sluice_queue_deserved_memory_bytes", map[string]string{"cluster": "c1", "queue": "q1"}, -1},
		{"sluice_queue_share", map[string]string{"cluster": "c1", "queue": "q1"}, -1},
		{"sluice_queue_overused", map[string]string{"cluster": "c1", "queue": "q1"}, 0},
		{"sluice_rpc_server_call_duration_seconds", map[string]string{"rpc_method": "sluice.v1.SchedulerService/Schedule"}, -1},
		// Admission: the slots, and the time the cycles waited for them.
		{"sluice_cycle_slots", nil, float64(runtime.GOMAXPROCS(0))},
		{"sluice_cycles_running", nil, 0},
		{"sluice_cycle_admission_wait_seconds", c1, 5},
		{"sluice_cycle_admission_wait_seconds", map[string]string{"cluster": "c2"}, 1},
		{"sluice_cluster_usage_seconds", c1, -1},
		// The runtime's and the process's, and the build.
		{"go_goroutines", nil, -1},
		{"go_memstats_heap_inuse_bytes", nil, -1},
		{"go_threads", nil, -1},
		{"process_resident_memory_bytes", nil, -1},
		{"process_open_fds", nil, -1},
		{"process_cpu_seconds_total", nil, -1},
		{"sluice_build_info", nil, 1},
	}
	for _, c := range checks {
		got, ok := value(fams, c.name, c.labels)
		if !ok {
			t.Errorf("no %s%v", c.name, c.labels)
			continue
		}
		if c.want >= 0 && got != c.want {
			t.Errorf("%s%v = %g, want %g", c.name, c.labels, got, c.want)
		}
	}
	// A cluster nobody created leaves no admission series.
	if _, ok := value(fams, "sluice_cycle_admission_wait_seconds", map[string]string{"cluster": "ghost"}); ok {
		t.Error("a cluster that does not exist has an admission series")
	}
	if t.Failed() {
		var names []string
		for n := range fams {
			names = append(names, n)
		}
		t.Logf("families: %v", names)
	}
}

func TestScheduleSpanTree(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(t.Context())
	reg := testRegistry()
	cfg := "actions: \"fakealloc, otheraction\"\ntiers:\n- plugins:\n  - name: fakenoop\n"
	h := newHarnessWith(t, setup{reg: reg, config: cfg, opts: func(o *Options) { o.TracerProvider = tp }})
	smallCluster(h, "c1")
	exp.Reset()
	resp, err := h.sc.Schedule(ctxT(t), &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	// The server span ends after the response is sent.
	var spans tracetest.SpanStubs
	deadline := time.Now().Add(5 * time.Second)
	for {
		spans = exp.GetSpans()
		if byName(spans, "sluice.v1.SchedulerService/Schedule") != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	rpcSpan := byName(spans, "sluice.v1.SchedulerService/Schedule")
	cycle := byName(spans, "Schedule")
	if rpcSpan == nil || cycle == nil {
		t.Fatalf("spans: %v", names(spans))
	}
	if rpcSpan.SpanKind != trace.SpanKindServer || cycle.Parent.SpanID() != rpcSpan.SpanContext.SpanID() {
		t.Fatalf("the cycle span is not a child of the call's span")
	}
	if !hasAttr(cycle, "sluice.plan", resp.GetPlan().GetId()) || !hasAttr(cycle, "sluice.cluster", "c1") {
		t.Errorf("cycle attributes: %v", cycle.Attributes)
	}
	var children []string
	for _, s := range spans {
		if s.Parent.SpanID() == cycle.SpanContext.SpanID() {
			children = append(children, s.Name)
			if s.StartTime.Before(cycle.StartTime) || s.EndTime.After(cycle.EndTime) {
				t.Errorf("span %s is outside its parent's time", s.Name)
			}
			if s.SpanContext.TraceID() != rpcSpan.SpanContext.TraceID() {
				t.Errorf("span %s is in another trace", s.Name)
			}
		}
	}
	want := "plugin/fakenoop/open action/fakealloc action/otheraction"
	if got := strings.Join(children, " "); got != want {
		t.Fatalf("children of the cycle span: %q, want %q", got, want)
	}
}

func TestWatchCyclesAreTracesOfTheirOwn(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(t.Context())
	h := newHarnessWith(t, setup{opts: func(o *Options) { o.TracerProvider = tp }})
	smallCluster(h, "c1")
	w, err := h.sc.WatchPlans(ctxT(t), &sluicev1.WatchPlansRequest{Cluster: "c1", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Recv(); err != nil {
		t.Fatal(err)
	}
	cycle := byName(exp.GetSpans(), "Schedule")
	if cycle == nil || cycle.Parent.IsValid() || len(cycle.Links) != 1 {
		t.Fatalf("watch cycle span: %+v", cycle)
	}
	if byName(exp.GetSpans(), "action/fakealloc") == nil {
		t.Fatalf("spans: %v", names(exp.GetSpans()))
	}
}

func byName(spans tracetest.SpanStubs, name string) *tracetest.SpanStub {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

func names(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func hasAttr(s *tracetest.SpanStub, key, val string) bool {
	for _, a := range s.Attributes {
		if string(a.Key) == key && a.Value.Emit() == val {
			return true
		}
	}
	return false
}

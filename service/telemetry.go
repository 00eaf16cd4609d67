package service

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// MetricsNamespace prefixes every metric name on /metrics.
const MetricsNamespace = "sluice"

// instrumentationName names the service's tracer and meter.
const instrumentationName = "github.com/sluice-sched/sluice/service"

// NewPrometheusMetrics returns a meter provider whose metrics are served, in the Prometheus
// text format, by the returned handler (mount it on /metrics). Sluice's own metric names
// start with "sluice_"; neither target_info nor scope labels are added. Beside them the
// handler serves the Go runtime's (go_*: goroutines, threads, heap and GC, go_info) and the
// process's (process_*: resident memory, CPU seconds, open and maximum file descriptors,
// start time), and sluice_build_info (1, with the version, commit and Go version of the
// binary as labels). Shut the provider down on exit.
func NewPrometheusMetrics() (*sdkmetric.MeterProvider, http.Handler, error) {
	reg := prometheus.NewRegistry()
	version, commit := BuildInfo()
	build := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: MetricsNamespace, Name: "build_info",
		Help:        "Always 1; the labels say which build of sluiced this is.",
		ConstLabels: prometheus.Labels{"version": version, "commit": commit, "go_version": runtime.Version()},
	})
	build.Set(1)
	for _, c := range []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build,
	} {
		if err := reg.Register(c); err != nil {
			return nil, nil, fmt.Errorf("prometheus collectors: %w", err)
		}
	}
	exp, err := otelprom.New(
		otelprom.WithRegisterer(reg),
		otelprom.WithNamespace(MetricsNamespace),
		otelprom.WithoutTargetInfo(),
		otelprom.WithoutScopeInfo(),
	)
	if err != nil {
		return nil, nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	return mp, promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}), nil
}

// BuildInfo returns the version and the VCS commit the running binary was built from, as
// the Go toolchain recorded them ("(devel)" for a build of a working tree, "unknown" where
// nothing was recorded); the commit ends in "+dirty" when the tree had changes.
func BuildInfo() (version, commit string) {
	version, commit = "unknown", "unknown"
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return version, commit
	}
	if bi.Main.Version != "" {
		version = bi.Main.Version
	}
	var dirty bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if dirty && commit != "unknown" {
		commit += "+dirty"
	}
	return version, commit
}

// latencyBuckets are the bucket bounds, in seconds, of the latency histograms.
var latencyBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// metrics holds the service's instruments. Names are given without the "sluice_" prefix,
// which the Prometheus exporter adds (NewPrometheusMetrics); units become suffixes
// ("_seconds", "_bytes") and counters end in "_total".
//
// The per-cluster counters and the unschedulable gauge are observed from counts the service
// keeps (perCluster), rather than recorded on synchronous instruments, because the SDK never
// forgets a synchronous instrument's series: observed series vanish once they are no longer
// observed, so DeleteCluster can remove a cluster's (forget). The latency histograms have no
// observable form and keep a deleted cluster's series until the server restarts.
type metrics struct {
	cycleDuration  metric.Float64Histogram
	actionDuration metric.Float64Histogram
	pluginDuration metric.Float64Histogram
	streams        metric.Int64UpDownCounter
	reloads        metric.Int64Counter

	// exists tells whether a cluster exists: the series of one that does not are neither
	// made nor observed.
	exists func(cluster string) bool

	mu         sync.Mutex
	perCluster map[string]*clusterCounts
}

// clusterCounts are one cluster's observed counters and gauge. A map entry, or a has* flag,
// makes its series exist, even at zero.
type clusterCounts struct {
	cycles           map[string]int64 // by mode; not a metric (the cycle histogram counts them), for the log summary
	decisions        map[string]int64 // by kind; every kind after the first cycle that is not a dry run
	commits          map[string]int64 // by result
	conflicts        int64
	hasConflicts     bool
	deltas           map[string]int64 // by op; only ops that happened
	batches          map[string]int64 // by result
	unschedulable    int64
	hasUnschedulable bool
}

// count runs fn on a cluster's counts, under the lock.
func (m *metrics) count(cluster string, fn func(c *clusterCounts)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.perCluster[cluster]
	if !ok {
		c = &clusterCounts{cycles: map[string]int64{}, decisions: map[string]int64{}, commits: map[string]int64{},
			deltas: map[string]int64{}, batches: map[string]int64{}}
		m.perCluster[cluster] = c
	}
	fn(c)
}

// forget drops a cluster's counts: their series are not observed any more. The engine's
// figures (queue gauges) and the store's (plan expiries) go with the cluster by themselves.
func (m *metrics) forget(cluster string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.perCluster, cluster)
}

// activity returns every cluster's counts since it was first seen (or since it was deleted),
// for the log summary.
func (m *metrics) activity() map[string]clusterActivity {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make(map[string]clusterActivity, len(m.perCluster))
	for cluster, c := range m.perCluster {
		out[cluster] = clusterActivity{
			Cycles:          c.cycles["propose"] + c.cycles["auto_commit"],
			DryRuns:         c.cycles["dry_run"],
			Binds:           c.decisions["bind"],
			Pipelines:       c.decisions["pipeline"],
			Evicts:          c.decisions["evict"],
			Commits:         c.commits["committed"],
			CommitFailures:  c.commits["failed"],
			Conflicts:       c.conflicts,
			Batches:         c.batches["applied"],
			BatchRejections: c.batches["rejected"],
		}
	}
	return out
}

// newMetrics creates the instruments on mp (a no-op provider when nil). The observed gauges
// and counters (queue figures, plan expiries) read the engine when they are collected;
// exists says which clusters exist.
func newMetrics(mp metric.MeterProvider, eng *engine.Engine, exists func(string) bool) (*metrics, error) {
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	m := &metrics{perCluster: map[string]*clusterCounts{}, exists: exists}
	meter := mp.Meter(instrumentationName)
	var errs []error
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(latencyBuckets...))
		errs = append(errs, err)
		return h
	}
	observed := func(name, unit, desc string) metric.Int64ObservableCounter {
		c, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	m.cycleDuration = hist("cycle.duration", "Duration of scheduling cycles, by cluster and mode.")
	m.actionDuration = hist("action.duration", "Duration of each action of a scheduling cycle, by cluster and action.")
	m.pluginDuration = hist("plugin.open.duration", "Duration of each plugin's session open, by cluster and plugin.")
	decisions := observed("decisions", "{decision}", "Decisions of proposed and auto-committed plans (dry runs excluded), by cluster and kind (bind, pipeline, evict).")
	commits := observed("plan.commits", "{plan}", "Plan commits, by cluster and result (committed, failed); auto-commits included.")
	conflicts := observed("plan.conflicts", "{decision}", "Decisions a commit rejected because the cluster changed since the plan's revision, by cluster.")
	deltas := observed("deltas", "{delta}", "Deltas applied to the state store, by cluster and operation (upsert, delete).")
	batches := observed("delta.batches", "{batch}", "Delta batches received, by cluster and result (applied, rejected).")
	var err error
	m.reloads, err = meter.Int64Counter("config.reloads", metric.WithUnit("{reload}"),
		metric.WithDescription("Reloads of the server's scheduler configuration file, by result (applied, refused)."))
	errs = append(errs, err)
	unschedulable, err := meter.Int64ObservableGauge("unschedulable.jobs", metric.WithUnit("{job}"),
		metric.WithDescription("Jobs with pending tasks after the cluster's last cycle that was not a dry run."))
	errs = append(errs, err)
	m.streams, err = meter.Int64UpDownCounter("streams", metric.WithUnit("{stream}"),
		metric.WithDescription("Open streaming calls (Sync, WatchPlans), by method."))
	errs = append(errs, err)

	expiries, err := meter.Int64ObservableCounter("plan.expiries", metric.WithUnit("{plan}"),
		metric.WithDescription("Proposed plans that expired before a commit or discard, by cluster."))
	errs = append(errs, err)
	gauge := func(name, unit, desc string) metric.Float64ObservableGauge {
		g, err := meter.Float64ObservableGauge(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return g
	}
	allocCPU := gauge("queue.allocated.milli_cpu", "", "CPU allocated to a queue's tasks, in millicores.")
	allocMem := gauge("queue.allocated.memory", "By", "Memory allocated to a queue's tasks.")
	allocScalar := gauge("queue.allocated.scalar_resources", "", "Other resources allocated to a queue's tasks, by resource, in milli-units (as Volcano reports them).")
	desCPU := gauge("queue.deserved.milli_cpu", "", "CPU a queue deserves, in millicores.")
	desMem := gauge("queue.deserved.memory", "By", "Memory a queue deserves.")
	desScalar := gauge("queue.deserved.scalar_resources", "", "Other resources a queue deserves, by resource, in milli-units (as Volcano reports them).")
	share := gauge("queue.share", "", "A queue's dominant share: the largest allocated/deserved ratio.")
	overused := gauge("queue.overused", "", "1 when a queue's allocation exceeds what it deserves, else 0.")
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	for _, method := range []string{"Sync", "WatchPlans"} {
		m.streams.Add(context.Background(), 0, metric.WithAttributes(attribute.String("method", method)))
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for cluster, qs := range eng.QueueOutcomes() {
			for _, q := range qs {
				attrs := attribute.NewSet(attribute.String("cluster", cluster), attribute.String("queue", q.Queue))
				with := metric.WithAttributeSet(attrs)
				observeResource(o, allocCPU, allocMem, allocScalar, cluster, q.Queue, q.Allocated)
				observeResource(o, desCPU, desMem, desScalar, cluster, q.Queue, q.Deserved)
				o.ObserveFloat64(share, q.Share, with)
				ov := 0.0
				if q.Overused {
					ov = 1
				}
				o.ObserveFloat64(overused, ov, with)
			}
		}
		return nil
	}, allocCPU, allocMem, allocScalar, desCPU, desMem, desScalar, share, overused)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		m.observe(o, decisions, commits, conflicts, deltas, batches, unschedulable)
		return nil
	}, decisions, commits, conflicts, deltas, batches, unschedulable)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	_, err = meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		for cluster, n := range eng.ExpiredPlans() {
			o.ObserveInt64(expiries, int64(n), metric.WithAttributes(attribute.String("cluster", cluster)))
		}
		return nil
	}, expiries)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	return m, nil
}

// observe reports the per-cluster counts. The counts of a cluster that no longer exists
// (deleted through another member of a replicated store) are dropped.
func (m *metrics) observe(o metric.Observer, decisions, commits, conflicts, deltas, batches metric.Int64ObservableCounter,
	unschedulable metric.Int64ObservableGauge) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for cluster, c := range m.perCluster {
		if !m.exists(cluster) {
			delete(m.perCluster, cluster)
			continue
		}
		cl := attribute.String("cluster", cluster)
		by := func(inst metric.Int64Observable, key string, vals map[string]int64) {
			for v, n := range vals {
				o.ObserveInt64(inst, n, metric.WithAttributes(cl, attribute.String(key, v)))
			}
		}
		by(decisions, "kind", c.decisions)
		by(commits, "result", c.commits)
		by(deltas, "op", c.deltas)
		by(batches, "result", c.batches)
		if c.hasConflicts {
			o.ObserveInt64(conflicts, c.conflicts, metric.WithAttributes(cl))
		}
		if c.hasUnschedulable {
			o.ObserveInt64(unschedulable, c.unschedulable, metric.WithAttributes(cl))
		}
	}
}

// observeResource reports one resource amount as the Volcano-style trio of gauges: milli-CPU,
// memory bytes, and one series per other resource.
func observeResource(o metric.Observer, cpu, mem, scalar metric.Float64ObservableGauge, cluster, queue string, r *api.Resource) {
	if r == nil {
		r = api.EmptyResource()
	}
	base := []attribute.KeyValue{attribute.String("cluster", cluster), attribute.String("queue", queue)}
	o.ObserveFloat64(cpu, r.MilliCPU, metric.WithAttributes(base...))
	o.ObserveFloat64(mem, r.Memory, metric.WithAttributes(base...))
	for _, name := range slices.Sorted(maps.Keys(r.Scalars)) {
		o.ObserveFloat64(scalar, r.Scalars[name],
			metric.WithAttributes(append(base[:2:2], attribute.String("resource", name))...))
	}
}

var modeNames = map[sluicev1.ScheduleMode]string{
	sluicev1.ScheduleMode_SCHEDULE_MODE_UNSPECIFIED: "propose",
	sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE:     "propose",
	sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT: "auto_commit",
	sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN:     "dry_run",
}

// cycleDone records a finished cycle: its duration, and for cycles that are not dry runs its
// decisions, unschedulable jobs and queue figures.
func (m *metrics) cycleDone(ctx context.Context, cluster string, mode sluicev1.ScheduleMode, p *engine.Plan) {
	c := attribute.String("cluster", cluster)
	m.cycleDuration.Record(ctx, p.Duration.Seconds(), metric.WithAttributes(c, attribute.String("mode", modeNames[mode])))
	if mode == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN || p.Result == nil {
		// Only counted for a cluster already counted (one with batches or plans), so that dry
		// runs on names nobody wrote leave nothing behind.
		m.mu.Lock()
		if c, ok := m.perCluster[cluster]; ok {
			c.cycles[modeNames[mode]]++
		}
		m.mu.Unlock()
		return
	}
	kinds := map[framework.DecisionKind]int64{}
	for _, d := range p.Result.Decisions {
		kinds[d.Kind]++
	}
	var pending int64
	for _, o := range p.Result.Jobs {
		if o.Pending > 0 {
			pending++
		}
	}
	m.count(cluster, func(cc *clusterCounts) {
		cc.cycles[modeNames[mode]]++
		for _, k := range []framework.DecisionKind{framework.DecisionBind, framework.DecisionPipeline, framework.DecisionEvict} {
			// Adding zero too makes every kind's series exist from the first cycle on.
			cc.decisions[k.String()] += kinds[k]
		}
		cc.unschedulable, cc.hasUnschedulable = pending, true
	})
}

// committed records a commit's outcome.
func (m *metrics) committed(cluster string, res *engine.CommitResult, err error) {
	m.count(cluster, func(c *clusterCounts) {
		if err != nil {
			c.commits["failed"]++
			return
		}
		c.commits["committed"]++
		c.conflicts += int64(len(res.Rejected))
		c.hasConflicts = true
	})
}

// batchDone records a delta batch (see countBatch).
func (m *metrics) batchDone(cluster string, b *sluicev1.DeltaBatch, err error) {
	var upserts, deletes int64
	for _, d := range b.GetDeltas() {
		if d.GetDelete() != nil {
			deletes++
		} else {
			upserts++
		}
	}
	m.countBatch(cluster, upserts, deletes, err)
}

// countBatch counts one batch (or chunked resync), and its deltas when it applied. A refused
// batch or resync of a cluster that does not exist (its first one, refused) makes no series.
func (m *metrics) countBatch(cluster string, upserts, deletes int64, err error) {
	if err != nil && !m.exists(cluster) {
		return
	}
	m.count(cluster, func(c *clusterCounts) {
		if err != nil {
			c.batches["rejected"]++
			return
		}
		c.batches["applied"]++
		if upserts > 0 {
			c.deltas["upsert"] += upserts
		}
		if deletes > 0 {
			c.deltas["delete"] += deletes
		}
	})
}

// cycleObserver turns the engine's timings of one cycle into child spans of the cycle's span
// and into the action and plugin latency histograms.
type cycleObserver struct {
	ctx     context.Context
	tracer  trace.Tracer
	m       *metrics
	cluster attribute.KeyValue
}

func (o *cycleObserver) span(name string, start time.Time, d time.Duration, attrs ...attribute.KeyValue) {
	_, sp := o.tracer.Start(o.ctx, name, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	sp.End(trace.WithTimestamp(start.Add(d)))
}

// PluginOpened implements framework.Observer.
func (o *cycleObserver) PluginOpened(name string, start time.Time, d time.Duration) {
	o.span("plugin/"+name+"/open", start, d, attribute.String("sluice.plugin", name))
	o.m.pluginDuration.Record(o.ctx, d.Seconds(), metric.WithAttributes(o.cluster, attribute.String("plugin", name)))
}

// ActionDone implements framework.Observer.
func (o *cycleObserver) ActionDone(name string, start time.Time, d time.Duration) {
	o.span("action/"+name, start, d, attribute.String("sluice.action", name))
	o.m.actionDuration.Record(o.ctx, d.Seconds(), metric.WithAttributes(o.cluster, attribute.String("action", name)))
}

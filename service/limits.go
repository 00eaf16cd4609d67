package service

import (
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/sluice-sched/sluice/engine/state"
)

// Limits bound what one request may carry and what one cluster may hold, so that no caller
// can make the server keep or log an unbounded amount. Each is checked before the work it
// bounds. Zero fields take the defaults (DefaultLimits).
//
// The limits on one value (names, labels, a configuration, a batch) are refused with
// INVALID_ARGUMENT, a BadRequest naming the field and a description naming the limit; those on
// what a cluster holds (objects, tasks of a job) and on dry-run watches with
// RESOURCE_EXHAUSTED, reason LIMIT_EXCEEDED and ErrorInfo metadata "limit", "max" and "field".
type Limits struct {
	// MaxNameBytes bounds names: of objects, namespaces, references, plan ids, and the keys
	// of labels, annotations, selectors and other maps (sluiced --max-name-bytes).
	MaxNameBytes int
	// MaxLabels bounds the entries of one map of an object: labels, annotations, node
	// selectors, selectors, device attributes, usage (--max-labels).
	MaxLabels int
	// MaxLabelBytes bounds one value of a labels, annotations, selector or attributes map
	// (--max-label-bytes).
	MaxLabelBytes int
	// MaxConfigBytes bounds a scheduler configuration: UpdateSchedulerConfig's, a dry run's
	// override, the --config file (--max-config-bytes).
	MaxConfigBytes int
	// MaxBatchDeltas bounds the deltas of one batch (--max-batch-deltas). A replace_all batch
	// carries a whole cluster: keep it at least MaxObjectsPerCluster.
	MaxBatchDeltas int
	// MaxObjectsPerCluster bounds the objects of one cluster, every kind together
	// (--max-objects-per-cluster).
	MaxObjectsPerCluster int
	// MaxTasksPerJob bounds the tasks of one job (--max-tasks-per-job).
	MaxTasksPerJob int
	// MaxDryRunWatches bounds the dry-run WatchPlans streams of one cluster
	// (--max-dry-run-watches).
	MaxDryRunWatches int
}

// Names of the limits, as errors and ErrorInfo metadata give them.
const (
	LimitNameBytes         = "max_name_bytes"
	LimitLabels            = "max_labels"
	LimitLabelBytes        = "max_label_bytes"
	LimitConfigBytes       = "max_config_bytes"
	LimitBatchDeltas       = "max_batch_deltas"
	LimitObjectsPerCluster = state.LimitObjectsPerCluster
	LimitTasksPerJob       = state.LimitTasksPerJob
	LimitDryRunWatches     = "max_dry_run_watches"
)

// DefaultLimits are the limits a zero field of Limits takes.
var DefaultLimits = Limits{
	MaxNameBytes:         253,
	MaxLabels:            100,
	MaxLabelBytes:        4096,
	MaxConfigBytes:       1 << 20,
	MaxBatchDeltas:       1_000_000,
	MaxObjectsPerCluster: 1_000_000,
	MaxTasksPerJob:       100_000,
	MaxDryRunWatches:     DefaultMaxDryRunWatches,
}

// withDefaults returns l with its zero fields set to the defaults.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	for _, f := range []struct{ v, def *int }{
		{&l.MaxNameBytes, &d.MaxNameBytes}, {&l.MaxLabels, &d.MaxLabels}, {&l.MaxLabelBytes, &d.MaxLabelBytes},
		{&l.MaxConfigBytes, &d.MaxConfigBytes}, {&l.MaxBatchDeltas, &d.MaxBatchDeltas},
		{&l.MaxObjectsPerCluster, &d.MaxObjectsPerCluster}, {&l.MaxTasksPerJob, &d.MaxTasksPerJob},
		{&l.MaxDryRunWatches, &d.MaxDryRunWatches},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return l
}

// storeLimits are the limits the store checks in a batch's transaction.
func (l Limits) storeLimits() state.Limits {
	return state.Limits{MaxObjects: l.MaxObjectsPerCluster, MaxTasksPerJob: l.MaxTasksPerJob}
}

// limitError is a request beyond a limit on what a cluster holds: RESOURCE_EXHAUSTED with
// reason LIMIT_EXCEEDED.
type limitError struct {
	limit string
	max   int
	field string
	msg   string
}

func (e *limitError) Error() string { return e.msg }

// limitExceeded returns the status error of a limit a request went over.
func limitExceeded(limit string, maxValue int, field, msg string) error {
	return (&limitError{limit: limit, max: maxValue, field: field, msg: msg}).status()
}

// status builds the RESOURCE_EXHAUSTED status of e.
func (e *limitError) status() error {
	return withInfoMetadata(codes.ResourceExhausted, ReasonLimitExceeded, e.msg, map[string]string{
		"limit": e.limit, "max": strconv.Itoa(e.max), MetadataField: e.field,
	})
}

// checks returns an empty fieldErrors that checks against the server's limits.
func (s *Server) checks() fieldErrors { return fieldErrors{lim: &s.limits} }

// limits returns the limits the checks of fe use.
func (fe *fieldErrors) limits() *Limits {
	if fe.lim == nil {
		return &DefaultLimits
	}
	return fe.lim
}

// checkConfigSize records a configuration text larger than the limit.
func checkConfigSize(fe *fieldErrors, field string, text string) {
	if max := fe.limits().MaxConfigBytes; len(text) > max {
		fe.add(field, "is %d bytes, more than the limit of %d (%s)", len(text), max, LimitConfigBytes)
	}
}

// tooLarge describes a value over a size limit.
func tooLarge(n, max int, limit string) string {
	return fmt.Sprintf("is %d bytes long, more than the limit of %d (%s)", n, max, limit)
}

package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/grpc-ecosystem/go-grpc-middleware/v2/interceptors/logging"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/internal/lowprio"
)

// scheduler implements sluicev1.SchedulerServiceServer. Handlers check the request, call the
// engine, map the error with toStatus and convert the result.
type scheduler struct {
	sluicev1.UnimplementedSchedulerServiceServer
	s *Server
}

var modesIn = map[sluicev1.ScheduleMode]engine.Mode{
	sluicev1.ScheduleMode_SCHEDULE_MODE_UNSPECIFIED: engine.Propose,
	sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE:     engine.Propose,
	sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT: engine.AutoCommit,
	sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN:     engine.DryRun,
}

// Schedule runs one cycle.
func (sc *scheduler) Schedule(ctx context.Context, req *sluicev1.ScheduleRequest) (*sluicev1.ScheduleResponse, error) {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkEnum(&fe, "mode", int32(req.GetMode()), sluicev1.ScheduleMode_name)
	if req.GetConfigOverride() != "" && req.GetMode() != sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		fe.add("config_override", "only allowed with SCHEDULE_MODE_DRY_RUN")
	}
	checkConfigSize(&fe, "config_override", req.GetConfigOverride())
	checkTimestamp(&fe, "now", req.GetNow())
	checkHypothetical(&fe, req)
	if req.GetRead() != nil && req.GetMode() != sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		fe.add("read", "only allowed with SCHEDULE_MODE_DRY_RUN: a plan that may be committed is always made on the confirmed leader")
	}
	if err := checkReadOptions(req.GetRead()); err != nil {
		return nil, toStatus(err)
	}
	pg := readPlanPage(&fe, req.GetPageSize(), "", "")
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	hyp, err := sc.s.decodeHypothetical(req.GetHypothetical())
	if err != nil {
		return nil, toStatus(err)
	}
	p, err := sc.s.schedule(ctx, req.GetCluster(), req.GetMode(), timeFromProto(req.GetNow()), req.GetConfigOverride(), req.GetRead(), nil, hyp)
	if err != nil {
		return nil, toStatus(err)
	}
	logging.AddFields(ctx, logging.Fields{"plan", p.ID})
	out := &sluicev1.ScheduleResponse{}
	out.Plan, out.NextPageToken = planToProto(p, pg)
	if p.Commit != nil {
		out.Commit = commitToProto(p.Commit, pg)
	}
	return out, nil
}

// GetPlan returns a plan with one page of its decisions and job outcomes.
func (sc *scheduler) GetPlan(ctx context.Context, req *sluicev1.GetPlanRequest) (*sluicev1.GetPlanResponse, error) {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkName(&fe, "plan_id", req.GetPlanId())
	pg := readPlanPage(&fe, req.GetPageSize(), req.GetPageToken(), req.GetPlanId())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	p, err := sc.s.engine.GetPlan(req.GetCluster(), req.GetPlanId())
	if err != nil {
		return nil, toStatus(err)
	}
	out := &sluicev1.GetPlanResponse{}
	out.Plan, out.NextPageToken = planToProto(p, pg)
	return out, nil
}

// schedule runs one cycle and converts its plan. Cycles of one cluster whose plans may be
// committed never overlap: they take the cluster's cycle lock; dry runs, which store nothing,
// take a lock of their own, so that they never overlap each other and never hold up a
// writer's cycle. Holding its lock, a cycle takes a cycle slot (admitCycle: waiting ends with
// ctx, or with RESOURCE_EXHAUSTED when the deadline would not fit the cycle). The cycle is traced as a
// "Schedule" span with a child span per plugin session open and per action: a child of the
// call's span, or for a WatchPlans cycle (watched: its subscriber) the root of a trace of its
// own, linked to the stream's span. A watched cycle does not run once its subscriber was
// aborted (checked under the cycle lock, which DeleteCluster takes after aborting the
// cluster's subscriber, so that no watched cycle stores a plan after a delete).
func (s *Server) schedule(ctx context.Context, cluster string, mode sluicev1.ScheduleMode, now time.Time, override string,
	read *sluicev1.ReadOptions, watched *watchSub, hyp *decodedBatch) (*engine.Plan, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	// On a replicated store a cycle whose plan may be committed runs on the leader once it
	// confirmed its leadership (a deposed leader that has not noticed yet runs none); a dry
	// run reads as its read options say (linearizable by default).
	if mode != sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		if err := s.store.CheckWritable(); err != nil {
			return nil, err
		}
		if err := s.readBarrier(ctx); err != nil {
			return nil, err
		}
	} else if err := s.readGate(ctx, cluster, read); err != nil {
		return nil, err
	}
	// A cluster no batch created has no cycle, no lock, no metric series (the engine
	// checks again on the snapshot it schedules).
	if _, err := s.existing(cluster); err != nil {
		return nil, err
	}
	req := engine.ScheduleRequest{Mode: modesIn[mode], Now: now}
	if override != "" {
		cfg, err := s.engine.ParseConfig([]byte(override))
		if err != nil {
			return nil, configError("config_override", err)
		}
		req.Config = cfg
	}
	if hyp != nil {
		req.Hypothetical = &hyp.batch
	}
	locks := &s.cycles
	if mode == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		// Dry runs (a read-only token's, what-ifs) queue among themselves, never behind or
		// ahead of the cycles whose plans may be committed.
		locks = &s.dryCycles
	}
	ticket, err := s.admitCycle(ctx, cluster, locks)
	if err != nil {
		return nil, err
	}
	defer ticket.done()
	if watched != nil {
		if err := watched.ended(); err != nil {
			return nil, err
		}
	}

	opts := []trace.SpanStartOption{trace.WithAttributes(
		attribute.String("sluice.cluster", cluster), attribute.String("sluice.mode", modeNames[mode]))}
	if watched != nil {
		opts = append(opts, trace.WithNewRoot(), trace.WithLinks(trace.LinkFromContext(ctx)))
	}
	ctx, span := s.tracer.Start(ctx, "Schedule", opts...)
	defer span.End()
	req.Observer = &cycleObserver{ctx: ctx, tracer: s.tracer, m: s.metrics, cluster: attribute.String("cluster", cluster)}
	req.Pacer = ticket.pacer
	var p *engine.Plan
	run := func() { p, err = s.engine.Schedule(ctx, cluster, req) }
	if mode == sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN && s.backgroundDryRuns && ticket.background {
		ticket.t.background.Add(1)
		lowprio.Run(run)
	} else {
		run()
	}
	if err != nil {
		err = hypotheticalError(err, hyp)
		span.RecordError(err)
		span.SetStatus(otelcodes.Error, err.Error())
		if mode == sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT && !errors.Is(err, context.Canceled) &&
			!errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, state.ErrClusterNotFound) {
			s.metrics.committed(cluster, nil, err)
		}
		return nil, err
	}
	span.SetAttributes(attribute.String("sluice.plan", p.ID), attribute.Int64("sluice.base_revision", int64(p.BaseRevision)),
		attribute.Int("sluice.decisions", len(p.Result.Decisions)))
	s.metrics.cycleDone(ctx, cluster, mode, p)
	if p.Commit != nil {
		s.metrics.committed(cluster, p.Commit, nil)
		s.commitConflicts(ctx, cluster, p.Commit)
		s.changes.notify(cluster)
	}
	return p, nil
}

// lockCycle takes a cluster's cycle lock, or fails when ctx ends first. It returns the
// unlock function.
func (s *Server) lockCycle(ctx context.Context, cluster string) (func(), error) {
	return s.cycles.LockContext(ctx, cluster)
}

// configError turns the engine's refusal of a configuration into a field violation of field
// (the request field that held the configuration).
func configError(field string, err error) error {
	var ce *engine.ConfigError
	if !errors.As(err, &ce) {
		return err
	}
	return &invalidError{
		reason:     ReasonInvalidConfig,
		violations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: ce.Detail()}},
	}
}

// checkPlanRequest checks the cluster and plan id of DiscardPlan.
func (sc *scheduler) checkPlanRequest(ctx context.Context, cluster, id string) error {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", cluster)
	checkName(&fe, "plan_id", id)
	return fe.err()
}

// CommitPlan applies a proposed plan; a committed plan answers with its stored outcome.
func (sc *scheduler) CommitPlan(ctx context.Context, req *sluicev1.CommitPlanRequest) (*sluicev1.CommitPlanResponse, error) {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkName(&fe, "plan_id", req.GetPlanId())
	pg := readPlanPage(&fe, req.GetPageSize(), "", "")
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	logging.AddFields(ctx, logging.Fields{"plan", req.GetPlanId()})
	if err := sc.s.store.CheckWritable(); err != nil {
		return nil, toStatus(err)
	}
	res, err := sc.s.engine.CommitPlan(ctx, req.GetCluster(), req.GetPlanId())
	if err != nil {
		if !errors.Is(err, engine.ErrNotFound) && !errors.Is(err, engine.ErrFailedPrecondition) && !errors.Is(err, state.ErrClusterNotFound) {
			sc.s.metrics.committed(req.GetCluster(), nil, err)
		}
		if !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			sc.s.commitRefused(ctx, req.GetCluster(), req.GetPlanId(), err)
		}
		return nil, toStatus(err)
	}
	if !res.Repeated {
		sc.s.metrics.committed(req.GetCluster(), res, nil)
		sc.s.commitConflicts(ctx, req.GetCluster(), res)
		sc.s.changes.notify(req.GetCluster())
	}
	return commitToProto(res, pg), nil
}

// DiscardPlan drops a proposed plan; discarding one already discarded or expired succeeds.
func (sc *scheduler) DiscardPlan(ctx context.Context, req *sluicev1.DiscardPlanRequest) (*sluicev1.DiscardPlanResponse, error) {
	if err := sc.checkPlanRequest(ctx, req.GetCluster(), req.GetPlanId()); err != nil {
		return nil, toStatus(err)
	}
	logging.AddFields(ctx, logging.Fields{"plan", req.GetPlanId()})
	if err := sc.s.store.CheckWritable(); err != nil {
		return nil, toStatus(err)
	}
	if err := sc.s.engine.DiscardPlan(req.GetCluster(), req.GetPlanId()); err != nil {
		return nil, toStatus(err)
	}
	// A watch waiting for this plan may go on.
	sc.s.changes.notify(req.GetCluster())
	return &sluicev1.DiscardPlanResponse{}, nil
}

// ExplainJob returns a job's outcome in the latest cycle that explained it, or only its job
// and phase when none has.
func (sc *scheduler) ExplainJob(ctx context.Context, req *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error) {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkNamespace(&fe, "namespace", req.GetNamespace())
	checkName(&fe, "name", req.GetName())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := sc.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	k := orDefault(req.GetNamespace(), defaultNamespace) + "/" + req.GetName()
	j, ok := snap.Job(k)
	if !ok {
		return nil, toStatus(notFound("job %q in cluster %q", k, req.GetCluster()))
	}
	o, planID, err := sc.s.engine.ExplainJob(req.GetCluster(), k)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return &sluicev1.ExplainJobResponse{Outcome: &sluicev1.JobOutcome{
			Job: jobRef(k), Phase: jobPhaseToProto(j.Phase), PreviousPhase: jobPhaseToProto(j.Phase),
			MinAvailable: j.MinAvailable,
		}}, nil
	case err != nil:
		return nil, toStatus(err)
	}
	return &sluicev1.ExplainJobResponse{Outcome: outcomeToProto(o), PlanId: planID}, nil
}

// GetSchedulerConfig returns the cluster's configuration text and its etag.
func (sc *scheduler) GetSchedulerConfig(ctx context.Context, req *sluicev1.GetSchedulerConfigRequest) (*sluicev1.GetSchedulerConfigResponse, error) {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	cfg, etag, err := sc.s.engine.ConfigWithEtag(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	text, err := engine.ConfigText(cfg)
	if err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.GetSchedulerConfigResponse{Config: text, Etag: etag}, nil
}

// UpdateSchedulerConfig validates and installs a cluster's configuration; with an etag, only
// if the configuration in effect still has it (the store checks it in the write).
func (sc *scheduler) UpdateSchedulerConfig(ctx context.Context, req *sluicev1.UpdateSchedulerConfigRequest) (*sluicev1.UpdateSchedulerConfigResponse, error) {
	fe := sc.s.checks()
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if strings.TrimSpace(req.GetConfig()) == "" {
		fe.add("config", "must not be empty; give Volcano scheduler-conf YAML")
	}
	checkConfigSize(&fe, "config", req.GetConfig())
	checkEtag(&fe, "etag", req.GetEtag())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	if err := sc.s.store.CheckWritable(); err != nil {
		return nil, toStatus(err)
	}
	cfg, etag, err := sc.s.engine.UpdateConfig(req.GetCluster(), []byte(req.GetConfig()), req.GetEtag())
	if err != nil {
		sc.s.log.WarnContext(ctx, "scheduler configuration refused", "cluster", req.GetCluster(), "reason", err.Error())
		return nil, toStatus(configError("config", err))
	}
	sc.s.changes.notify(req.GetCluster())
	text, err := engine.ConfigText(cfg)
	if err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.UpdateSchedulerConfigResponse{Config: text, Etag: etag}, nil
}

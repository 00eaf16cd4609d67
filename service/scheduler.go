package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/sluice-sched/sluice/engine"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// WatchPlans timing.
const (
	// DefaultWatchPeriod is the longest time between WatchPlans cycles when the request does
	// not say.
	DefaultWatchPeriod = 10 * time.Second
	// MinWatchPeriod is the shortest period WatchPlans accepts; shorter ones are raised to it.
	// It is also how often a watch looks for cluster changes.
	MinWatchPeriod = 100 * time.Millisecond
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
	var fe fieldErrors
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkEnum(&fe, "mode", int32(req.GetMode()), sluicev1.ScheduleMode_name)
	if req.GetConfigOverride() != "" && req.GetMode() != sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN {
		fe.add("config_override", "only allowed with SCHEDULE_MODE_DRY_RUN")
	}
	checkTimestamp(&fe, "now", req.GetNow())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	plan, err := sc.s.schedule(ctx, req.GetCluster(), req.GetMode(), timeFromProto(req.GetNow()), req.GetConfigOverride())
	if err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.ScheduleResponse{Plan: plan}, nil
}

// schedule runs one cycle and converts its plan.
func (s *Server) schedule(ctx context.Context, cluster string, mode sluicev1.ScheduleMode, now time.Time, override string) (*sluicev1.Plan, error) {
	if err := ctx.Err(); err != nil {
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
	p, err := s.engine.Schedule(ctx, cluster, req)
	if err != nil {
		return nil, err
	}
	return planToProto(viewOf(p)), nil
}

// configError turns the engine's refusal of a configuration into a field violation.
func configError(field string, err error) error {
	if !errors.Is(err, engine.ErrInvalidConfig) {
		return err
	}
	msg := strings.TrimPrefix(err.Error(), engine.ErrInvalidConfig.Error()+": ")
	return &invalidError{
		reason:     ReasonInvalidConfig,
		violations: []*errdetails.BadRequest_FieldViolation{{Field: field, Description: msg}},
	}
}

// checkPlanRequest checks the cluster and plan id of CommitPlan and DiscardPlan.
func (sc *scheduler) checkPlanRequest(ctx context.Context, cluster, id string) error {
	var fe fieldErrors
	sc.s.checkCluster(ctx, &fe, "cluster", cluster)
	checkName(&fe, "plan_id", id)
	return fe.err()
}

// CommitPlan applies a proposed plan.
func (sc *scheduler) CommitPlan(ctx context.Context, req *sluicev1.CommitPlanRequest) (*sluicev1.CommitPlanResponse, error) {
	if err := sc.checkPlanRequest(ctx, req.GetCluster(), req.GetPlanId()); err != nil {
		return nil, toStatus(err)
	}
	res, err := sc.s.engine.CommitPlan(req.GetCluster(), req.GetPlanId())
	if err != nil {
		return nil, toStatus(err)
	}
	return commitToProto(res), nil
}

// DiscardPlan drops a proposed plan; discarding one already discarded or expired succeeds.
func (sc *scheduler) DiscardPlan(ctx context.Context, req *sluicev1.DiscardPlanRequest) (*sluicev1.DiscardPlanResponse, error) {
	if err := sc.checkPlanRequest(ctx, req.GetCluster(), req.GetPlanId()); err != nil {
		return nil, toStatus(err)
	}
	if err := sc.s.engine.DiscardPlan(req.GetCluster(), req.GetPlanId()); err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.DiscardPlanResponse{}, nil
}

// ExplainJob returns a job's outcome in the latest cycle that explained it, or only its job
// and phase when none has.
func (sc *scheduler) ExplainJob(ctx context.Context, req *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error) {
	var fe fieldErrors
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkNamespace(&fe, "namespace", req.GetNamespace())
	checkName(&fe, "name", req.GetName())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	k := orDefault(req.GetNamespace(), defaultNamespace) + "/" + req.GetName()
	j, ok := sc.s.store.Snapshot(req.GetCluster()).Job(k)
	if !ok {
		return nil, toStatus(notFound("job %q in cluster %q", k, req.GetCluster()))
	}
	o, planID, err := sc.s.engine.ExplainJob(req.GetCluster(), k)
	switch {
	case errors.Is(err, engine.ErrNotFound):
		return &sluicev1.ExplainJobResponse{Outcome: &sluicev1.JobOutcome{
			Job: k, Phase: jobPhaseToProto(j.Phase), PreviousPhase: jobPhaseToProto(j.Phase),
			MinAvailable: j.MinAvailable,
		}}, nil
	case err != nil:
		return nil, toStatus(err)
	}
	return &sluicev1.ExplainJobResponse{Outcome: outcomeToProto(o), PlanId: planID}, nil
}

// GetSchedulerConfig returns the cluster's configuration text.
func (sc *scheduler) GetSchedulerConfig(ctx context.Context, req *sluicev1.GetSchedulerConfigRequest) (*sluicev1.GetSchedulerConfigResponse, error) {
	var fe fieldErrors
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	text, err := configText(sc.s.engine, req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.GetSchedulerConfigResponse{Config: text}, nil
}

// configText returns the text of a cluster's configuration: as it was given, or rendered when
// the configuration was built in code.
func configText(e *engine.Engine, cluster string) (string, error) {
	cfg := e.Config(cluster)
	if raw := cfg.Raw(); raw != nil {
		return string(raw), nil
	}
	raw, err := cfg.Marshal()
	return string(raw), err
}

// UpdateSchedulerConfig validates and installs a cluster's configuration.
func (sc *scheduler) UpdateSchedulerConfig(ctx context.Context, req *sluicev1.UpdateSchedulerConfigRequest) (*sluicev1.UpdateSchedulerConfigResponse, error) {
	var fe fieldErrors
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if strings.TrimSpace(req.GetConfig()) == "" {
		fe.add("config", "must not be empty; give Volcano scheduler-conf YAML")
	}
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	if _, err := sc.s.engine.SetConfig(req.GetCluster(), []byte(req.GetConfig())); err != nil {
		return nil, toStatus(configError("config", err))
	}
	text, err := configText(sc.s.engine, req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.UpdateSchedulerConfigResponse{Config: text}, nil
}

// WatchPlans runs a cycle at once, then again whenever the cluster's revision moves past what
// the last cycle saw (checked every MinWatchPeriod) or the period has passed, and streams each
// plan until the client goes away or the server shuts down.
func (sc *scheduler) WatchPlans(req *sluicev1.WatchPlansRequest, stream sluicev1.SchedulerService_WatchPlansServer) error {
	ctx := stream.Context()
	var fe fieldErrors
	sc.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkEnum(&fe, "mode", int32(req.GetMode()), sluicev1.ScheduleMode_name)
	checkDuration(&fe, "period", req.GetPeriod())
	if err := fe.err(); err != nil {
		return toStatus(err)
	}
	period := DefaultWatchPeriod
	if d := req.GetPeriod().AsDuration(); req.GetPeriod() != nil && d > 0 {
		period = max(d, MinWatchPeriod)
	}
	tick := time.NewTicker(MinWatchPeriod)
	defer tick.Stop()
	var seen uint64
	var last time.Time
	for {
		if last.IsZero() || time.Since(last) >= period || sc.s.store.Revision(req.GetCluster()) != seen {
			plan, err := sc.s.schedule(ctx, req.GetCluster(), req.GetMode(), time.Time{}, "")
			if err != nil {
				return toStatus(err)
			}
			if err := stream.Send(&sluicev1.WatchPlansResponse{Plan: plan}); err != nil {
				return err
			}
			seen, last = max(plan.GetBaseRevision(), plan.GetCommittedRevision()), time.Now()
		}
		select {
		case <-ctx.Done():
			return toStatus(ctx.Err())
		case <-sc.s.done:
			return shuttingDown
		case <-tick.C:
		}
	}
}

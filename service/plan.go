package service

import (
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/framework"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

var planStatesOut = map[engine.PlanState]sluicev1.PlanState{
	engine.PlanProposed:  sluicev1.PlanState_PLAN_STATE_PROPOSED,
	engine.PlanCommitted: sluicev1.PlanState_PLAN_STATE_COMMITTED,
	engine.PlanDiscarded: sluicev1.PlanState_PLAN_STATE_DISCARDED,
	engine.PlanExpired:   sluicev1.PlanState_PLAN_STATE_EXPIRED,
	engine.PlanDryRun:    sluicev1.PlanState_PLAN_STATE_DRY_RUN,
}

// planToProto converts a plan the engine handed out (the caller's copy): decisions in the
// engine's order, job outcomes, timings.
func planToProto(p *engine.Plan) *sluicev1.Plan {
	out := &sluicev1.Plan{
		Id:                p.ID,
		Cluster:           p.Cluster,
		BaseRevision:      p.BaseRevision,
		State:             planStatesOut[p.State],
		ScheduledAt:       timeToProto(p.ScheduledAt),
		CommittedRevision: p.CommittedRevision,
		Stats:             &sluicev1.CycleStats{Total: durationpb.New(p.Duration)},
	}
	if p.State == engine.PlanProposed && !p.ExpiresAt.IsZero() {
		out.ExpiresAt = timestamppb.New(p.ExpiresAt)
	}
	if r := p.Result; r != nil {
		out.Decisions = decisionsToProto(r.Decisions)
		for _, o := range r.Jobs {
			out.Jobs = append(out.Jobs, outcomeToProto(o))
		}
		for _, t := range r.Timings {
			out.Stats.Actions = append(out.Stats.Actions, &sluicev1.ActionTiming{
				Action: t.Action, Duration: durationpb.New(t.Duration),
			})
		}
	}
	return out
}

func decisionsToProto(ds []framework.Decision) []*sluicev1.Decision {
	// Binds are most of a large plan: their messages come from three slabs instead of three
	// allocations each.
	binds := 0
	for _, d := range ds {
		if d.Kind == framework.DecisionBind {
			binds++
		}
	}
	decisions := make([]sluicev1.Decision, binds)
	wrappers := make([]sluicev1.Decision_Bind, binds)
	bodies := make([]sluicev1.BindDecision, binds)
	out := make([]*sluicev1.Decision, 0, len(ds))
	b := 0
	for _, d := range ds {
		if d.Kind != framework.DecisionBind {
			out = append(out, decisionToProto(d))
			continue
		}
		body := &bodies[b]
		body.Task, body.Job, body.Node = d.Task, d.Job, d.Node
		if len(d.DeviceIDs) > 0 {
			body.DeviceIds = append([]string(nil), d.DeviceIDs...)
		}
		wrappers[b].Bind = body
		decisions[b].Kind = &wrappers[b]
		out = append(out, &decisions[b])
		b++
	}
	return out
}

func decisionToProto(d framework.Decision) *sluicev1.Decision {
	switch d.Kind {
	case framework.DecisionPipeline:
		return &sluicev1.Decision{Kind: &sluicev1.Decision_Pipeline{Pipeline: &sluicev1.PipelineDecision{
			Task: d.Task, Job: d.Job, Node: d.Node,
		}}}
	case framework.DecisionEvict:
		return &sluicev1.Decision{Kind: &sluicev1.Decision_Evict{Evict: &sluicev1.EvictDecision{
			Task: d.Task, Job: d.Job, Node: d.Node, Reason: d.Reason, ForTask: d.ForTask, Action: d.Action,
		}}}
	}
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{
		Task: d.Task, Job: d.Job, Node: d.Node, DeviceIds: append([]string(nil), d.DeviceIDs...),
	}}}
}

func outcomeToProto(o framework.JobOutcome) *sluicev1.JobOutcome {
	out := &sluicev1.JobOutcome{
		Job:           o.Job,
		PreviousPhase: jobPhaseToProto(o.PreviousPhase),
		Phase:         jobPhaseToProto(o.Phase),
		Ready:         o.Ready,
		Pending:       o.Pending,
		MinAvailable:  o.MinAvailable,
	}
	if e := o.Explanation; e != nil {
		ex := &sluicev1.Explanation{
			Summary:     e.Summary,
			NodesTotal:  int32(e.NodesTotal),
			Gang:        &sluicev1.GangStatus{Placeable: e.GangPlaceable, MinAvailable: e.GangMin},
			QueueReason: e.QueueReason,
		}
		for _, r := range e.Reasons {
			ex.Reasons = append(ex.Reasons, &sluicev1.ReasonCount{Reason: r.Reason, Nodes: int32(r.Nodes)})
		}
		out.Explanation = ex
	}
	return out
}

// commitToProto converts a commit's result.
func commitToProto(r *engine.CommitResult) *sluicev1.CommitPlanResponse {
	out := &sluicev1.CommitPlanResponse{Revision: r.Revision, Applied: decisionsToProto(r.Applied)}
	for _, rj := range r.Rejected {
		out.Rejected = append(out.Rejected, &sluicev1.RejectedDecision{
			Decision: decisionToProto(rj.Decision), Reason: rj.Reason,
		})
	}
	return out
}

package service

import (
	"encoding/base64"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
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

// Page sizes of plans (Schedule, CommitPlan, WatchPlans, GetPlan): decisions and job outcomes
// per message. A page of 5000 large explanations stays well under gRPC's 4 MiB default.
const (
	defaultPlanPageSize = 1000
	maxPlanPageSize     = 5000
)

// planTokenVersion starts every plan page token.
const planTokenVersion = "p1"

// planPage is where a page of a plan starts and how long it is.
type planPage struct {
	offset, size int
}

// readPlanPage checks a plan request's page size and token; a token is bound to its plan.
func readPlanPage(fe *fieldErrors, size int32, token, planID string) planPage {
	pg := planPage{size: pageSize(fe, size, defaultPlanPageSize, maxPlanPageSize)}
	if token == "" {
		return pg
	}
	raw, err := base64.RawURLEncoding.DecodeString(token)
	parts := strings.Split(string(raw), "\x00")
	var off int
	if err == nil && len(parts) == 3 && parts[0] == planTokenVersion {
		off, err = strconv.Atoi(parts[2])
	}
	switch {
	case err != nil || len(parts) != 3 || parts[0] != planTokenVersion || off <= 0:
		fe.add("page_token", "invalid page token; pass the next_page_token of a previous response for this plan")
	case parts[1] != planID:
		fe.add("page_token", "the page token is for another plan")
	default:
		pg.offset = off
	}
	return pg
}

// planPageToken returns the token of the page at offset of a plan.
func planPageToken(planID string, offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(planTokenVersion + "\x00" + planID + "\x00" + strconv.Itoa(offset)))
}

// planToProto converts a plan the engine handed out (the caller's copy) with one page of its
// decisions (with their outcomes, once committed) and job outcomes, and returns the token of
// the next page ("" after the last).
func planToProto(p *engine.Plan, pg planPage) (*sluicev1.Plan, string) {
	out := &sluicev1.Plan{
		Id:                p.ID,
		Cluster:           p.Cluster,
		BaseRevision:      p.BaseRevision,
		State:             planStatesOut[p.State],
		ScheduledAt:       timeToProto(p.ScheduledAt),
		CommittedRevision: p.CommittedRevision,
		Stats:             &sluicev1.CycleStats{Total: durationpb.New(p.Duration)},
		DecisionsDropped:  p.DecisionsDropped,
		Counts: &sluicev1.PlanCounts{
			Binds: int32(p.Counts.Binds), Pipelines: int32(p.Counts.Pipelines), Evicts: int32(p.Counts.Evicts),
			Jobs: int32(p.Counts.Jobs), Applied: int32(p.Counts.Applied), Rejected: int32(p.Counts.Rejected),
		},
	}
	if p.State == engine.PlanProposed && !p.ExpiresAt.IsZero() {
		out.ExpiresAt = timestamppb.New(p.ExpiresAt)
	}
	r := p.Result
	if r == nil {
		return out, ""
	}
	for _, t := range r.Timings {
		out.Stats.Actions = append(out.Stats.Actions, &sluicev1.ActionTiming{
			Action: t.Action, Duration: durationpb.New(t.Duration),
		})
	}
	end := pg.offset + pg.size
	dlo, dhi := min(pg.offset, len(r.Decisions)), min(end, len(r.Decisions))
	out.Decisions = decisionsToProto(r.Decisions[dlo:dhi])
	if len(p.Rejections) == len(r.Decisions) {
		for i, d := range out.Decisions {
			k := r.Decisions[dlo+i].Kind
			if k != framework.DecisionBind && k != framework.DecisionEvict {
				continue
			}
			if reason := p.Rejections[dlo+i]; reason != "" {
				d.Outcome, d.RejectedReason = sluicev1.DecisionOutcome_DECISION_OUTCOME_REJECTED, reason
			} else {
				d.Outcome = sluicev1.DecisionOutcome_DECISION_OUTCOME_APPLIED
			}
		}
	}
	jlo, jhi := min(pg.offset, len(r.Jobs)), min(end, len(r.Jobs))
	for _, o := range r.Jobs[jlo:jhi] {
		out.Jobs = append(out.Jobs, outcomeToProto(o))
	}
	if h := p.Hypothetical; h != nil {
		for i, d := range out.Decisions {
			d.Hypothetical = h.Decisions[dlo+i]
		}
		for i, o := range out.Jobs {
			o.Hypothetical = h.Jobs[jlo+i]
		}
	}
	if end < len(r.Decisions) || end < len(r.Jobs) {
		return out, planPageToken(p.ID, end)
	}
	return out, ""
}

func decisionsToProto(ds []framework.Decision) []*sluicev1.Decision {
	// Binds are most of a large plan: their messages come from five slabs instead of five
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
	tasks := make([]sluicev1.TaskRef, binds)
	jobs := make([]sluicev1.JobRef, binds)
	out := make([]*sluicev1.Decision, 0, len(ds))
	b := 0
	for _, d := range ds {
		if d.Kind != framework.DecisionBind {
			out = append(out, decisionToProto(d))
			continue
		}
		body := &bodies[b]
		tasks[b].Namespace, tasks[b].Name = splitUID(d.Task)
		jobs[b].Namespace, jobs[b].Name = splitUID(d.Job)
		body.Task, body.Job, body.Node = &tasks[b], &jobs[b], d.Node
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
			Task: taskRef(d.Task), Job: jobRef(d.Job), Node: d.Node,
		}}}
	case framework.DecisionEvict:
		return &sluicev1.Decision{Kind: &sluicev1.Decision_Evict{Evict: &sluicev1.EvictDecision{
			Task: taskRef(d.Task), Job: jobRef(d.Job), Node: d.Node, Reason: d.Reason, ForTask: taskRef(d.ForTask), Action: d.Action,
		}}}
	}
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{
		Task: taskRef(d.Task), Job: jobRef(d.Job), Node: d.Node, DeviceIds: append([]string(nil), d.DeviceIDs...),
	}}}
}

func outcomeToProto(o framework.JobOutcome) *sluicev1.JobOutcome {
	out := &sluicev1.JobOutcome{
		Job:           jobRef(o.Job),
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

// commitToProto converts a commit's result: the committed plan's first page, and the page's
// applied and rejected decisions.
func commitToProto(r *engine.CommitResult, pg planPage) *sluicev1.CommitPlanResponse {
	out := &sluicev1.CommitPlanResponse{Revision: r.Revision}
	if r.Plan == nil {
		out.Applied = decisionsToProto(r.Applied)
		for _, rj := range r.Rejected {
			out.Rejected = append(out.Rejected, &sluicev1.RejectedDecision{Decision: decisionToProto(rj.Decision), Reason: rj.Reason})
		}
		return out
	}
	out.Plan, out.NextPageToken = planToProto(r.Plan, pg)
	for _, d := range out.GetPlan().GetDecisions() {
		switch d.GetOutcome() {
		case sluicev1.DecisionOutcome_DECISION_OUTCOME_APPLIED:
			out.Applied = append(out.Applied, bareDecision(d))
		case sluicev1.DecisionOutcome_DECISION_OUTCOME_REJECTED:
			out.Rejected = append(out.Rejected, &sluicev1.RejectedDecision{Decision: bareDecision(d), Reason: d.GetRejectedReason()})
		}
	}
	return out
}

// bareDecision is a decision without its outcome (the lists of applied and rejected
// decisions say it).
func bareDecision(d *sluicev1.Decision) *sluicev1.Decision {
	c := proto.Clone(d).(*sluicev1.Decision)
	c.Outcome, c.RejectedReason = 0, ""
	return c
}

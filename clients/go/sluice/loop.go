package sluice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// PlanResult is a plan after its commit: what the RM has to carry out.
type PlanResult struct {
	// Plan is the cycle's plan, all its pages: once committed, the server's record of it,
	// each bind and eviction with its outcome.
	Plan *sluicev1.Plan
	// Applied are the bind and evict decisions that took effect: carry these out.
	// Pipeline decisions (reservations within the cycle) are never here.
	Applied []*sluicev1.Decision
	// Rejected are decisions the commit refused because the cluster changed since
	// the plan's base revision; the next cycle sees the change.
	Rejected []*sluicev1.RejectedDecision
	// Revision is the cluster's revision after the commit.
	Revision uint64
}

// ScheduleAndCommit runs one cycle in propose mode and commits its plan. A plan
// without decisions is discarded and returned with nothing applied.
func (c *Client) ScheduleAndCommit(ctx context.Context, cluster string) (*PlanResult, error) {
	plan, err := c.Schedule(ctx, cluster, sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE)
	if err != nil {
		return nil, err
	}
	return c.commit(ctx, plan)
}

// commit commits a proposed plan (or discards it when it decides nothing); a plan the
// server already committed (auto-commit) is read from its record. Applied and Rejected come
// from the committed plan's record, each decision with its outcome, page by page.
func (c *Client) commit(ctx context.Context, plan *sluicev1.Plan) (*PlanResult, error) {
	res := &PlanResult{Plan: plan}
	switch plan.GetState() {
	case sluicev1.PlanState_PLAN_STATE_COMMITTED:
		res.Revision = plan.GetCommittedRevision()
		res.Applied, res.Rejected = Outcomes(plan)
		return res, nil
	case sluicev1.PlanState_PLAN_STATE_PROPOSED:
	default:
		return nil, fmt.Errorf("sluice: plan %s is %s, not proposed", plan.GetId(), plan.GetState())
	}
	n := plan.GetCounts()
	if n.GetBinds()+n.GetEvicts()+n.GetPipelines() == 0 && len(plan.GetDecisions()) == 0 {
		res.Revision = plan.GetBaseRevision()
		return res, c.Discard(ctx, plan.GetCluster(), plan.GetId())
	}
	resp, err := c.Commit(ctx, plan.GetCluster(), plan.GetId())
	if err != nil {
		return nil, err
	}
	res.Revision = resp.GetRevision()
	if resp.GetPlan() == nil {
		// A server without plan records answers with the lists alone.
		res.Applied, res.Rejected = resp.GetApplied(), resp.GetRejected()
		return res, nil
	}
	committed, err := c.RestOfPlan(ctx, resp.GetPlan(), resp.GetNextPageToken())
	if err != nil {
		return nil, err
	}
	res.Plan = committed
	res.Applied, res.Rejected = Outcomes(committed)
	return res, nil
}

// Outcomes splits a committed plan's binds and evictions by their outcome. A decision without
// one (a server that predates outcomes) counts as applied.
func Outcomes(plan *sluicev1.Plan) (applied []*sluicev1.Decision, rejected []*sluicev1.RejectedDecision) {
	for _, d := range plan.GetDecisions() {
		switch {
		case d.GetPipeline() != nil:
		case d.GetOutcome() == sluicev1.DecisionOutcome_DECISION_OUTCOME_REJECTED:
			rejected = append(rejected, &sluicev1.RejectedDecision{Decision: d, Reason: d.GetRejectedReason()})
		default:
			applied = append(applied, d)
		}
	}
	return applied, rejected
}

// LoopOptions configure RunSchedulingLoop.
type LoopOptions struct {
	// Cluster to schedule. Required.
	Cluster string
	// Execute carries out a committed plan's applied decisions (start the bound
	// tasks, stop the evicted ones) and should report what happened through the
	// Syncer (tasks RUNNING, or back to PENDING when a start failed). It is called
	// only for plans with something applied; decisions a commit rejected need nothing
	// (the next cycle sees the change that caused them). An error is reported to
	// OnError; the loop goes on. Required.
	Execute func(ctx context.Context, r *PlanResult) error
	// Interval is the time between cycles in the periodic mode, and the longest time
	// between cycles in the watch mode. 0 means 1s.
	Interval time.Duration
	// Watch uses the WatchPlans stream (cycles when the cluster changes, and at
	// least every Interval) instead of calling Schedule every Interval.
	Watch bool
	// AutoCommit has the server commit each plan (SCHEDULE_MODE_AUTO_COMMIT)
	// instead of the loop calling CommitPlan.
	AutoCommit bool
	// Backoff spaces retries after a failed call or stream.
	Backoff Backoff
	// OnError, if set, is told of every failure the loop retries, and of Execute's
	// errors.
	OnError func(err error)
}

// RunSchedulingLoop schedules opts.Cluster until ctx ends, then returns ctx's error:
// each cycle's plan is committed and handed to opts.Execute. Failed calls are
// retried with backoff, except those no retry can mend (INVALID_ARGUMENT, such as a
// bad cluster name, and UNIMPLEMENTED), which it returns.
func (c *Client) RunSchedulingLoop(ctx context.Context, opts LoopOptions) error {
	if opts.Cluster == "" || opts.Execute == nil {
		return errors.New("sluice: LoopOptions.Cluster and LoopOptions.Execute are required")
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	report := func(err error) {
		if opts.OnError != nil && err != nil && ctx.Err() == nil {
			opts.OnError(err)
		}
	}
	handle := func(plan *sluicev1.Plan) error {
		res, err := c.commit(ctx, plan)
		if err != nil {
			return err
		}
		if len(res.Applied) > 0 {
			report(opts.Execute(ctx, res))
		}
		return nil
	}
	mode := sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE
	if opts.AutoCommit {
		mode = sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT
	}
	attempt := 0
	for ctx.Err() == nil {
		var err error
		if opts.Watch {
			// A plan that fails to commit (it expired, say) is reported; the stream goes on.
			err = c.watchOnce(ctx, opts.Cluster, mode, opts.Interval,
				func(p *sluicev1.Plan) error { report(handle(p)); return nil }, func() { attempt = 0 })
		} else {
			var plan *sluicev1.Plan
			if plan, err = c.Schedule(ctx, opts.Cluster, mode); err == nil {
				err = handle(plan)
			}
		}
		if err == nil {
			attempt = 0
			if !sleep(ctx, opts.Interval) {
				break
			}
			continue
		}
		if permanent(err) && ctx.Err() == nil {
			return err
		}
		report(err)
		if !sleep(ctx, opts.Backoff.Delay(attempt)) {
			break
		}
		attempt++
	}
	return ctx.Err()
}

// watchOnce handles the plans of one WatchPlans stream until it fails.
func (c *Client) watchOnce(ctx context.Context, cluster string, mode sluicev1.ScheduleMode, period time.Duration,
	handle func(*sluicev1.Plan) error, healthy func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.Scheduler.WatchPlans(ctx, &sluicev1.WatchPlansRequest{
		Cluster: cluster, Mode: mode, Period: durationpb.New(period),
	})
	if err != nil {
		return err
	}
	for {
		m, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return errors.New("sluice: the server ended the WatchPlans stream")
		}
		if err != nil {
			return err
		}
		healthy()
		plan, err := c.RestOfPlan(ctx, m.GetPlan(), m.GetNextPageToken())
		if err != nil {
			return err
		}
		if err := handle(plan); err != nil {
			return err
		}
	}
}

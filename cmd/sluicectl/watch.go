package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// watch streams plans (WatchPlans): dry runs by default, or proposals it commits one by one
// with --commit. It ends on Ctrl-C, after --count plans, or when the server ends the stream.
func (a *app) watch(args []string) error {
	fs := a.flags("watch")
	commit := fs.Bool("commit", false, "propose and commit each plan (the decisions take effect)")
	period := fs.Duration("period", 0, "longest time between cycles when nothing changes (default: the server's --schedule-period)")
	takeover := fs.Bool("takeover", false, "replace the cluster's current watcher")
	count := fs.Int("count", 0, "stop after this many plans (0: until interrupted)")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("watch: unexpected argument %q", pos[0])
	}
	if *period < 0 || *count < 0 {
		return usagef("watch: --period and --count must not be negative")
	}
	mode := sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN
	if *commit {
		mode = sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE
	}
	req := &sluicev1.WatchPlansRequest{Cluster: a.cluster, Mode: mode, Takeover: *takeover}
	if *period > 0 {
		req.Period = durationpb.New(*period)
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	sc := sluicev1.NewSchedulerServiceClient(conn)
	ctx, cancel := context.WithCancel(a.ctx)
	defer cancel()
	stream, err := sc.WatchPlans(ctx, req)
	if err != nil {
		return a.rpcError("watch", err)
	}
	for n := 0; *count == 0 || n < *count; n++ {
		m, err := stream.Recv()
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case err != nil && (a.ctx.Err() != nil || status.Code(err) == codes.Canceled):
			return nil // interrupted
		case err != nil:
			return a.rpcError("watch", err)
		}
		p := m.GetPlan()
		var res *sluicev1.CommitPlanResponse
		var commitErr error
		if *commit && p.GetState() == sluicev1.PlanState_PLAN_STATE_PROPOSED {
			res, commitErr = sc.CommitPlan(a.ctx, &sluicev1.CommitPlanRequest{Cluster: a.cluster, PlanId: p.GetId()})
		}
		if err := a.printWatched(*out, n, p, res, commitErr); err != nil {
			return err
		}
		if commitErr != nil && status.Code(commitErr) != codes.FailedPrecondition {
			return a.rpcError("watch: commit "+p.GetId(), commitErr)
		}
	}
	return nil
}

// printWatched prints one watched plan and its commit. In JSON, each is an object
// {"plan": ..., "commit": ...} on its own; in YAML, a document.
func (a *app) printWatched(format string, n int, p *sluicev1.Plan, res *sluicev1.CommitPlanResponse, commitErr error) error {
	if format != "table" {
		obj := map[string]json.RawMessage{}
		b, err := protojson.Marshal(p)
		if err != nil {
			return err
		}
		obj["plan"] = b
		if res != nil {
			if obj["commit"], err = protojson.Marshal(res); err != nil {
				return err
			}
		}
		if commitErr != nil {
			obj["commitError"], _ = json.Marshal(status.Convert(commitErr).Message())
		}
		if format == "yaml" && n > 0 {
			fmt.Fprintln(a.stdout, "---")
		}
		return writeValue(a.stdout, format, obj)
	}
	if n > 0 {
		fmt.Fprintln(a.stdout)
	}
	fmt.Fprintf(a.stdout, "--- %s\n", time.Now().Format(time.RFC3339))
	if err := a.printPlan(p); err != nil {
		return err
	}
	switch {
	case commitErr != nil:
		fmt.Fprintf(a.stdout, "\nnot committed: %s\n", status.Convert(commitErr).Message())
	case res != nil:
		fmt.Fprintf(a.stdout, "\ncommitted plan %s at revision %d: %d applied, %d rejected\n",
			p.GetId(), res.GetRevision(), len(res.GetApplied()), len(res.GetRejected()))
		for _, r := range res.GetRejected() {
			fmt.Fprintf(a.stdout, "  rejected %s: %s\n", decisionTask(r.GetDecision()), r.GetReason())
		}
	}
	return nil
}

func decisionTask(d *sluicev1.Decision) string {
	switch k := d.GetKind().(type) {
	case *sluicev1.Decision_Bind:
		return "bind " + sluice.FullName(k.Bind.GetTask()) + " to " + k.Bind.GetNode()
	case *sluicev1.Decision_Evict:
		return "evict " + sluice.FullName(k.Evict.GetTask()) + " from " + k.Evict.GetNode()
	case *sluicev1.Decision_Pipeline:
		return "pipeline " + sluice.FullName(k.Pipeline.GetTask()) + " on " + k.Pipeline.GetNode()
	}
	return "?"
}

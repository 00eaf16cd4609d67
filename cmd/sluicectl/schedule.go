package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// schedule runs one cycle and prints its plan.
func (a *app) schedule(args []string) error {
	fs := a.flags("schedule")
	dry := fs.Bool("dry-run", false, "only compute the plan; nothing is stored")
	commit := fs.Bool("commit", false, "commit the plan at once (auto-commit)")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("schedule: unexpected argument %q", pos[0])
	}
	mode := sluicev1.ScheduleMode_SCHEDULE_MODE_PROPOSE
	switch {
	case *dry && *commit:
		return usagef("schedule: --dry-run and --commit exclude each other")
	case *dry:
		mode = sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN
	case *commit:
		mode = sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	sc := sluicev1.NewSchedulerServiceClient(conn)
	resp, err := sc.Schedule(a.ctx, &sluicev1.ScheduleRequest{Cluster: a.cluster, Mode: mode})
	if err != nil {
		return a.rpcError("schedule", err)
	}
	plan, err := sluice.WholePlan(a.ctx, sc, resp.GetPlan(), resp.GetNextPageToken())
	if err != nil {
		return a.rpcError("schedule", err)
	}
	if *out != "table" {
		err = writeProto(a.stdout, *out, plan)
	} else {
		err = a.printPlan(plan)
	}
	if err != nil {
		return err
	}
	if _, rejected := sluice.Outcomes(plan); mode == sluicev1.ScheduleMode_SCHEDULE_MODE_AUTO_COMMIT && len(rejected) > 0 {
		return exitError{exitRejected}
	}
	return nil
}

func (a *app) printPlan(p *sluicev1.Plan) error {
	fmt.Fprintf(a.stdout, "plan %s  cluster %s  base revision %d  state %s\n",
		p.GetId(), p.GetCluster(), p.GetBaseRevision(), enumName(p.GetState().String(), "PLAN_STATE_"))
	if p.GetCommittedRevision() != 0 {
		fmt.Fprintf(a.stdout, "committed at revision %d\n", p.GetCommittedRevision())
	}
	if p.GetExpiresAt() != nil {
		fmt.Fprintf(a.stdout, "expires at %s\n", p.GetExpiresAt().AsTime().Format("2006-01-02T15:04:05Z07:00"))
	}
	fmt.Fprintln(a.stdout)
	if len(p.GetDecisions()) == 0 {
		fmt.Fprintln(a.stdout, "no decisions")
	} else if err := a.decisionTable(p.GetDecisions(), nil); err != nil {
		return err
	}
	var pending []*sluicev1.JobOutcome
	for _, j := range p.GetJobs() {
		if j.GetPending() > 0 {
			pending = append(pending, j)
		}
	}
	if len(pending) > 0 {
		fmt.Fprintln(a.stdout)
		t := newTable(a.stdout, "PENDING JOB", "READY", "PENDING", "EXPLANATION")
		for _, j := range pending {
			t.row(sluice.FullName(j.GetJob()), strconv.Itoa(int(j.GetReady())), strconv.Itoa(int(j.GetPending())), explanationLine(j.GetExplanation()))
		}
		return t.flush()
	}
	return nil
}

// decisionTable prints decisions as ACTION TASK NODE REASON rows; reasons,
// when given, override the decision's own (for rejected decisions).
func (a *app) decisionTable(ds []*sluicev1.Decision, reasons []string) error {
	t := newTable(a.stdout, "ACTION", "TASK", "NODE", "REASON")
	for i, d := range ds {
		var action, task, node, reason string
		switch k := d.GetKind().(type) {
		case *sluicev1.Decision_Bind:
			action, task, node = "BIND", sluice.FullName(k.Bind.GetTask()), k.Bind.GetNode()
			if ids := k.Bind.GetDeviceIds(); len(ids) > 0 {
				reason = "devices " + strings.Join(ids, ",")
			}
		case *sluicev1.Decision_Pipeline:
			action, task, node = "PIPELINE", sluice.FullName(k.Pipeline.GetTask()), k.Pipeline.GetNode()
		case *sluicev1.Decision_Evict:
			e := k.Evict
			action, task, node, reason = "EVICT", sluice.FullName(e.GetTask()), e.GetNode(), e.GetReason()
			var extra []string
			if e.GetAction() != "" {
				extra = append(extra, e.GetAction())
			}
			if f := sluice.FullName(e.GetForTask()); f != "" {
				extra = append(extra, "for "+f)
			}
			if len(extra) > 0 {
				if reason != "" {
					reason += " "
				}
				reason += "(" + strings.Join(extra, ", ") + ")"
			}
		default:
			action = "?"
		}
		if reasons != nil {
			reason = reasons[i]
		} else if d.GetOutcome() == sluicev1.DecisionOutcome_DECISION_OUTCOME_REJECTED {
			reason = "rejected: " + d.GetRejectedReason()
		}
		t.row(action, task, node, reason)
	}
	return t.flush()
}

// explanationLine is an explanation's summary, with the queue reason when
// there is one.
func explanationLine(e *sluicev1.Explanation) string {
	s := e.GetSummary()
	if q := e.GetQueueReason(); q != "" && !strings.Contains(s, q) {
		if s != "" {
			s += "; "
		}
		s += "queue: " + q
	}
	return s
}

// commit commits a proposed plan.
func (a *app) commit(args []string) error {
	fs := a.flags("commit")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("commit: expected one PLAN_ID")
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	sc := sluicev1.NewSchedulerServiceClient(conn)
	resp, err := sc.CommitPlan(a.ctx, &sluicev1.CommitPlanRequest{Cluster: a.cluster, PlanId: pos[0]})
	if err != nil {
		return a.rpcError("commit", err)
	}
	if resp.GetNextPageToken() != "" {
		whole, err := sluice.WholePlan(a.ctx, sc, resp.GetPlan(), resp.GetNextPageToken())
		if err != nil {
			return a.rpcError("commit", err)
		}
		resp.Applied, resp.Rejected = sluice.Outcomes(whole)
		resp.Plan, resp.NextPageToken = whole, ""
	}
	if *out != "table" {
		if err := writeProto(a.stdout, *out, resp); err != nil {
			return err
		}
	} else if err := a.printCommit(pos[0], resp); err != nil {
		return err
	}
	if len(resp.GetRejected()) > 0 {
		return exitError{exitRejected}
	}
	return nil
}

// printCommit prints a commit's counts, and the rejected decisions with their reasons.
func (a *app) printCommit(planID string, resp *sluicev1.CommitPlanResponse) error {
	fmt.Fprintf(a.stdout, "committed plan %s at revision %d: %d applied, %d rejected\n",
		planID, resp.GetRevision(), len(resp.GetApplied()), len(resp.GetRejected()))
	if len(resp.GetRejected()) == 0 {
		return nil
	}
	fmt.Fprintln(a.stdout)
	ds := make([]*sluicev1.Decision, len(resp.GetRejected()))
	reasons := make([]string, len(resp.GetRejected()))
	for i, r := range resp.GetRejected() {
		ds[i], reasons[i] = r.GetDecision(), "rejected: "+r.GetReason()
	}
	return a.decisionTable(ds, reasons)
}

// discard discards a proposed plan.
func (a *app) discard(args []string) error {
	fs := a.flags("discard")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("discard: expected one PLAN_ID")
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := sluicev1.NewSchedulerServiceClient(conn).DiscardPlan(a.ctx, &sluicev1.DiscardPlanRequest{Cluster: a.cluster, PlanId: pos[0]}); err != nil {
		return a.rpcError("discard", err)
	}
	if *out != "table" {
		return writeValue(a.stdout, *out, map[string]any{"cluster": a.cluster, "planId": pos[0], "discarded": true})
	}
	fmt.Fprintf(a.stdout, "discarded plan %s\n", pos[0])
	return nil
}

// explain prints a job's outcome in the latest cycle that considered it.
func (a *app) explain(args []string) error {
	fs := a.flags("explain")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("explain: expected one JOB (namespace/name)")
	}
	ns, name := scenario.SplitName(pos[0])
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	resp, err := sluicev1.NewSchedulerServiceClient(conn).ExplainJob(a.ctx, &sluicev1.ExplainJobRequest{Cluster: a.cluster, Namespace: ns, Name: name})
	if err != nil {
		return a.rpcError("explain", err)
	}
	if *out != "table" {
		return writeProto(a.stdout, *out, resp)
	}
	o := resp.GetOutcome()
	job := sluice.FullName(o.GetJob())
	if job == "" {
		job = fullName(ns, name)
	}
	fmt.Fprintf(a.stdout, "job %s\n", job)
	phase := scenario.PhaseName(o.GetPhase())
	if o.GetPreviousPhase() != sluicev1.JobPhase_JOB_PHASE_UNSPECIFIED && o.GetPreviousPhase() != o.GetPhase() {
		phase += " (was " + scenario.PhaseName(o.GetPreviousPhase()) + ")"
	}
	fmt.Fprintf(a.stdout, "phase: %s\n", phase)
	if resp.GetPlanId() == "" {
		fmt.Fprintln(a.stdout, "no scheduling cycle has considered the job yet")
		return nil
	}
	fmt.Fprintf(a.stdout, "plan: %s\n", resp.GetPlanId())
	fmt.Fprintf(a.stdout, "tasks: %d ready, %d pending, minAvailable %d\n", o.GetReady(), o.GetPending(), o.GetMinAvailable())
	e := o.GetExplanation()
	if e.GetSummary() != "" {
		fmt.Fprintf(a.stdout, "summary: %s\n", e.GetSummary())
	}
	if g := e.GetGang(); g != nil {
		fmt.Fprintf(a.stdout, "gang: %d of minAvailable %d placeable\n", g.GetPlaceable(), g.GetMinAvailable())
	}
	if e.GetQueueReason() != "" {
		fmt.Fprintf(a.stdout, "queue: %s\n", e.GetQueueReason())
	}
	if len(e.GetReasons()) > 0 {
		fmt.Fprintf(a.stdout, "\nnodes considered: %d\n", e.GetNodesTotal())
		t := newTable(a.stdout, "REASON", "NODES")
		for _, r := range e.GetReasons() {
			t.row(r.GetReason(), strconv.Itoa(int(r.GetNodes())))
		}
		return t.flush()
	}
	return nil
}

// etagLine starts the comment line that "config get" prints first, and that "config set"
// reads back: the configuration's etag, so that a configuration got, edited and set replaces
// only the one it was got from.
const etagLine = "# etag: "

// splitEtag returns the etag of a configuration file that starts with an etag line, and the
// text without that line.
func splitEtag(text string) (etag, rest string) {
	line, after, _ := strings.Cut(text, "\n")
	if e, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), etagLine); ok {
		return strings.TrimSpace(e), after
	}
	return "", text
}

// config gets or sets the scheduler configuration. "config get" prints an etag line before the
// configuration (YAML output); "config set" sends the etag of --etag, else of the file's etag
// line, so that it fails if the configuration changed since; --force sends none.
func (a *app) config(args []string) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return usagef("config: expected get or set")
	}
	sub, args := args[0], args[1:]
	fs := a.flags("config " + sub)
	out := fs.String("o", "yaml", "output `format`: yaml (the configuration as it is), table (the same) or json")
	var file, etag *string
	var force *bool
	switch sub {
	case "get":
	case "set":
		file = fs.String("f", "", "configuration `file` in Volcano scheduler-conf YAML (- for standard input)")
		etag = fs.String("etag", "", "replace the configuration only if its etag is still `ETAG` (default: the file's \"# etag:\" line)")
		force = fs.Bool("force", false, "replace the configuration whatever its etag")
	default:
		return usagef("config: unknown subcommand %q (expected get or set)", sub)
	}
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("config %s: unexpected argument %q", sub, pos[0])
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if sub == "set" && *file == "" {
		return usagef("config set: -f FILE is required")
	}
	if sub == "set" && *force && *etag != "" {
		return usagef("config set: --etag and --force exclude each other")
	}
	var text, ifEtag string
	if sub == "set" {
		data, err := a.readInput(*file)
		if err != nil {
			return err
		}
		ifEtag, text = splitEtag(string(data))
		switch {
		case *force:
			ifEtag = ""
		case *etag != "":
			ifEtag = *etag
		}
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	c := sluicev1.NewSchedulerServiceClient(conn)
	if sub == "get" {
		resp, err := c.GetSchedulerConfig(a.ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: a.cluster})
		if err != nil {
			return a.rpcError("config get", err)
		}
		if *out == "json" {
			return writeProto(a.stdout, "json", resp)
		}
		cfg := resp.GetConfig()
		if !strings.HasSuffix(cfg, "\n") {
			cfg += "\n"
		}
		if e := resp.GetEtag(); e != "" {
			cfg = etagLine + e + "\n" + cfg
		}
		_, err = fmt.Fprint(a.stdout, cfg)
		return err
	}
	resp, err := c.UpdateSchedulerConfig(a.ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: a.cluster, Config: text, Etag: ifEtag})
	if err != nil {
		return a.rpcError("config set", err)
	}
	if *out == "json" {
		return writeProto(a.stdout, "json", resp)
	}
	fmt.Fprintf(a.stdout, "scheduler configuration of cluster %s updated", a.cluster)
	if e := resp.GetEtag(); e != "" {
		fmt.Fprintf(a.stdout, " (etag %s)", e)
	}
	fmt.Fprintln(a.stdout)
	return nil
}

// scenario runs "scenario run".
func (a *app) scenario(args []string) error {
	if len(args) == 0 || args[0] != "run" {
		return usagef("scenario: expected run")
	}
	fs := a.flags("scenario run")
	paths, err := a.parse(fs, args[1:])
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return usagef("scenario run: expected at least one PATH")
	}
	if !a.server.set {
		addr, stop, err := startInProcess()
		if err != nil {
			return fmt.Errorf("scenario run: %w", err)
		}
		defer stop()
		a.server.addr = addr
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	passed, failed := scenario.RunFiles(a.ctx, conn, paths, a.stdout)
	switch {
	case failed > 0:
		return exitError{exitFailure}
	case passed == 0:
		return fmt.Errorf("scenario run: no scenario files found in %s", strings.Join(paths, " "))
	}
	return nil
}

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// whatifKeys are the keys a what-if file adds to the cluster-file form.
var whatifKeys = []string{"removeNodes", "drainNodes"}

// whatif asks the server where hypothetical jobs and tasks would go, and what removing or
// draining nodes would do, with a dry-run Schedule whose hypothetical batch is the file's:
// nothing is stored.
func (a *app) whatif(args []string) error {
	fs := a.flags("whatif")
	file := fs.String("f", "", "what-if `file`: the cluster-file form (jobs, tasks, nodes, queues, ...) plus removeNodes and drainNodes lists (- for standard input)")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	name, data, err := a.readFileArg("whatif", *file, pos)
	if err != nil {
		return err
	}
	w, err := parseWhatIf(name, data)
	if err != nil {
		return err
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	batch, err := a.whatifBatch(sluicev1.NewClusterStateServiceClient(conn), w)
	if err != nil {
		return err
	}
	resp, err := sluicev1.NewSchedulerServiceClient(conn).Schedule(a.ctx, &sluicev1.ScheduleRequest{
		Cluster: a.cluster, Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, Hypothetical: batch, PageSize: 5000,
	})
	if err != nil {
		return a.rpcError("whatif", err)
	}
	plan := resp.GetPlan()
	if *out != "table" {
		return writeProto(a.stdout, *out, plan)
	}
	printWhatIf(a.stdout, plan, resp.GetNextPageToken() != "")
	return nil
}

// whatIf is a parsed what-if file.
type whatIf struct {
	cluster       *scenario.Cluster
	remove, drain []string
}

// parseWhatIf reads the cluster-file form with two more keys: removeNodes and drainNodes,
// lists of node names. The lines of those keys are blanked before the rest is parsed, so
// that errors keep their line numbers.
func parseWhatIf(name string, data []byte) (*whatIf, error) {
	w := &whatIf{}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: invalid YAML (%v)", name, err)
	}
	rest := data
	if len(doc.Content) == 1 && doc.Content[0].Kind == yaml.MappingNode {
		root := doc.Content[0]
		lines := bytes.SplitAfter(data, []byte("\n"))
		blanked := false
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			if !slices.Contains(whatifKeys, k.Value) {
				continue
			}
			var names []string
			if err := v.Decode(&names); err != nil {
				return nil, fmt.Errorf("%s:%d: %s: expected a list of node names", name, k.Line, k.Value)
			}
			if k.Value == "removeNodes" {
				w.remove = append(w.remove, names...)
			} else {
				w.drain = append(w.drain, names...)
			}
			end := len(lines)
			if i+2 < len(root.Content) {
				end = root.Content[i+2].Line - 1
			}
			for l := k.Line - 1; l < end && l < len(lines); l++ {
				lines[l] = []byte("\n")
			}
			blanked = true
		}
		if blanked {
			rest = bytes.Join(lines, nil)
		}
	}
	if len(bytes.TrimSpace(rest)) > 0 && !onlyComments(rest) {
		c, err := scenario.ParseClusterPartial(name, rest)
		if err != nil {
			return nil, withLine(err)
		}
		w.cluster = c
	}
	if w.cluster == nil && len(w.remove) == 0 && len(w.drain) == 0 {
		return nil, fmt.Errorf("%s: nothing to try: give jobs, tasks, nodes, removeNodes or drainNodes", name)
	}
	return w, nil
}

// onlyComments reports whether YAML text holds nothing but blank lines and comments.
func onlyComments(b []byte) bool {
	for _, l := range bytes.Split(b, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 && l[0] != '#' {
			return false
		}
	}
	return true
}

// whatifBatch makes the hypothetical batch: the file's objects, then for each removed node
// its deletion and for each drained node its copy marked unschedulable, with the tasks they
// hold back to pending (so the cycle says where they would go).
func (a *app) whatifBatch(c sluicev1.ClusterStateServiceClient, w *whatIf) (*sluicev1.DeltaBatch, error) {
	b := &sluicev1.DeltaBatch{}
	if w.cluster != nil {
		b.Deltas = append(b.Deltas, w.cluster.Batch().GetDeltas()...)
	}
	moved := map[string]bool{}
	for _, list := range []struct {
		names  []string
		remove bool
	}{{w.remove, true}, {w.drain, false}} {
		for _, n := range list.names {
			node, err := c.GetNode(a.ctx, &sluicev1.GetNodeRequest{Cluster: a.cluster, Name: n})
			if err != nil {
				return nil, a.rpcError("whatif: node "+n, err)
			}
			if list.remove {
				b.Deltas = append(b.Deltas, &sluicev1.Delta{Change: &sluicev1.Delta_Delete{Delete: &sluicev1.ObjectRef{
					Kind: sluicev1.ObjectKind_OBJECT_KIND_NODE, Name: n}}})
			} else {
				drained := node.GetNode()
				drained.Unschedulable = true
				b.Deltas = append(b.Deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: drained}})
			}
			for tok := ""; ; {
				r, err := c.ListTasks(a.ctx, &sluicev1.ListTasksRequest{Cluster: a.cluster, Node: n, PageSize: 1000, PageToken: tok})
				if err != nil {
					return nil, a.rpcError("whatif: tasks of node "+n, err)
				}
				for _, t := range r.GetTasks() {
					key := t.GetNamespace() + "/" + t.GetName()
					if moved[key] {
						continue
					}
					moved[key] = true
					t.Status, t.Node, t.DeviceIds, t.StartedAt = sluicev1.TaskStatus_TASK_STATUS_PENDING, "", nil, nil
					b.Deltas = append(b.Deltas, &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}})
				}
				if tok = r.GetNextPageToken(); tok == "" {
					break
				}
			}
		}
	}
	return b, nil
}

// printWhatIf prints what the what-if would do: hypothetical placements and evictions, and
// why hypothetical jobs would wait.
func printWhatIf(w io.Writer, p *sluicev1.Plan, more bool) {
	var binds, evicts, pipes [][]string
	for _, d := range p.GetDecisions() {
		if !d.GetHypothetical() {
			continue
		}
		switch {
		case d.GetBind() != nil:
			b := d.GetBind()
			binds = append(binds, []string{sluice.FullName(b.GetTask()), b.GetNode(), strings.Join(b.GetDeviceIds(), ",")})
		case d.GetPipeline() != nil:
			pp := d.GetPipeline()
			pipes = append(pipes, []string{sluice.FullName(pp.GetTask()), pp.GetNode()})
		case d.GetEvict() != nil:
			e := d.GetEvict()
			evicts = append(evicts, []string{sluice.FullName(e.GetTask()), e.GetNode(), sluice.FullName(e.GetForTask()), e.GetAction(), e.GetReason()})
		}
	}
	var waits [][]string
	for _, o := range p.GetJobs() {
		if !o.GetHypothetical() || o.GetPending() == 0 {
			continue
		}
		why := o.GetExplanation().GetSummary()
		waits = append(waits, []string{sluice.FullName(o.GetJob()), fmt.Sprintf("%d/%d", o.GetReady(), o.GetMinAvailable()), fmt.Sprint(o.GetPending()), why})
	}
	section := func(title string, head []string, rows [][]string) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n", title)
		t := newTable(w, head...)
		for _, r := range rows {
			t.row(r...)
		}
		t.flush()
		fmt.Fprintln(w)
	}
	section("Would place", []string{"TASK", "NODE", "DEVICES"}, binds)
	section("Would evict", []string{"TASK", "NODE", "FOR", "ACTION", "REASON"}, evicts)
	section("Would reserve (once evicted tasks stop)", []string{"TASK", "NODE"}, pipes)
	section("Would wait", []string{"JOB", "READY/MIN", "PENDING", "WHY"}, waits)
	if len(binds)+len(evicts)+len(pipes)+len(waits) == 0 {
		fmt.Fprintln(w, "Nothing would change.")
	}
	fmt.Fprintf(w, "(dry run %s at revision %d: nothing was stored)\n", p.GetId(), p.GetBaseRevision())
	if more {
		fmt.Fprintln(w, "(the plan has more decisions than shown: use -o json with a smaller cluster, or sluicectl get)")
	}
}

// withLine puts a cluster file's parse error in the FILE:LINE: form when its line is known.
func withLine(err error) error {
	var pe *scenario.ParseError
	if !errors.As(err, &pe) || pe.Line == 0 {
		return err
	}
	if pe.Path == "" {
		return fmt.Errorf("%s:%d: %s", pe.File, pe.Line, pe.Msg)
	}
	return fmt.Errorf("%s:%d: %s: %s", pe.File, pe.Line, pe.Path, pe.Msg)
}

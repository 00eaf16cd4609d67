package main

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// describe prints one queue, with its derived figures, or one cluster in detail.
func (a *app) describe(args []string) error {
	fs := a.flags("describe")
	out := outputFlag(fs)
	pos, err := a.parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkOutput(*out); err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("describe: expected queue NAME or cluster NAME")
	}
	switch pos[0] {
	case "queue", "queues", "cluster", "clusters":
	default:
		return usagef("describe: unknown kind %q (expected queue or cluster; for other objects use get KIND NAME -o yaml)", pos[0])
	}
	conn, err := a.dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	c := sluicev1.NewClusterStateServiceClient(conn)
	if pos[0] == "cluster" || pos[0] == "clusters" {
		return a.describeCluster(c, pos[1], *out)
	}
	resp, err := c.GetQueue(a.ctx, &sluicev1.GetQueueRequest{Cluster: a.cluster, Name: pos[1]})
	if err != nil {
		return a.rpcError("describe queue", err)
	}
	q := resp.GetQueue()
	if *out != "table" {
		return writeProto(a.stdout, *out, q)
	}
	jobs, err := pages(func(tok string) ([]*sluicev1.Job, string, error) {
		r, err := c.ListJobs(a.ctx, &sluicev1.ListJobsRequest{Cluster: a.cluster, Queue: q.GetName(), PageSize: listPageSize, PageToken: tok})
		return r.GetJobs(), r.GetNextPageToken(), err
	})
	if err != nil {
		return a.rpcError("describe queue", err)
	}
	return a.queueDetail(q, jobs)
}

func (a *app) queueDetail(q *sluicev1.Queue, jobs []*sluicev1.Job) error {
	parent := q.GetParent()
	if parent == "" {
		parent = "root"
	}
	weight := q.GetWeight()
	if weight == 0 {
		weight = 1
	}
	state := "Open"
	if q.GetState() != sluicev1.QueueState_QUEUE_STATE_UNSPECIFIED {
		state = enumName(q.GetState().String(), "QUEUE_STATE_")
	}
	reclaimable := q.Reclaimable == nil || q.GetReclaimable()
	st := q.GetStatus()
	t := newTable(a.stdout, "Name:", q.GetName())
	t.row("Cluster:", a.cluster)
	t.row("Parent:", parent)
	t.row("Weight:", strconv.Itoa(int(weight)))
	t.row("Priority:", strconv.Itoa(int(q.GetPriority())))
	t.row("State:", state)
	t.row("Reclaimable:", strconv.FormatBool(reclaimable))
	if l := fmtLabels(q.GetLabels(), nil); l != "" {
		t.row("Labels:", l)
	}
	share := st.GetShare()
	if share == "" {
		share = "0"
	}
	t.row("Share:", share)
	t.row("Overused:", strconv.FormatBool(st.GetOverused()))
	t.row("As of revision:", strconv.FormatUint(st.GetAsOfRevision(), 10))
	byPhase := map[string]int{}
	for _, j := range jobs {
		byPhase[phaseOf(j)]++
	}
	summary := strconv.Itoa(len(jobs))
	if len(jobs) > 0 {
		summary += " ("
		for i, p := range slices.Sorted(maps.Keys(byPhase)) {
			if i > 0 {
				summary += ", "
			}
			summary += fmt.Sprintf("%s %d", p, byPhase[p])
		}
		summary += ")"
	}
	t.row("Jobs:", summary)
	if err := t.flush(); err != nil {
		return err
	}

	// One row per resource any figure names.
	cols := []map[string]string{st.GetAllocated(), st.GetDeserved(), q.GetCapability(), q.GetGuarantee(), q.GetDeserved()}
	seen := map[string]bool{}
	var names []string
	for _, m := range cols {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				names = append(names, k)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool {
		oi, iok := resourceOrder[names[i]]
		oj, jok := resourceOrder[names[j]]
		switch {
		case iok && jok:
			return oi < oj
		case iok != jok:
			return iok
		}
		return names[i] < names[j]
	})
	fmt.Fprintln(a.stdout)
	if len(names) == 0 {
		fmt.Fprintln(a.stdout, "no resources allocated or configured")
		return nil
	}
	rt := newTable(a.stdout, "RESOURCE", "ALLOCATED", "DESERVED", "CAPABILITY", "GUARANTEE")
	for _, n := range names {
		rt.row(n, st.GetAllocated()[n], st.GetDeserved()[n], q.GetCapability()[n], q.GetGuarantee()[n])
	}
	return rt.flush()
}

func phaseOf(j *sluicev1.Job) string {
	if j.GetPhase() == sluicev1.JobPhase_JOB_PHASE_UNSPECIFIED {
		return "Inqueue"
	}
	return enumName(j.GetPhase().String(), "JOB_PHASE_")
}

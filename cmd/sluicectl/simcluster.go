package main

import (
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/sim"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// simCluster reads the starting cluster: the file's, the server's, or both (the file's
// objects after the server's). It returns nil when neither is given.
func (a *app) simCluster(o *simOptions) ([]state.Change, error) {
	var out []state.Change
	if o.fromServer {
		cs, err := a.serverCluster()
		if err != nil {
			return nil, err
		}
		out = cs
	}
	if o.cluster != "" {
		data, err := os.ReadFile(o.cluster)
		if err != nil {
			return nil, fmt.Errorf("simulate: --cluster: %w", err)
		}
		parse := scenario.ParseCluster
		if o.fromServer {
			parse = scenario.ParseClusterPartial
		}
		c, err := parse(o.cluster, data)
		if err != nil {
			return nil, fmt.Errorf("simulate: %w", withLine(err))
		}
		b, err := service.DecodeBatch(c.Batch(), api.Epoch)
		if err != nil {
			return nil, fmt.Errorf("simulate: %s: %w", o.cluster, err)
		}
		out = append(out, b.Changes...)
	}
	return out, nil
}

// serverCluster reads the nodes, queues, jobs and tasks of --cluster from the server.
func (a *app) serverCluster() ([]state.Change, error) {
	conn, err := a.dial()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	c := sluicev1.NewClusterStateServiceClient(conn)
	b := &sluicev1.DeltaBatch{}
	add := func(d *sluicev1.Delta) { b.Deltas = append(b.Deltas, d) }
	for tok := ""; ; {
		r, err := c.ListNodes(a.ctx, &sluicev1.ListNodesRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, n := range r.GetNodes() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: n}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for tok := ""; ; {
		r, err := c.ListQueues(a.ctx, &sluicev1.ListQueuesRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, q := range r.GetQueues() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertQueue{UpsertQueue: q}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for tok := ""; ; {
		r, err := c.ListJobs(a.ctx, &sluicev1.ListJobsRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, j := range r.GetJobs() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: j}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	for tok := ""; ; {
		r, err := c.ListTasks(a.ctx, &sluicev1.ListTasksRequest{Cluster: a.cluster, PageSize: 1000, PageToken: tok})
		if err != nil {
			return nil, a.rpcError("simulate --from-server", err)
		}
		for _, t := range r.GetTasks() {
			add(&sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: t}})
		}
		if tok = r.GetNextPageToken(); tok == "" {
			break
		}
	}
	if len(b.Deltas) == 0 {
		return nil, fmt.Errorf("simulate --from-server: cluster %q on %s holds nothing", a.cluster, a.server.addr)
	}
	d, err := service.DecodeBatch(b, api.Epoch)
	if err != nil {
		return nil, fmt.Errorf("simulate --from-server: the server's state: %w", err)
	}
	return d.Changes, nil
}

// largestNode returns the cores of the cluster's largest node (0 without nodes).
func largestNode(cluster []state.Change) int {
	cores := 0.0
	for _, c := range cluster {
		if c.Node != nil {
			cores = math.Max(cores, c.Node.Allocatable.MilliCPU/1000)
		}
	}
	return int(cores)
}

// completeCluster adds what the trace implies and the cluster lacks: nodes from an SWF
// header when the cluster has none, and, when it declares no queue, every queue the trace
// names (weight 1).
func (o *simOptions) completeCluster(cluster []state.Change, tr *sim.Trace) ([]state.Change, error) {
	hasNodes, hasQueues := false, false
	for _, c := range cluster {
		hasNodes = hasNodes || c.Node != nil
		hasQueues = hasQueues || c.Queue != nil
	}
	out := slices.Clone(cluster)
	if !hasNodes {
		if tr.Format != "swf" {
			return nil, errors.New("simulate: a native trace needs a cluster: give --cluster FILE or --from-server")
		}
		nodes, err := sim.SWFNodes(tr.Header, o.swf.CoresPerNode, 0)
		if err != nil {
			return nil, fmt.Errorf("simulate: %s: %w", o.trace, err)
		}
		for _, n := range nodes {
			if o.swf.MemoryPerCore > 0 {
				n.Allocatable.Memory = math.Max(n.Allocatable.Memory, o.swf.MemoryPerCore*n.Allocatable.MilliCPU/1000)
			}
			out = append(out, state.Change{Node: n})
		}
	}
	if !hasQueues {
		for _, q := range sim.TraceQueues(tr) {
			out = append(out, state.Change{Queue: q})
		}
	}
	return out, nil
}

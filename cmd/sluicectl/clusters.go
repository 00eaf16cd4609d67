package main

import (
	"encoding/json"
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// getClusters prints every cluster the token covers, or one (the name; --cluster plays no
// part).
func (a *app) getClusters(c sluicev1.ClusterStateServiceClient, name, format string) error {
	var clusters []*sluicev1.Cluster
	if name != "" {
		resp, err := c.GetCluster(a.ctx, &sluicev1.GetClusterRequest{Cluster: name})
		if err != nil {
			return a.rpcError("get cluster", err)
		}
		if format != "table" {
			return writeProto(a.stdout, format, resp.GetCluster())
		}
		clusters = []*sluicev1.Cluster{resp.GetCluster()}
	} else {
		var err error
		clusters, err = pages(func(tok string) ([]*sluicev1.Cluster, string, error) {
			resp, err := c.ListClusters(a.ctx, &sluicev1.ListClustersRequest{PageSize: listPageSize, PageToken: tok})
			return resp.GetClusters(), resp.GetNextPageToken(), err
		})
		if err != nil {
			return a.rpcError("get clusters", err)
		}
		if format != "table" {
			return writeProtoList(a.stdout, format, clusters)
		}
	}
	t := newTable(a.stdout, "NAME", "REVISION", "NODES", "QUEUES", "JOBS", "TASKS", "PLANS", "CONFIG")
	for _, cl := range clusters {
		o := cl.GetObjects()
		t.row(cl.GetName(), strconv.FormatUint(cl.GetRevision(), 10), itoa(o.GetNodes()), itoa(o.GetQueues()),
			itoa(o.GetJobs()), itoa(o.GetTasks()), itoa(cl.GetPlans()), configSource(cl))
	}
	return t.flush()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// configSource says whose scheduler configuration a cluster uses.
func configSource(cl *sluicev1.Cluster) string {
	if cl.GetHasConfig() {
		return "own"
	}
	return "default"
}

// describeCluster prints one cluster in detail.
func (a *app) describeCluster(c sluicev1.ClusterStateServiceClient, name, format string) error {
	resp, err := c.GetCluster(a.ctx, &sluicev1.GetClusterRequest{Cluster: name})
	if err != nil {
		return a.rpcError("describe cluster", err)
	}
	cl := resp.GetCluster()
	if format != "table" {
		return writeProto(a.stdout, format, cl)
	}
	config := "server default"
	if cl.GetHasConfig() {
		config = "own (UpdateSchedulerConfig)"
	}
	t := newTable(a.stdout, "Name:", cl.GetName())
	t.row("Revision:", strconv.FormatUint(cl.GetRevision(), 10))
	t.row("Configuration:", config)
	t.row("Config etag:", cl.GetConfigEtag())
	t.row("Plans:", itoa(cl.GetPlans()))
	if err := t.flush(); err != nil {
		return err
	}
	fmt.Fprintln(a.stdout)
	o := cl.GetObjects()
	kt := newTable(a.stdout, "KIND", "COUNT")
	for _, r := range []struct {
		kind string
		n    int64
	}{
		{"nodes", o.GetNodes()}, {"queues", o.GetQueues()}, {"jobs", o.GetJobs()}, {"tasks", o.GetTasks()},
		{"priority classes", o.GetPriorityClasses()}, {"namespace quotas", o.GetNamespaceQuotas()},
		{"disruption budgets", o.GetDisruptionBudgets()}, {"hypernodes", o.GetHyperNodes()},
	} {
		kt.row(r.kind, itoa(r.n))
	}
	return kt.flush()
}

// deleteCluster deletes a cluster and everything of it (DeleteCluster).
func (a *app) deleteCluster(c sluicev1.ClusterStateServiceClient, name string, ignore bool, format string) error {
	resp, err := c.DeleteCluster(a.ctx, &sluicev1.DeleteClusterRequest{Cluster: name})
	switch {
	case status.Code(err) == codes.NotFound && ignore:
		if format != "table" {
			return writeValue(a.stdout, format, map[string]any{"kind": "cluster", "name": name, "deleted": false})
		}
		_, err := fmt.Fprintf(a.stdout, "cluster %s not found; nothing to delete\n", name)
		return err
	case status.Code(err) == codes.NotFound:
		return fmt.Errorf("delete: cluster %s not found (pass --ignore-not-found to succeed anyway)", name)
	case err != nil:
		return a.rpcError("delete cluster", err)
	}
	cl := resp.GetCluster()
	if format != "table" {
		b, err := protojson.Marshal(cl)
		if err != nil {
			return err
		}
		return writeValue(a.stdout, format, map[string]any{"kind": "cluster", "name": name, "deleted": true,
			"cluster": json.RawMessage(b)})
	}
	o := cl.GetObjects()
	_, err = fmt.Fprintf(a.stdout, "deleted cluster %s at revision %d (%d nodes, %d queues, %d jobs, %d tasks, %d plans; configuration: %s)\n",
		name, cl.GetRevision(), o.GetNodes(), o.GetQueues(), o.GetJobs(), o.GetTasks(), cl.GetPlans(), configSource(cl))
	return err
}

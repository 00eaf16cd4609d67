package service

import (
	"cmp"
	"context"
	"net"
	"net/http"
	"slices"
	"strings"

	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// UIReads answers the web UI's reads (service/webui) in process, through the API's own
// handlers and checks: a read is authorized with the policy of the gRPC method it stands for
// (so a credential reads only the clusters of its scope, and the scheduler configuration
// only with an admin token), passes the same read gate (linearizable on a replicated store:
// a member that does not lead answers NOT_LEADER, which the UI shows), and is answered by
// the method's handler or, for the figures the API has no call for (jobs by phase,
// utilization, tasks per job, recent plans), from one snapshot of the cluster. It never
// writes. Errors are gRPC status errors with the API's codes.
type UIReads struct {
	s  *Server
	cs *clusterState
	sc *scheduler
}

// UIReads returns the server's read paths for the web UI.
func (s *Server) UIReads() *UIReads {
	return &UIReads{s: s, cs: &clusterState{s: s}, sc: &scheduler{s: s}}
}

// Authenticates reports whether the server asks for credentials (a tokens file or mTLS).
func (u *UIReads) Authenticates() bool { return u.s.auth.Load() != nil }

// Admit authenticates an HTTP request as a call of the API is (Server.admit): with token as
// its bearer token when not empty (the UI's cookie), else its Authorization header, else its
// verified client certificate; and charges it to its client's rate-limit bucket, so that
// guessing tokens through the UI is as slow as through the API. It returns nil (and no error)
// when the server does not authenticate.
func (u *UIReads) Admit(r *http.Request, token string) (*Identity, error) {
	md := metadata.MD{}
	switch {
	case token != "":
		md.Set("authorization", "Bearer "+token)
	case len(r.Header.Values("Authorization")) > 0:
		md["authorization"] = r.Header.Values("Authorization")
	}
	ctx := metadata.NewIncomingContext(r.Context(), md)
	p := &peer.Peer{}
	if addr, err := net.ResolveTCPAddr("tcp", r.RemoteAddr); err == nil {
		p.Addr = addr
	}
	if r.TLS != nil {
		p.AuthInfo = credentials.TLSInfo{State: *r.TLS}
	}
	return u.s.admit(peer.NewContext(ctx, p))
}

// clusterRequest stands for a read of one cluster that no API request message carries.
type clusterRequest struct{ cluster string }

func (r clusterRequest) GetCluster() string { return r.cluster }

// enter checks a read as the gRPC method would be checked (authorize with the method's
// policy, the request's read options, the read gate) and returns the context its handler
// runs with: it carries the identity, which scopes ListClusters.
func (u *UIReads) enter(ctx context.Context, id *Identity, method string, req any) (context.Context, error) {
	if id != nil {
		if err := authorize(id, method, req); err != nil {
			return nil, err
		}
		ctx = context.WithValue(ctx, identityKey{}, id)
	}
	var cluster string
	var ro *sluicev1.ReadOptions
	if r, ok := req.(interface{ GetRead() *sluicev1.ReadOptions }); ok {
		ro = r.GetRead()
	}
	if r, ok := req.(interface{ GetCluster() string }); ok {
		cluster = r.GetCluster()
	}
	if err := checkReadOptions(ro); err != nil {
		return nil, toStatus(err)
	}
	if err := u.s.readGate(ctx, cluster, ro); err != nil {
		return nil, toStatus(err)
	}
	return ctx, nil
}

// uiRead runs one read through enter and the method's handler.
func uiRead[Req, Resp any](ctx context.Context, u *UIReads, id *Identity, method string, req Req,
	handler func(context.Context, Req) (Resp, error)) (Resp, error) {
	ctx, err := u.enter(ctx, id, method, req)
	if err != nil {
		var zero Resp
		return zero, err
	}
	return handler(ctx, req)
}

// ListClusters is ClusterStateService.ListClusters as id.
func (u *UIReads) ListClusters(ctx context.Context, id *Identity, req *sluicev1.ListClustersRequest) (*sluicev1.ListClustersResponse, error) {
	return uiRead(ctx, u, id, sluicev1.ClusterStateService_ListClusters_FullMethodName, req, u.cs.ListClusters)
}

// ListQueues is ClusterStateService.ListQueues as id.
func (u *UIReads) ListQueues(ctx context.Context, id *Identity, req *sluicev1.ListQueuesRequest) (*sluicev1.ListQueuesResponse, error) {
	return uiRead(ctx, u, id, sluicev1.ClusterStateService_ListQueues_FullMethodName, req, u.cs.ListQueues)
}

// GetJob is ClusterStateService.GetJob as id.
func (u *UIReads) GetJob(ctx context.Context, id *Identity, req *sluicev1.GetJobRequest) (*sluicev1.GetJobResponse, error) {
	return uiRead(ctx, u, id, sluicev1.ClusterStateService_GetJob_FullMethodName, req, u.cs.GetJob)
}

// ListTasks is ClusterStateService.ListTasks as id.
func (u *UIReads) ListTasks(ctx context.Context, id *Identity, req *sluicev1.ListTasksRequest) (*sluicev1.ListTasksResponse, error) {
	return uiRead(ctx, u, id, sluicev1.ClusterStateService_ListTasks_FullMethodName, req, u.cs.ListTasks)
}

// ExplainJob is SchedulerService.ExplainJob as id.
func (u *UIReads) ExplainJob(ctx context.Context, id *Identity, req *sluicev1.ExplainJobRequest) (*sluicev1.ExplainJobResponse, error) {
	return uiRead(ctx, u, id, sluicev1.SchedulerService_ExplainJob_FullMethodName, req, u.sc.ExplainJob)
}

// GetPlan is SchedulerService.GetPlan as id.
func (u *UIReads) GetPlan(ctx context.Context, id *Identity, req *sluicev1.GetPlanRequest) (*sluicev1.GetPlanResponse, error) {
	return uiRead(ctx, u, id, sluicev1.SchedulerService_GetPlan_FullMethodName, req, u.sc.GetPlan)
}

// GetSchedulerConfig is SchedulerService.GetSchedulerConfig as id (admin tokens only, as in
// the API).
func (u *UIReads) GetSchedulerConfig(ctx context.Context, id *Identity, req *sluicev1.GetSchedulerConfigRequest) (*sluicev1.GetSchedulerConfigResponse, error) {
	return uiRead(ctx, u, id, sluicev1.SchedulerService_GetSchedulerConfig_FullMethodName, req, u.sc.GetSchedulerConfig)
}

// snapshotAs checks a read of a cluster with the policy of method and returns a snapshot
// of the cluster, which must exist.
func (u *UIReads) snapshotAs(ctx context.Context, id *Identity, method, cluster string) (*state.Snapshot, error) {
	fe := u.s.checks()
	checkCluster(&fe, "cluster", cluster)
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	if _, err := u.enter(ctx, id, method, clusterRequest{cluster: cluster}); err != nil {
		return nil, err
	}
	snap, err := u.s.existing(cluster)
	if err != nil {
		return nil, toStatus(err)
	}
	return snap, nil
}

// ResourceUse is a resource's amount in use against what there is, as API quantities
// ("cpu", "memory", "nvidia.com/gpu", ...).
type ResourceUse struct {
	// Used is what tasks that occupy nodes (allocated, pipelined, bound, running,
	// releasing) request.
	Used map[string]string
	// Allocatable is what the nodes offer.
	Allocatable map[string]string
}

// ClusterSummary is a cluster's figures for the UI's cluster page.
type ClusterSummary struct {
	Cluster *sluicev1.Cluster
	// JobsByPhase counts the jobs by phase (the API's names, JOB_PHASE_RUNNING, ...).
	JobsByPhase map[string]int
	// TasksByStatus counts the tasks by status (TASK_STATUS_PENDING, ...).
	TasksByStatus map[string]int
	Resources     ResourceUse
}

// Summary returns a cluster's summary, read with GetCluster's policy. It walks the
// cluster's nodes, jobs and tasks once.
func (u *UIReads) Summary(ctx context.Context, id *Identity, cluster string) (*ClusterSummary, error) {
	snap, err := u.snapshotAs(ctx, id, sluicev1.ClusterStateService_GetCluster_FullMethodName, cluster)
	if err != nil {
		return nil, err
	}
	info, ok := snap.Info()
	if !ok {
		return nil, toStatus(&state.ClusterNotFoundError{Cluster: cluster})
	}
	out := &ClusterSummary{Cluster: u.s.clusterToProto(info), JobsByPhase: map[string]int{}, TasksByStatus: map[string]int{}}
	alloc, used := api.EmptyResource(), api.EmptyResource()
	for _, n := range snap.Nodes() {
		alloc.Add(&n.Allocatable)
	}
	for _, j := range snap.Jobs() {
		out.JobsByPhase[jobPhaseToProto(j.Phase).String()]++
	}
	for _, t := range snap.Tasks() {
		out.TasksByStatus[taskStatusesOut[t.Status].String()]++
		if api.OccupiesNode(t.Status) {
			used.Add(&t.Resources)
		}
	}
	out.Resources = ResourceUse{Used: resourceToProto(used), Allocatable: resourceToProto(alloc)}
	return out, nil
}

// JobQuery selects a page of jobs: the filters of ListJobs, a search in the jobs' names, and
// a cursor.
type JobQuery struct {
	Cluster, Queue, Namespace string
	// Phase keeps jobs in this phase (unspecified: every phase).
	Phase sluicev1.JobPhase
	// Search keeps jobs whose namespace/name contains it (case-insensitive).
	Search string
	// After is the namespace/name the page starts after ("" from the first).
	After string
	// Limit is the page's length (1 to 1000; 0 means 100).
	Limit int
}

// JobRow is a job with its tasks counted by status (TASK_STATUS_PENDING, ...).
type JobRow struct {
	Job   *sluicev1.Job
	Tasks map[string]int
}

// Jobs returns a page of jobs with their tasks counted, read with ListJobs' policy, and
// the key the next page starts after ("" at the end). A search walks the filtered jobs
// until the page is full.
func (u *UIReads) Jobs(ctx context.Context, id *Identity, q JobQuery) ([]JobRow, string, error) {
	snap, err := u.snapshotAs(ctx, id, sluicev1.ClusterStateService_ListJobs_FullMethodName, q.Cluster)
	if err != nil {
		return nil, "", err
	}
	limit := q.Limit
	if limit <= 0 || limit > maxPageSize {
		limit = defaultPageSize
	}
	filter := state.JobFilter{Queue: q.Queue}
	if p, ok := jobPhasesIn[q.Phase]; ok && p != "" {
		filter.Phases = []api.JobPhase{p}
	}
	prefix := namespacePrefix(q.Namespace)
	search := strings.ToLower(q.Search)
	after := max(q.After, prefix)
	var rows []JobRow
	for {
		items, next := snap.ListJobs(after, limit+1, filter)
		for _, j := range items {
			if prefix != "" && !strings.HasPrefix(j.Key(), prefix) {
				return rows, "", nil
			}
			if search != "" && !strings.Contains(strings.ToLower(j.Key()), search) {
				continue
			}
			if len(rows) == limit {
				return rows, rows[len(rows)-1].Job.GetNamespace() + "/" + rows[len(rows)-1].Job.GetName(), nil
			}
			rows = append(rows, JobRow{Job: jobToProto(j, modRevision(snap, state.KindJob, j.Key())), Tasks: countTasks(snap.TasksOfJob(j.Key()))})
		}
		if next == "" || len(items) == 0 {
			return rows, "", nil
		}
		after = items[len(items)-1].Key()
	}
}

// countTasks counts tasks by status.
func countTasks(tasks []*api.Task) map[string]int {
	out := map[string]int{}
	for _, t := range tasks {
		out[taskStatusesOut[t.Status].String()]++
	}
	return out
}

// NodeRow is a node with what its tasks use and how many occupy it.
type NodeRow struct {
	Node *sluicev1.Node
	// Used is what the node's tasks that occupy it request.
	Used map[string]string
	// Tasks counts the tasks that occupy the node.
	Tasks int
}

// Nodes returns a page of nodes after the node named after, read with ListNodes' policy,
// and the name the next page starts after ("" at the end).
func (u *UIReads) Nodes(ctx context.Context, id *Identity, cluster, after string, limit int) ([]NodeRow, string, error) {
	snap, err := u.snapshotAs(ctx, id, sluicev1.ClusterStateService_ListNodes_FullMethodName, cluster)
	if err != nil {
		return nil, "", err
	}
	if limit <= 0 || limit > maxPageSize {
		limit = defaultPageSize
	}
	items, next := pageOf(snap.ListNodes, func(n *api.Node) string { return n.Name }, "", page{size: limit, after: after})
	rows := make([]NodeRow, 0, len(items))
	for _, n := range items {
		rows = append(rows, nodeRow(snap, n))
	}
	return rows, next, nil
}

// Node returns one node with what its tasks use, read with GetNode's policy.
func (u *UIReads) Node(ctx context.Context, id *Identity, cluster, name string) (*NodeRow, error) {
	snap, err := u.snapshotAs(ctx, id, sluicev1.ClusterStateService_GetNode_FullMethodName, cluster)
	if err != nil {
		return nil, err
	}
	n, ok := snap.Node(name)
	if !ok {
		return nil, toStatus(notFound("node %q in cluster %q", name, cluster))
	}
	row := nodeRow(snap, n)
	return &row, nil
}

// nodeRow converts a node and adds up its tasks.
func nodeRow(snap *state.Snapshot, n *api.Node) NodeRow {
	used := api.EmptyResource()
	row := NodeRow{Node: nodeToProto(n, modRevision(snap, state.KindNode, n.Name))}
	for _, t := range snap.TasksOnNode(n.Name) {
		if api.OccupiesNode(t.Status) {
			used.Add(&t.Resources)
			row.Tasks++
		}
	}
	row.Used = resourceToProto(used)
	return row
}

// Plans returns the cluster's stored plans, newest first, without their decisions (GetPlan
// pages through those), read with GetPlan's policy: at most limit of them, older than the
// plan named before when it is given.
func (u *UIReads) Plans(ctx context.Context, id *Identity, cluster, before string, limit int) ([]*sluicev1.Plan, error) {
	snap, err := u.snapshotAs(ctx, id, sluicev1.SchedulerService_GetPlan_FullMethodName, cluster)
	if err != nil {
		return nil, err
	}
	plans := snap.Plans()
	slices.SortFunc(plans, func(a, b *state.Plan) int { return cmp.Compare(b.Seq, a.Seq) })
	if before != "" {
		if i := slices.IndexFunc(plans, func(p *state.Plan) bool { return p.ID == before }); i >= 0 {
			plans = plans[i+1:]
		}
	}
	if limit <= 0 || limit > maxPageSize {
		limit = defaultPageSize
	}
	var out []*sluicev1.Plan
	for _, sp := range plans[:min(limit, len(plans))] {
		p, err := u.s.engine.GetPlan(cluster, sp.ID)
		if err != nil {
			continue // dropped since the snapshot
		}
		pp, _ := planToProto(p, planPage{})
		out = append(out, pp)
	}
	return out, nil
}

package service

import (
	"context"
	"fmt"

	"google.golang.org/grpc/codes"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// ListClusters returns a page of the clusters that exist and that the caller's scope covers.
func (c *clusterState) ListClusters(ctx context.Context, req *sluicev1.ListClustersRequest) (*sluicev1.ListClustersResponse, error) {
	fe := c.s.checks()
	pg := readPage(&fe, req.GetPageSize(), req.GetPageToken(), pageScope{list: pagedClusters})
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	may := callerScope(ctx)
	var names []string
	for _, n := range c.s.store.ClusterNames() {
		if n > pg.after && may(n) {
			names = append(names, n)
		}
	}
	resp := &sluicev1.ListClustersResponse{}
	if len(names) > pg.size {
		names = names[:pg.size]
		resp.NextPageToken = pg.token(names[len(names)-1])
	}
	for _, n := range names {
		// A cluster deleted since the list was read is left out.
		if info, ok := c.s.store.Snapshot(n).Info(); ok {
			resp.Clusters = append(resp.Clusters, c.s.clusterToProto(info))
		}
	}
	return resp, nil
}

// GetCluster returns one cluster's summary.
func (c *clusterState) GetCluster(ctx context.Context, req *sluicev1.GetClusterRequest) (*sluicev1.GetClusterResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	info, ok := c.s.store.Snapshot(req.GetCluster()).Info()
	if !ok {
		return nil, toStatus(&state.ClusterNotFoundError{Cluster: req.GetCluster()})
	}
	return &sluicev1.GetClusterResponse{Cluster: c.s.clusterToProto(info)}, nil
}

// DeleteCluster deletes a cluster and everything of it.
func (c *clusterState) DeleteCluster(ctx context.Context, req *sluicev1.DeleteClusterRequest) (*sluicev1.DeleteClusterResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	if err := c.s.store.CheckWritable(); err != nil {
		return nil, toStatus(err)
	}
	info, err := c.s.deleteCluster(ctx, req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	c.s.log.InfoContext(ctx, "cluster deleted", "cluster", info.Name, "revision", info.Revision,
		"tasks", info.Objects[state.KindTask], "plans", info.Plans)
	return &sluicev1.DeleteClusterResponse{Cluster: c.s.clusterToProto(info)}, nil
}

// deleteCluster deletes a cluster: it ends the cluster's WatchPlans subscribers, waits for
// the cycles in progress, and, holding the cluster's cycle, dry-run and write locks (so that
// no cycle or batch of this server interleaves), deletes it in the engine and the store,
// moves its generation on (so that open Sync streams must resync) and forgets its metrics. A
// cluster that does not exist is a *state.ClusterNotFoundError, and its watches are left
// alone.
func (s *Server) deleteCluster(ctx context.Context, cluster string) (*state.ClusterInfo, error) {
	if !s.store.Snapshot(cluster).Exists() {
		return nil, &state.ClusterNotFoundError{Cluster: cluster}
	}
	s.watches.end(cluster, withInfo(codes.NotFound, ReasonClusterNotFound,
		fmt.Sprintf("cluster %q was deleted", cluster)))
	unlockCycle, err := s.lockCycle(ctx, cluster)
	if err != nil {
		return nil, err
	}
	defer unlockCycle()
	unlockDry, err := s.dryCycles.LockContext(ctx, cluster)
	if err != nil {
		return nil, err
	}
	defer unlockDry()
	unlock := s.lockCluster(cluster)
	defer unlock()
	info, err := s.engine.DeleteCluster(cluster)
	if err != nil {
		return nil, err
	}
	s.gens.bump(cluster)
	s.metrics.forget(cluster)
	s.admission.forget(cluster)
	return info, nil
}

// clusterToProto converts a cluster's summary; a cluster without its own configuration shows
// the default's etag.
func (s *Server) clusterToProto(info *state.ClusterInfo) *sluicev1.Cluster {
	out := &sluicev1.Cluster{
		Name:     info.Name,
		Revision: info.Revision,
		Objects: &sluicev1.ObjectCounts{
			Nodes:             int64(info.Objects[state.KindNode]),
			Queues:            int64(info.Objects[state.KindQueue]),
			Jobs:              int64(info.Objects[state.KindJob]),
			Tasks:             int64(info.Objects[state.KindTask]),
			PriorityClasses:   int64(info.Objects[state.KindPriorityClass]),
			NamespaceQuotas:   int64(info.Objects[state.KindQuota]),
			DisruptionBudgets: int64(info.Objects[state.KindBudget]),
			HyperNodes:        int64(info.Objects[state.KindHyperNode]),
		},
		HasConfig:  info.Config != nil,
		ConfigEtag: s.engine.DefaultConfigEtag(),
		Plans:      int64(info.Plans),
	}
	if info.Config != nil {
		out.ConfigEtag = info.Config.Etag()
	}
	return out
}

package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"google.golang.org/grpc/codes"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// clusterState implements sluicev1.ClusterStateServiceServer. Every handler has one shape:
// check the request, delegate to the store, map the error with toStatus, fill the response.
type clusterState struct {
	sluicev1.UnimplementedClusterStateServiceServer
	s *Server
}

// ApplyDeltas applies one batch atomically.
func (c *clusterState) ApplyDeltas(ctx context.Context, req *sluicev1.ApplyDeltasRequest) (*sluicev1.ApplyDeltasResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	if req.GetBatch() == nil {
		fe.add("batch", "must be set")
	}
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	if err := c.s.store.CheckWritable(); err != nil {
		return nil, toStatus(err)
	}
	rev, err := c.s.applyBatch(req.GetCluster(), "batch", req.GetBatch(), nil)
	if err != nil {
		return nil, toStatus(err)
	}
	return &sluicev1.ApplyDeltasResponse{Revision: rev}, nil
}

// Sync streams batches from a resource manager: hello, welcome (and ResyncRequired when the
// client's store id or revision is not the cluster's), then one ack or rejection per batch
// and per chunked resync (resync.go). It returns when the client closes its side, the call
// ends, or the server shuts down; a resync left open is dropped.
func (c *clusterState) Sync(stream sluicev1.ClusterStateService_SyncServer) error {
	ctx := stream.Context()
	recv := c.s.receiver(ctx, stream.Recv)
	first, _, err := recv()
	if err != nil {
		return endOfStream(err)
	}
	hello := first.GetHello()
	if hello == nil {
		return toStatus(invalid("hello", "the first message of a Sync stream must be a hello"))
	}
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "hello.cluster", hello.GetCluster())
	if err := fe.err(); err != nil {
		return toStatus(err)
	}
	cluster := hello.GetCluster()
	// Only the leader of a replicated store takes batches; elsewhere the stream ends at once
	// with the leader's address.
	if err := c.s.store.CheckWritable(); err != nil {
		return toStatus(err)
	}
	rev := c.s.store.Revision(cluster)
	storeID := c.s.store.ID()
	if err := stream.Send(&sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Welcome{
		Welcome: &sluicev1.SyncWelcome{Revision: rev, StoreId: storeID},
	}}); err != nil {
		return err
	}
	sync := &syncState{cluster: cluster, gen: c.s.gens.open(cluster)}
	defer c.s.gens.close(cluster)
	defer sync.close()
	if reason := resumeRefused(hello, storeID, rev); reason != "" {
		sync.resync = true
		if err := stream.Send(&sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_ResyncRequired{
			ResyncRequired: &sluicev1.ResyncRequired{Revision: rev, Reason: reason},
		}}); err != nil {
			return err
		}
	}
	for {
		m, dec, err := recv()
		if err != nil {
			return endOfStream(err)
		}
		var out []*sluicev1.SyncResponse
		switch msg := m.GetMessage().(type) {
		case *sluicev1.SyncRequest_Batch:
			if sync.open != nil {
				out = append(out, c.abandon(sync, fmt.Sprintf("batch %d arrived before it", msg.Batch.GetSequence())))
			}
			sync.dropping = false
			var resp *sluicev1.SyncResponse
			if resp, err = c.syncBatch(sync, msg.Batch, dec); err == nil {
				out = append(out, resp)
			}
		case *sluicev1.SyncRequest_ResyncChunk:
			var resps []*sluicev1.SyncResponse
			resps, err = c.syncChunk(sync, msg.ResyncChunk)
			out = append(out, resps...)
		case *sluicev1.SyncRequest_Hello:
			return toStatus(invalid("hello", "a Sync stream takes one hello, as its first message"))
		default:
			return toStatus(invalid("message", "must be a hello, a batch or a resync_chunk"))
		}
		for _, resp := range out {
			if serr := stream.Send(resp); serr != nil {
				return serr
			}
		}
		if err != nil {
			return toStatus(err)
		}
	}
}

// resumeRefused returns why a hello cannot resume (empty when it can). A revision at or below
// the cluster's is one this server issued, if the store is the one the client resumes from:
// what the client sent up to it is here, and what came after (plan commits, other writers) is
// the server's own. Another store id means the revisions are another store's (a restart
// without a data directory, a new one), whatever their numbers; a revision ahead of the
// cluster's means the server lost state.
func resumeRefused(hello *sluicev1.SyncHello, storeID string, rev uint64) string {
	r, id := hello.GetResumeRevision(), hello.GetResumeStoreId()
	switch {
	case r == 0:
		return ""
	case id != "" && id != storeID:
		return fmt.Sprintf("resume store id %q is not this server's store (%q): the server's state started anew; send the whole state (a replace_all batch or a chunked resync)", id, storeID)
	case r > rev:
		return fmt.Sprintf("resume revision %d is ahead of the cluster's revision %d: the server lost state; send the whole state (a replace_all batch or a chunked resync)", r, rev)
	}
	return ""
}

// syncState is what a Sync stream remembers between messages.
type syncState struct {
	cluster string
	// resync is true after ResyncRequired until a replace_all batch or a chunked resync
	// applies.
	resync bool
	// gen is the cluster's generation (Server.gens) the stream's state is of.
	gen     uint64
	lastSeq uint64
	seen    bool
	// open is the chunked resync in progress, if any.
	open *openResync
	// dropping: the chunks of resync dropSeq, refused, are ignored until its last one.
	dropping bool
	dropSeq  uint64
}

// syncBatch applies one batch of a Sync stream and returns the ack or the rejection, or the
// error that ends the stream: the replicated store could not take the batch (this member no
// longer leads, storage failing), which says nothing against the batch, so that the client
// keeps it and sends it again on its next stream.
func (c *clusterState) syncBatch(st *syncState, b *sluicev1.DeltaBatch, dec decoded) (*sluicev1.SyncResponse, error) {
	seq := b.GetSequence()
	var err error
	switch {
	case st.seen && seq <= st.lastSeq:
		err = invalid("sequence", "must increase within a stream: got %d after %d", seq, st.lastSeq)
	case st.resync && !b.GetReplaceAll():
		err = withInfo(codes.FailedPrecondition, ReasonResyncRequired,
			"resync required: send the whole state in a replace_all batch or a chunked resync")
	}
	if err == nil {
		st.seen, st.lastSeq = true, seq
		var rev uint64
		rev, err = c.s.applyDecoded(st.cluster, "", b, &st.gen, dec)
		if errors.Is(err, errDeletedSinceHello) {
			st.resync = true
			err = withInfo(codes.FailedPrecondition, ReasonResyncRequired, fmt.Sprintf(
				"cluster %q was deleted after this stream's hello: send the whole state in a replace_all batch or a chunked resync", st.cluster))
		}
		if err == nil {
			if b.GetReplaceAll() {
				st.resync = false
			}
			return &sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Ack{
				Ack: &sluicev1.BatchAck{Sequence: seq, Revision: rev},
			}}, nil
		}
		if isStoreUnavailable(err) {
			return nil, err
		}
	}
	return rejection(seq, err), nil
}

// receiver returns a function that receives the next message of a stream, or fails when the
// call ends or the server shuts down. The stream's Recv runs in a goroutine of its own so
// that a client that sends nothing does not hold up a shutdown; the goroutine ends when Recv
// fails, which it does once the handler has returned. It also decodes each batch
// (Server.decode) as it arrives, so that a batch is checked and converted while the one
// before it applies.
func (s *Server) receiver(ctx context.Context, recv func() (*sluicev1.SyncRequest, error)) func() (*sluicev1.SyncRequest, decoded, error) {
	type result struct {
		m   *sluicev1.SyncRequest
		dec decoded
		err error
	}
	ch := make(chan result)
	go func() {
		for {
			m, err := recv()
			var dec decoded
			if b := m.GetBatch(); b != nil {
				dec = s.decode("", b)
			}
			select {
			case ch <- result{m, dec, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return func() (*sluicev1.SyncRequest, decoded, error) {
		select {
		case r := <-ch:
			return r.m, r.dec, r.err
		case <-ctx.Done():
			return nil, decoded{}, ctx.Err()
		case <-s.done:
			return nil, decoded{}, shuttingDown
		}
	}
}

// endOfStream maps how a stream's receiving ended to the handler's result: a client's
// half-close is a normal end.
func endOfStream(err error) error {
	if errors.Is(err, io.EOF) {
		return nil
	}
	return toStatus(err)
}

// notFound returns an engine.ErrNotFound error, which toStatus maps to NOT_FOUND.
func notFound(format string, args ...any) error {
	return fmt.Errorf("%w: %s", engine.ErrNotFound, fmt.Sprintf(format, args...))
}

// modRevision returns the modify revision of an object the snapshot holds (the API's
// mod_revision).
func modRevision(snap *state.Snapshot, k state.Kind, key string) uint64 {
	rev, _ := snap.ModRevision(k, key)
	return rev
}

// GetNode returns one node.
func (c *clusterState) GetNode(ctx context.Context, req *sluicev1.GetNodeRequest) (*sluicev1.GetNodeResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkName(&fe, "name", req.GetName())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	n, ok := snap.Node(req.GetName())
	if !ok {
		return nil, toStatus(notFound("node %q in cluster %q", req.GetName(), req.GetCluster()))
	}
	return &sluicev1.GetNodeResponse{Node: nodeToProto(n, modRevision(snap, state.KindNode, n.Name)), Revision: snap.Revision()}, nil
}

// ListNodes returns a page of nodes.
func (c *clusterState) ListNodes(ctx context.Context, req *sluicev1.ListNodesRequest) (*sluicev1.ListNodesResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	pg := readPage(&fe, req.GetPageSize(), req.GetPageToken(), pageScope{cluster: req.GetCluster(), list: pagedNodes})
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	items, next := pageOf(snap.ListNodes, func(n *api.Node) string { return n.Name }, "", pg)
	resp := &sluicev1.ListNodesResponse{NextPageToken: pg.token(next), Revision: snap.Revision()}
	for _, n := range items {
		resp.Nodes = append(resp.Nodes, nodeToProto(n, modRevision(snap, state.KindNode, n.Name)))
	}
	return resp, nil
}

// GetQueue returns one queue with its derived status.
func (c *clusterState) GetQueue(ctx context.Context, req *sluicev1.GetQueueRequest) (*sluicev1.GetQueueResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkName(&fe, "name", req.GetName())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	q, ok := snap.Queue(req.GetName())
	if !ok {
		return nil, toStatus(notFound("queue %q in cluster %q", req.GetName(), req.GetCluster()))
	}
	return &sluicev1.GetQueueResponse{Queue: c.s.queueWithStatus(snap, q), Revision: snap.Revision()}, nil
}

// ListQueues returns a page of queues with their derived status.
func (c *clusterState) ListQueues(ctx context.Context, req *sluicev1.ListQueuesRequest) (*sluicev1.ListQueuesResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	pg := readPage(&fe, req.GetPageSize(), req.GetPageToken(), pageScope{cluster: req.GetCluster(), list: pagedQueues})
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	items, next := pageOf(snap.ListQueues, func(q *api.Queue) string { return q.Name }, "", pg)
	resp := &sluicev1.ListQueuesResponse{NextPageToken: pg.token(next), Revision: snap.Revision()}
	for _, q := range items {
		resp.Queues = append(resp.Queues, c.s.queueWithStatus(snap, q))
	}
	return resp, nil
}

// queueWithStatus converts a queue and fills in its status: the engine's figures from the
// last cycle that was not a dry run or, before any, the allocation the snapshot shows.
func (s *Server) queueWithStatus(snap *state.Snapshot, q *api.Queue) *sluicev1.Queue {
	out := queueToProto(q, modRevision(snap, state.KindQueue, q.Name))
	f, rev, ok := s.engine.QueueFigures(snap.Cluster(), q.Name)
	if !ok {
		alloc := api.EmptyResource()
		for _, j := range snap.JobsInQueue(q.Name) {
			for _, t := range snap.TasksOfJob(j.Key()) {
				if api.AllocatedStatus(t.Status) {
					alloc.Add(&t.Resources)
				}
			}
		}
		out.Status = &sluicev1.QueueStatus{Allocated: resourceToProto(alloc), Share: "0", AsOfRevision: snap.Revision()}
		return out
	}
	out.Status = &sluicev1.QueueStatus{
		Allocated:    resourceToProto(f.Allocated),
		Deserved:     resourceToProto(f.Deserved),
		Share:        strconv.FormatFloat(f.Share, 'f', -1, 64),
		Overused:     f.Overused,
		AsOfRevision: rev,
	}
	return out
}

// GetJob returns one job.
func (c *clusterState) GetJob(ctx context.Context, req *sluicev1.GetJobRequest) (*sluicev1.GetJobResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkNamespace(&fe, "namespace", req.GetNamespace())
	checkName(&fe, "name", req.GetName())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	k := orDefault(req.GetNamespace(), defaultNamespace) + "/" + req.GetName()
	j, ok := snap.Job(k)
	if !ok {
		return nil, toStatus(notFound("job %q in cluster %q", k, req.GetCluster()))
	}
	return &sluicev1.GetJobResponse{Job: jobToProto(j, modRevision(snap, state.KindJob, k)), Revision: snap.Revision()}, nil
}

// ListJobs returns a page of jobs, optionally of one queue and one namespace, in some phases.
func (c *clusterState) ListJobs(ctx context.Context, req *sluicev1.ListJobsRequest) (*sluicev1.ListJobsResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkRefName(&fe, "queue", req.GetQueue())
	checkNamespace(&fe, "namespace", req.GetNamespace())
	phases, phaseKey := enumFilter(&fe, "phases", req.GetPhases(), sluicev1.JobPhase_name)
	pg := readPage(&fe, req.GetPageSize(), req.GetPageToken(), pageScope{cluster: req.GetCluster(), list: pagedJobs,
		filter: filterKey(req.GetQueue(), req.GetNamespace(), phaseKey)})
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	filter := state.JobFilter{Queue: req.GetQueue()}
	for _, p := range phases {
		filter.Phases = append(filter.Phases, jobPhasesIn[p])
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	list := func(after string, limit int) ([]*api.Job, string) {
		return snap.ListJobs(after, limit, filter)
	}
	items, next := pageOf(list, (*api.Job).Key, namespacePrefix(req.GetNamespace()), pg)
	resp := &sluicev1.ListJobsResponse{NextPageToken: pg.token(next), Revision: snap.Revision()}
	for _, j := range items {
		resp.Jobs = append(resp.Jobs, jobToProto(j, modRevision(snap, state.KindJob, j.Key())))
	}
	return resp, nil
}

// GetTask returns one task.
func (c *clusterState) GetTask(ctx context.Context, req *sluicev1.GetTaskRequest) (*sluicev1.GetTaskResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkNamespace(&fe, "namespace", req.GetNamespace())
	checkName(&fe, "name", req.GetName())
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	k := orDefault(req.GetNamespace(), defaultNamespace) + "/" + req.GetName()
	t, ok := snap.Task(k)
	if !ok {
		return nil, toStatus(notFound("task %q in cluster %q", k, req.GetCluster()))
	}
	return &sluicev1.GetTaskResponse{Task: taskToProto(t, modRevision(snap, state.KindTask, k)), Revision: snap.Revision()}, nil
}

// ListTasks returns a page of tasks, optionally of one namespace, job and node, in some
// statuses.
func (c *clusterState) ListTasks(ctx context.Context, req *sluicev1.ListTasksRequest) (*sluicev1.ListTasksResponse, error) {
	fe := c.s.checks()
	c.s.checkCluster(ctx, &fe, "cluster", req.GetCluster())
	checkNamespace(&fe, "namespace", req.GetNamespace())
	checkRefName(&fe, "job", req.GetJob())
	checkRefName(&fe, "node", req.GetNode())
	statuses, statusKey := enumFilter(&fe, "statuses", req.GetStatuses(), sluicev1.TaskStatus_name)
	pg := readPage(&fe, req.GetPageSize(), req.GetPageToken(), pageScope{cluster: req.GetCluster(), list: pagedTasks,
		filter: filterKey(req.GetNamespace(), req.GetJob(), req.GetNode(), statusKey)})
	if err := fe.err(); err != nil {
		return nil, toStatus(err)
	}
	snap, err := c.s.existing(req.GetCluster())
	if err != nil {
		return nil, toStatus(err)
	}
	filter := state.TaskFilter{Node: req.GetNode()}
	for _, st := range statuses {
		filter.Statuses = append(filter.Statuses, taskStatusesIn[st])
	}
	prefix := namespacePrefix(req.GetNamespace())
	if req.GetJob() != "" {
		filter.Job = orDefault(req.GetNamespace(), defaultNamespace) + "/" + req.GetJob()
		prefix = ""
	}
	list := func(after string, limit int) ([]*api.Task, string) {
		return snap.ListTasks(after, limit, filter)
	}
	items, next := pageOf(list, (*api.Task).Key, prefix, pg)
	resp := &sluicev1.ListTasksResponse{NextPageToken: pg.token(next), Revision: snap.Revision()}
	for _, t := range items {
		resp.Tasks = append(resp.Tasks, taskToProto(t, modRevision(snap, state.KindTask, t.Key())))
	}
	return resp, nil
}

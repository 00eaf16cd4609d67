package service

import (
	"errors"
	"fmt"
	"sort"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// DefaultMaxResyncBytes is the default bound on the size of one chunked resync (the sum of
// its chunks' encoded sizes): 1 GiB.
const DefaultMaxResyncBytes = 1 << 30

// minChunkCost is what a chunk counts for, at least, towards Options.MaxResyncBytes.
const minChunkCost = 4 << 10

// openResync is the chunked resync a Sync stream has open: the store's Resync, where each
// chunk's changes start within it, the objects seen so far (an object may appear once), and
// the cluster's generation (Server.gens) when it opened: a DeleteCluster before its last
// chunk abandons it. It holds nothing the resync's own chunks did not bring, and is dropped
// with the stream.
type openResync struct {
	seq    uint64
	gen    uint64
	r      *state.Resync
	starts []int
	seen   map[objectID]chunkDelta
	bytes  int
}

// chunkDelta names a delta of a chunked resync.
type chunkDelta struct{ chunk, delta int }

func (d chunkDelta) String() string { return fmt.Sprintf("chunks[%d].deltas[%d]", d.chunk, d.delta) }

// syncChunk handles one ResyncChunk of a Sync stream and returns the answers to send (none
// until the resync's last chunk, or its refusal; an abandoned resync's rejection first), or
// the error that ends the stream (the store cannot write here: the client sends the resync
// again on its next stream).
func (c *clusterState) syncChunk(st *syncState, ch *sluicev1.ResyncChunk) ([]*sluicev1.SyncResponse, error) {
	seq := ch.GetSequence()
	if st.dropping && seq == st.dropSeq {
		// The rest of a refused resync.
		st.dropping = !ch.GetLast()
		return nil, nil
	}
	st.dropping = false
	var out []*sluicev1.SyncResponse
	if st.open != nil && st.open.seq != seq {
		out = append(out, c.abandon(st, fmt.Sprintf("a chunk of resync %d arrived before its last chunk", seq)))
	}
	if st.open != nil && st.open.gen != c.s.gens.current(st.cluster) {
		return append(out, c.refuseChunk(st, ch, deletedDuringResync(st))), nil
	}
	if st.open == nil {
		if st.seen && seq <= st.lastSeq {
			return append(out, c.refuseChunk(st, ch, invalid("sequence", "must increase within a stream: got %d after %d", seq, st.lastSeq))), nil
		}
		st.seen, st.lastSeq = true, seq
		r, err := c.s.store.BeginResync(st.cluster)
		if err != nil {
			return append(out, c.refuseChunk(st, ch, err)), nil
		}
		r.SetLimits(c.s.limits.storeLimits())
		// Like a replace_all batch, a resync applies whatever the stream's generation: it
		// is the whole state of the cluster as it is now.
		st.open = &openResync{seq: seq, gen: c.s.gens.current(st.cluster), r: r, seen: map[objectID]chunkDelta{}}
	}
	o := st.open
	k := len(o.starts)
	o.starts = append(o.starts, o.r.Changes())
	// Every chunk costs at least minChunkCost, so that a stream of tiny chunks is bounded
	// in count too.
	o.bytes += max(proto.Size(ch), minChunkCost)
	if o.bytes > c.s.maxResync {
		err := resyncTooLarge(k, c.s.maxResync)
		return append(out, c.refuseChunk(st, ch, err)), nil
	}
	changes, err := c.decodeChunk(o, k, ch)
	if err != nil {
		return append(out, c.refuseChunk(st, ch, err)), nil
	}
	if !ch.GetLast() {
		if err := o.r.Add(changes); err != nil {
			if isStoreUnavailable(err) {
				return out, err
			}
			return append(out, c.refuseChunk(st, ch, o.mapError(err))), nil
		}
		return out, nil
	}
	rev, err := c.s.commitResync(st.cluster, o, changes)
	st.open = nil
	if errors.Is(err, errDeletedSinceHello) {
		return append(out, rejection(seq, deletedDuringResync(st))), nil
	}
	if err != nil {
		if isStoreUnavailable(err) {
			return out, err
		}
		return append(out, rejection(seq, err)), nil
	}
	st.resync, st.gen = false, o.gen
	return append(out, &sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Ack{
		Ack: &sluicev1.BatchAck{Sequence: seq, Revision: rev},
	}}), nil
}

// decodeChunk checks and converts chunk k, including that no object appears twice in the
// resync.
func (c *clusterState) decodeChunk(o *openResync, k int, ch *sluicev1.ResyncChunk) ([]state.Change, error) {
	prefix := fmt.Sprintf("chunks[%d]", k)
	// The server-owned fields the deltas leave unset stay unset: the store merges them at the
	// commit, against the state the resync replaces, with the commit's time (commitResync).
	d, err := decodeBatch(prefix, &sluicev1.DeltaBatch{Deltas: ch.GetDeltas(), ReplaceAll: true}, time.Time{}, &c.s.limits)
	if err != nil {
		return nil, err
	}
	var fe fieldErrors
	for i := range d.batch.Changes {
		id := changeID(&d.batch.Changes[i])
		at := chunkDelta{k, d.deltaOf[i]}
		if prev, dup := o.seen[id]; dup {
			fe.add(at.String()+"."+keyFields[id.kind], "%s %s appears twice in the resync (also %s); send one change per object",
				kindNames[id.kind], quoteShort(id.key), prev)
			continue
		}
		o.seen[id] = at
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	// The resync replaces the cluster with one object per delta: one over the limit on the
	// cluster's objects is refused now, before it is staged (the commit checks every limit
	// again, in the store).
	if max := c.s.limits.MaxObjectsPerCluster; len(o.seen) > max {
		at := chunkDelta{k, d.deltaOf[len(d.batch.Changes)-(len(o.seen)-max)]}
		return nil, &limitError{limit: LimitObjectsPerCluster, max: max, field: at.String(), msg: fmt.Sprintf(
			"the resync would give the cluster more than %d objects, the limit (%s)", max, LimitObjectsPerCluster)}
	}
	return d.batch.Changes, nil
}

// commitResync swaps the cluster with the resync's chunks and the last one's changes, unless
// the cluster was deleted since the resync opened (errDeletedSinceHello: the resync is
// aborted). Times are stored as the API carries them: UTC, without a monotonic reading.
func (s *Server) commitResync(cluster string, o *openResync, last []state.Change) (uint64, error) {
	unlock := s.lockCluster(cluster)
	if s.gens.current(cluster) != o.gen {
		unlock()
		_ = o.r.Abort()
		return 0, errDeletedSinceHello
	}
	rev, err := o.r.Commit(last, s.clock().Round(0).UTC())
	unlock()
	err = o.mapError(err)
	s.metrics.countBatch(cluster, int64(o.r.Changes()+len(last)), 0, err)
	if err == nil {
		s.changes.notify(cluster)
	}
	return rev, err
}

// deletedDuringResync is the error of a resync whose cluster was deleted before its last
// chunk: the stream must send the whole state again.
func deletedDuringResync(st *syncState) error {
	st.resync = true
	return withInfo(codes.FailedPrecondition, ReasonResyncRequired, fmt.Sprintf(
		"cluster %q was deleted before the resync's last chunk: nothing of it was applied; send the whole state again", st.cluster))
}

// abandon ends the open resync, which another message interrupted, and returns its
// rejection.
func (c *clusterState) abandon(st *syncState, why string) *sluicev1.SyncResponse {
	o := st.open
	st.open = nil
	_ = o.r.Abort()
	return rejection(o.seq, invalid("chunks", "resync %d abandoned before its last chunk: %s; nothing changed", o.seq, why))
}

// refuseChunk ends the resync chunk ch belongs to with err: what was staged is dropped, the
// resync's remaining chunks will be ignored, and the rejection is returned.
func (c *clusterState) refuseChunk(st *syncState, ch *sluicev1.ResyncChunk, err error) *sluicev1.SyncResponse {
	if st.open != nil && st.open.seq == ch.GetSequence() {
		_ = st.open.r.Abort()
		st.open = nil
	}
	if !ch.GetLast() {
		st.dropping, st.dropSeq = true, ch.GetSequence()
	}
	return rejection(ch.GetSequence(), err)
}

// closeSync drops what a Sync stream left open when it ends.
func (st *syncState) close() {
	if st.open != nil {
		_ = st.open.r.Abort()
		st.open = nil
	}
}

// mapError turns the store's *ValidationError and *LimitError, whose index counts the changes
// of the whole resync, into an *invalidError or a *limitError naming the chunk and delta; other
// errors pass through.
func (o *openResync) mapError(err error) error {
	var lerr *state.LimitError
	if errors.As(err, &lerr) {
		field := "chunks"
		if lerr.Where.Index >= 0 {
			field = o.path(&lerr.Where)
		}
		return &limitError{limit: lerr.Limit, max: lerr.Max, field: field, msg: lerr.Where.Msg}
	}
	var verr *state.ValidationError
	if !errors.As(err, &verr) {
		if errors.Is(err, state.ErrResyncLost) {
			return withInfo(codes.Aborted, ReasonFailedPrecondition, err.Error())
		}
		return err
	}
	return &invalidError{
		reason:     ReasonInvalidReference,
		violations: []*errdetails.BadRequest_FieldViolation{{Field: o.path(verr), Description: verr.Msg}},
	}
}

// path is the field of the chunk and delta a store error whose index counts the changes of
// the whole resync points at.
func (o *openResync) path(verr *state.ValidationError) string {
	if verr.Index < 0 || len(o.starts) == 0 {
		return verr.Field
	}
	k := sort.Search(len(o.starts), func(i int) bool { return o.starts[i] > verr.Index }) - 1
	local := *verr
	local.Index = verr.Index - o.starts[k]
	identity := make([]int, local.Index+1)
	for i := range identity {
		identity[i] = i
	}
	return deltaPath(fmt.Sprintf("chunks[%d]", k), &local, identity)
}

// resyncTooLarge is the error of a resync over the server's bound.
func resyncTooLarge(chunk, limit int) error {
	st := status.New(codes.ResourceExhausted, fmt.Sprintf("the resync is larger than this server takes (%d bytes; sluiced --max-resync-bytes)", limit))
	if d, err := st.WithDetails(
		&errdetails.BadRequest{FieldViolations: []*errdetails.BadRequest_FieldViolation{{
			Field: fmt.Sprintf("chunks[%d]", chunk), Description: fmt.Sprintf("the resync's chunks so far exceed %d bytes", limit),
		}}},
		&errdetails.ErrorInfo{Reason: ReasonResyncTooLarge, Domain: ErrorDomain},
	); err == nil {
		st = d
	}
	return st.Err()
}

// keyFields is the path, within a delta, of the field that names an upsert's object.
var keyFields = map[state.Kind]string{
	state.KindNode:          "upsert_node.name",
	state.KindQueue:         "upsert_queue.name",
	state.KindJob:           "upsert_job.name",
	state.KindTask:          "upsert_task.name",
	state.KindPriorityClass: "upsert_priority_class.name",
	state.KindQuota:         "upsert_namespace_quota.namespace",
	state.KindBudget:        "upsert_disruption_budget.name",
	state.KindHyperNode:     "upsert_hyper_node.name",
}

// changeID identifies the object a decoded upsert writes.
func changeID(c *state.Change) objectID {
	switch {
	case c.Node != nil:
		return objectID{state.KindNode, c.Node.Name}
	case c.Queue != nil:
		return objectID{state.KindQueue, c.Queue.Name}
	case c.Job != nil:
		return objectID{state.KindJob, c.Job.Key()}
	case c.Task != nil:
		return objectID{state.KindTask, c.Task.Key()}
	case c.PriorityClass != nil:
		return objectID{state.KindPriorityClass, c.PriorityClass.Name}
	case c.Quota != nil:
		return objectID{state.KindQuota, c.Quota.Namespace}
	case c.Budget != nil:
		return objectID{state.KindBudget, c.Budget.Namespace + "/" + c.Budget.Name}
	case c.HyperNode != nil:
		return objectID{state.KindHyperNode, c.HyperNode.Name}
	}
	return objectID{}
}

// rejection is the answer to a batch or resync that was not applied: the status err maps to,
// whole, and its code, message and field violations for older clients.
func rejection(seq uint64, err error) *sluicev1.SyncResponse {
	stat := status.Convert(toStatus(err))
	rej := &sluicev1.BatchRejected{Sequence: seq, Code: int32(stat.Code()), Message: stat.Message(), Status: stat.Proto()}
	for _, v := range violationsOf(stat) {
		rej.Violations = append(rej.Violations, &sluicev1.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
	}
	return &sluicev1.SyncResponse{Message: &sluicev1.SyncResponse_Rejected{Rejected: rej}}
}

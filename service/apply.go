package service

import (
	"errors"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/sluice-sched/sluice/engine/state"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// decodedBatch is a DeltaBatch checked and converted for the store.
type decodedBatch struct {
	batch state.Batch
	// deltaOf[i] is the index of the delta that became batch.Changes[i].
	deltaOf []int
}

// decodeBatch checks every delta of b and converts it. Field paths start with prefix
// ("batch" for ApplyDeltas, "" for Sync, whose paths are relative to the DeltaBatch). Deleting
// a missing object is a no-op in the store. Server-owned fields the deltas leave unset are
// left unset for the store, which keeps their stored values; now fills in the times of new
// objects (a job's creation, a task first seen running).
func decodeBatch(prefix string, b *sluicev1.DeltaBatch, now time.Time, lim *Limits) (*decodedBatch, error) {
	fe := fieldErrors{lim: lim}
	// The batch's size first: a batch over the limit is not looked at further.
	if n, max := len(b.GetDeltas()), fe.limits().MaxBatchDeltas; n > max {
		fe.add(sub(prefix, "deltas"), "has %d deltas, more than the limit of %d (%s): send them in several batches", n, max, LimitBatchDeltas)
		return nil, fe.err()
	}
	n := len(b.GetDeltas())
	out := &decodedBatch{
		batch:   state.Batch{ReplaceAll: b.GetReplaceAll(), Now: now, Limits: fe.limits().storeLimits(), Changes: make([]state.Change, 0, n)},
		deltaOf: make([]int, 0, n),
	}
	u := upserts{fe: &fe, probe: fieldErrors{lim: lim}, seen: make(map[batchID]int, n)}
	for i, d := range b.GetDeltas() {
		u.at = deltaAt{prefix, i}
		var c state.Change
		switch ch := d.GetChange().(type) {
		case *sluicev1.Delta_UpsertNode:
			c.Node = decodeUpsert(&u, "upsert_node", ch.UpsertNode, checkNode, nodeFromProto)
			u.dup("upsert_node", "name", state.KindNode, "", c.Node.Name)
		case *sluicev1.Delta_UpsertQueue:
			c.Queue = decodeUpsert(&u, "upsert_queue", ch.UpsertQueue, checkQueue, queueFromProto)
			u.dup("upsert_queue", "name", state.KindQueue, "", c.Queue.Name)
		case *sluicev1.Delta_UpsertJob:
			c.Job = decodeUpsert(&u, "upsert_job", ch.UpsertJob, checkJob, jobFromProto)
			u.dup("upsert_job", "name", state.KindJob, c.Job.Namespace, c.Job.Name)
		case *sluicev1.Delta_UpsertTask:
			c.Task = decodeUpsert(&u, "upsert_task", ch.UpsertTask, checkTask, taskFromProto)
			u.dup("upsert_task", "name", state.KindTask, c.Task.Namespace, c.Task.Name)
		case *sluicev1.Delta_UpsertPriorityClass:
			c.PriorityClass = decodeUpsert(&u, "upsert_priority_class", ch.UpsertPriorityClass, checkPriorityClass, recordsNothing(priorityClassFromProto))
			u.dup("upsert_priority_class", "name", state.KindPriorityClass, "", c.PriorityClass.Name)
		case *sluicev1.Delta_UpsertNamespaceQuota:
			c.Quota = decodeUpsert(&u, "upsert_namespace_quota", ch.UpsertNamespaceQuota, checkQuota, quotaFromProto)
			u.dup("upsert_namespace_quota", "namespace", state.KindQuota, "", c.Quota.Namespace)
		case *sluicev1.Delta_UpsertDisruptionBudget:
			c.Budget = decodeUpsert(&u, "upsert_disruption_budget", ch.UpsertDisruptionBudget, checkBudget, recordsNothing(budgetFromProto))
			u.dup("upsert_disruption_budget", "name", state.KindBudget, c.Budget.Namespace, c.Budget.Name)
		case *sluicev1.Delta_UpsertHyperNode:
			c.HyperNode = decodeUpsert(&u, "upsert_hyper_node", ch.UpsertHyperNode, checkHyperNode, recordsNothing(hyperNodeFromProto))
			u.dup("upsert_hyper_node", "name", state.KindHyperNode, "", c.HyperNode.Name)
		case *sluicev1.Delta_Delete:
			p := sub(u.at.path(), "delete")
			checkRef(&fe, p, ch.Delete)
			if b.GetReplaceAll() {
				fe.add(p, "delete deltas are not allowed in a replace_all batch")
			}
			ref := refFromProto(ch.Delete)
			if ref.Kind != 0 {
				if namespaced(ref.Kind) {
					u.dup("delete", "name", ref.Kind, ref.Namespace, ref.Name)
				} else {
					u.dup("delete", "name", ref.Kind, "", ref.Key())
				}
			}
			if !fe.ok() {
				continue
			}
			c.Delete = &ref
		default:
			fe.add(u.at.path(), "must set one of upsert_node, upsert_queue, upsert_job, upsert_task, "+
				"upsert_priority_class, upsert_namespace_quota, upsert_disruption_budget, "+
				"upsert_hyper_node or delete")
			continue
		}
		out.batch.Changes = append(out.batch.Changes, c)
		out.deltaOf = append(out.deltaOf, i)
	}
	if err := fe.err(); err != nil {
		return nil, err
	}
	return out, nil
}

// deltaAt locates one delta of a batch, whose path is built only when a violation needs it.
type deltaAt struct {
	prefix string
	i      int
}

// path returns the delta's field path ("batch.deltas[3]").
func (d deltaAt) path() string { return idx(sub(d.prefix, "deltas"), d.i) }

// upserts is decodeBatch's state for the upserts of a batch: the batch's violations, a
// scratch list for one object's, and the objects seen so far (-> delta index).
type upserts struct {
	fe    *fieldErrors
	probe fieldErrors
	at    deltaAt
	seen  map[batchID]int
}

// decodeUpsert checks and converts the object m of the current delta, whose oneof field is
// field. It does so first into the scratch list with an empty path, which builds no path
// strings (sub("", name) is name), and only when that records something again, with the
// delta's path, into the batch's violations: a valid object costs no paths, and an invalid
// one is reported exactly as before. Nothing a check or a converter records depends on the
// path but the path.
func decodeUpsert[M, T any](u *upserts, field string, m M, check func(*fieldErrors, string, M),
	conv func(*fieldErrors, string, M) T) T {
	u.probe.reset()
	check(&u.probe, "", m)
	out := conv(&u.probe, "", m)
	if u.probe.ok() {
		return out
	}
	p := sub(u.at.path(), field)
	check(u.fe, p, m)
	return conv(u.fe, p, m)
}

// recordsNothing adapts a converter that cannot fail to decodeUpsert.
func recordsNothing[M, T any](conv func(M) T) func(*fieldErrors, string, M) T {
	return func(_ *fieldErrors, _ string, m M) T { return conv(m) }
}

// dup records the current delta's object when an earlier delta of the batch changed it too:
// a job, task or budget named ns/key, any other object named key (ns empty); field and name
// locate the offending value within the delta.
func (u *upserts) dup(field, name string, kind state.Kind, ns, key string) {
	id := batchID{kind, ns, key}
	if j, ok := u.seen[id]; ok {
		if namespaced(kind) {
			key = ns + "/" + key
		}
		u.fe.add(sub(sub(u.at.path(), field), name), "%s %s appears twice in the batch (also deltas[%d]); send one change per object",
			kindNames[kind], quoteShort(key), j)
		return
	}
	u.seen[id] = u.at.i
}

// batchID identifies an object within a batch without building its key: jobs, tasks and
// budgets by namespace and name (a namespace holds no '/', so these pairs are as distinct as
// the keys namespace/name), every other kind by its key alone (ns empty).
type batchID struct {
	kind     state.Kind
	ns, name string
}

// namespaced reports whether objects of kind k are named by a namespace and a name.
func namespaced(k state.Kind) bool {
	return k == state.KindJob || k == state.KindTask || k == state.KindBudget
}

// objectID identifies an object within a batch.
type objectID struct {
	kind state.Kind
	key  string
}

// kindNames names the kinds in messages.
var kindNames = map[state.Kind]string{
	state.KindNode:          "node",
	state.KindQueue:         "queue",
	state.KindJob:           "job",
	state.KindTask:          "task",
	state.KindPriorityClass: "priority class",
	state.KindQuota:         "namespace quota",
	state.KindBudget:        "disruption budget",
	state.KindHyperNode:     "hypernode",
}

// errDeletedSinceHello is applyBatch's error for a Sync batch whose cluster was deleted after
// the stream's hello (and that is not a replace_all).
var errDeletedSinceHello = errors.New("the cluster was deleted after the stream's hello")

// applyBatch checks, converts and applies one batch to a cluster and returns the new
// revision. A batch the checks or the store refuse changes nothing and yields an
// *invalidError whose paths start with prefix. A Sync stream passes the cluster's generation
// at its hello (gen; nil for ApplyDeltas): when the cluster was deleted since, only a
// replace_all batch applies (which moves *gen on), and any other fails with
// errDeletedSinceHello.
func (s *Server) applyBatch(cluster, prefix string, b *sluicev1.DeltaBatch, gen *uint64) (uint64, error) {
	return s.applyDecoded(cluster, prefix, b, gen, s.decode(prefix, b))
}

// decoded is a batch's decodeBatch result, which a Sync stream computes while the previous
// batch applies.
type decoded struct {
	batch *decodedBatch
	err   error
}

// decode checks and converts a batch (decodeBatch) with the server's clock and limits.
func (s *Server) decode(prefix string, b *sluicev1.DeltaBatch) decoded {
	// Times are stored as the API carries them: UTC, without a monotonic reading.
	d, err := decodeBatch(prefix, b, s.clock().Round(0).UTC(), &s.limits)
	return decoded{d, err}
}

// applyDecoded is applyBatch with b already decoded (d).
func (s *Server) applyDecoded(cluster, prefix string, b *sluicev1.DeltaBatch, gen *uint64, d decoded) (uint64, error) {
	rev, err := s.applyBatchLocked(cluster, prefix, b, gen, d)
	s.metrics.batchDone(cluster, b, err)
	if err != nil && !isStoreUnavailable(err) && !errors.Is(err, errDeletedSinceHello) {
		s.batchRejected(cluster, b, err)
	}
	if err == nil {
		s.changes.notify(cluster)
	}
	return rev, err
}

// applyBatchLocked applies a decoded batch under the cluster's lock. The batch was decoded
// before the lock was taken (the lock guards the store and the generations, not the checks),
// but a batch whose cluster was deleted since the stream's hello fails with
// errDeletedSinceHello before any of its decoding errors.
func (s *Server) applyBatchLocked(cluster, prefix string, b *sluicev1.DeltaBatch, gen *uint64, dec decoded) (uint64, error) {
	unlock := s.lockCluster(cluster)
	defer unlock()
	cur := s.gens.current(cluster)
	if gen != nil && *gen != cur && !b.GetReplaceAll() {
		return 0, errDeletedSinceHello
	}
	if dec.err != nil {
		return 0, dec.err
	}
	d := dec.batch
	d.batch.Owned = true // decodeBatch made its objects for this batch alone
	rev, err := s.store.Apply(cluster, d.batch)
	if err == nil && gen != nil {
		*gen = cur
	}
	var verr *state.ValidationError
	var lerr *state.LimitError
	if errors.As(err, &lerr) {
		field := sub(prefix, "deltas")
		if lerr.Where.Index >= 0 {
			field = deltaPath(prefix, &lerr.Where, d.deltaOf)
		}
		return 0, &limitError{limit: lerr.Limit, max: lerr.Max, field: field, msg: lerr.Where.Msg}
	}
	if errors.As(err, &verr) {
		return 0, &invalidError{
			reason: ReasonInvalidReference,
			violations: []*errdetails.BadRequest_FieldViolation{{
				Field: deltaPath(prefix, verr, d.deltaOf), Description: verr.Msg,
			}},
		}
	}
	return rev, err
}

// changeFields maps the store's Change field names to the Delta oneof names.
var changeFields = map[string]string{
	"node":           "upsert_node",
	"queue":          "upsert_queue",
	"job":            "upsert_job",
	"task":           "upsert_task",
	"priority_class": "upsert_priority_class",
	"quota":          "upsert_namespace_quota",
	"budget":         "upsert_disruption_budget",
	"hyper_node":     "upsert_hyper_node",
	"delete":         "delete",
}

// deltaPath maps a store error's path (change Index, its Object and Path, e.g. 3, "task",
// "job") onto the request's ("batch.deltas[5].upsert_task.job"). An error about the batch as
// a whole keeps the store's Field.
func deltaPath(prefix string, verr *state.ValidationError, deltaOf []int) string {
	if verr.Index < 0 || verr.Index >= len(deltaOf) {
		return verr.Field
	}
	path := idx(sub(prefix, "deltas"), deltaOf[verr.Index])
	if verr.Object == "" {
		return path
	}
	seg := verr.Object
	if f, ok := changeFields[seg]; ok {
		seg = f
	}
	path = sub(path, seg)
	if verr.Path == "" {
		return path
	}
	if strings.HasPrefix(verr.Path, "[") {
		return path + verr.Path
	}
	return sub(path, verr.Path)
}

package state

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

// Replicator puts the store's writes in a replicated log (engine/durable: hashicorp/raft)
// before they apply. The store is then the log's state machine: every write is an Op, which
// each replica applies in log order with Store.ApplyOp, deterministically, so that all of
// them hold the same state and revisions.
type Replicator interface {
	// CheckLeader returns nil when this node may write now; otherwise a *NotLeaderError
	// (another node leads; write there) or an error wrapping ErrUnavailable (no leader yet,
	// storage failing, shutting down).
	CheckLeader() error
	// Replicate appends op to the log and returns once this node applied it with
	// Store.ApplyOp, with what ApplyOp returned. On error (a *NotLeaderError, or an error
	// wrapping ErrUnavailable) the op may or may not be in the log, and may yet apply.
	Replicate(op *Op) (*OpResult, error)
}

// Errors of a replicated store.
var (
	// ErrNotLeader is matched (errors.Is) by every *NotLeaderError.
	ErrNotLeader = errors.New("not the leader")
	// ErrUnavailable wraps the errors of a write that the replicated log could not take: no
	// leader yet, a data directory that cannot be written, a shutdown. Retry later.
	ErrUnavailable = errors.New("state store unavailable")
	// ErrNotReplicable is Update's error on a replicated store: a function cannot go into a
	// log. Plan commits use CommitPlan.
	ErrNotReplicable = errors.New("state: Update runs arbitrary code, which cannot be replicated; use Apply or CommitPlan")
)

// NotLeaderError says that this node cannot write because another one leads.
type NotLeaderError struct {
	// LeaderID is the leader's node id, "" when no leader is known.
	LeaderID string
	// Leader is the leader's client (gRPC) address, "" when unknown.
	Leader string
}

// Error implements error.
func (e *NotLeaderError) Error() string {
	switch {
	case e.Leader != "":
		return fmt.Sprintf("not the leader: writes go to the leader %s at %s", e.LeaderID, e.Leader)
	case e.LeaderID != "":
		return fmt.Sprintf("not the leader: writes go to the leader %s (its address is unknown here)", e.LeaderID)
	}
	return "not the leader, and no leader is known yet"
}

// Is makes errors.Is(err, ErrNotLeader) true.
func (e *NotLeaderError) Is(target error) bool { return target == ErrNotLeader }

// Op is one entry of the replicated log, for one cluster: a delta batch, a plan commit (the
// decisions themselves, as the first version wrote them), a step of a stored plan's life, a
// scheduler configuration, the deletion of the cluster, or a step of a resync; or, for the
// store as a whole (Cluster empty), its id. Exactly one of Batch, Commit, Plan, Config,
// DeleteCluster, Resync and StoreID is set.
type Op struct {
	Cluster string
	Batch   *Batch
	Commit  *PlanCommit
	Plan    *PlanOp
	Config  *ConfigOp
	// DeleteCluster deletes everything of the cluster (Store.DeleteCluster), staged resyncs
	// included.
	DeleteCluster bool
	Resync        *ResyncOp
	// StoreID gives the store its id, if it has none yet (the first leader writes it).
	StoreID string
}

// parts counts the op's set fields.
func (op *Op) parts() int {
	n := 0
	for _, set := range [...]bool{op.Batch != nil, op.Commit != nil, op.Plan != nil, op.Config != nil,
		op.DeleteCluster, op.Resync != nil, op.StoreID != ""} {
		if set {
			n++
		}
	}
	return n
}

// OpResult is what applying an Op gave on this node.
type OpResult struct {
	// Revision is the cluster's revision after the op (unchanged when it was refused).
	Revision uint64
	// Commit is a plan commit's outcome.
	Commit *CommitOutcome
	// Plan is a plan op's result.
	Plan *PlanResult
	// Config is the configuration a config op stored.
	Config *SchedulerConfig
	// Deleted is the cluster as a delete found it.
	Deleted *ClusterInfo
	// Err is the store's refusal (a *ValidationError, a *ConfigEtagError, a
	// *ClusterNotFoundError, ...), or nil. Every replica refuses alike.
	Err error
}

// SetReplicator makes the store the state machine of r's log: from then on Apply and
// CommitPlan go through r, and Update fails. Call it once, before the store is written. The
// store's id is then the log's: the one a snapshot restored before the call gave, or "" until
// the log gives it one (the id New drew is dropped).
func (s *Store) SetReplicator(r Replicator) {
	s.repl = r
	if s.id.Load().local {
		s.setID("")
	}
}

// TakeLead prepares a new leader's store for writes, once the leader applied every entry of
// earlier terms: it gives the store an id if the log has none yet (a new data directory), and
// aborts the resyncs in progress that no writer of this node holds (a previous leader's). It
// goes through the Replicator without asking CheckLeader, which a leader refuses until this
// is done.
func (s *Store) TakeLead() error {
	if s.repl == nil {
		return nil
	}
	if s.ID() == "" {
		if _, err := s.repl.Replicate(&Op{StoreID: newStoreID()}); err != nil {
			return err
		}
	}
	for _, st := range s.StagedResyncs() {
		if s.live.has(st.Cluster, st.ID) {
			continue
		}
		if _, err := s.repl.Replicate(&Op{Cluster: st.Cluster, Resync: &ResyncOp{ID: st.ID, Part: -1, Abort: true}}); err != nil {
			return err
		}
	}
	return nil
}

// Replicated reports whether the store has a Replicator.
func (s *Store) Replicated() bool { return s.repl != nil }

// CheckWritable returns nil when a write may be tried on this node now: always without a
// Replicator, and on the leader with one (see Replicator.CheckLeader).
func (s *Store) CheckWritable() error {
	if s.repl == nil {
		return nil
	}
	return s.repl.CheckLeader()
}

// ApplyOp applies an op of the log to this node's store, as the log's state machine does.
// It is deterministic: the same ops in the same order give the same state and revisions on
// every node. It bypasses the Replicator.
func (s *Store) ApplyOp(op *Op) *OpResult {
	if op.parts() != 1 {
		return &OpResult{Revision: s.Revision(op.Cluster), Err: errors.New("state: an op must hold exactly one of a batch, a commit, a plan op, a config op, a cluster delete, a resync op or a store id")}
	}
	switch {
	case op.StoreID != "":
		if s.ID() == "" {
			s.setID(op.StoreID)
		}
		return &OpResult{}
	case op.Resync != nil:
		if err := checkCluster(op.Cluster); err != nil {
			return &OpResult{Err: err}
		}
		return s.applyResync(op.Cluster, op.Resync)
	case op.Batch != nil:
		rev, err := s.apply(op.Cluster, *op.Batch, true)
		return &OpResult{Revision: rev, Err: err}
	case op.Plan != nil:
		res, err := s.applyPlan(op.Cluster, op.Plan)
		return &OpResult{Revision: s.Revision(op.Cluster), Plan: res, Err: err}
	case op.Config != nil:
		cfg, err := s.setConfig(op.Cluster, op.Config)
		return &OpResult{Revision: s.Revision(op.Cluster), Config: cfg, Err: err}
	case op.DeleteCluster:
		info, err := s.deleteCluster(op.Cluster)
		return &OpResult{Revision: s.Revision(op.Cluster), Deleted: info, Err: err}
	default:
		out, err := s.commitPlan(op.Cluster, op.Commit)
		res := &OpResult{Commit: out, Err: err}
		if out != nil {
			res.Revision = out.Revision
		} else {
			res.Revision = s.Revision(op.Cluster)
		}
		return res
	}
}

// replicateBatch checks a batch against the current state in a transaction that is thrown
// away, then replicates it. The cluster's lock keeps other replicated writes of the cluster
// from changing the state in between, so the batch applies as checked (unless leadership
// changes meanwhile: then every replica refuses it alike, with the same error).
func (s *Store) replicateBatch(cluster string, b Batch) (uint64, error) {
	if err := checkCluster(cluster); err != nil {
		return s.Revision(cluster), err
	}
	if err := s.repl.CheckLeader(); err != nil {
		return s.Revision(cluster), err
	}
	unlock := s.lockCluster(cluster)
	defer unlock()
	if rev, err := s.apply(cluster, b, false); err != nil {
		return rev, err
	}
	res, err := s.repl.Replicate(&Op{Cluster: cluster, Batch: &b})
	if err != nil {
		return s.Revision(cluster), err
	}
	return res.Revision, res.Err
}

// replicateCommit replicates a plan commit; its checks run when it applies, on every replica.
func (s *Store) replicateCommit(cluster string, pc *PlanCommit) (*CommitOutcome, error) {
	res, err := s.replicate(cluster, &Op{Cluster: cluster, Commit: pc})
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return res.Commit, nil
}

// replicate hands an op whose checks run when it applies (a commit, a plan op, a config, a
// cluster delete, a resync step) to the Replicator, under the cluster's lock.
func (s *Store) replicate(cluster string, op *Op) (*OpResult, error) {
	if err := checkCluster(cluster); err != nil {
		return nil, err
	}
	if err := s.repl.CheckLeader(); err != nil {
		return nil, err
	}
	unlock := s.lockCluster(cluster)
	defer unlock()
	return s.repl.Replicate(op)
}

// lockCluster locks a cluster's replicated writes and returns the unlock function.
func (s *Store) lockCluster(cluster string) func() { return s.locks.Lock(cluster) }

// opFormat is the first byte of an encoded op: the version of its encoding.
const opFormat byte = 1

// opHeader opens an encoded op. A batch's changes follow it, one gob value each (the object,
// or the Ref of a delete), in order; Kinds says what each is. A commit's PlanCommit follows
// it instead; a plan op or a config op likewise, and a cluster delete or a store id nothing;
// a resync op's changes follow as a batch's do. Encoding the objects one by one, rather than
// the Op whole, sends gob type descriptions only for the kinds of objects the op holds (they
// cost more than small objects).
type opHeader struct {
	Cluster    string
	Commit     bool
	Plan       bool
	Config     bool
	Delete     bool
	ReplaceAll bool
	Kinds      []Kind
	// A resync op: its fields but Changes, which follow as a batch's do (its Now is Now).
	Resync       bool
	ResyncID     uint64
	ResyncPart   int
	ResyncCommit bool
	ResyncAbort  bool
	StoreID      string
	// Now is the batch's (or the resync op's) Now. Merges is true in every batch encoded
	// since upserts keep server-owned fields (merge.go); a batch logged before decodes with
	// false and replaces objects whole, as it did when first applied, so that a log replays
	// to the state it gave then on every replica, whatever snapshot a replica starts from.
	// Resync ops were never logged without merges: they always merge.
	Now    time.Time
	Merges bool
	// Limits are the batch's (Batch.Limits) or the resync commit's (ResyncOp.Limits); ops
	// logged before limits existed decode with none.
	Limits Limits
}

// MarshalOp encodes an op for the log: a format byte, then encoding/gob. Objects travel
// whole, with the values the leader gave them (defaults, times), so that applying them
// needs nothing but the log.
func MarshalOp(op *Op) ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteByte(opFormat)
	enc := gob.NewEncoder(&buf)
	h := opHeader{Cluster: op.Cluster, Commit: op.Commit != nil, Plan: op.Plan != nil, Config: op.Config != nil,
		Delete: op.DeleteCluster, StoreID: op.StoreID}
	var changes []Change
	switch {
	case op.Batch != nil:
		h.ReplaceAll, h.Now, h.Merges, h.Limits = op.Batch.ReplaceAll, op.Batch.Now, !op.Batch.whole, op.Batch.Limits
		changes = op.Batch.Changes
	case op.Resync != nil:
		r := op.Resync
		h.Resync, h.ResyncID, h.ResyncPart, h.ResyncCommit, h.ResyncAbort = true, r.ID, r.Part, r.Commit, r.Abort
		h.Now, h.Merges, h.Limits = r.Now, true, r.Limits
		changes = r.Changes
	}
	if changes != nil {
		h.Kinds = make([]Kind, len(changes))
		for i := range changes {
			h.Kinds[i] = changes[i].kind()
		}
	}
	if err := enc.Encode(&h); err != nil {
		return nil, fmt.Errorf("state: encoding an op: %w", err)
	}
	var err error
	switch {
	case op.Commit != nil:
		err = enc.Encode(op.Commit)
	case op.Plan != nil:
		err = enc.Encode(op.Plan)
	case op.Config != nil:
		err = enc.Encode(op.Config)
	default:
		for i := range changes {
			if err = enc.Encode(changes[i].value()); err != nil {
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("state: encoding an op: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalOp decodes what MarshalOp encoded.
func UnmarshalOp(data []byte) (*Op, error) {
	if len(data) == 0 || data[0] != opFormat {
		return nil, errors.New("state: decoding an op: unknown format")
	}
	dec := gob.NewDecoder(bytes.NewReader(data[1:]))
	var h opHeader
	if err := dec.Decode(&h); err != nil {
		return nil, fmt.Errorf("state: decoding an op: %w", err)
	}
	op := &Op{Cluster: h.Cluster}
	switch {
	case h.Delete:
		op.DeleteCluster = true
		return op, nil
	case h.Plan:
		op.Plan = &PlanOp{}
		if err := dec.Decode(op.Plan); err != nil {
			return nil, fmt.Errorf("state: decoding an op: %w", err)
		}
		return op, nil
	case h.Config:
		op.Config = &ConfigOp{}
		if err := dec.Decode(op.Config); err != nil {
			return nil, fmt.Errorf("state: decoding an op: %w", err)
		}
		return op, nil
	}
	if h.Commit {
		op.Commit = &PlanCommit{}
		if err := dec.Decode(op.Commit); err != nil {
			return nil, fmt.Errorf("state: decoding an op: %w", err)
		}
		return op, nil
	}
	if h.StoreID != "" {
		op.StoreID = h.StoreID
		return op, nil
	}
	var changes []Change
	if len(h.Kinds) > 0 {
		changes = make([]Change, len(h.Kinds))
	}
	for i, k := range h.Kinds {
		if err := changes[i].decode(k, dec); err != nil {
			return nil, fmt.Errorf("state: decoding an op: change %d: %w", i, err)
		}
	}
	if h.Resync {
		op.Resync = &ResyncOp{ID: h.ResyncID, Part: h.ResyncPart, Commit: h.ResyncCommit, Abort: h.ResyncAbort,
			Now: h.Now, Limits: h.Limits, Changes: changes}
		return op, nil
	}
	if changes == nil {
		changes = []Change{}
	}
	op.Batch = &Batch{ReplaceAll: h.ReplaceAll, Now: h.Now, whole: !h.Merges, Limits: h.Limits, Changes: changes}
	return op, nil
}

// kind says what a change holds: the kind of the object it upserts, or 0 for a delete (or an
// invalid change, which the store refuses before anything is encoded).
func (c *Change) kind() Kind {
	switch {
	case c.set() != 1 || c.Delete != nil:
		return 0
	case c.Node != nil:
		return KindNode
	case c.Queue != nil:
		return KindQueue
	case c.Job != nil:
		return KindJob
	case c.Task != nil:
		return KindTask
	case c.PriorityClass != nil:
		return KindPriorityClass
	case c.Quota != nil:
		return KindQuota
	case c.Budget != nil:
		return KindBudget
	default:
		return KindHyperNode
	}
}

// value is what encodes a change: its object, or its delete's Ref.
func (c *Change) value() any {
	switch c.kind() {
	case KindNode:
		return c.Node
	case KindQueue:
		return c.Queue
	case KindJob:
		return c.Job
	case KindTask:
		return c.Task
	case KindPriorityClass:
		return c.PriorityClass
	case KindQuota:
		return c.Quota
	case KindBudget:
		return c.Budget
	case KindHyperNode:
		return c.HyperNode
	}
	if c.Delete != nil {
		return c.Delete
	}
	return &Ref{}
}

// decode reads a change of kind k.
func (c *Change) decode(k Kind, dec *gob.Decoder) error {
	switch k {
	case KindNode:
		c.Node = new(api.Node)
		return dec.Decode(c.Node)
	case KindQueue:
		c.Queue = new(api.Queue)
		return dec.Decode(c.Queue)
	case KindJob:
		c.Job = new(api.Job)
		return dec.Decode(c.Job)
	case KindTask:
		c.Task = new(api.Task)
		return dec.Decode(c.Task)
	case KindPriorityClass:
		c.PriorityClass = new(api.PriorityClass)
		return dec.Decode(c.PriorityClass)
	case KindQuota:
		c.Quota = new(api.NamespaceQuota)
		return dec.Decode(c.Quota)
	case KindBudget:
		c.Budget = new(api.DisruptionBudget)
		return dec.Decode(c.Budget)
	case KindHyperNode:
		c.HyperNode = new(api.HyperNode)
		return dec.Decode(c.HyperNode)
	case 0:
		c.Delete = new(Ref)
		return dec.Decode(c.Delete)
	}
	return fmt.Errorf("unknown kind %d", int(k))
}

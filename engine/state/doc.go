// Package state is Sluice's cluster state store: a go-memdb database holding, per cluster,
// the nodes, queues, jobs, tasks, priority classes, namespace quotas, disruption budgets and
// hypernodes a resource manager streams in, with a revision per cluster.
//
// # Tables and keys
//
// Every table is keyed by (cluster, key): the name for nodes, queues, priority classes and
// hypernodes, namespace/name for jobs, tasks and budgets (api.Job.Key, api.Task.Key), the
// namespace for quotas. Secondary indexes list tasks by job and by node, jobs by queue,
// queues by parent and hypernodes by member. Keys are NUL-separated strings, so names may not
// contain NUL, and namespaces may not contain "/".
//
// # Immutability
//
// Objects are stored by pointer and are immutable once written: the store never copies them,
// snapshots share them, and writers replace an object with a new one instead of mutating it.
// A caller hands an object over with Apply or Txn.Upsert and must not modify it afterwards;
// readers must not modify what they get.
//
// # Writes and revisions
//
// Store.Apply applies a Batch of Changes atomically, with referential checks after the whole
// batch; Store.Update runs a function with a Txn for read-then-write changes such as plan
// commits, checking each call at once. Each successful write transaction advances the
// cluster's revision by one; a fresh cluster is at revision 0. Refused changes return a
// *ValidationError naming the offending field, e.g. "changes[3].task.job". memdb allows one
// writer at a time, so writes, even to different clusters, are serialized.
//
// Every row records the revision of the write that stored it (its modify revision), so that
// CommitPlan can tell what changed since a plan's base revision from the store alone;
// View.ModRevision reads it, for the API's mod_revision.
//
// # Server-owned fields
//
// An upsert replaces the stored object, except for the fields the server maintains (a job's
// phase and creation time, a task's status, node, devices and start time) when it leaves them
// unset: those keep their stored values, or get their defaults in a new object. merge.go is
// the one place that does it, for every writer and every replica.
//
// # Clusters
//
// A cluster exists from the first row stored for it (a batch's revision row, a scheduler
// configuration, a plan) until Store.DeleteCluster removes every row of it in one transaction,
// revision row and any staged resync included: it then reads as a cluster never written.
// View.Info sums a cluster up; Store.ClusterNames lists those that exist.
//
// # Plan commits
//
// Store.CommitPlan writes a plan's binds, evictions and job phases in one transaction,
// refusing by name the decisions that conflict with changes since the plan's revision.
//
// # Resyncs
//
// A resync replaces a whole cluster, like a ReplaceAll batch, but in parts, for a cluster too
// large for one message or one log entry. Store.BeginResync opens one; Resync.Add stages a
// part (checking what each change alone can be checked for), Resync.Commit swaps the cluster
// in one write transaction with the referential checks across all the parts, Resync.Abort
// drops the stage. Staged parts live in the resyncs table, which is not cluster state: the
// cluster's objects and revision stay as they were until the commit. See resync.go for why
// the stage is in the store.
//
// # Store id
//
// Store.ID identifies the store, so that a client holding a revision can tell whether it is
// this store's: a random id drawn when a store starts from nothing; with a Replicator it is
// part of the replicated state, written once by the first leader (Store.TakeLead).
//
// # Replication
//
// With a Replicator (engine/durable: a raft log), the store is the log's state machine:
// Apply checks a batch in a transaction it throws away and hands it to the Replicator as an
// Op; CommitPlan hands over its PlanCommit, SetConfig its ConfigOp (whose etag check runs
// when it applies) and DeleteCluster the delete; each step of a resync is an op of its own (a
// part, the commit, an abort); every replica applies the ops in log order with ApplyOp,
// deterministically. MarshalOp encodes ops for the log; Dump and Restore write and
// read snapshots of the whole store, revisions included.
//
// # Reads
//
// Store.Snapshot returns a consistent view of one cluster at its current revision. It costs
// nothing to take, never blocks and never sees later writes. Lists are sorted by key; the
// List* methods page through them with the last key as the cursor.
package state

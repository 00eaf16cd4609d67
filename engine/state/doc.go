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
// # Reads
//
// Store.Snapshot returns a consistent view of one cluster at its current revision. It costs
// nothing to take, never blocks and never sees later writes. Lists are sorted by key; the
// List* methods page through them with the last key as the cursor.
package state

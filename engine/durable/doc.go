// Package durable makes the state store durable and highly available: the store
// (engine/state) becomes the state machine of a hashicorp/raft log, kept in a bolt database
// (raft-boltdb/v2) with file snapshots, in a data directory.
//
// # Writes
//
// Node is the store's state.Replicator. A delta batch is checked against the current state
// first (a transaction that is thrown away), so that a batch the store refuses never reaches
// the log; then it is encoded (state.MarshalOp), appended with raft.Apply and acknowledged
// once the log has it on a quorum (fsynced) and this node applied it. A plan commit is an op
// too; its conflict checks run when it applies, alike on every replica (they compare each
// object's modify revision with the plan's base revision). Revisions are part of the
// replicated state, so a client that resumes from its last acknowledged revision finds it
// after a restart or a failover; so is the store's id (state.Store.ID), which the first
// leader writes into the log, so that it is the same on every member and across restarts.
//
// A resync (state.Resync) is one entry per part, each bounded by the client's chunk, and a
// commit entry that swaps the cluster on every member (with the leader's time, for the
// server-owned fields it fills in); a member staged the parts alike, and snapshots carry
// them. A cluster delete drops its stages too. A new leader, once caught up, drops the stages that no writer of its
// own holds (a previous leader's, cut off mid-resync) before it takes writes.
//
// # Recovery
//
// On start raft restores the newest snapshot (state.Store.Restore) and replays the log
// after it. A node that becomes leader first waits (raft.Barrier) until it applied every
// entry of earlier terms, and refuses writes until then. Snapshots are taken every
// SnapshotThreshold entries (and checked every SnapshotInterval); TrailingLogs entries stay
// in the log after one, so the log stays bounded.
//
// # Clusters
//
// Without a raft address the node is alone (an in-memory transport) and bootstraps itself on
// first start. With one, the peers (id, raft address and the gRPC address clients use) are
// given on the command line; a node started with Bootstrap on an empty data directory
// creates the cluster with all of them. Only the leader writes; the others answer a write
// with a *state.NotLeaderError that names the leader's gRPC address.
//
// # Storage faults
//
// Writes to the data directory that fail (a full disk, a read-only file system) are
// reported to the writer as state.ErrUnavailable naming the directory and the cause; raft
// never half-applies an entry, and the bolt log is crash-safe. A log append that fails makes
// the leader step down; raft's own term and vote records are retried until the directory
// can be written again (raft cannot go on without them), meanwhile writes fail.
package durable

package durable

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// Reads: a default read is linearizable. The leader confirms that it still leads (one
// VerifyLeader round to a quorum, shared by every read that arrived before the round began),
// as etcd's ReadIndex does. It needs to wait for nothing else: a leader takes writes only once
// it applied the log of earlier terms (watchLeadership), and acknowledges a write only after
// its own state machine applied it, so its state holds every write acknowledged before the
// read; a write acknowledged by a newer leader would have made the confirmation fail. A
// follower serves no default read (the service sends the caller to the leader), and stale
// reads only once it caught up with the leader after it started.

// verifier batches VerifyLeader rounds: a read joins the next round, which starts once the
// round in flight ended, so that a round always began after each of its readers arrived.
type verifier struct {
	r  *raft.Raft
	mu sync.Mutex
	// next is the round that reads arriving now join; running is set while a goroutine
	// runs rounds.
	next    *verifyRound
	running bool
	// lastOK is when the last round that confirmed the leadership began (unix nanos).
	lastOK int64
}

type verifyRound struct {
	done  chan struct{}
	err   error
	began time.Time
}

// verify joins the next round and waits for it (or ctx).
func (v *verifier) verify(ctx context.Context) error {
	v.mu.Lock()
	if v.next == nil {
		v.next = &verifyRound{done: make(chan struct{})}
	}
	r := v.next
	if !v.running {
		v.running = true
		go v.run()
	}
	v.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run runs rounds while reads wait for one.
func (v *verifier) run() {
	for {
		v.mu.Lock()
		r := v.next
		v.next = nil
		if r == nil {
			v.running = false
			v.mu.Unlock()
			return
		}
		v.mu.Unlock()
		r.began = time.Now()
		r.err = v.r.VerifyLeader().Error()
		if r.err == nil {
			v.mu.Lock()
			v.lastOK = r.began.UnixNano()
			v.mu.Unlock()
		}
		close(r.done)
	}
}

// lastConfirmed returns when the last successful round began (zero if none).
func (v *verifier) lastConfirmed() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.lastOK == 0 {
		return time.Time{}
	}
	return time.Unix(0, v.lastOK)
}

// LinearizableRead returns nil once this node may answer a read with state that includes every
// write acknowledged before the call: it leads, caught up with the log when it was elected,
// and a quorum confirmed its leadership after the call began. Otherwise it returns the error
// CheckLeader gives (a *state.NotLeaderError naming the leader, or an error wrapping
// state.ErrUnavailable), or ctx's error.
func (n *Node) LinearizableRead(ctx context.Context) error {
	if err := n.CheckLeader(); err != nil {
		return err
	}
	if err := n.verifier.verify(ctx); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if cerr := n.CheckLeader(); cerr != nil {
			return cerr
		}
		return unavailable("could not confirm the leadership with a quorum (%v); retry", err)
	}
	return nil
}

// Staleness bounds how far this node's state may be behind the cluster's: 0 for a leader
// whose leadership a quorum confirmed within the last heartbeat timeout, else the time since
// it last knew itself current (its last confirmation as leader, or its last contact with a
// leader as a follower). ok is false until the node caught up with the cluster once since it
// started (a leader that applied the log of earlier terms, a follower that applied what its
// leader had committed): before that its state may be partly restored, and it must serve no
// read at all. A node that lost its leader keeps its state, growing staler.
func (n *Node) Staleness() (d time.Duration, ok bool) {
	if !n.everCaughtUp.Load() {
		return 0, false
	}
	now := time.Now()
	last := n.verifier.lastConfirmed()
	if n.raft.State() == raft.Leader && n.caughtUp.Load() && !last.IsZero() && now.Sub(last) <= n.opts.ElectionTimeout {
		return 0, true
	}
	if c := n.raft.LastContact(); c.After(last) {
		last = c
	}
	if last.IsZero() {
		return now.Sub(n.started), true
	}
	return now.Sub(last), true
}

// ConfirmLeadership runs a VerifyLeader round (shared with concurrent reads) so that
// Staleness can answer 0 on a leader; it returns the round's error.
func (n *Node) ConfirmLeadership(ctx context.Context) error {
	if err := n.CheckLeader(); err != nil {
		return err
	}
	return n.verifier.verify(ctx)
}

// watchCatchUp marks a follower ready once it has applied the log up to the commit index the
// leader told it after this node started; a follower that loses its leader for longer than
// two election timeouts must catch up again.
func (n *Node) watchCatchUp(started time.Time) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	var target uint64
	for {
		select {
		case <-n.closing:
			return
		case <-tick.C:
		}
		if n.raft.State() != raft.Follower {
			n.followerReady.Store(false)
			target = 0
			continue
		}
		last := n.raft.LastContact()
		if last.IsZero() || last.Before(started) || time.Since(last) > 2*n.opts.ElectionTimeout {
			n.followerReady.Store(false)
			target = 0
			started = time.Now()
			continue
		}
		if target == 0 {
			// The leader's commit index, as its first message after the start told it.
			target = max(n.raft.CommitIndex(), 1)
		}
		if n.applied(target) {
			n.followerReady.Store(true)
			n.everCaughtUp.Store(true)
		}
	}
}

// applied reports whether the state machine applied every command up to index. raft's
// AppliedIndex counts entries handed to the state machine, which may still be applying them,
// and entries that are no commands never reach it: so once raft handed everything up to index
// over, the log between the state machine's last command and index must hold no command.
func (n *Node) applied(index uint64) bool {
	last := n.fsm.applied.Load()
	if last >= index {
		return true
	}
	if n.raft.AppliedIndex() < index {
		return false
	}
	// Entries before the log's first were compacted into a snapshot, which the state machine
	// restored whole.
	first, err := n.logs.FirstIndex()
	if err != nil {
		return false
	}
	var entry raft.Log
	for i := max(last+1, first); i <= index; i++ {
		if err := n.logs.GetLog(i, &entry); err != nil || entry.Type == raft.LogCommand {
			return false
		}
	}
	return true
}

// NodeID returns this member's id.
func (n *Node) NodeID() string { return n.opts.NodeID }

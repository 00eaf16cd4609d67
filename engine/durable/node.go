package durable

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"go.etcd.io/bbolt"

	"github.com/sluice-sched/sluice/engine/state"
)

// Options configure a Node.
type Options struct {
	// DataDir holds the log (raft.db) and the snapshots (snapshots/). Required; created if
	// missing.
	DataDir string
	// NodeID identifies this node in its cluster; default "sluiced" when alone. Required with
	// RaftAddr.
	NodeID string
	// RaftAddr is the host:port the raft transport (hashicorp's TCP transport, or with TLS
	// its network transport over a TLS stream layer) listens on.
	// Empty: the node is alone, with no network transport.
	RaftAddr string
	// RaftAdvertise is the raft address the other members reach this one at; default
	// RaftAddr.
	RaftAdvertise string
	// Peers are the cluster's members, this one included; required with RaftAddr.
	Peers []Peer
	// Bootstrap creates the cluster from Peers when the data directory holds no state yet.
	// A node alone always bootstraps itself.
	Bootstrap bool
	// TLS, when set, makes the raft transport mutual TLS (see RaftTLS); without it raft's
	// traffic is plaintext and unauthenticated.
	TLS RaftTLS
	// FaultInjection lets tests cut this member's raft traffic to chosen peers
	// (Node.Partition). Never in production: every connection the member dials then starts
	// with a short header naming it (see faults.go), which members without fault injection
	// tolerate.
	FaultInjection bool

	// SnapshotThreshold is how many log entries since the last snapshot trigger the next
	// one (default 8192); SnapshotInterval how often that is checked (default 5s; raft waits one to two intervals).
	SnapshotThreshold uint64
	SnapshotInterval  time.Duration
	// TrailingLogs is how many entries a snapshot leaves in the log, for followers that lag
	// (default 10240).
	TrailingLogs uint64
	// SnapshotRetain is how many snapshots are kept (default 2).
	SnapshotRetain int
	// ElectionTimeout is raft's heartbeat and election timeout (default 1s; 100ms alone).
	ElectionTimeout time.Duration
	// ApplyTimeout bounds how long a write waits for the log (default 30s).
	ApplyTimeout time.Duration

	// Logger receives the node's own logs; RaftLogOutput raft's (JSON lines, default
	// discarded) at RaftLogLevel (default info).
	Logger        *slog.Logger
	RaftLogOutput io.Writer
	RaftLogLevel  slog.Level

	// wrapLogs, in tests, wraps the bolt log store (to inject faults).
	wrapLogs func(raft.LogStore) raft.LogStore
}

// Node runs the raft log whose state machine is a state.Store, and is the store's
// state.Replicator.
type Node struct {
	opts  Options
	store *state.Store
	raft  *raft.Raft
	bolt  *raftboltdb.BoltStore
	logs  raft.LogStore
	fsm   *fsm
	guard *guard
	log   *slog.Logger
	// faults cuts raft connections, with Options.FaultInjection; nil otherwise.
	faults *faultLayer
	// clientAddrs maps node ids to gRPC addresses.
	clientAddrs map[string]string

	caughtUp atomic.Bool
	// followerReady is set while this node follows a leader and caught up with it;
	// everCaughtUp once it caught up (as leader or follower) since it started.
	followerReady atomic.Bool
	everCaughtUp  atomic.Bool
	started       time.Time
	verifier      *verifier
	closing       chan struct{}
	closeOnce     sync.Once
	closeErr      error
	watchDone     chan struct{}
}

// Open opens (or creates) the data directory, restores the store from it, starts raft and
// makes the node the store's Replicator. The store must be new and unwritten.
func Open(store *state.Store, opts Options) (*Node, error) {
	if err := opts.defaults(); err != nil {
		return nil, err
	}
	if err := prepareDir(opts.DataDir); err != nil {
		return nil, err
	}
	n := &Node{
		opts:        opts,
		store:       store,
		log:         opts.Logger,
		guard:       &guard{dir: opts.DataDir, retry: 500 * time.Millisecond},
		clientAddrs: map[string]string{},
		closing:     make(chan struct{}),
		watchDone:   make(chan struct{}),
	}
	for _, p := range opts.Peers {
		n.clientAddrs[p.ID] = p.ClientAddr
	}
	n.fsm = &fsm{store: store, log: n.log}
	hlog := hclog.New(&hclog.LoggerOptions{
		Name:       "raft",
		Output:     opts.RaftLogOutput,
		JSONFormat: true,
		Level:      hclogLevel(opts.RaftLogLevel),
	})

	path := filepath.Join(opts.DataDir, "raft.db")
	bolt, err := raftboltdb.New(raftboltdb.Options{Path: path, BoltOptions: &bbolt.Options{Timeout: time.Second}})
	if err != nil {
		if errors.Is(err, bbolt.ErrTimeout) {
			return nil, fmt.Errorf("durable: the data directory %s is in use by another process (%s is locked)", opts.DataDir, path)
		}
		return nil, fmt.Errorf("durable: opening the log %s: %w", path, err)
	}
	n.bolt = bolt
	ok := false
	defer func() {
		if !ok {
			bolt.Close()
		}
	}()
	var logs raft.LogStore = bolt
	if opts.wrapLogs != nil {
		logs = opts.wrapLogs(logs)
	}
	cache, err := raft.NewLogCache(512, guardedLogs{LogStore: logs, g: n.guard})
	if err != nil {
		return nil, fmt.Errorf("durable: %w", err)
	}
	n.logs = guardedLogs{LogStore: cache, g: n.guard, outer: true}
	stable := guardedStable{StableStore: bolt, g: n.guard}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(opts.DataDir, opts.SnapshotRetain, hlog)
	if err != nil {
		return nil, fmt.Errorf("durable: snapshot store in %s: %w", opts.DataDir, err)
	}

	cfg := raft.DefaultConfig()
	cfg.LocalID = raft.ServerID(opts.NodeID)
	cfg.Logger = hlog
	cfg.SnapshotThreshold = opts.SnapshotThreshold
	cfg.SnapshotInterval = opts.SnapshotInterval
	cfg.TrailingLogs = opts.TrailingLogs
	cfg.HeartbeatTimeout = opts.ElectionTimeout
	cfg.ElectionTimeout = opts.ElectionTimeout
	cfg.LeaderLeaseTimeout = min(opts.ElectionTimeout, cfg.LeaderLeaseTimeout)

	var trans raft.Transport
	var self raft.ServerAddress
	if opts.RaftAddr == "" {
		self, trans = raft.NewInmemTransport(raft.ServerAddress(opts.NodeID))
	} else {
		adv, err := net.ResolveTCPAddr("tcp", opts.RaftAdvertise)
		if err != nil {
			return nil, fmt.Errorf("durable: raft advertise address: %w", err)
		}
		var tcp *raft.NetworkTransport
		switch {
		case opts.FaultInjection:
			tcp, n.faults, err = newFaultTransport(opts.RaftAddr, adv, opts.RaftAdvertise, opts.TLS, hlog, n.log)
		case opts.TLS != nil:
			tcp, err = newTLSTransport(opts.RaftAddr, adv, opts.TLS, hlog)
		default:
			tcp, err = raft.NewTCPTransportWithLogger(opts.RaftAddr, adv, 3, 10*time.Second, hlog)
		}
		if err != nil {
			return nil, fmt.Errorf("durable: raft transport on %s: %w", opts.RaftAddr, err)
		}
		self, trans = tcp.LocalAddr(), tcp
	}
	closeTrans := func() {
		if c, ok := trans.(raft.WithClose); ok {
			_ = c.Close()
		}
	}

	has, err := raft.HasExistingState(n.logs, stable, snaps)
	if err != nil {
		closeTrans()
		return nil, fmt.Errorf("durable: reading %s: %w", opts.DataDir, err)
	}
	if !has {
		var servers []raft.Server
		switch {
		case opts.RaftAddr == "":
			servers = []raft.Server{{Suffrage: raft.Voter, ID: cfg.LocalID, Address: self}}
		case opts.Bootstrap:
			for _, p := range opts.Peers {
				servers = append(servers, raft.Server{Suffrage: raft.Voter, ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.RaftAddr)})
			}
		}
		if servers != nil {
			if err := raft.BootstrapCluster(cfg, n.logs, stable, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
				closeTrans()
				return nil, fmt.Errorf("durable: bootstrapping the cluster: %w", err)
			}
			n.log.Info("raft cluster bootstrapped", "data_dir", opts.DataDir, "members", len(servers))
		} else {
			n.log.Info("empty data directory: waiting for the cluster's leader to contact this node", "data_dir", opts.DataDir, "node_id", opts.NodeID)
		}
	}

	start := time.Now()
	r, err := raft.NewRaft(cfg, n.fsm, n.logs, stable, snaps, trans)
	if err != nil {
		closeTrans()
		return nil, fmt.Errorf("durable: starting raft: %w", err)
	}
	n.raft = r
	n.started = start
	n.verifier = &verifier{r: r}
	ok = true
	store.SetReplicator(n)
	go n.watchLeadership()
	go n.watchCatchUp(start)
	n.log.Info("raft started", "node_id", opts.NodeID, "data_dir", opts.DataDir, "raft_addr", string(self),
		"restored_index", n.fsm.applied.Load(), "restore_duration", time.Since(start).String())
	return n, nil
}

func (o *Options) defaults() error {
	if o.DataDir == "" {
		return errors.New("durable: a data directory is required")
	}
	if o.RaftAddr == "" {
		if o.NodeID == "" {
			o.NodeID = "sluiced"
		}
		if len(o.Peers) > 0 {
			return errors.New("durable: peers need a raft address")
		}
		if o.ElectionTimeout <= 0 {
			o.ElectionTimeout = 100 * time.Millisecond
		}
	} else {
		if o.NodeID == "" {
			return errors.New("durable: a node id is required with a raft address")
		}
		if o.RaftAdvertise == "" {
			o.RaftAdvertise = o.RaftAddr
		}
		if len(o.Peers) == 0 {
			o.Peers = []Peer{{ID: o.NodeID, RaftAddr: o.RaftAdvertise}}
		}
		found := false
		for _, p := range o.Peers {
			if p.ID == o.NodeID {
				found = true
				if p.RaftAddr != o.RaftAdvertise {
					return fmt.Errorf("durable: peer %s has raft address %s, but this node advertises %s", p.ID, p.RaftAddr, o.RaftAdvertise)
				}
			}
		}
		if !found {
			return fmt.Errorf("durable: this node (%s) is not among the peers %s", o.NodeID, FormatPeers(o.Peers))
		}
		if o.ElectionTimeout <= 0 {
			o.ElectionTimeout = time.Second
		}
	}
	if o.SnapshotThreshold == 0 {
		o.SnapshotThreshold = 8192
	}
	if o.SnapshotInterval <= 0 {
		o.SnapshotInterval = 5 * time.Second
	}
	if o.TrailingLogs == 0 {
		o.TrailingLogs = 10240
	}
	if o.SnapshotRetain <= 0 {
		o.SnapshotRetain = 2
	}
	if o.ApplyTimeout <= 0 {
		o.ApplyTimeout = 30 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.RaftLogOutput == nil {
		o.RaftLogOutput = io.Discard
	}
	return nil
}

// prepareDir creates the data directory if needed and checks that it is a directory.
func prepareDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("durable: creating the data directory: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("durable: the data directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("durable: the data directory %s is not a directory", dir)
	}
	return nil
}

func hclogLevel(l slog.Level) hclog.Level {
	switch {
	case l <= slog.LevelDebug:
		return hclog.Debug
	case l <= slog.LevelInfo:
		return hclog.Info
	case l <= slog.LevelWarn:
		return hclog.Warn
	}
	return hclog.Error
}

// watchLeadership follows this node's leadership: a new leader first applies every entry of
// earlier terms (raft.Barrier), so that what it checks writes against, and the revisions it
// tells clients, include everything committed, then lets the store take the lead
// (state.Store.TakeLead); until then it refuses writes.
func (n *Node) watchLeadership() {
	defer close(n.watchDone)
	ch := n.raft.LeaderCh()
	for {
		select {
		case <-n.closing:
			return
		case leader := <-ch:
			n.caughtUp.Store(false)
			if !leader {
				n.log.Info("raft: no longer the leader", "node_id", n.opts.NodeID)
				continue
			}
			start := time.Now()
			if err := n.raft.Barrier(0).Error(); err != nil {
				n.log.Warn("raft: elected, but could not catch up on the log", "error", err.Error())
				continue
			}
			// The store gets its id from the first leader, and drops the resyncs of the
			// previous leader's writers, before this node takes writes.
			if err := n.store.TakeLead(); err != nil {
				n.log.Warn("raft: elected, but could not prepare the store", "error", err.Error())
				continue
			}
			if n.raft.State() == raft.Leader {
				n.caughtUp.Store(true)
				n.everCaughtUp.Store(true)
				n.log.Info("raft: leader", "node_id", n.opts.NodeID, "term", n.raft.CurrentTerm(),
					"applied_index", n.raft.AppliedIndex(), "catch_up", time.Since(start).String())
			}
		}
	}
}

// unavailable returns an error wrapping state.ErrUnavailable.
func unavailable(format string, args ...any) error {
	return fmt.Errorf("%w: %s", state.ErrUnavailable, fmt.Sprintf(format, args...))
}

// CheckLeader implements state.Replicator: nil on a leader that caught up.
func (n *Node) CheckLeader() error {
	select {
	case <-n.closing:
		return unavailable("shutting down")
	default:
	}
	if n.raft.State() == raft.Leader {
		if n.caughtUp.Load() {
			return nil
		}
		return unavailable("this node was just elected leader and is still applying the log; retry shortly")
	}
	_, id := n.raft.LeaderWithID()
	if id == "" {
		msg := "no leader is elected yet; retry shortly"
		if se, at := n.guard.failure(); se != nil {
			msg += fmt.Sprintf(" (the last write to the data directory, %s ago, failed: %v)", time.Since(at).Round(time.Millisecond), se)
		}
		return unavailable("%s", msg)
	}
	return &state.NotLeaderError{LeaderID: string(id), Leader: n.clientAddrs[string(id)]}
}

// Replicate implements state.Replicator: it appends op to the log and waits until this node
// applied it.
func (n *Node) Replicate(op *state.Op) (*state.OpResult, error) {
	data, err := state.MarshalOp(op)
	if err != nil {
		return nil, err
	}
	f := n.raft.Apply(data, n.opts.ApplyTimeout)
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	timer := time.NewTimer(n.opts.ApplyTimeout)
	defer timer.Stop()
	select {
	case err := <-done:
		if err != nil {
			return nil, n.writeError(err)
		}
	case <-timer.C:
		return nil, unavailable("the log did not take the write within %s; it may still apply", n.opts.ApplyTimeout)
	}
	switch r := f.Response().(type) {
	case *state.OpResult:
		return r, nil
	case error:
		return nil, r
	}
	return nil, fmt.Errorf("durable: unexpected state machine response %T", f.Response())
}

// writeError maps raft's error for a write.
func (n *Node) writeError(err error) error {
	var se *StorageError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%w: %v; the write was not applied", state.ErrUnavailable, se)
	case errors.Is(err, raft.ErrNotLeader), errors.Is(err, raft.ErrLeadershipTransferInProgress):
		if cerr := n.CheckLeader(); cerr != nil {
			return cerr
		}
		return unavailable("%v; retry", err)
	case errors.Is(err, raft.ErrLeadershipLost):
		return unavailable("leadership was lost while the write was being committed: it may or may not apply; retry (a batch applies whole or not at all)")
	case errors.Is(err, raft.ErrRaftShutdown):
		return unavailable("shutting down")
	}
	return unavailable("%v", err)
}

// Status is a node's view of its cluster.
type Status struct {
	NodeID string `json:"node_id"`
	// State is Leader, Follower, Candidate or Shutdown.
	State string `json:"state"`
	// Ready: a leader that caught up, or a follower that follows a leader and applied the
	// log up to the commit index the leader told it after this node started.
	Ready      bool   `json:"ready"`
	LeaderID   string `json:"leader_id"`
	LeaderAddr string `json:"leader_addr"`
	Term       uint64 `json:"term"`
	// FirstIndex and LastIndex bound the log kept; SnapshotIndex is the last snapshot's.
	FirstIndex    uint64 `json:"first_index"`
	LastIndex     uint64 `json:"last_index"`
	CommitIndex   uint64 `json:"commit_index"`
	AppliedIndex  uint64 `json:"applied_index"`
	SnapshotIndex uint64 `json:"snapshot_index"`
	// StorageError is the last failed write to the data directory, if none succeeded since.
	StorageError string `json:"storage_error,omitempty"`
}

// Status returns the node's status.
func (n *Node) Status() Status {
	st := n.raft.Stats()
	num := func(k string) uint64 { v, _ := strconv.ParseUint(st[k], 10, 64); return v }
	_, id := n.raft.LeaderWithID()
	s := Status{
		NodeID:        n.opts.NodeID,
		State:         n.raft.State().String(),
		LeaderID:      string(id),
		LeaderAddr:    n.clientAddrs[string(id)],
		Term:          num("term"),
		LastIndex:     num("last_log_index"),
		CommitIndex:   num("commit_index"),
		AppliedIndex:  num("applied_index"),
		SnapshotIndex: num("last_snapshot_index"),
	}
	s.FirstIndex, _ = n.logs.FirstIndex()
	if n.raft.State() == raft.Leader {
		s.Ready = n.caughtUp.Load()
	} else {
		s.Ready = id != "" && n.followerReady.Load()
	}
	if se, _ := n.guard.failure(); se != nil {
		s.StorageError = se.Error()
	}
	return s
}

// IsLeader reports whether this node leads and caught up.
func (n *Node) IsLeader() bool { return n.CheckLeader() == nil }

// Snapshot takes a snapshot now (and compacts the log), for tests and operators.
func (n *Node) Snapshot() error { return n.raft.Snapshot().Error() }

// Close stops the node: a leader of a cluster first hands leadership to another member
// (so that writes move on at once), then raft stops and the log is closed. It waits at
// most timeout for raft (a node blocked on its disk does not stop).
func (n *Node) Close(timeout time.Duration) error {
	n.closeOnce.Do(func() {
		if n.raft.State() == raft.Leader && len(n.opts.Peers) > 1 {
			if err := waitFuture(n.raft.LeadershipTransfer(), timeout/2); err != nil {
				n.log.Warn("raft: leadership transfer failed", "error", err.Error())
			} else {
				n.log.Info("raft: leadership transferred")
			}
		}
		close(n.closing)
		if err := waitFuture(n.raft.Shutdown(), timeout); err != nil {
			n.closeErr = fmt.Errorf("durable: stopping raft: %w", err)
			return
		}
		<-n.watchDone
		if err := n.bolt.Close(); err != nil {
			n.closeErr = fmt.Errorf("durable: closing the log: %w", err)
		}
	})
	return n.closeErr
}

// waitFuture waits for a raft future at most timeout.
func waitFuture(f raft.Future, timeout time.Duration) error {
	done := make(chan error, 1)
	go func() { done <- f.Error() }()
	select {
	case err := <-done:
		return err
	case <-time.After(timeout):
		return fmt.Errorf("timed out after %s", timeout)
	}
}

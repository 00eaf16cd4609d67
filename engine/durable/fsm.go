package durable

import (
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/hashicorp/raft"

	"github.com/sluice-sched/sluice/engine/state"
)

// fsm is the raft state machine: the store. raft calls Apply, Snapshot and Restore from one
// goroutine; Persist runs on another, reading a memdb snapshot that later writes never touch.
type fsm struct {
	store *state.Store
	log   *slog.Logger
	// applied is the index of the last entry applied.
	applied atomic.Uint64
}

// Apply decodes an op and applies it. Its result goes back to the raft.Apply caller on this
// node: a *state.OpResult, or an error for an entry that does not decode (which every replica
// skips alike).
func (f *fsm) Apply(l *raft.Log) any {
	defer f.applied.Store(l.Index)
	if l.Type != raft.LogCommand {
		return nil
	}
	op, err := state.UnmarshalOp(l.Data)
	if err != nil {
		f.log.Error("skipping a log entry that does not decode", "index", l.Index, "error", err.Error())
		return err
	}
	return f.store.ApplyOp(op)
}

// Snapshot takes a point-in-time image of the store; it costs nothing.
func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	return &fsmSnapshot{dump: f.store.Dump()}, nil
}

// Restore replaces the store with a snapshot.
func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.store.Restore(rc)
}

type fsmSnapshot struct {
	dump *state.Dump
}

// Persist writes the image to the snapshot store.
func (s *fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.dump.WriteTo(sink); err != nil {
		_ = sink.Cancel()
		return err
	}
	return sink.Close()
}

// Release implements raft.FSMSnapshot; the image needs no cleanup.
func (s *fsmSnapshot) Release() {}

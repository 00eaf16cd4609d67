package durable

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// StorageError is a write to the data directory that failed.
type StorageError struct {
	// Dir is the data directory.
	Dir string
	// Op says what was written: "appending to the log", "recording the term", ...
	Op  string
	Err error
}

// Error implements error.
func (e *StorageError) Error() string {
	return fmt.Sprintf("the data directory %s cannot be written (%s): %v", e.Dir, e.Op, e.Err)
}

// Unwrap returns the cause.
func (e *StorageError) Unwrap() error { return e.Err }

// guard remembers the last failed write to the data directory, until one succeeds.
type guard struct {
	dir string

	mu   sync.Mutex
	last *StorageError
	at   time.Time
	// retry spaces the retries of stable-store writes.
	retry time.Duration
}

// check records the outcome of a write and returns err as a *StorageError.
func (g *guard) check(op string, err error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		g.last = nil
		return nil
	}
	var se *StorageError
	if !errors.As(err, &se) {
		se = &StorageError{Dir: g.dir, Op: op, Err: err}
	}
	g.last, g.at = se, time.Now()
	return se
}

// failure returns the last failed write, if none succeeded since, and when it happened.
func (g *guard) failure() (*StorageError, time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.last, g.at
}

// guardedLogs reports the failures of the log store to the guard. It wraps the bolt store
// and, again, the cache over it (raft.LogCache rewrites errors as text): the outer one hands
// raft the *StorageError the inner one recorded.
type guardedLogs struct {
	raft.LogStore
	g     *guard
	outer bool
}

func (s guardedLogs) StoreLog(l *raft.Log) error {
	return s.check("appending to the log", s.LogStore.StoreLog(l))
}

func (s guardedLogs) StoreLogs(ls []*raft.Log) error {
	return s.check("appending to the log", s.LogStore.StoreLogs(ls))
}

func (s guardedLogs) DeleteRange(lo, hi uint64) error {
	return s.check("compacting the log", s.LogStore.DeleteRange(lo, hi))
}

func (s guardedLogs) check(op string, err error) error {
	if err != nil && s.outer {
		if se, _ := s.g.failure(); se != nil {
			return se
		}
	}
	return s.g.check(op, err)
}

// guardedStable reports the failures of the stable store (raft's current term and vote) to
// the guard, and retries them until they succeed: raft panics when it cannot record its term,
// and a node that waits for its disk is better than one that crashes. Meanwhile the node
// takes no part in elections, which is what a node that cannot persist its vote must do.
type guardedStable struct {
	raft.StableStore
	g *guard
}

func (s guardedStable) Set(k, v []byte) error {
	return s.retry("recording the term and vote", func() error { return s.StableStore.Set(k, v) })
}

func (s guardedStable) SetUint64(k []byte, v uint64) error {
	return s.retry("recording the term and vote", func() error { return s.StableStore.SetUint64(k, v) })
}

func (s guardedStable) retry(op string, write func() error) error {
	for {
		if err := s.g.check(op, write()); err == nil {
			return nil
		}
		time.Sleep(s.g.retry)
	}
}

// Package keylock holds one lock per key, kept only while someone holds it or waits for it,
// so that locking by a name a caller chose (a cluster's) leaves nothing behind.
package keylock

import (
	"context"
	"sync"
)

// Map is a set of locks by key. The zero value is ready to use; a Map must not be copied.
type Map struct {
	mu    sync.Mutex
	locks map[string]*entry
}

// entry is one key's lock: a one-slot semaphore, and how many hold it or wait for it.
type entry struct {
	sem  chan struct{}
	refs int
}

// Lock locks key and returns the function that unlocks it.
func (m *Map) Lock(key string) (unlock func()) {
	e := m.acquire(key)
	e.sem <- struct{}{}
	return func() { m.release(key, e, true) }
}

// LockContext locks key, or fails with ctx's error when ctx ends first. It returns the
// function that unlocks it.
func (m *Map) LockContext(ctx context.Context, key string) (unlock func(), err error) {
	e := m.acquire(key)
	select {
	case e.sem <- struct{}{}:
		return func() { m.release(key, e, true) }, nil
	case <-ctx.Done():
		m.release(key, e, false)
		return nil, ctx.Err()
	}
}

// Len returns how many keys have a lock now: those held or waited for.
func (m *Map) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.locks)
}

func (m *Map) acquire(key string) *entry {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks == nil {
		m.locks = map[string]*entry{}
	}
	e, ok := m.locks[key]
	if !ok {
		e = &entry{sem: make(chan struct{}, 1)}
		m.locks[key] = e
	}
	e.refs++
	return e
}

// release gives up a reference to key's lock (unlocking it when held), and forgets the lock
// once nobody holds or waits for it.
func (m *Map) release(key string, e *entry, held bool) {
	if held {
		<-e.sem
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if e.refs--; e.refs == 0 {
		delete(m.locks, key)
	}
}

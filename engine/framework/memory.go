package framework

import (
	"maps"
	"sync"
	"time"
)

// Memory is what plugins remember about one cluster between cycles, such as when a periodic
// strategy last ran. The engine keeps one per cluster; it is safe for concurrent use.
type Memory struct {
	mu   sync.Mutex
	runs map[string]time.Time
}

// NewMemory returns an empty memory.
func NewMemory() *Memory { return &Memory{runs: map[string]time.Time{}} }

// Clone returns an independent copy (a dry run works on one, so it leaves no trace).
func (m *Memory) Clone() *Memory {
	m.mu.Lock()
	defer m.mu.Unlock()
	return &Memory{runs: maps.Clone(m.runs)}
}

// LastRun returns when the keyed activity last ran in this cluster.
func (s *Session) LastRun(key string) (time.Time, bool) {
	m := s.memory
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.runs[key]
	return t, ok
}

// SetLastRun records that the keyed activity ran at the given time.
func (s *Session) SetLastRun(key string, at time.Time) {
	m := s.memory
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[key] = at
}

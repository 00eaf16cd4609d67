package sim

import (
	"container/heap"
	"time"
)

// Event kinds, in the order they are handled at one instant.
const (
	evRelease = iota
	evComplete
)

// event is a release (ref names the task, gen its placement) or a completion (ref names the
// job, gen its start).
type event struct {
	at   time.Duration
	kind int
	ref  taskRef
	gen  int
	seq  int
}

// push schedules an event.
func (s *runState) push(e event) {
	s.seq++
	e.seq = s.seq
	heap.Push(&s.events, e)
}

// eventHeap orders events by time, kind, then the order they were pushed, so that an
// instant's events are handled in a deterministic order.
type eventHeap []event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	if h[i].kind != h[j].kind {
		return h[i].kind < h[j].kind
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }

// Push implements heap.Interface.
func (h *eventHeap) Push(x any) { *h = append(*h, x.(event)) }

// Pop implements heap.Interface.
func (h *eventHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// popAt handles every event at time t.
func (h *eventHeap) popAt(t time.Duration, s *runState) {
	for len(*h) > 0 && (*h)[0].at == t {
		e := heap.Pop(h).(event)
		switch e.kind {
		case evRelease:
			s.release(e.ref, e.gen)
		case evComplete:
			if e.ref.job.gen == e.gen && e.ref.job.active {
				s.complete(e.ref.job)
			}
		}
	}
}

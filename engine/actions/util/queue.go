package util

import (
	"container/heap"
	"slices"
)

// PriorityQueue pops the item that less puts first. With a total order (the session's order
// functions fall back to names) the pop order is deterministic.
type PriorityQueue[T any] struct {
	h pqHeap[T]
}

// NewPriorityQueue returns an empty queue ordered by less.
func NewPriorityQueue[T any](less func(a, b T) bool) *PriorityQueue[T] {
	return &PriorityQueue[T]{h: pqHeap[T]{less: less}}
}

// Push adds an item.
func (q *PriorityQueue[T]) Push(v T) { heap.Push(&q.h, v) }

// Grow makes room for n more items, so that pushing them allocates nothing.
func (q *PriorityQueue[T]) Grow(n int) { q.h.items = slices.Grow(q.h.items, n) }

// Pop removes and returns the first item; it panics on an empty queue.
func (q *PriorityQueue[T]) Pop() T { return heap.Pop(&q.h).(T) }

// Empty reports whether the queue has no item.
func (q *PriorityQueue[T]) Empty() bool { return len(q.h.items) == 0 }

// Clone returns an independent queue with the same items and order.
func (q *PriorityQueue[T]) Clone() *PriorityQueue[T] {
	return &PriorityQueue[T]{h: pqHeap[T]{items: append([]T(nil), q.h.items...), less: q.h.less}}
}

// Len returns the number of items.
func (q *PriorityQueue[T]) Len() int { return len(q.h.items) }

type pqHeap[T any] struct {
	items []T
	less  func(a, b T) bool
}

func (h pqHeap[T]) Len() int           { return len(h.items) }
func (h pqHeap[T]) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h pqHeap[T]) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *pqHeap[T]) Push(x any)        { h.items = append(h.items, x.(T)) }
func (h *pqHeap[T]) Pop() any {
	n := len(h.items)
	v := h.items[n-1]
	var zero T
	h.items[n-1] = zero
	h.items = h.items[:n-1]
	return v
}

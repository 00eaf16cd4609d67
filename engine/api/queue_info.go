package api

// QueueInfo is a session's view of one queue.
type QueueInfo struct {
	// UID and Name are the queue's name.
	UID, Name string
	// Parent is the parent queue's name ("" for a child of root).
	Parent   string
	Weight   int32
	Priority int32
	// Queue is the immutable queue as streamed in.
	Queue *Queue
}

// NewQueueInfo builds the session view of a queue.
func NewQueueInfo(q *Queue) *QueueInfo {
	w := q.Weight
	if w <= 0 {
		w = 1
	}
	return &QueueInfo{UID: q.Name, Name: q.Name, Parent: q.Parent, Weight: w, Priority: q.Priority, Queue: q}
}

// Reclaimable reports whether other queues may reclaim from this one.
func (q *QueueInfo) Reclaimable() bool { return q.Queue.Reclaimable }

// IsOpen reports whether the queue accepts new work.
func (q *QueueInfo) IsOpen() bool { return q.Queue.State == "" || q.Queue.State == QueueOpen }

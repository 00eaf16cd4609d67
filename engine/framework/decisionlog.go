package framework

// decisionLog collects a session's committed decisions in chunks that never move: appending
// to one slice re-allocates and copies it every time it fills (growth by a quarter once it
// is large, so 10,000 binds allocate about four times their size), while chunks allocate
// each decision once and the plan's slice once, at its exact length.
type decisionLog struct {
	chunks [][]Decision
	n      int
}

// firstChunk and maxChunk bound a chunk's capacity: a small cycle allocates little, a large
// one a chunk per maxChunk decisions.
const (
	firstChunk = 64
	maxChunk   = 2048
)

// add appends a decision.
func (l *decisionLog) add(d Decision) {
	last := len(l.chunks) - 1
	if last < 0 || len(l.chunks[last]) == cap(l.chunks[last]) {
		size := firstChunk
		if last >= 0 {
			size = min(2*cap(l.chunks[last]), maxChunk)
		}
		l.chunks = append(l.chunks, make([]Decision, 0, size))
		last++
	}
	l.chunks[last] = append(l.chunks[last], d)
	l.n++
}

// take returns the decisions in order, in one slice with room for extra more, and empties
// the log.
func (l *decisionLog) take(extra int) []Decision {
	if l.n == 0 && extra == 0 {
		l.chunks = nil
		return nil
	}
	out := make([]Decision, 0, l.n+extra)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	l.chunks, l.n = nil, 0
	return out
}

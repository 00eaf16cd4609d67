package framework

// decisionLog collects a session's committed decisions in chunks that never move: appending
// to one slice re-allocates and copies it every time it fills (growth by a quarter once it
// is large, so 10,000 binds allocate about four times their size), while chunks allocate
// each decision once and the plan's slice once, at its exact length.
type decisionLog struct {
	chunks [][]Decision
	n      int
	// expected, when set, is the first chunk's capacity (see expect).
	expected int
}

// expect tells the log how many decisions the session expects to make (its pending tasks,
// when it built its views), so that a cycle placing them all fills one chunk, which take then
// hands over without copying: at 500,000 binds, chunks and their copy would hold twice the
// decisions' 64 MB at Close. Where few of many pending tasks fit, the chunk is mostly empty
// until Close copies the decisions out of it; it costs 128 bytes per pending task, less
// than the task's own views (its TaskInfo is 192).
func (l *decisionLog) expect(n int) { l.expected = n }

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
		size := max(firstChunk, l.expected)
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
	if c := l.chunks; len(c) == 1 && extra == 0 && 2*len(c[0]) >= cap(c[0]) {
		// One chunk, at least half used: it is the plan's slice as it is.
		l.chunks, l.n = nil, 0
		return c[0]
	}
	out := make([]Decision, 0, l.n+extra)
	for _, c := range l.chunks {
		out = append(out, c...)
	}
	l.chunks, l.n = nil, 0
	return out
}

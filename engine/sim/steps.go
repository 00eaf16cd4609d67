package sim

// record appends a step when the state changed since the last one.
func (s *runState) record() {
	st := Step{At: s.now, Allocated: cloneMatrix(s.alloc), Deserved: cloneMatrix(s.deserved),
		Share: append([]float64(nil), s.share...), Pending: append([]int(nil), s.pending...),
		Running: append([]int(nil), s.runn...)}
	steps := s.res.Steps
	if n := len(steps); n > 0 && steps[n-1].At == st.At {
		steps[n-1] = st
		return
	} else if n > 0 && steps[n-1].equal(&st) {
		return
	}
	s.res.Steps = append(steps, st)
}

func (a *Step) equal(b *Step) bool {
	return equalMatrix(a.Allocated, b.Allocated) && equalMatrix(a.Deserved, b.Deserved) &&
		equalSlice(a.Share, b.Share) && equalSlice(a.Pending, b.Pending) && equalSlice(a.Running, b.Running)
}

func equalSlice[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalMatrix(a, b [][]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalSlice(a[i], b[i]) {
			return false
		}
	}
	return true
}

func cloneMatrix(m [][]int64) [][]int64 {
	out := make([][]int64, len(m))
	for i, r := range m {
		out[i] = append([]int64(nil), r...)
	}
	return out
}

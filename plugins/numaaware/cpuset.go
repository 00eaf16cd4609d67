package numaaware

import (
	"math/bits"
	"strconv"
	"strings"
)

// cpuSet is a set of logical CPU ids. Methods never change their receiver: they return new
// sets, so a set can be shared freely.
type cpuSet struct{ words []uint64 }

// newCPUSet returns the set of the given ids.
func newCPUSet(ids ...int) cpuSet {
	var s cpuSet
	for _, id := range ids {
		s = s.with(id)
	}
	return s
}

// with returns s plus id.
func (s cpuSet) with(id int) cpuSet {
	w := id / 64
	out := make([]uint64, max(len(s.words), w+1))
	copy(out, s.words)
	out[w] |= 1 << (id % 64)
	return cpuSet{out}
}

// has reports whether id is in s.
func (s cpuSet) has(id int) bool {
	w := id / 64
	return id >= 0 && w < len(s.words) && s.words[w]&(1<<(id%64)) != 0
}

// size is the number of ids in s.
func (s cpuSet) size() int {
	n := 0
	for _, w := range s.words {
		n += bits.OnesCount64(w)
	}
	return n
}

// empty reports whether s has no id.
func (s cpuSet) empty() bool { return s.size() == 0 }

// union returns s ∪ o.
func (s cpuSet) union(o cpuSet) cpuSet {
	out := make([]uint64, max(len(s.words), len(o.words)))
	copy(out, s.words)
	for i, w := range o.words {
		out[i] |= w
	}
	return cpuSet{out}
}

// intersect returns s ∩ o.
func (s cpuSet) intersect(o cpuSet) cpuSet {
	out := make([]uint64, min(len(s.words), len(o.words)))
	for i := range out {
		out[i] = s.words[i] & o.words[i]
	}
	return cpuSet{out}
}

// minus returns s \ o.
func (s cpuSet) minus(o cpuSet) cpuSet {
	out := make([]uint64, len(s.words))
	copy(out, s.words)
	for i := 0; i < len(out) && i < len(o.words); i++ {
		out[i] &^= o.words[i]
	}
	return cpuSet{out}
}

// subsetOf reports whether every id of s is in o.
func (s cpuSet) subsetOf(o cpuSet) bool { return s.minus(o).empty() }

// equal reports whether s and o hold the same ids.
func (s cpuSet) equal(o cpuSet) bool { return s.subsetOf(o) && o.subsetOf(s) }

// list returns the ids of s in ascending order.
func (s cpuSet) list() []int {
	var out []int
	for i, w := range s.words {
		for w != 0 {
			b := bits.TrailingZeros64(w)
			out = append(out, i*64+b)
			w &^= 1 << b
		}
	}
	return out
}

// String formats s as the kernel's cpu lists do: "0-3,8,10-11".
func (s cpuSet) String() string {
	ids := s.list()
	var b strings.Builder
	for i := 0; i < len(ids); {
		j := i
		for j+1 < len(ids) && ids[j+1] == ids[j]+1 {
			j++
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(ids[i]))
		if j > i {
			b.WriteString("-" + strconv.Itoa(ids[j]))
		}
		i = j + 1
	}
	return b.String()
}

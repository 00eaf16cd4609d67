package sim

import (
	"math"
	"slices"
	"time"
)

// SlowdownBound is the run time below which bounded slowdown counts a job as this long
// (the usual 10 s), so that very short jobs do not dominate it.
const SlowdownBound = 10 * time.Second

// BoundedSlowdown is max(1, (end - submit) / max(run time, SlowdownBound)), for a finished
// job (0 otherwise).
func (r *JobRecord) BoundedSlowdown() float64 {
	if !r.Finished {
		return 0
	}
	resp := (r.End - r.Job.Submit).Seconds()
	return max(1, resp/max(r.Job.Duration, SlowdownBound).Seconds())
}

// SizeClasses are the job size classes, by cores: a job of c cores is in the first class
// whose bound is at least c (the last has none).
var SizeClasses = []struct {
	Name  string
	Bound float64
}{
	{"<=1", 1}, {"2-4", 4}, {"5-16", 16}, {"17-64", 64}, {"65-256", 256}, {"257-1024", 1024}, {">1024", math.Inf(1)},
}

// SizeClass names the size class of a job.
func SizeClass(j *Job) string {
	c := j.Size()
	for _, sc := range SizeClasses {
		if c <= sc.Bound {
			return sc.Name
		}
	}
	return SizeClasses[len(SizeClasses)-1].Name
}

// Stats sums up a sample: its size, mean, median, 95th percentile and maximum. Percentiles
// are nearest-rank: the value at rank ceil(p*n) of the sorted sample.
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// StatsOf sums a sample up (all zero for an empty one). Values are rounded to the
// millisecond (thousandths).
func StatsOf(xs []float64) Stats {
	if len(xs) == 0 {
		return Stats{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	sum := 0.0
	for _, x := range s {
		sum += x
	}
	return Stats{N: len(s), Mean: round3(sum / float64(len(s))), Median: round3(Percentile(s, 0.5)),
		P95: round3(Percentile(s, 0.95)), Max: round3(s[len(s)-1])}
}

// Percentile returns the nearest-rank p-th percentile (0 < p <= 1) of a sorted sample.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)) - 1e-9))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// Jain is Jain's fairness index of xs: (sum x)^2 / (n * sum x^2), 1 when all are equal and
// 1/n when one has everything. It is NaN for an empty or all-zero sample.
func Jain(xs []float64) float64 {
	sum, sq := 0.0, 0.0
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if len(xs) == 0 || sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(xs)) * sq)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// Package gcpolicy sets Go's garbage collector for a long-running server: how far the heap
// grows past the live data before a collection starts (GOGC), a heap size below which no
// collection starts (a floor, which Go has no setting for), and a soft limit on the memory the
// Go runtime uses (GOMEMLIMIT).
//
// Go's default (GOGC=100, no limit) collects whenever the heap has doubled. A scheduler holds
// its clusters' state (live, long-lived) and allocates per batch and per cycle (short-lived).
// With a small live heap that means a collection every second or two under load: a fifth of
// the CPU marking the same state over and over, and each mark phase takes a core from every
// cluster's calls. The floor lets a small heap grow to a fixed size first (as a JVM's initial
// heap does), so collections become rare while memory stays bounded by the floor; past the
// floor the heap grows GOGC percent as usual. The memory limit makes the collector work
// harder as the process nears it, rather than let it run the machine out of memory.
package gcpolicy

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
)

// Defaults of a server's policy.
const (
	// DefaultPercent is the default GOGC, Go's own: a collection starts when the heap has
	// grown 100% past what the last one left live (or at the floor, when that is higher).
	DefaultPercent = 100
	// DefaultLimit is the default memory limit: three quarters of the memory available to
	// the process, which leaves a quarter to the rest of a shared machine or container.
	DefaultLimit = "75%"
	// DefaultMinHeap is the default floor: 2 GiB, or a quarter of the memory available to
	// the process or half the limit when either is less.
	DefaultMinHeap = 2 << 30
)

// Off is the Percent that turns the proportional trigger off: only the limit starts a
// collection.
const Off = -1

// NoLimit is the Limit that sets no memory limit (the runtime's own value for "none").
const NoLimit = math.MaxInt64

// Policy is a collector setting.
type Policy struct {
	// Percent is GOGC, or Off.
	Percent int
	// Limit is GOMEMLIMIT in bytes, or NoLimit.
	Limit int64
	// MinHeap is the floor in bytes (0: none): no collection starts while the heap is
	// below it (Apply).
	MinHeap int64
}

// String formats the policy as its environment variables would be written.
func (p Policy) String() string {
	pct := "off"
	if p.Percent != Off {
		pct = strconv.Itoa(p.Percent)
	}
	lim := "none"
	if p.Limit != NoLimit {
		lim = FormatBytes(p.Limit)
	}
	floor := "none"
	if p.MinHeap > 0 {
		floor = FormatBytes(p.MinHeap)
	}
	return fmt.Sprintf("GOGC=%s GOMEMLIMIT=%s min_heap=%s", pct, lim, floor)
}

// Apply sets the policy for the whole process and returns a function that puts back what was
// set before. With a floor, it keeps it until then: after each collection it sets GOGC to
// what puts the next one at the floor, or to Percent when the live heap has grown so far that
// Percent past it is beyond the floor (tuner).
func (p Policy) Apply() (restore func()) {
	oldLim := debug.SetMemoryLimit(p.Limit)
	if p.MinHeap <= 0 || p.Percent == Off {
		oldPct := debug.SetGCPercent(p.Percent)
		return func() {
			debug.SetGCPercent(oldPct)
			debug.SetMemoryLimit(oldLim)
		}
	}
	t := newTuner(p)
	t.mu.Lock()
	oldPct := debug.SetGCPercent(t.percent())
	t.mu.Unlock()
	t.arm()
	return func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.stopped = true
		debug.SetGCPercent(oldPct)
		debug.SetMemoryLimit(oldLim)
	}
}

// The runtime's measures of what the last collection found: the live heap, and the stacks
// and globals it scanned, which the heap goal grows by GOGC too.
var tunerMetrics = [...]string{"/gc/heap/live:bytes", "/gc/scan/stack:bytes", "/gc/scan/globals:bytes"}

// tuner keeps a floor under the heap: a cleanup attached to a throwaway object runs after
// the collection that freed it, sets GOGC for the next one, and attaches itself to a new
// object.
type tuner struct {
	p Policy
	// mu orders the cleanups (which may run concurrently) and the restore.
	mu      sync.Mutex
	stopped bool
	samples []metrics.Sample
}

func newTuner(p Policy) *tuner {
	t := &tuner{p: p}
	for _, name := range tunerMetrics {
		t.samples = append(t.samples, metrics.Sample{Name: name})
	}
	return t
}

// sentinel is the throwaway object; it holds a pointer so that it is not batched with other
// small objects into one allocation, which would delay its collection.
type sentinel struct{ _ *byte }

func (t *tuner) arm() {
	runtime.AddCleanup(new(sentinel), (*tuner).collected, t)
}

// collected runs after a collection.
func (t *tuner) collected() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	debug.SetGCPercent(t.percent())
	t.arm()
}

// percent returns GOGC for what the last collection found.
func (t *tuner) percent() int {
	metrics.Read(t.samples)
	var v [len(tunerMetrics)]uint64
	for i, s := range t.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	return PercentFor(t.p.Percent, t.p.MinHeap, v[0], v[0]+v[1]+v[2])
}

// minHeapBase is the runtime's minimum heap (4 MiB), which it scales by GOGC as well: with a
// tiny live heap, and before the first collection, the goal is at least 4 MiB x GOGC/100.
const minHeapBase = 4 << 20

// PercentFor returns the GOGC that starts the next collection at minHeap, or percent when
// that starts it later. The runtime's heap goal is live + scan x GOGC/100, where scan is what
// a collection scans (the live heap, stacks and globals), and at least minHeapBase x
// GOGC/100.
func PercentFor(percent int, minHeap int64, live, scan uint64) int {
	if percent == Off || minHeap <= 0 || uint64(minHeap) <= live {
		return percent
	}
	need := float64(uint64(minHeap)-live) / float64(max(scan, 1))
	need = min(need, float64(minHeap)/minHeapBase) * 100
	if need <= float64(percent) {
		return percent
	}
	return int(need)
}

// Settings are where a policy comes from, strongest first: a flag, the environment (what Go
// itself reads at start), the server's default. An empty string is "not given".
type Settings struct {
	// PercentFlag, LimitFlag and MinHeapFlag are the command line's values.
	PercentFlag, LimitFlag, MinHeapFlag string
	// PercentEnv and LimitEnv are GOGC's and GOMEMLIMIT's.
	PercentEnv, LimitEnv string
	// Available is the memory available to the process in bytes (Available()), which a
	// limit given as a percentage is a share of; 0 when unknown.
	Available uint64
}

// Resolve returns the policy the settings give: for GOGC and the limit the flag if given,
// else the environment variable if set, else the default (DefaultPercent, DefaultLimit); for
// the floor the flag, else DefaultMinHeap capped at a quarter of the available memory and at
// half the limit (none when the available memory is unknown). A percentage with the
// available memory unknown is none. The errors name the flag or the variable at fault.
func Resolve(s Settings) (Policy, error) {
	var p Policy
	var err error
	switch {
	case s.PercentFlag != "":
		if p.Percent, err = ParsePercent(s.PercentFlag); err != nil {
			return p, fmt.Errorf("--gc-percent: %w", err)
		}
	case s.PercentEnv != "":
		if p.Percent, err = ParsePercent(s.PercentEnv); err != nil {
			return p, fmt.Errorf("GOGC: %w", err)
		}
	default:
		p.Percent = DefaultPercent
	}
	switch {
	case s.LimitFlag != "":
		if p.Limit, err = ParseLimit(s.LimitFlag, s.Available); err != nil {
			return p, fmt.Errorf("--memory-limit: %w", err)
		}
	case s.LimitEnv != "":
		if p.Limit, err = ParseLimit(s.LimitEnv, s.Available); err != nil {
			return p, fmt.Errorf("GOMEMLIMIT: %w", err)
		}
	default:
		if p.Limit, err = ParseLimit(DefaultLimit, s.Available); err != nil {
			return p, err
		}
	}
	switch {
	case s.MinHeapFlag != "":
		floor, err := ParseLimit(s.MinHeapFlag, s.Available)
		if err != nil {
			return p, fmt.Errorf("--gc-min-heap: %w", err)
		}
		if floor != NoLimit {
			p.MinHeap = floor
		}
		if p.MinHeap > p.Limit {
			return p, fmt.Errorf("--gc-min-heap %s is above the memory limit %s", FormatBytes(p.MinHeap), FormatBytes(p.Limit))
		}
	case s.Available > 0:
		// Half the limit at most, so that the collector has room above the floor.
		p.MinHeap = min(DefaultMinHeap, int64(s.Available/4), p.Limit/2)
	}
	return p, nil
}

// ParsePercent parses a GOGC value: a non-negative integer, or "off".
func ParsePercent(s string) (int, error) {
	if strings.EqualFold(s, "off") {
		return Off, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is neither a non-negative integer nor \"off\"", s)
	}
	return n, nil
}

// ParseLimit parses a memory limit: "none" (or "off"), a number of bytes with an optional
// unit (B, KiB, MiB, GiB, TiB as GOMEMLIMIT writes them; KB, MB, GB, TB as powers of 1000),
// or a percentage of available ("50%"; no limit when available is 0). A limit below 1 MiB is
// refused: the runtime would collect without pause.
func ParseLimit(s string, available uint64) (int64, error) {
	switch t := strings.TrimSpace(s); {
	case strings.EqualFold(t, "none"), strings.EqualFold(t, "off"):
		return NoLimit, nil
	case strings.HasSuffix(t, "%"):
		f, err := strconv.ParseFloat(strings.TrimSuffix(t, "%"), 64)
		if err != nil || f <= 0 || f > 100 || math.IsNaN(f) {
			return 0, fmt.Errorf("%q: a percentage must be in (0, 100]", s)
		}
		if available == 0 {
			return NoLimit, nil
		}
		return checkLimit(s, int64(f/100*float64(available)))
	default:
		n, err := parseBytes(t)
		if err != nil {
			return 0, fmt.Errorf("%q: %w", s, err)
		}
		return checkLimit(s, n)
	}
}

func checkLimit(s string, n int64) (int64, error) {
	if n < 1<<20 {
		return 0, fmt.Errorf("%q: a size must be at least 1MiB (none for no setting)", s)
	}
	return n, nil
}

// parseBytes parses a size such as "512MiB", "2GiB", "1.5GB" or "1048576".
func parseBytes(s string) (int64, error) {
	units := [...]struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	}
	mult := 1.0
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a size: give bytes with an optional unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), a percentage, or none")
	}
	v := f * mult
	if v >= math.MaxInt64 {
		return 0, errors.New("too large")
	}
	return int64(v), nil
}

// FormatBytes writes n in the largest binary unit it reaches, to one decimal place ("12GiB",
// "1.5GiB", "300MiB", "512B").
func FormatBytes(n int64) string {
	for _, u := range []struct {
		suffix string
		v      int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.v {
			x := math.Round(float64(n)/float64(u.v)*10) / 10
			return strconv.FormatFloat(x, 'f', -1, 64) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

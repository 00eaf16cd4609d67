package webui

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// amount parses an API quantity ("500m", "8Gi", "2"); 0 when it does not parse.
func amount(q string) float64 {
	if q == "" {
		return 0
	}
	v, err := resource.ParseQuantity(q)
	if err != nil {
		return 0
	}
	return v.AsApproximateFloat64()
}

// resourceNames orders the resource names of some quantity maps: cpu, memory, then the rest
// by name; pods (a count of slots, not an amount) last.
func resourceNames(ms ...map[string]string) []string {
	seen := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			seen[k] = true
		}
	}
	rank := func(n string) int {
		switch n {
		case "cpu":
			return 0
		case "memory":
			return 1
		case "pods":
			return 3
		}
		return 2
	}
	names := slices.Collect(maps.Keys(seen))
	slices.SortFunc(names, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	return names
}

// Bar is one resource's use against what there is, drawn as a bar and a heat cell.
type Bar struct {
	Resource string `json:"resource"`
	// Used and Total are the quantities as the API writes them.
	Used  string `json:"used"`
	Total string `json:"total"`
	// Percent is Used over Total, 0 to 100 (more when overcommitted).
	Percent float64 `json:"percent"`
	// Heat is the bar's colour class, h0 (idle) to h10 (full).
	Heat string `json:"heat"`
}

// Width is the bar's fill, clipped to 0..100.
func (b Bar) Width() float64 { return math.Min(100, math.Max(0, b.Percent)) }

// bars compares what is used with what there is, per resource that there is some of.
func bars(used, total map[string]string, skip ...string) []Bar {
	var out []Bar
	for _, n := range resourceNames(total) {
		if slices.Contains(skip, n) {
			continue
		}
		t := amount(total[n])
		if t <= 0 {
			continue
		}
		pct := 100 * amount(used[n]) / t
		out = append(out, Bar{Resource: n, Used: orZero(used[n]), Total: total[n], Percent: math.Round(pct*10) / 10, Heat: heat(pct)})
	}
	return out
}

// heat is the colour class of a utilization in percent.
func heat(pct float64) string {
	return fmt.Sprintf("h%d", int(math.Min(10, math.Max(0, math.Floor(pct/10)))))
}

func orZero(q string) string {
	if q == "" {
		return "0"
	}
	return q
}

// Mark is one of a queue's figures on its resource's scale.
type Mark struct {
	Value string `json:"value"`
	// X is the figure's place on the scale, 0 to 100; Set is false when the queue has no
	// such figure; Beyond when it lies past the scale (drawn at its end).
	X      float64 `json:"x"`
	Set    bool    `json:"set"`
	Beyond bool    `json:"beyond"`
}

// QueueBar draws a queue's figures for one resource against the other queues': allocated
// as the bar, deserved as a lighter bar behind it, guarantee and capability as marks.
type QueueBar struct {
	Resource   string `json:"resource"`
	Allocated  Mark   `json:"allocated"`
	Deserved   Mark   `json:"deserved"`
	Guarantee  Mark   `json:"guarantee"`
	Capability Mark   `json:"capability"`
}

// queueScales returns, per resource, the scale of the queues' bars: the largest allocated,
// deserved or guarantee of any queue, with room for a quarter more. Capabilities are left
// out: an unbounded one would flatten every other bar.
func queueScales(qs []*sluicev1.Queue, names []string) map[string]float64 {
	out := map[string]float64{}
	for _, n := range names {
		var top float64
		for _, q := range qs {
			for _, m := range []map[string]string{q.GetStatus().GetAllocated(), q.GetStatus().GetDeserved(), q.GetGuarantee()} {
				top = math.Max(top, amount(m[n]))
			}
		}
		if top == 0 {
			for _, q := range qs {
				top = math.Max(top, amount(q.GetCapability()[n]))
			}
		}
		out[n] = top * 1.25
	}
	return out
}

// mark places a figure on a scale.
func mark(m map[string]string, name string, scale float64) Mark {
	v, ok := m[name]
	if !ok || scale <= 0 {
		return Mark{Value: v, Set: ok}
	}
	x := 100 * amount(v) / scale
	return Mark{Value: v, X: math.Round(math.Min(100, x)*10) / 10, Set: true, Beyond: x > 100}
}

// age says how long ago t was, coarsely ("42s", "5m", "3h", "2d").
func age(now, t time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// Count is a named count, in a fixed order.
type Count struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// counts orders a map of counts by the enum's numbers (names like JOB_PHASE_RUNNING shown
// as "running").
func counts(m map[string]int, enum map[string]int32, prefix string) []Count {
	names := slices.Collect(maps.Keys(m))
	slices.SortFunc(names, func(a, b string) int { return int(enum[a] - enum[b]) })
	out := make([]Count, 0, len(names))
	for _, n := range names {
		out = append(out, Count{Name: enumWord(n, prefix), N: m[n]})
	}
	return out
}

// enumWord turns an enum value's name into a word: JOB_PHASE_RUNNING -> running.
func enumWord(name, prefix string) string {
	return strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(name, prefix), "_", " "))
}

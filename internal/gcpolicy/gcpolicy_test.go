package gcpolicy

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"testing"
	"time"
)

func TestResolve(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		name string
		s    Settings
		want Policy
		err  string
	}{
		{name: "defaults", s: Settings{Available: 24 * gib}, want: Policy{DefaultPercent, 18 * gib, 2 * gib}},
		{name: "defaults, a small machine", s: Settings{Available: 4 * gib}, want: Policy{DefaultPercent, 3 * gib, 1 * gib}},
		{name: "defaults, memory unknown", s: Settings{}, want: Policy{DefaultPercent, NoLimit, 0}},
		{name: "environment", s: Settings{PercentEnv: "400", LimitEnv: "2GiB", Available: 24 * gib}, want: Policy{400, 2 * gib, 1 * gib}},
		{name: "flag over environment", s: Settings{PercentFlag: "off", PercentEnv: "100", LimitFlag: "25%", LimitEnv: "2GiB", MinHeapFlag: "512MiB", Available: 24 * gib},
			want: Policy{Off, 6 * gib, 512 << 20}},
		{name: "no limit", s: Settings{LimitFlag: "none", Available: 24 * gib}, want: Policy{DefaultPercent, NoLimit, 2 * gib}},
		{name: "no floor", s: Settings{MinHeapFlag: "none", Available: 24 * gib}, want: Policy{DefaultPercent, 18 * gib, 0}},
		{name: "floor as a share", s: Settings{MinHeapFlag: "10%", Available: 10 * gib}, want: Policy{DefaultPercent, 7.5 * gib, 1 * gib}},
		{name: "environment off", s: Settings{PercentEnv: "OFF", LimitEnv: "off"}, want: Policy{Off, NoLimit, 0}},
		{name: "decimal units", s: Settings{LimitFlag: "1.5GB"}, want: Policy{DefaultPercent, 1_500_000_000, 0}},
		{name: "floor above the limit", s: Settings{LimitFlag: "1GiB", MinHeapFlag: "2GiB"}, err: "above the memory limit"},
		{name: "bad floor", s: Settings{MinHeapFlag: "0"}, err: "--gc-min-heap"},
		{name: "bad flag", s: Settings{PercentFlag: "-5"}, err: "--gc-percent"},
		{name: "bad environment", s: Settings{PercentEnv: "lots"}, err: "GOGC"},
		{name: "bad limit flag", s: Settings{LimitFlag: "12 apples"}, err: "--memory-limit"},
		{name: "bad limit environment", s: Settings{LimitEnv: "150%", Available: gib}, err: "GOMEMLIMIT"},
		{name: "limit too small", s: Settings{LimitFlag: "1KiB"}, err: "at least 1MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Resolve(tc.s)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Resolve(%+v) = %v, %v; want an error naming %q", tc.s, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Resolve(%+v) = %v, %v; want %v", tc.s, got, err, tc.want)
			}
		})
	}
}

func TestParseLimit(t *testing.T) {
	for in, want := range map[string]int64{
		"1048576": 1 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "1TiB": 1 << 40, "64KiB0": -1,
		"100MB": 100e6, "3 GiB": 3 << 30, "none": NoLimit, "50%": 500 << 20, "0.5%": 5 << 20,
		"0%": -1, "101%": -1, "-1GiB": -1, "NaN": -1, "": -1, "GiB": -1, "1e30GiB": -1,
	} {
		got, err := ParseLimit(in, 1000<<20)
		if want == -1 {
			if err == nil {
				t.Errorf("ParseLimit(%q) = %d; want an error", in, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseLimit(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestStringAndFormatBytes(t *testing.T) {
	for p, want := range map[Policy]string{
		{400, 12 << 30, 2 << 30}:      "GOGC=400 GOMEMLIMIT=12GiB min_heap=2GiB",
		{Off, 1536 << 20, 0}:          "GOGC=off GOMEMLIMIT=1.5GiB min_heap=none",
		{100, NoLimit, 0}:             "GOGC=100 GOMEMLIMIT=none min_heap=none",
		{50, 300<<20 + 1, 0}:          "GOGC=50 GOMEMLIMIT=300MiB min_heap=none",
		{0, 5<<30 + 512<<20 + 100, 0}: "GOGC=0 GOMEMLIMIT=5.5GiB min_heap=none",
	} {
		if got := p.String(); got != want {
			t.Errorf("%#v.String() = %q; want %q", p, got, want)
		}
	}
	if got := FormatBytes(512); got != "512B" {
		t.Errorf("FormatBytes(512) = %q", got)
	}
}

// TestApplyRestores: Apply sets both knobs for the process and its restore function puts the
// earlier values back.
func TestApplyRestores(t *testing.T) {
	before := debug.SetGCPercent(-1)
	debug.SetGCPercent(before)
	beforeLim := debug.SetMemoryLimit(-1)

	restore := Policy{Percent: 321, Limit: 3 << 30}.Apply()
	gotPct := debug.SetGCPercent(321)
	gotLim := debug.SetMemoryLimit(-1)
	restore()
	if gotPct != 321 || gotLim != 3<<30 {
		t.Fatalf("after Apply: GOGC %d, limit %d; want 321 and %d", gotPct, gotLim, int64(3<<30))
	}
	if pct, lim := debug.SetGCPercent(before), debug.SetMemoryLimit(-1); pct != before || lim != beforeLim {
		t.Fatalf("after restore: GOGC %d, limit %d; want %d and %d", pct, lim, before, beforeLim)
	}
}

func TestPercentFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		percent    int
		floor      int64
		live, scan uint64
		want       int
	}{
		{100, 0, 10 * mib, 10 * mib, 100},              // no floor
		{Off, 2048 * mib, 10 * mib, 10 * mib, Off},     // off stays off
		{100, 2048 * mib, 1024 * mib, 1024 * mib, 100}, // 2x live reaches the floor
		{100, 2048 * mib, 1500 * mib, 1500 * mib, 100}, // past it
		{100, 2048 * mib, 4096 * mib, 4096 * mib, 100}, // far past it
		{100, 2048 * mib, 512 * mib, 512 * mib, 300},   // 4x live is the floor
		{100, 2048 * mib, 512 * mib, 1024 * mib, 150},  // stacks and globals grow by GOGC too
		{100, 2048 * mib, 200 * mib, 200 * mib, 924},   // (2048 - 200) / 200
		{400, 2048 * mib, 512 * mib, 512 * mib, 400},   // 5x live is past the floor
		{100, 2048 * mib, 0, 0, 51200},                 // nothing live yet: 4MiB x 512 is the floor
		{100, 2048 * mib, 1000, 200 * mib, 1023},       // a tiny heap and large stacks
		{100, 2048 * mib, 1000, 1000, 51200},           // bounded by the runtime's minimum heap
	} {
		if got := PercentFor(tc.percent, tc.floor, tc.live, tc.scan); got != tc.want {
			t.Errorf("PercentFor(%d, %d, %d, %d) = %d; want %d", tc.percent, tc.floor, tc.live, tc.scan, got, tc.want)
		}
	}
}

// gogc reads the GOGC in force.
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	return int(s[0].Value.Uint64())
}

// TestFloorFollowsCollections: with a floor, Apply raises GOGC at once and again after each
// collection, as the live heap says; restore puts the process's GOGC back and the tuner
// stops.
func TestFloorFollowsCollections(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	restore := Policy{Percent: 100, Limit: NoLimit, MinHeap: 4 << 30}.Apply()
	if got := gogc(); got <= 100 {
		restore()
		t.Fatalf("GOGC %d after Apply with a floor of 4GiB; want it raised", got)
	}
	// Hold a live heap of 64 MiB: after a collection GOGC must put the next one at the floor,
	// about 64x the live heap.
	hold := make([][]byte, 64)
	for i := range hold {
		hold[i] = make([]byte, 1<<20)
	}
	// Twice: the tuner must follow every collection, not only the first.
	for round := 1; round <= 2; round++ {
		debug.SetGCPercent(100)
		runtime.GC()
		deadline := time.Now().Add(10 * time.Second)
		for gogc() == 100 && time.Now().Before(deadline) {
			time.Sleep(time.Millisecond)
			runtime.GC()
		}
		if got := gogc(); got < 3000 || got > 7000 {
			restore()
			t.Fatalf("round %d: GOGC %d after a collection with 64MiB live and a floor of 4GiB; want about 6300", round, got)
		}
	}
	runtime.KeepAlive(hold)
	restore()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC %d after restore; want 100 back", got)
	}
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC %d after restore and collections; the tuner did not stop", got)
	}
}

func TestAvailable(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	meminfo := write("meminfo", "MemTotal:       24683612 kB\nMemFree:        19011232 kB\n")
	machine := uint64(24683612) << 10
	for _, tc := range []struct {
		name string
		f    memoryFiles
		want uint64
	}{
		{"machine only", memoryFiles{meminfo: meminfo}, machine},
		{"cgroup v2 limit", memoryFiles{cgroupV2: write("v2", "4294967296\n"), meminfo: meminfo}, 4 << 30},
		{"cgroup v2 max", memoryFiles{cgroupV2: write("v2max", "max\n"), meminfo: meminfo}, machine},
		{"cgroup v1 no limit", memoryFiles{cgroupV1: write("v1", "9223372036854771712\n"), meminfo: meminfo}, machine},
		{"cgroup v1 limit", memoryFiles{cgroupV1: write("v1lim", "2147483648"), meminfo: meminfo}, 2 << 30},
		{"cgroup without meminfo", memoryFiles{cgroupV2: write("v2b", "1073741824"), meminfo: filepath.Join(dir, "absent")}, 1 << 30},
		{"nothing readable", memoryFiles{meminfo: write("bad", "MemTotal: lots\n")}, 0},
	} {
		if got := tc.f.available(); got != tc.want {
			t.Errorf("%s: available() = %d; want %d", tc.name, got, tc.want)
		}
	}
	if _, err := os.Stat("/proc/meminfo"); err == nil && Available() == 0 {
		t.Error("Available() = 0 on a machine with /proc/meminfo")
	}
}

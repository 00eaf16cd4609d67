package framework

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// hookOf builds a hook over tiers of plugin names, every flag enabled, with the given
// callbacks by plugin name.
func hookOf[F any](tiers [][]string, fns map[string]F) *hook[F] {
	h := newHook[F](conf.FlagJobOrder)
	for n, f := range fns {
		h.add(n, f)
	}
	var ct []conf.Tier
	for _, t := range tiers {
		var tier conf.Tier
		for _, n := range t {
			tier.Plugins = append(tier.Plugins, conf.PluginOption{Name: n})
		}
		ct = append(ct, tier)
	}
	h.build(ct)
	return h
}

func TestHookRespectsEnableFlag(t *testing.T) {
	off := false
	h := newHook[func() int](conf.FlagJobOrder)
	h.add("a", func() int { return 1 })
	h.add("b", func() int { return 2 })
	h.build([]conf.Tier{{Plugins: []conf.PluginOption{{Name: "a", EnabledJobOrder: &off}, {Name: "b"}, {Name: "c"}}}})
	if got := firstNonZero(h, func(f func() int) int { return f() }); got != 2 {
		t.Fatalf("disabled plugin a was consulted: got %d, want 2", got)
	}
	ug := newUngatedHook[func() int]()
	ug.add("a", func() int { return 1 })
	ug.build([]conf.Tier{{Plugins: []conf.PluginOption{{Name: "a", EnabledJobOrder: &off}}}})
	if got := firstNonZero(ug, func(f func() int) int { return f() }); got != 1 {
		t.Fatalf("ungated hook skipped plugin: got %d", got)
	}
}

func TestFirstNonZero(t *testing.T) {
	h := hookOf([][]string{{"a", "b"}, {"c"}}, map[string]func() int{
		"a": func() int { return 0 }, "b": func() int { return -1 }, "c": func() int { return 1 },
	})
	if got := firstNonZero(h, func(f func() int) int { return f() }); got != -1 {
		t.Fatalf("got %d, want -1 (first opinion across tiers)", got)
	}
}

func TestFirstErrorStopsAtFirstReject(t *testing.T) {
	calls := 0
	h := hookOf([][]string{{"a"}, {"b", "c"}}, map[string]func() error{
		"a": func() error { calls++; return nil },
		"b": func() error { calls++; return errors.New("b says no") },
		"c": func() error { calls++; return errors.New("c says no") },
	})
	err := firstError(h, func(f func() error) error { return f() })
	if err == nil || err.Error() != "b says no" || calls != 2 {
		t.Fatalf("got %v after %d calls, want b's error after 2", err, calls)
	}
}

func TestAllAnyTrue(t *testing.T) {
	h := hookOf([][]string{{"a"}, {"b"}}, map[string]func() bool{
		"a": func() bool { return true }, "b": func() bool { return false },
	})
	call := func(f func() bool) bool { return f() }
	if allTrue(h, call) {
		t.Error("allTrue: one false must make it false")
	}
	if !anyTrue(h, call) {
		t.Error("anyTrue: one true must make it true")
	}
	empty := hookOf[func() bool](nil, nil)
	if !allTrue(empty, call) || anyTrue(empty, call) {
		t.Error("empty hook: allTrue must be true and anyTrue false")
	}
}

func TestFirstTierDecides(t *testing.T) {
	call := func(f func() bool) bool { return f() }
	h := hookOf([][]string{{"x"}, {"a", "b"}, {"c"}}, map[string]func() bool{
		"a": func() bool { return true }, "b": func() bool { return true }, "c": func() bool { return false },
	})
	if !firstTierDecides(h, false, call) {
		t.Error("tier 2 (a, b both true) must decide true; tier 3 must not be asked")
	}
	h2 := hookOf([][]string{{"a", "c"}}, map[string]func() bool{
		"a": func() bool { return true }, "c": func() bool { return false },
	})
	if firstTierDecides(h2, true, call) {
		t.Error("a false in the deciding tier must make it false")
	}
	if !firstTierDecides(hookOf[func() bool](nil, nil), true, call) {
		t.Error("no callback: default must be returned")
	}
}

func TestVote(t *testing.T) {
	call := func(f func() Vote) Vote { return f() }
	v := func(x Vote) func() Vote { return func() Vote { return x } }
	cases := []struct {
		name  string
		tiers [][]string
		fns   map[string]func() Vote
		want  bool
	}{
		{"all abstain permits", [][]string{{"a"}, {"b"}}, map[string]func() Vote{"a": v(Abstain), "b": v(Abstain)}, true},
		{"reject wins in tier", [][]string{{"a", "b"}}, map[string]func() Vote{"a": v(Permit), "b": v(Reject)}, false},
		{"permit tier stops later reject", [][]string{{"a"}, {"b"}}, map[string]func() Vote{"a": v(Permit), "b": v(Reject)}, true},
		{"abstain tier defers to next", [][]string{{"a"}, {"b"}}, map[string]func() Vote{"a": v(Abstain), "b": v(Reject)}, false},
	}
	for _, c := range cases {
		if got := vote(hookOf(c.tiers, c.fns), call); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func tasks(names ...string) []*api.TaskInfo {
	var out []*api.TaskInfo
	for _, n := range names {
		out = append(out, &api.TaskInfo{UID: n})
	}
	return out
}

func uids(ts []*api.TaskInfo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.UID)
	}
	return out
}

func TestVictimsIntersect(t *testing.T) {
	type fn = func() ([]*api.TaskInfo, Vote)
	give := func(v Vote, names ...string) fn { return func() ([]*api.TaskInfo, Vote) { return tasks(names...), v } }
	call := func(f fn) ([]*api.TaskInfo, Vote) { return f() }
	cases := []struct {
		name  string
		tiers [][]string
		fns   map[string]fn
		want  []string
	}{
		{"intersection within tier", [][]string{{"a", "b"}}, map[string]fn{"a": give(Permit, "t1", "t2", "t3"), "b": give(Permit, "t2", "t3", "t4")}, []string{"t2", "t3"}},
		{"abstain is skipped", [][]string{{"a", "b"}}, map[string]fn{"a": give(Abstain), "b": give(Permit, "t1")}, []string{"t1"}},
		{"empty choice falls through to next tier", [][]string{{"a", "b"}, {"c"}}, map[string]fn{"a": give(Permit), "b": give(Permit, "t1"), "c": give(Permit, "t9")}, []string{"t9"}},
		{"empty intersection falls through", [][]string{{"a", "b"}, {"c"}}, map[string]fn{"a": give(Permit, "t1"), "b": give(Permit, "t2"), "c": give(Permit, "t3")}, []string{"t3"}},
		{"first deciding tier wins", [][]string{{"a"}, {"c"}}, map[string]fn{"a": give(Permit, "t1"), "c": give(Permit, "t3")}, []string{"t1"}},
		{"nobody decides", [][]string{{"a"}}, map[string]fn{"a": give(Abstain)}, nil},
	}
	for _, c := range cases {
		got := uids(victimsIntersect(hookOf(c.tiers, c.fns), call))
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.name, got, c.want)
			}
		}
	}
}

func TestSumScores(t *testing.T) {
	h := hookOf([][]string{{"a"}, {"b"}}, map[string]func() (float64, error){
		"a": func() (float64, error) { return 1.5, nil }, "b": func() (float64, error) { return 2, nil },
	})
	got, err := sumScores(h, func(f func() (float64, error)) (float64, error) { return f() })
	if err != nil || got != 3.5 {
		t.Fatalf("got %v, %v; want 3.5", got, err)
	}
	h.add("c", func() (float64, error) { return 0, errors.New("boom") })
	h.build([]conf.Tier{{Plugins: []conf.PluginOption{{Name: "a"}, {Name: "c"}}}})
	if _, err := sumScores(h, func(f func() (float64, error)) (float64, error) { return f() }); err == nil {
		t.Fatal("an error from one scorer must be returned")
	}
}

// pickerPlugin registers a victim-task chooser and a class key.
type pickerPlugin struct {
	name   string
	pick   []string
	key    string
	keyOK  bool
	scores bool
	// wake, if set, is the plugin's wake-up time.
	wake time.Time
}

func (p *pickerPlugin) Name() string { return p.name }
func (p *pickerPlugin) OnSessionOpen(s *Session) {
	s.AddVictimTasksFn(p.name, func(ts []*api.TaskInfo) []*api.TaskInfo {
		var out []*api.TaskInfo
		for _, t := range ts {
			for _, n := range p.pick {
				if t.UID == n {
					out = append(out, t)
				}
			}
		}
		return out
	})
	if !p.wake.IsZero() {
		s.AddWakeUpFn(p.name, func() (time.Time, bool) { return p.wake, true })
	}
	if p.scores {
		s.AddNodeOrderFn(p.name, func(*api.TaskInfo, *api.NodeInfo) (float64, error) { return 0, nil })
		if p.key != "" || p.keyOK {
			s.AddClassKeyFn(p.name, func(*api.TaskInfo) (string, bool) { return p.key, p.keyOK })
		}
	}
}
func (p *pickerPlugin) OnSessionClose(*Session) {}

func openWith(t *testing.T, tiers [][]*pickerPlugin) *Session {
	t.Helper()
	reg := NewRegistry()
	cfg := &conf.Config{}
	for _, tier := range tiers {
		var ct conf.Tier
		for _, p := range tier {
			p := p
			reg.RegisterPlugin(p.name, func(conf.Arguments) (Plugin, error) { return p, nil })
			ct.Plugins = append(ct.Plugins, conf.PluginOption{Name: p.name})
		}
		cfg.Tiers = append(cfg.Tiers, ct)
	}
	s, err := OpenSession(&Snapshot{Cluster: "c"}, cfg, reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestVictimTasksUnionInTierFirstTierDecides(t *testing.T) {
	s := openWith(t, [][]*pickerPlugin{
		{{name: "a", pick: []string{"t3", "t1"}}, {name: "b", pick: []string{"t1", "t2"}}},
		{{name: "c", pick: []string{"t4"}}},
	})
	if got := uids(s.VictimTasks(tasks("t1", "t2", "t3", "t4"))); len(got) != 3 || got[0] != "t1" || got[1] != "t3" || got[2] != "t2" {
		// a's choices in offered order (t1, t3), then b's new one (t2).
		t.Fatalf("victims %v, want [t1 t3 t2]", got)
	}
	empty := openWith(t, [][]*pickerPlugin{{{name: "a"}}, {{name: "c", pick: []string{"t4"}}}})
	if got := uids(empty.VictimTasks(tasks("t1", "t4"))); len(got) != 1 || got[0] != "t4" {
		t.Fatalf("a tier choosing nobody must defer: got %v", got)
	}
}

func TestTaskClassNeedsEveryScorerToDeclare(t *testing.T) {
	task := &api.TaskInfo{UID: "ns/t", Resreq: api.EmptyResource(), InitResreq: api.EmptyResource()}
	declared := openWith(t, [][]*pickerPlugin{{{name: "a", scores: true, key: "k1", keyOK: true}}})
	if k, ok := declared.TaskClass(task); !ok || k == "" {
		t.Fatalf("a declaring scorer: class %q, %v", k, ok)
	}
	silent := openWith(t, [][]*pickerPlugin{{{name: "a", scores: true, key: "k1", keyOK: true}, {name: "b", scores: true}}})
	if _, ok := silent.TaskClass(task); ok {
		t.Fatal("a scorer that declares nothing must turn placement classes off")
	}
	refusing := openWith(t, [][]*pickerPlugin{{{name: "a", scores: true, key: "x", keyOK: false}}})
	if _, ok := refusing.TaskClass(task); ok {
		t.Fatal("a plugin answering not ok must turn the class off for the task")
	}
	other := openWith(t, [][]*pickerPlugin{{{name: "a", scores: true, key: "k2", keyOK: true}}})
	k1, _ := declared.TaskClass(task)
	k2, _ := other.TaskClass(task)
	if k1 == k2 {
		t.Fatal("different plugin keys must give different classes")
	}
}

// TestTaskClassKeys: the class is exact in the requests (any difference splits it; separate
// but equal requests share it) and keeps the plugins' keys apart however they split.
func TestTaskClassKeys(t *testing.T) {
	res := func(cpu float64, gpu float64) *api.Resource {
		return api.NewResource(map[string]float64{"cpu": cpu, "memory": 1 << 30, api.ResourceGPU: gpu, "example.com/fpga": 1})
	}
	task := func(r *api.Resource) *api.TaskInfo {
		return &api.TaskInfo{UID: "ns/t", Resreq: r, InitResreq: r.Clone(), Spec: &api.Task{}}
	}
	s := openWith(t, [][]*pickerPlugin{{{name: "a", scores: true, key: "k", keyOK: true}}})
	class := func(ti *api.TaskInfo) string {
		k, ok := s.TaskClass(ti)
		if !ok {
			t.Fatal("no class")
		}
		return k
	}
	if class(task(res(2, 1))) != class(task(res(2, 1))) {
		t.Error("equal requests of separate tasks got different classes")
	}
	for _, other := range []*api.Resource{res(2.001, 1), res(2, 2), api.NewResource(map[string]float64{"cpu": 2, "memory": 1 << 30, api.ResourceGPU: 1})} {
		if class(task(res(2, 1))) == class(task(other)) {
			t.Errorf("requests %v and %v share a class", res(2, 1), other)
		}
	}
	odd := task(res(2, 1))
	odd.InitResreq = res(3, 1)
	if class(odd) == class(task(res(2, 1))) {
		t.Error("a different InitResreq kept the class")
	}
	split := func(ka, kb string) string {
		s := openWith(t, [][]*pickerPlugin{{{name: "a", scores: true, key: ka, keyOK: true}, {name: "b", scores: true, key: kb, keyOK: true}}})
		k, _ := s.TaskClass(task(res(1, 0)))
		return k
	}
	if split("ab", "c") == split("a", "bc") {
		t.Error("plugin keys ab|c and a|bc gave the same class")
	}
}

// TestWakeUp: the session wakes at the earliest time a plugin of any tier names after its
// clock; times not after the clock are ignored; without any there is no wake-up.
func TestWakeUp(t *testing.T) {
	at := func(m int) time.Time { return time.Time{}.Add(time.Duration(m) * time.Minute) }
	for _, tc := range []struct {
		name  string
		wakes [][]int // per tier, per plugin, minutes (0: the plugin names none)
		want  int     // 0: none
	}{
		{"none", [][]int{{0}, {0}}, 0},
		{"earliest across tiers", [][]int{{30, 0}, {20, 40}}, 20},
		{"the clock itself is not after it", [][]int{{10, 25}}, 25},
		{"only past times", [][]int{{5, 10}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tiers [][]*pickerPlugin
			for i, tier := range tc.wakes {
				var ps []*pickerPlugin
				for j, m := range tier {
					p := &pickerPlugin{name: fmt.Sprintf("p%d%d", i, j)}
					if m != 0 {
						p.wake = at(m)
					}
					ps = append(ps, p)
				}
				tiers = append(tiers, ps)
			}
			s := openWith(t, tiers)
			s.Now = at(10)
			got, ok := s.WakeUp()
			if tc.want == 0 {
				if ok {
					t.Errorf("wake-up %v, want none", got)
				}
				return
			}
			if !ok || !got.Equal(at(tc.want)) {
				t.Errorf("wake-up %v %v, want %v", got, ok, at(tc.want))
			}
			if r := s.Close(); !r.WakeAt.Equal(at(tc.want)) {
				t.Errorf("Result.WakeAt %v, want %v", r.WakeAt, at(tc.want))
			}
		})
	}
}

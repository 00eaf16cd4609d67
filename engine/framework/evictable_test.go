package framework

import (
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// evictorPlugin registers a UnifiedEvictableFn that records the contexts it was given and
// answers with the named candidates and its vote. With choose nil it returns every candidate.
// With refuseTaskLevel it also registers preemptable and reclaimable callbacks that refuse
// every candidate.
type evictorPlugin struct {
	name            string
	choose          []string
	vote            Vote
	refuseTaskLevel bool
	seen            []*EvictionContext
}

func (p *evictorPlugin) Name() string { return p.name }
func (p *evictorPlugin) OnSessionOpen(s *Session) {
	s.AddUnifiedEvictableFn(p.name, func(ctx *EvictionContext, cands []*api.TaskInfo) ([]*api.TaskInfo, Vote) {
		p.seen = append(p.seen, ctx)
		if p.choose == nil {
			return cands, p.vote
		}
		var out []*api.TaskInfo
		for _, c := range cands {
			if slices.Contains(p.choose, c.UID) {
				out = append(out, c)
			}
		}
		return out, p.vote
	})
	if p.refuseTaskLevel {
		refuse := func(*api.TaskInfo, []*api.TaskInfo) ([]*api.TaskInfo, Vote) { return nil, Reject }
		s.AddPreemptableFn(p.name, refuse)
		s.AddReclaimableFn(p.name, refuse)
	}
}
func (p *evictorPlugin) OnSessionClose(*Session) {}

// TestUnifiedEvictable follows Volcano's TestUnifiedEvictable_* (session_plugins_test.go) and
// adds what Volcano's loop implies: the hook has no enable flag.
func TestUnifiedEvictable(t *testing.T) {
	off := false
	cases := []struct {
		name    string
		plugins []*evictorPlugin
		// tiers names the configured plugins per tier; registered plugins not named are not in
		// the configuration.
		tiers [][]string
		// flagsOff turns enablePreemptable and enableReclaimable off for every plugin.
		flagsOff bool
		want     []string
		// asked names the plugins that must have been asked, in any order.
		asked []string
	}{
		{
			name:    "a tier intersects its plugins' choices",
			plugins: []*evictorPlugin{{name: "p1", choose: []string{"a", "b"}, vote: Permit}, {name: "p2", choose: []string{"b", "c"}, vote: Permit}},
			tiers:   [][]string{{"p1", "p2"}},
			want:    []string{"b"},
			asked:   []string{"p1", "p2"},
		},
		{
			name:    "an abstaining plugin is skipped",
			plugins: []*evictorPlugin{{name: "abstainer", vote: Abstain}, {name: "permitter", choose: []string{"a"}, vote: Permit}},
			tiers:   [][]string{{"abstainer", "permitter"}},
			want:    []string{"a"},
			asked:   []string{"abstainer", "permitter"},
		},
		{
			name: "an empty choice ends its tier and the next tier decides",
			plugins: []*evictorPlugin{{name: "blocker", choose: []string{}, vote: Permit},
				{name: "permitter", choose: []string{"a"}, vote: Permit}, {name: "fallback", choose: []string{"c"}, vote: Permit}},
			tiers: [][]string{{"blocker", "permitter"}, {"fallback"}},
			want:  []string{"c"},
			asked: []string{"blocker", "fallback"},
		},
		{
			// As in Volcano, only abstaining is told apart: a Reject is a choice like a Permit.
			name:    "a reject with victims still chooses them",
			plugins: []*evictorPlugin{{name: "rejecter", choose: []string{"a"}, vote: Reject}, {name: "fallback", choose: []string{"b"}, vote: Permit}},
			tiers:   [][]string{{"rejecter"}, {"fallback"}},
			want:    []string{"a"},
			asked:   []string{"rejecter"},
		},
		{
			name:    "the first tier that decides wins",
			plugins: []*evictorPlugin{{name: "first", choose: []string{"a"}, vote: Permit}, {name: "second", choose: []string{"b"}, vote: Permit}},
			tiers:   [][]string{{"first"}, {"second"}},
			want:    []string{"a"},
			asked:   []string{"first"},
		},
		{
			name:    "no plugin decides: nil",
			plugins: []*evictorPlugin{{name: "abstainer", vote: Abstain}},
			tiers:   [][]string{{"abstainer"}, {"noop"}},
			asked:   []string{"abstainer"},
		},
		{
			name:     "enable flags do not turn the hook off",
			plugins:  []*evictorPlugin{{name: "p1", choose: []string{"a", "c"}, vote: Permit}},
			tiers:    [][]string{{"p1"}},
			flagsOff: true,
			want:     []string{"a", "c"},
			asked:    []string{"p1"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reg := NewRegistry()
			reg.RegisterPlugin("noop", func(conf.Arguments) (Plugin, error) { return &pickerPlugin{name: "noop"}, nil })
			for _, p := range c.plugins {
				reg.RegisterPlugin(p.name, func(conf.Arguments) (Plugin, error) { return p, nil })
			}
			cfg := &conf.Config{}
			for _, names := range c.tiers {
				var tier conf.Tier
				for _, n := range names {
					o := conf.PluginOption{Name: n}
					if c.flagsOff {
						o.EnabledPreemptable, o.EnabledReclaimable = &off, &off
					}
					tier.Plugins = append(tier.Plugins, o)
				}
				cfg.Tiers = append(cfg.Tiers, tier)
			}
			s, err := OpenSession(&Snapshot{Cluster: "c"}, cfg, reg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx := &EvictionContext{Kind: EvictionKindGangReclaim, Job: &api.JobInfo{UID: "ns/j", Priority: 42}, HyperNode: "hn1"}
			got := uids(s.UnifiedEvictable(ctx, tasks("a", "b", "c")))
			if !slices.Equal(got, c.want) {
				t.Errorf("victims %v, want %v", got, c.want)
			}
			var asked []string
			for _, p := range c.plugins {
				for _, seen := range p.seen {
					if seen != ctx {
						t.Errorf("%s was given context %+v, want the caller's %+v", p.name, seen, ctx)
					}
				}
				if len(p.seen) > 0 {
					asked = append(asked, p.name)
				}
			}
			slices.Sort(asked)
			want := slices.Sorted(slices.Values(c.asked))
			if !slices.Equal(asked, want) {
				t.Errorf("asked %v, want %v", asked, want)
			}
		})
	}
}

// TestUnifiedEvictableIsItsOwnHook checks that the gang-aware hook and the task-level ones do
// not stand in for each other.
func TestUnifiedEvictableIsItsOwnHook(t *testing.T) {
	p := &evictorPlugin{name: "p", choose: []string{"a"}, vote: Permit, refuseTaskLevel: true}
	reg := NewRegistry()
	reg.RegisterPlugin("p", func(conf.Arguments) (Plugin, error) { return p, nil })
	cfg := &conf.Config{Tiers: []conf.Tier{{Plugins: []conf.PluginOption{{Name: "p"}}}}}
	s, err := OpenSession(&Snapshot{Cluster: "c"}, cfg, reg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	evictor := &api.TaskInfo{UID: "e"}
	if got := s.Preemptable(evictor, tasks("a", "b")); got != nil {
		t.Errorf("Preemptable %v, want nil (p refuses)", uids(got))
	}
	if got := s.Reclaimable(evictor, tasks("a", "b")); got != nil {
		t.Errorf("Reclaimable %v, want nil (p refuses)", uids(got))
	}
	if got := uids(s.UnifiedEvictable(&EvictionContext{Kind: EvictionKindGangPreempt}, tasks("a", "b"))); !slices.Equal(got, []string{"a"}) {
		t.Errorf("UnifiedEvictable %v, want [a] whatever the task-level callbacks say", got)
	}
	if len(p.seen) != 1 {
		t.Errorf("the gang-aware callback was asked %d times, want once", len(p.seen))
	}
}

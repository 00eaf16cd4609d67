package conf

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestDefault(t *testing.T) {
	c := Default()
	if want := []string{"enqueue", "allocate", "backfill"}; !slices.Equal(c.Actions, want) {
		t.Errorf("Actions = %q, want %q", c.Actions, want)
	}
	want := [][]string{
		{"priority", "gang", "conformance"},
		{"overcommit", "drf", "predicates", "proportion", "nodeorder", "binpack"},
	}
	var got [][]string
	for _, tier := range c.Tiers {
		var names []string
		for _, p := range tier.Plugins {
			names = append(names, p.Name)
			for _, f := range Flags() {
				if p.FlagValue(f) != nil {
					t.Errorf("%s: flag %v set in default config", p.Name, f)
				}
			}
		}
		got = append(got, names)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tiers = %q, want %q", got, want)
	}
	if string(c.Raw()) != string(defaultYAML) {
		t.Errorf("Raw() differs from the embedded default.yaml")
	}
	// Each call is independent.
	c.Tiers[0].Plugins[0].Name = "changed"
	if Default().Tiers[0].Plugins[0].Name != "priority" {
		t.Error("Default() shares state between calls")
	}
	known := func(s string) bool { return s != "" }
	if err := Validate(Default(), known, known); err != nil {
		t.Errorf("Validate(Default()) = %v", err)
	}
}

const example = `
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
    arguments:
      predicate.GPUSharingEnable: true
  - name: proportion
  - name: nodeorder
    arguments:
      leastrequested.weight: 1
  - name: binpack
configurations:
- name: allocate
  arguments:
    predicateErrorCacheEnable: false
metrics:
  address: http://prometheus:9090
  interval: 30s
`

func TestParseExample(t *testing.T) {
	c, err := Parse([]byte(example))
	if err != nil {
		t.Fatal(err)
	}
	gang := c.Tiers[0].Plugins[1]
	if gang.Name != "gang" || gang.EnabledPreemptable == nil || *gang.EnabledPreemptable {
		t.Errorf("gang = %+v, want enablePreemptable false", gang)
	}
	if gang.Enabled(FlagPreemptable) || !gang.Enabled(FlagJobOrder) {
		t.Errorf("gang: Enabled(Preemptable)=%v Enabled(JobOrder)=%v", gang.Enabled(FlagPreemptable), gang.Enabled(FlagJobOrder))
	}
	pred := c.Tiers[1].Plugins[2]
	if b, err := pred.Arguments.Bool("predicate.GPUSharingEnable", false); err != nil || !b {
		t.Errorf("predicate.GPUSharingEnable = %v, %v", b, err)
	}
	if w, err := c.Tiers[1].Plugins[4].Arguments.Int("leastrequested.weight", 0); err != nil || w != 1 {
		t.Errorf("leastrequested.weight = %v, %v", w, err)
	}
	if c.MetricsConfiguration["address"] != "http://prometheus:9090" || c.MetricsConfiguration["interval"] != "30s" {
		t.Errorf("metrics = %v", c.MetricsConfiguration)
	}
	if string(c.Raw()) != example {
		t.Error("Raw() does not return the parsed text")
	}
}

func TestActionsSplitting(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{`"allocate"`, []string{"allocate"}},
		{`"enqueue, allocate, backfill"`, []string{"enqueue", "allocate", "backfill"}},
		{`"enqueue,allocate ,  backfill  "`, []string{"enqueue", "allocate", "backfill"}},
		{`" , enqueue,, allocate, "`, []string{"enqueue", "allocate"}},
		{`enqueue, allocate`, []string{"enqueue", "allocate"}},
	}
	for _, tt := range tests {
		c, err := Parse([]byte("actions: " + tt.in))
		if err != nil {
			t.Errorf("%s: %v", tt.in, err)
			continue
		}
		if !slices.Equal(c.Actions, tt.want) {
			t.Errorf("%s: Actions = %q, want %q", tt.in, c.Actions, tt.want)
		}
	}
}

func TestBothSpellings(t *testing.T) {
	for _, f := range Flags() {
		for _, prefix := range []string{"enable", "enabled"} {
			key := prefix + f.String()
			for _, v := range []bool{true, false} {
				text := "actions: allocate\ntiers:\n- plugins:\n  - name: p\n    " + key + ": " + map[bool]string{true: "true", false: "false"}[v] + "\n"
				c, err := Parse([]byte(text))
				if err != nil {
					t.Errorf("%s: %v", key, err)
					continue
				}
				p := c.Tiers[0].Plugins[0]
				if got := p.FlagValue(f); got == nil || *got != v {
					t.Errorf("%s: %v: FlagValue = %v, want %v", key, v, got, v)
				}
				if p.Enabled(f) != v {
					t.Errorf("%s: %v: Enabled = %v", key, v, p.Enabled(f))
				}
				for _, g := range Flags() {
					if g != f && p.FlagValue(g) != nil {
						t.Errorf("%s also set %v", key, g)
					}
				}
			}
		}
	}
}

func TestBothSpellingsTogether(t *testing.T) {
	tests := []struct {
		opts    string
		want    bool
		wantErr string
	}{
		{"enableVictim: false\n    enabledVictim: false", false, ""},
		{"enableVictim: true\n    enabledVictim: true", true, ""},
		{"enableVictim: true\n    enabledVictim: false", false, `tiers[0].plugins[0]: enabledVictim: false conflicts with enableVictim: true`},
		{"enabledJobOrder: false\n    enableJobOrder: true", false, `enableJobOrder: true conflicts with enabledJobOrder: false`},
		{"enableVictim: ~\n    enabledVictim: false", false, ""},
	}
	for _, tt := range tests {
		text := "actions: allocate\ntiers:\n- plugins:\n  - name: p\n    " + tt.opts + "\n"
		c, err := Parse([]byte(text))
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err = %v, want %q", tt.opts, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.opts, err)
			continue
		}
		if got := c.Tiers[0].Plugins[0].Enabled(FlagVictim); got != tt.want {
			t.Errorf("%q: Enabled(FlagVictim) = %v, want %v", tt.opts, got, tt.want)
		}
	}
}

func TestLegacyClusterOrderKey(t *testing.T) {
	c, err := Parse([]byte("actions: allocate\ntiers:\n- plugins:\n  - name: p\n    EnabledClusterOrder: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !c.Tiers[0].Plugins[0].Enabled(FlagClusterOrder) {
		t.Error("EnabledClusterOrder: true not honoured")
	}
}

func TestUnsetDefaults(t *testing.T) {
	optIn := map[Flag]bool{
		FlagHierarchy: true, FlagClusterOrder: true, FlagHyperNodeOrder: true,
		FlagSubJobReady: true, FlagSubJobPipelined: true, FlagSubJobOrder: true,
		FlagHyperNodeGradient: true,
	}
	var p PluginOption
	for _, f := range Flags() {
		if got, want := p.Enabled(f), !optIn[f]; got != want {
			t.Errorf("unset %v: Enabled = %v, want %v", f, got, want)
		}
		if f.DefaultEnabled() == optIn[f] {
			t.Errorf("%v.DefaultEnabled() = %v", f, f.DefaultEnabled())
		}
	}
	p.SetFlag(FlagPredicate, false)
	p.SetFlag(FlagHierarchy, true)
	p.ApplyDefaults()
	for _, f := range Flags() {
		v := p.FlagValue(f)
		switch {
		case f == FlagPredicate:
			if v == nil || *v {
				t.Errorf("ApplyDefaults overwrote explicit predicate=false: %v", v)
			}
		case f == FlagHierarchy:
			if v == nil || !*v {
				t.Errorf("ApplyDefaults overwrote explicit hierarchy=true: %v", v)
			}
		case optIn[f]:
			if v != nil {
				t.Errorf("ApplyDefaults set opt-in %v", f)
			}
		default:
			if v == nil || !*v {
				t.Errorf("ApplyDefaults left %v = %v, want true", f, v)
			}
		}
	}
	if Flag(-1).Valid() || Flag(len(Flags())).Valid() || (PluginOption{}).Enabled(Flag(99)) {
		t.Error("invalid flag accepted")
	}

	c := Default()
	c.ApplyDefaults()
	if v := c.Tiers[1].Plugins[1].EnabledJobOrder; v == nil || !*v {
		t.Error("Config.ApplyDefaults did not reach plugins")
	}
}

func TestFlagKeys(t *testing.T) {
	for _, f := range Flags() {
		if !strings.HasSuffix(f.Key(), f.String()) || !strings.HasPrefix(f.Key(), "enable") {
			t.Errorf("%v: key %q", f, f.Key())
		}
		if g, ok := lookupFlagKey(f.Key()); !ok || g != f {
			t.Errorf("%v: key %q does not map back", f, f.Key())
		}
	}
	if FlagVictim.Key() != "enabledVictim" || FlagJobOrder.Key() != "enableJobOrder" {
		t.Error("keys differ from Volcano's")
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{"empty", "", "empty configuration"},
		{"null", "~\n", "empty configuration"},
		{"comment only", "# nothing\n", "empty configuration"},
		{"not a mapping", "- a\n", "want a mapping"},
		{"syntax", "actions: [\n", "did not find expected"},
		{"two documents", "actions: a\n---\nactions: b\n", "more than one YAML document"},
		{"missing actions", "tiers: []\n", "actions: missing"},
		{"empty actions", `actions: ""`, "actions: no actions given"},
		{"only commas", `actions: " , ,"`, "actions: no actions given"},
		{"actions list", "actions: [allocate]", "actions: want a string"},
		{"unknown top-level", "actions: a\nfoo: 1\n", `unknown field "foo" (line 2)`},
		{"top-level typo", "actions: a\nTiers: []\n", `unknown field "Tiers" (did you mean "tiers"?)`},
		{"duplicate top-level", "actions: a\nactions: b\n", `duplicate field "actions"`},
		{"tiers not list", "actions: a\ntiers: {}\n", "tiers: want a sequence"},
		{"tier unknown key", "actions: a\ntiers:\n- plugin: []\n", `tiers[0]: unknown field "plugin" (did you mean "plugins"?)`},
		{"tier scalar", "actions: a\ntiers:\n- x\n", `tiers[0]: want a mapping, got "x"`},
		{"plugin unknown option", `
actions: a
tiers:
- plugins:
  - name: x
- plugins:
  - name: a
  - name: b
  - name: c
    enableFoo: true
`, `tiers[1].plugins[2]: unknown field "enableFoo"`},
		{"plugin option typo", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enablePreemtable: true\n", `unknown field "enablePreemtable" (did you mean "enablePreemptable"?)`},
		{"plugin option case", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enablejoborder: true\n", `(did you mean "enableJobOrder"?)`},
		{"plugin without name", "actions: a\ntiers:\n- plugins:\n  - name: x\n  - enableJobOrder: true\n", "tiers[0].plugins[1]: plugin has no name"},
		{"plugin empty name", "actions: a\ntiers:\n- plugins:\n  - name: ''\n", "tiers[0].plugins[0]: plugin has no name"},
		{"plugin name mapping", "actions: a\ntiers:\n- plugins:\n  - name: {a: b}\n", "tiers[0].plugins[0].name: want a string"},
		{"plugin string", "actions: a\ntiers:\n- plugins:\n  - gang\n", `tiers[0].plugins[0]: want a mapping, got "gang"`},
		{"bad flag value", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enableJobOrder: maybe\n", `tiers[0].plugins[0].enableJobOrder: want a boolean, got "maybe"`},
		{"flag list value", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enableJobOrder: [true]\n", `tiers[0].plugins[0].enableJobOrder: want a boolean, got a sequence`},
		{"duplicate flag", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enableJobOrder: true\n    enableJobOrder: true\n", `tiers[0].plugins[0]: duplicate field "enableJobOrder"`},
		{"arguments scalar", "actions: a\ntiers:\n- plugins:\n  - name: x\n    arguments: 3\n", "tiers[0].plugins[0].arguments: want a mapping"},
		{"arguments duplicate", "actions: a\ntiers:\n- plugins:\n  - name: x\n    arguments: {a: 1, a: 2}\n", `tiers[0].plugins[0].arguments: line 5: mapping key "a" already defined`},
		{"configuration unknown key", "actions: a\nconfigurations:\n- name: a\n  args: {}\n", `configurations[0]: unknown field "args"`},
		{"configuration no name", "actions: a\nconfigurations:\n- arguments: {}\n", "configurations[0]: action configuration has no name"},
		{"metrics nested", "actions: a\nmetrics:\n  a: {b: c}\n", "metrics.a: want a string"},
		{"self alias", "actions: a\ntiers:\n- plugins:\n  - name: x\n    arguments: &a {b: *a}\n", "alias refers to a node that contains itself"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.text))
			if err == nil {
				t.Fatalf("Parse succeeded: %+v", c)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("err is %T, want *Error", err)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	tests := []struct {
		name, text string
		check      func(t *testing.T, c *Config)
	}{
		{"yaml 1.1 booleans", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enableJobOrder: no\n    enablePredicate: on\n", func(t *testing.T, c *Config) {
			p := c.Tiers[0].Plugins[0]
			if p.Enabled(FlagJobOrder) || !p.Enabled(FlagPredicate) {
				t.Errorf("got %+v", p)
			}
		}},
		{"null flag is unset", "actions: a\ntiers:\n- plugins:\n  - name: x\n    enableHierarchy:\n", func(t *testing.T, c *Config) {
			if c.Tiers[0].Plugins[0].EnabledHierarchy != nil {
				t.Error("null flag was set")
			}
		}},
		{"empty tier", "actions: a\ntiers:\n- plugins:\n", func(t *testing.T, c *Config) {
			if len(c.Tiers) != 1 || len(c.Tiers[0].Plugins) != 0 {
				t.Errorf("tiers = %+v", c.Tiers)
			}
		}},
		{"aliases", "actions: a\nargs: &args {w: 2}\n", nil},
		{"anchored plugin", "actions: a\ntiers:\n- plugins:\n  - &g {name: gang, arguments: {w: 2}}\n- plugins:\n  - *g\n", func(t *testing.T, c *Config) {
			if c.Tiers[1].Plugins[0].Name != "gang" {
				t.Errorf("alias not followed: %+v", c.Tiers[1])
			}
			if w, _ := c.Tiers[1].Plugins[0].Arguments.Int("w", 0); w != 2 {
				t.Errorf("w = %d", w)
			}
		}},
		{"timestamp argument stays a string", "actions: a\ntiers:\n- plugins:\n  - name: x\n    arguments: {since: 2024-01-02}\n", func(t *testing.T, c *Config) {
			if s, err := c.Tiers[0].Plugins[0].Arguments.String("since", ""); err != nil || s != "2024-01-02" {
				t.Errorf("since = %q, %v", s, err)
			}
		}},
		{"nested arguments", "actions: a\ntiers:\n- plugins:\n  - name: x\n    arguments:\n      m: {a: [1, 2]}\n", func(t *testing.T, c *Config) {
			m, ok := c.Tiers[0].Plugins[0].Arguments["m"].(map[string]any)
			if !ok || !reflect.DeepEqual(m["a"], []any{1, 2}) {
				t.Errorf("m = %#v", c.Tiers[0].Plugins[0].Arguments["m"])
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.text))
			if tt.name == "aliases" {
				// An unknown top-level key is still rejected, even as an anchor holder.
				if err == nil {
					t.Fatal("unknown top-level key accepted")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, c)
		})
	}
}

func TestAliasBomb(t *testing.T) {
	text := `actions: a
tiers:
- plugins: &p0 [{name: x}, {name: x}, {name: x}, {name: x}, {name: x}, {name: x}, {name: x}, {name: x}, {name: x}, {name: x}]
- plugins:
  - name: y
    arguments:
      a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]
      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]
      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]
      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]
      f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]
      g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]
`
	if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("err = %v, want too large", err)
	}
}

func TestConfigurations(t *testing.T) {
	c, err := Parse([]byte(`
actions: "enqueue, allocate, preempt"
configurations:
- name: allocate
  arguments:
    predicateErrorCacheEnable: false
    mode: fast
- name: preempt
- name: enqueue
  arguments:
    overcommit-factor: 1.2
- name: allocate
  arguments:
    ignored: true
`))
	if err != nil {
		t.Fatal(err)
	}
	alloc := c.ActionArguments("allocate")
	if b, err := alloc.Bool("predicateErrorCacheEnable", true); err != nil || b {
		t.Errorf("predicateErrorCacheEnable = %v, %v", b, err)
	}
	if _, ok := alloc["ignored"]; ok {
		t.Error("ActionArguments returned a later duplicate entry")
	}
	if got := c.ActionArguments("preempt"); got != nil {
		t.Errorf("preempt arguments = %v, want nil", got)
	}
	if got := c.ActionArguments("backfill"); got != nil {
		t.Errorf("backfill arguments = %v, want nil", got)
	}
	if f, err := c.ActionArguments("enqueue").Float64("overcommit-factor", 1); err != nil || f != 1.2 {
		t.Errorf("overcommit-factor = %v, %v", f, err)
	}
	// nil Arguments are usable.
	if v, err := c.ActionArguments("backfill").Int("x", 7); err != nil || v != 7 {
		t.Errorf("nil Arguments Int = %v, %v", v, err)
	}
	// The duplicate is a Validate error.
	err = Validate(c, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `configurations[3]: duplicate configuration for action "allocate" (also configurations[0])`) {
		t.Errorf("Validate = %v", err)
	}
}

func TestValidate(t *testing.T) {
	actions := func(s string) bool {
		return slices.Contains([]string{"enqueue", "allocate", "backfill", "preempt", "reclaim"}, s)
	}
	plugins := func(s string) bool {
		return slices.Contains([]string{"priority", "gang", "conformance", "overcommit", "drf", "proportion", "predicates", "nodeorder", "binpack"}, s)
	}
	tests := []struct {
		name, text string
		want       []string
	}{
		{"ok", example[:strings.Index(example, "metrics:")], nil},
		{"unknown action", `actions: "enqueue, allocate, alocate"`, []string{`actions[2]: unknown action "alocate"`}},
		{"duplicate action", `actions: "allocate, backfill, allocate"`, []string{`actions[2]: duplicate action "allocate" (also actions[0])`}},
		{"unknown plugin", "actions: allocate\ntiers:\n- plugins:\n  - name: priority\n  - name: gnag\n", []string{`tiers[0].plugins[1]: unknown plugin "gnag"`}},
		{"duplicate plugin", "actions: allocate\ntiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: gang\n", []string{`tiers[1].plugins[0]: duplicate plugin "gang" (also tiers[0].plugins[0])`}},
		{"hierarchical drf with proportion", "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n  - name: proportion\n", []string{"tiers[0]: proportion and drf with hierarchy enabled conflict"}},
		{"drf hierarchy in other tier", "actions: allocate\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n- plugins:\n  - name: proportion\n", nil},
		{"unknown configured action", "actions: allocate\nconfigurations:\n- name: alocate\n", []string{`configurations[0]: unknown action "alocate"`}},
		{"several", "actions: \"allocate, foo\"\ntiers:\n- plugins:\n  - name: bar\n", []string{`actions[1]: unknown action "foo"`, `tiers[0].plugins[0]: unknown plugin "bar"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			err = Validate(c, actions, plugins)
			if len(tt.want) == 0 {
				if err != nil {
					t.Errorf("Validate = %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate = nil, want %q", tt.want)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate = %q, want it to contain %q", err, w)
				}
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Errorf("err is %T, want *Error inside", err)
			}
		})
	}

	// Nil registries accept every name; a hand-built config is still checked.
	if err := Validate(&Config{}, nil, nil); err == nil || !strings.Contains(err.Error(), "actions: no actions given") {
		t.Errorf("Validate(empty) = %v", err)
	}
	if err := Validate(&Config{Actions: []string{"x"}, Tiers: []Tier{{Plugins: []PluginOption{{}}}}}, nil, nil); err == nil || !strings.Contains(err.Error(), "tiers[0].plugins[0]: plugin has no name") {
		t.Errorf("Validate(nameless) = %v", err)
	}
	if err := Validate(nil, nil, nil); err == nil {
		t.Error("Validate(nil) = nil")
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	texts := []string{
		example,
		string(defaultYAML),
		"actions: a\ntiers:\n- plugins:\n  - name: \"true\"\n    enabledJobOrder: false\n    enableVictim: true\n    EnabledClusterOrder: true\n    arguments: {a: \"1\", b: 1, c: 1.5, d: yes, e: [x, {y: z}], f: ~, g: \"\", 7: x}\nconfigurations:\n- name: allocate\n  arguments: {}\n- name: backfill\nmetrics: {}\n",
	}
	for _, text := range texts {
		c, err := Parse([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		out, err := c.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		c2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of\n%s\nfailed: %v", out, err)
		}
		c.raw, c2.raw = nil, nil
		if !reflect.DeepEqual(c, c2) {
			t.Errorf("round trip changed config:\n%#v\n%#v\nvia\n%s", c, c2, out)
		}
	}
	c, _ := Parse([]byte("actions: a\ntiers:\n- plugins:\n  - name: v\n    enableVictim: false\n"))
	out, _ := c.Marshal()
	if !strings.Contains(string(out), "enabledVictim: false") || !strings.HasPrefix(string(out), `actions: "a"`) {
		t.Errorf("Marshal does not use Volcano's spelling:\n%s", out)
	}
	if _, err := (&Config{Actions: []string{"a,b"}}).Marshal(); err == nil {
		t.Error("Marshal accepted an action name containing a comma")
	}
	if _, err := (&Config{Actions: []string{"a"}, Tiers: []Tier{{Plugins: []PluginOption{{Name: "x", Arguments: Arguments{"c": make(chan int)}}}}}}).Marshal(); err == nil {
		t.Error("Marshal accepted an unencodable argument")
	}
}

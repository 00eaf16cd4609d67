package conf

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestArgumentsFromYAML(t *testing.T) {
	c, err := Parse([]byte(`
actions: allocate
tiers:
- plugins:
  - name: binpack
    arguments:
      binpack.weight: 10
      binpack.cpu: "5"
      binpack.memory: 2.0
      binpack.ratio: 0.75
      binpack.quoted: "0.5"
      binpack.bad: ten
      binpack.enabled: true
      binpack.enabledStr: "false"
      binpack.enabledYes: yes
      binpack.timeout: 30s
      binpack.list: [1, 2]
      binpack.null: ~
`))
	if err != nil {
		t.Fatal(err)
	}
	a := c.Tiers[0].Plugins[0].Arguments
	if i, err := a.Int("binpack.weight", 1); err != nil || i != 10 {
		t.Errorf("weight = %v, %v", i, err)
	}
	if i, err := a.Int("binpack.cpu", 1); err != nil || i != 5 {
		t.Errorf("cpu = %v, %v", i, err)
	}
	if i, err := a.Int("binpack.memory", 1); err != nil || i != 2 {
		t.Errorf("memory = %v, %v", i, err)
	}
	if _, err := a.Int("binpack.bad", 1); err == nil || err.Error() != `argument "binpack.bad": want integer, got "ten"` {
		t.Errorf("bad int err = %v", err)
	}
	if f, err := a.Float64("binpack.ratio", 0); err != nil || f != 0.75 {
		t.Errorf("ratio = %v, %v", f, err)
	}
	if f, err := a.Float64("binpack.quoted", 0); err != nil || f != 0.5 {
		t.Errorf("quoted = %v, %v", f, err)
	}
	if f, err := a.Float64("binpack.weight", 0); err != nil || f != 10 {
		t.Errorf("weight as float = %v, %v", f, err)
	}
	if b, err := a.Bool("binpack.enabled", false); err != nil || !b {
		t.Errorf("enabled = %v, %v", b, err)
	}
	if b, err := a.Bool("binpack.enabledStr", true); err != nil || b {
		t.Errorf("enabledStr = %v, %v", b, err)
	}
	if b, err := a.Bool("binpack.enabledYes", false); err != nil || !b {
		t.Errorf("enabledYes = %v, %v", b, err)
	}
	if d, err := a.Duration("binpack.timeout", 0); err != nil || d != 30*time.Second {
		t.Errorf("timeout = %v, %v", d, err)
	}
	if s, err := a.String("binpack.weight", ""); err != nil || s != "10" {
		t.Errorf("weight as string = %q, %v", s, err)
	}
	if _, err := a.String("binpack.list", ""); err == nil || err.Error() != `argument "binpack.list": want string, got [1 2]` {
		t.Errorf("list as string err = %v", err)
	}
	for _, key := range []string{"binpack.null", "missing"} {
		if i, err := a.Int(key, 42); err != nil || i != 42 {
			t.Errorf("%s: Int = %v, %v, want default", key, i, err)
		}
	}
	if want := []string{"binpack.bad", "binpack.cpu", "binpack.enabled", "binpack.enabledStr", "binpack.enabledYes", "binpack.list", "binpack.memory", "binpack.null", "binpack.quoted", "binpack.ratio", "binpack.timeout", "binpack.weight"}; !slices.Equal(a.Keys(), want) {
		t.Errorf("Keys = %q", a.Keys())
	}
}

func TestArgumentAccessors(t *testing.T) {
	type call func(a Arguments) (any, error)
	intOf := func(a Arguments) (any, error) { return a.Int("k", -1) }
	floatOf := func(a Arguments) (any, error) { return a.Float64("k", -1) }
	boolOf := func(a Arguments) (any, error) { return a.Bool("k", false) }
	stringOf := func(a Arguments) (any, error) { return a.String("k", "def") }
	durationOf := func(a Arguments) (any, error) { return a.Duration("k", time.Minute) }

	tests := []struct {
		name    string
		get     call
		value   any
		want    any
		wantErr string
	}{
		{"int int", intOf, 3, 3, ""},
		{"int int64", intOf, int64(3), 3, ""},
		{"int uint64", intOf, uint64(3), 3, ""},
		{"int huge uint64", intOf, uint64(1 << 63), -1, "want integer, got 9223372036854775808"},
		{"int whole float", intOf, 3.0, 3, ""},
		{"int fractional float", intOf, 3.5, -1, `argument "k": want integer, got 3.5`},
		{"int huge float", intOf, 1e300, -1, "want integer"},
		{"int string", intOf, " 12 ", 12, ""},
		{"int negative string", intOf, "-4", -4, ""},
		{"int float string", intOf, "1e3", 1000, ""},
		{"int fractional string", intOf, "1.5", -1, `want integer, got "1.5"`},
		{"int word", intOf, "ten", -1, `argument "k": want integer, got "ten"`},
		{"int bool", intOf, true, -1, "want integer, got true"},
		{"int map", intOf, map[string]any{"a": 1}, -1, "want integer, got map[a:1]"},

		{"float float", floatOf, 0.25, 0.25, ""},
		{"float int", floatOf, 4, 4.0, ""},
		{"float string", floatOf, "2.5", 2.5, ""},
		{"float int string", floatOf, "7", 7.0, ""},
		{"float word", floatOf, "half", -1.0, `argument "k": want number, got "half"`},
		{"float inf", floatOf, "Inf", -1.0, "want finite number"},
		{"float bool", floatOf, false, -1.0, "want number, got false"},

		{"bool true", boolOf, true, true, ""},
		{"bool string", boolOf, "true", true, ""},
		{"bool FALSE", boolOf, "FALSE", false, ""},
		{"bool yes", boolOf, "Yes", true, ""},
		{"bool off", boolOf, "off", false, ""},
		{"bool int", boolOf, 1, false, "want boolean, got 1"},
		{"bool word", boolOf, "maybe", false, `argument "k": want boolean, got "maybe"`},

		{"string string", stringOf, "x", "x", ""},
		{"string empty", stringOf, "", "", ""},
		{"string int", stringOf, 5, "5", ""},
		{"string float", stringOf, 0.5, "0.5", ""},
		{"string bool", stringOf, true, "true", ""},
		{"string list", stringOf, []any{"a"}, "def", "want string, got [a]"},

		{"duration string", durationOf, "1m30s", 90 * time.Second, ""},
		{"duration value", durationOf, 2 * time.Second, 2 * time.Second, ""},
		{"duration bare number", durationOf, 30, time.Minute, `argument "k": want duration such as "30s", got 30`},
		{"duration bad", durationOf, "soon", time.Minute, `got "soon"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.get(Arguments{"k": tt.value})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Errorf("err = %v", err)
			}
			if got != tt.want {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

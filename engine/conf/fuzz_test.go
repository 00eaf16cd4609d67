package conf

import (
	"bytes"
	"testing"
)

func FuzzParse(f *testing.F) {
	f.Add(defaultYAML)
	f.Add([]byte(example))
	f.Add([]byte("actions: a\ntiers:\n- plugins:\n  - &p {name: x, enableVictim: true, enabledVictim: false}\n  - *p\n"))
	f.Add([]byte("actions: a\nconfigurations:\n- name: a\n  arguments: {x: [1, 2.5, yes, ~, 2024-01-01]}\nmetrics: {a: b}\n"))
	f.Add([]byte("actions: a\ntiers:\n- plugins:\n  - name: x\n    arguments: &a {b: *a}\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		c, err := Parse(text)
		if err != nil {
			return
		}
		_ = Validate(c, nil, nil)
		for _, tier := range c.Tiers {
			for _, p := range tier.Plugins {
				for _, k := range p.Arguments.Keys() {
					_, _ = p.Arguments.Int(k, 0)
					_, _ = p.Arguments.Float64(k, 0)
					_, _ = p.Arguments.Bool(k, false)
					_, _ = p.Arguments.String(k, "")
					_, _ = p.Arguments.Duration(k, 0)
				}
			}
		}
		// Whatever parses must marshal, and marshalling must be stable.
		out, err := c.Marshal()
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		c2, err := Parse(out)
		if err != nil {
			t.Fatalf("re-parse of\n%s\nfailed: %v", out, err)
		}
		out2, err := c2.Marshal()
		if err != nil {
			t.Fatalf("second Marshal: %v", err)
		}
		if !bytes.Equal(out, out2) {
			t.Fatalf("Marshal not stable:\n%s\n---\n%s", out, out2)
		}
	})
}

package scenario

import (
	"errors"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	binds := func(bs ...Bind) map[string]Bind {
		m := map[string]Bind{}
		for _, b := range bs {
			m[b.Task] = b
		}
		return m
	}
	b := func(task, job, node string, devs ...string) Bind {
		return Bind{Task: task, Job: job, Node: node, DeviceIDs: devs}
	}
	ev := func(task, job, node string) Eviction { return Eviction{Task: task, Job: job, Node: node} }

	tests := []struct {
		name   string
		expect Expect
		out    Outcome
		want   string // "" for a pass; otherwise the exact error
	}{
		{"nothing checked", Expect{}, Outcome{Binds: binds(b("default/a", "default/j", "n1"))}, ""},
		{"binds exact", Expect{Binds: map[string]string{"default/a": "n1", "default/b": "*"}},
			Outcome{Binds: binds(b("default/a", "default/j", "n1"), b("default/b", "default/j", "n2"))}, ""},
		{"binds empty expects none", Expect{Binds: map[string]string{}},
			Outcome{Binds: binds(b("default/y", "default/j", "n1"))}, "binds: unexpected bind default/y -> n1"},
		{"binds empty and none", Expect{Binds: map[string]string{}}, Outcome{}, ""},
		{"binds wrong node", Expect{Binds: map[string]string{"default/t-1": "n-0"}},
			Outcome{Binds: binds(b("default/t-1", "default/j", "n-1"))}, "binds: default/t-1 bound to n-1, want n-0"},
		{"binds missing", Expect{Binds: map[string]string{"default/x": "n1"}}, Outcome{},
			"binds: missing bind default/x (want n1)"},
		{"binds missing any", Expect{Binds: map[string]string{"default/x": "*"}}, Outcome{},
			"binds: missing bind default/x"},
		{"binds several differences, first by name", Expect{Binds: map[string]string{"default/b": "n1", "default/c": "n1"}},
			Outcome{Binds: binds(b("default/a", "default/j", "n1"), b("default/b", "default/j", "n2"))},
			"binds: unexpected bind default/a -> n1 (and 2 more differences)"},

		{"bindCounts ok", Expect{BindCounts: map[string]int{"default/ja": 2, "default/jb": 0}},
			Outcome{Binds: binds(b("default/a", "default/ja", "n1"), b("default/b", "default/ja", "n1"))}, ""},
		{"bindCounts short", Expect{BindCounts: map[string]int{"default/ja": 28}},
			Outcome{Binds: binds(b("default/a", "default/ja", "n1"))}, "bindCounts: default/ja got 1, want 28"},
		{"bindCounts unlisted job", Expect{BindCounts: map[string]int{"default/ja": 1}},
			Outcome{Binds: binds(b("default/a", "default/ja", "n1"), b("default/z", "default/jz", "n1"))},
			"bindCounts: default/jz got 1, want 0 (not listed)"},

		{"pipelined ok", Expect{Pipelined: map[string]string{"default/h": "n1"}}, Outcome{Pipelined: map[string]string{"default/h": "n1"}}, ""},
		{"pipelined wrong", Expect{Pipelined: map[string]string{"default/h": "n1"}}, Outcome{Pipelined: map[string]string{"default/h": "n2"}},
			"pipelined: default/h pipelined to n2, want n1"},
		{"pipelined unexpected", Expect{Pipelined: map[string]string{}}, Outcome{Pipelined: map[string]string{"default/h": "n2"}},
			"pipelined: unexpected pipeline of default/h -> n2"},
		{"pipelined missing", Expect{Pipelined: map[string]string{"default/h": "*"}}, Outcome{},
			"pipelined: missing pipeline of default/h"},

		{"evicted order ignored", Expect{Evicted: []string{"default/b", "default/a"}},
			Outcome{Evictions: []Eviction{ev("default/a", "default/j", "n1"), ev("default/b", "default/j", "n1")}}, ""},
		{"evicted missing", Expect{Evicted: []string{"default/a"}}, Outcome{}, "evicted: missing eviction of default/a"},
		{"evicted unexpected", Expect{Evicted: []string{}}, Outcome{Evictions: []Eviction{ev("default/a", "default/j", "n1")}},
			"evicted: unexpected eviction of default/a (from n1)"},
		{"evicted twice", Expect{Evicted: []string{"default/a"}},
			Outcome{Evictions: []Eviction{ev("default/a", "default/j", "n1"), ev("default/a", "default/j", "n1")}},
			"evicted: default/a evicted 2 times, want 1"},

		{"evictCounts ok", Expect{EvictCounts: map[string]int{"default/low": 2}},
			Outcome{Evictions: []Eviction{ev("default/a", "default/low", "n1"), ev("default/b", "default/low", "n1")}}, ""},
		{"evictCounts wrong", Expect{EvictCounts: map[string]int{"default/low": 2}},
			Outcome{Evictions: []Eviction{ev("default/a", "default/low", "n1")}}, "evictCounts: default/low got 1, want 2"},
		{"evictCounts unlisted", Expect{EvictCounts: map[string]int{}},
			Outcome{Evictions: []Eviction{ev("default/a", "default/mid", "n1")}}, "evictCounts: default/mid got 1, want 0 (not listed)"},

		{"jobPhases ok", Expect{JobPhases: map[string]string{"default/j1": "Inqueue"}}, Outcome{JobPhases: map[string]string{"default/j1": "Inqueue"}}, ""},
		{"jobPhases wrong", Expect{JobPhases: map[string]string{"default/j3": "Pending"}}, Outcome{JobPhases: map[string]string{"default/j3": "Inqueue"}},
			"jobPhases: default/j3 is Inqueue, want Pending"},

		{"queues within tolerance", Expect{Queues: map[string]QueueAmounts{"a": {Deserved: map[string]string{"cpu": "28", "memory": "1Gi"}}}},
			Outcome{Queues: map[string]QueueAmounts{"a": {Deserved: map[string]string{"cpu": "28000m", "memory": "1073741824", "pods": "9"}}}}, ""},
		{"queues 1m tolerance", Expect{Queues: map[string]QueueAmounts{"a": {Allocated: map[string]string{"cpu": "0"}}}},
			Outcome{Queues: map[string]QueueAmounts{"a": {Allocated: map[string]string{"cpu": "1m"}}}}, ""},
		{"queues 0.1% tolerance", Expect{Queues: map[string]QueueAmounts{"a": {Deserved: map[string]string{"cpu": "30"}}}},
			Outcome{Queues: map[string]QueueAmounts{"a": {Deserved: map[string]string{"cpu": "29.98"}}}}, ""},
		{"queues wrong", Expect{Queues: map[string]QueueAmounts{"a": {Deserved: map[string]string{"cpu": "28"}}}},
			Outcome{Queues: map[string]QueueAmounts{"a": {Deserved: map[string]string{"cpu": "27"}}}}, "queues: a deserved cpu = 27, want 28"},
		{"queues missing resource is zero", Expect{Queues: map[string]QueueAmounts{"q1": {Allocated: map[string]string{"cpu": "2"}}}},
			Outcome{Queues: map[string]QueueAmounts{"q1": {}}}, "queues: q1 allocated cpu = 0, want 2"},

		{"deviceBinds ok", Expect{DeviceBinds: map[string][]string{"default/t": {"g1", "g0"}}},
			Outcome{Binds: binds(b("default/t", "default/j", "n1", "g0", "g1"))}, ""},
		{"deviceBinds wrong", Expect{DeviceBinds: map[string][]string{"default/t": {"g0"}}},
			Outcome{Binds: binds(b("default/t", "default/j", "n1", "g1"))}, "deviceBinds: default/t got devices [g1], want [g0]"},
		{"deviceBinds not bound", Expect{DeviceBinds: map[string][]string{"default/t": {"g0"}}}, Outcome{},
			"deviceBinds: default/t was not bound, want devices [g0]"},

		{"unschedulable ok", Expect{Unschedulable: map[string]string{"default/batch": "0/2"}},
			Outcome{Explanations: map[string]string{"default/batch": "0/2 nodes are available: 2 node(s) didn't match selector"}}, ""},
		{"unschedulable wrong", Expect{Unschedulable: map[string]string{"default/batch": "0/2"}},
			Outcome{Explanations: map[string]string{"default/batch": "1/2 nodes"}}, `unschedulable: default/batch explanation "1/2 nodes" does not contain "0/2"`},
		{"unschedulable none", Expect{Unschedulable: map[string]string{"default/batch": "0/2"}}, Outcome{},
			`unschedulable: default/batch has no explanation, want one containing "0/2"`},

		{"keys checked in order", Expect{
			EvictCounts: map[string]int{"default/low": 2},
			Binds:       map[string]string{"default/high-0": "n1"},
		}, Outcome{}, "binds: missing bind default/high-0 (want n1) (and 1 more difference)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out
			err := Compare(&tc.expect, &out)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("unexpected difference: %v", err)
			case tc.want != "" && err == nil:
				t.Errorf("no difference, want %q", tc.want)
			case tc.want != "" && err.Error() != tc.want:
				t.Errorf("got  %q\nwant %q", err, tc.want)
			}
			var m *Mismatch
			if err != nil && (!errors.As(err, &m) || len(m.Diffs) == 0) {
				t.Errorf("error %T is not a *Mismatch with diffs", err)
			}
		})
	}
}

func TestCompareAllDiffs(t *testing.T) {
	err := Compare(&Expect{
		Binds:       map[string]string{"default/a": "n1"},
		BindCounts:  map[string]int{"default/j": 2},
		EvictCounts: map[string]int{"default/j": 1},
	}, &Outcome{})
	var m *Mismatch
	if !errors.As(err, &m) {
		t.Fatalf("err = %v", err)
	}
	want := []string{
		"binds: missing bind default/a (want n1)",
		"bindCounts: default/j got 0, want 2",
		"evictCounts: default/j got 0, want 1",
	}
	if strings.Join(m.Diffs, "\n") != strings.Join(want, "\n") {
		t.Errorf("diffs\n%s\nwant\n%s", strings.Join(m.Diffs, "\n"), strings.Join(want, "\n"))
	}
	if Compare(&Expect{}, nil) != nil {
		t.Error("nil outcome with nothing expected must pass")
	}
}

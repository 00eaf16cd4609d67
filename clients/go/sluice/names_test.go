package sluice_test

import (
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/sluice-sched/sluice/clients/go/sluice"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestFullName(t *testing.T) {
	tests := []struct {
		ref  sluice.Ref
		want string
	}{
		{&sluicev1.TaskRef{Namespace: "team", Name: "t-0"}, "team/t-0"},
		{&sluicev1.JobRef{Name: "j"}, "default/j"},
		{&sluicev1.JobRef{Namespace: "team", Name: "etl/nightly"}, "team/etl/nightly"},
		{&sluicev1.Task{Namespace: "ns", Name: "t"}, "ns/t"},
		{(*sluicev1.TaskRef)(nil), ""},
		{&sluicev1.TaskRef{Namespace: "ns"}, ""},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := sluice.FullName(tc.ref); got != tc.want {
			t.Errorf("sluice.FullName(%v) = %q, want %q", tc.ref, got, tc.want)
		}
	}
}

// Every value of each closed set (UNSPECIFIED aside) has a name that parses back to it, and
// nothing else parses.
func TestClosedSetNames(t *testing.T) {
	check := func(desc protoreflect.EnumDescriptor, name func(protoreflect.EnumNumber) string, parse func(string) (protoreflect.EnumNumber, bool)) {
		t.Helper()
		vals := desc.Values()
		for i := range vals.Len() {
			v := vals.Get(i).Number()
			n := name(v)
			if v == 0 {
				if n != "" {
					t.Errorf("%s: UNSPECIFIED is named %q", desc.Name(), n)
				}
				continue
			}
			if got, ok := parse(n); !ok || got != v {
				t.Errorf("%s: %s is named %q, which parses to %d (%v)", desc.Name(), vals.Get(i).Name(), n, got, ok)
			}
		}
		for _, bad := range []string{"", "nosuch", string(vals.Get(1).Name())} {
			if _, ok := parse(bad); ok {
				t.Errorf("%s: %q parses", desc.Name(), bad)
			}
		}
		if name(99) != "" {
			t.Errorf("%s: 99 is named %q", desc.Name(), name(99))
		}
	}
	check(sluicev1.TaintEffect(0).Descriptor(),
		func(v protoreflect.EnumNumber) string { return sluice.TaintEffectName(sluicev1.TaintEffect(v)) },
		func(s string) (protoreflect.EnumNumber, bool) {
			e, ok := sluice.ParseTaintEffect(s)
			return e.Number(), ok
		})
	check(sluicev1.TolerationOperator(0).Descriptor(),
		func(v protoreflect.EnumNumber) string {
			return sluice.TolerationOperatorName(sluicev1.TolerationOperator(v))
		},
		func(s string) (protoreflect.EnumNumber, bool) {
			e, ok := sluice.ParseTolerationOperator(s)
			return e.Number(), ok
		})
	check(sluicev1.WhenUnsatisfiable(0).Descriptor(),
		func(v protoreflect.EnumNumber) string {
			return sluice.WhenUnsatisfiableName(sluicev1.WhenUnsatisfiable(v))
		},
		func(s string) (protoreflect.EnumNumber, bool) {
			e, ok := sluice.ParseWhenUnsatisfiable(s)
			return e.Number(), ok
		})
	check(sluicev1.NetworkTopologyMode(0).Descriptor(),
		func(v protoreflect.EnumNumber) string {
			return sluice.NetworkTopologyModeName(sluicev1.NetworkTopologyMode(v))
		},
		func(s string) (protoreflect.EnumNumber, bool) {
			e, ok := sluice.ParseNetworkTopologyMode(s)
			return e.Number(), ok
		})
	if e, _ := sluice.ParseTaintEffect("NoSchedule"); e != sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE {
		t.Errorf("NoSchedule parses to %v", e)
	}
}

package builtin

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/conf"
)

func TestRegistryRunsTheDefaultConfiguration(t *testing.T) {
	reg := Registry()
	if err := reg.Validate(conf.Default()); err != nil {
		t.Fatalf("the embedded default configuration does not validate: %v", err)
	}
	for _, a := range []string{"enqueue", "allocate", "backfill", "preempt", "reclaim", "shuffle"} {
		if !reg.HasAction(a) {
			t.Errorf("action %q is not registered", a)
		}
	}
	for _, p := range []string{"gang", "priority", "drf", "proportion", "predicates", "nodeorder", "binpack"} {
		if !reg.HasPlugin(p) {
			t.Errorf("plugin %q is not registered", p)
		}
	}
}

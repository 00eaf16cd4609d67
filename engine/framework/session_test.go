package framework

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/conf"
)

func TestHierarchyEnabled(t *testing.T) {
	tests := []struct {
		name, config string
		want         bool
	}{
		{"set", "tiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n", true},
		{"unset: opt-in flag is off", "tiers:\n- plugins:\n  - name: drf\n", false},
		{"plugin not configured", "tiers:\n- plugins:\n  - name: gang\n    enableHierarchy: true\n", false},
		{"first entry decides", "tiers:\n- plugins:\n  - name: drf\n- plugins:\n  - name: drf\n    enableHierarchy: true\n", false},
		{"found in a later tier", "tiers:\n- plugins:\n  - name: gang\n- plugins:\n  - name: drf\n    enableHierarchy: true\n", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := conf.Parse([]byte("actions: \"allocate\"\n" + tc.config))
			if err != nil {
				t.Fatal(err)
			}
			s := &Session{Tiers: cfg.Tiers}
			if got := s.HierarchyEnabled("drf"); got != tc.want {
				t.Errorf("HierarchyEnabled(drf) = %v, want %v", got, tc.want)
			}
		})
	}
}

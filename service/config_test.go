package service

import (
	"errors"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestReloadConfig(t *testing.T) {
	h := newHarness(t)
	ctx := ctxT(t)
	get := func(cluster string) string {
		t.Helper()
		resp, err := h.sc.GetSchedulerConfig(ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: cluster})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetConfig()
	}
	pinned := "actions: \"otheraction\"\ntiers:\n- plugins:\n  - name: fakenoop\n"
	h.apply("pinned")
	h.apply("new-cluster")
	h.apply("another")
	if _, err := h.sc.UpdateSchedulerConfig(ctx, &sluicev1.UpdateSchedulerConfigRequest{Cluster: "pinned", Config: pinned}); err != nil {
		t.Fatal(err)
	}
	smallCluster(h, "c1")
	if get("c1") != testConfig {
		t.Fatalf("before any reload: %q", get("c1"))
	}

	next := "actions: \"fakealloc, otheraction\"\ntiers:\n- plugins:\n  - name: fakenoop\n"
	if err := h.srv.ReloadConfig([]byte(next)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"c1", "new-cluster"} {
		if got := get(c); got != next {
			t.Errorf("%s after the reload: %q", c, got)
		}
	}
	if get("pinned") != pinned {
		t.Errorf("a cluster configured through the API follows the file: %q", get("pinned"))
	}
	resp, err := h.sc.Schedule(ctx, &sluicev1.ScheduleRequest{Cluster: "c1"})
	if err != nil || len(resp.GetPlan().GetStats().GetActions()) != 2 {
		t.Fatalf("cycle after the reload: %v, %v", resp, err)
	}

	// A bad configuration is refused with its reason; the previous one stays.
	err = h.srv.ReloadConfig([]byte("actions: \"fakealloc, nosuchaction\"\n"))
	if !errors.Is(err, engine.ErrInvalidConfig) || !strings.Contains(err.Error(), "nosuchaction") {
		t.Fatalf("bad reload: %v", err)
	}
	if err := h.srv.ReloadConfig([]byte("actions: [")); err == nil {
		t.Fatal("unparsable reload accepted")
	}
	if get("c1") != next || get("another") != next {
		t.Fatal("a refused reload changed the configuration")
	}
}

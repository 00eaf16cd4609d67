package k8sutil

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

// viewPlugin exposes a View built in OnSessionOpen.
type viewPlugin struct{ view *View }

func (p *viewPlugin) Name() string                         { return "view" }
func (p *viewPlugin) OnSessionOpen(ssn *framework.Session) { p.view = NewView(ssn) }
func (p *viewPlugin) OnSessionClose(*framework.Session)    {}

func TestView(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(16, 16))
	c.Node("n2", tu.CPU(16, 16))
	j := c.Job("j", "q", 1)
	run := c.Task(j, "run", api.Running, "n1", tu.CPU(2, 2))
	run.Affinity = &api.Affinity{TaskAntiAffinity: []api.TaskAffinityTerm{{TopologyKey: "zone", Required: true}}}
	c.Task(j, "be", api.Running, "n1", tu.Res(map[string]float64{"memory": 1 << 30}))
	c.Task(j, "pend", api.Pending, "", tu.CPU(1, 1))
	vp := &viewPlugin{}
	ssn := c.Open(t, tu.OneTier("view"), map[string]framework.PluginBuilder{
		"view": func(conf.Arguments) (framework.Plugin, error) { return vp, nil },
	})
	v := vp.view
	n1, n2 := ssn.Nodes["n1"], ssn.Nodes["n2"]
	if got := v.TaskCount(n1); got != 2 {
		t.Fatalf("TaskCount(n1) = %d, want 2", got)
	}
	if d := v.Delta("n1"); d == nil || d.ZeroCPU != 1 || d.ZeroMemory != 0 {
		t.Fatalf("Delta(n1) = %+v, want one task without cpu", d)
	}
	if len(v.WithAffinity()) != 1 {
		t.Fatalf("WithAffinity has %d tasks, want 1", len(v.WithAffinity()))
	}

	gen := v.Gen()
	stmt := ssn.NewStatement()
	pend := tu.TaskOf(t, ssn, "j", "pend")
	if err := stmt.Allocate(pend, n2); err != nil {
		t.Fatal(err)
	}
	victim := tu.TaskOf(t, ssn, "j", "run")
	if err := stmt.Evict(victim, framework.EvictReason{Action: "test"}); err != nil {
		t.Fatal(err)
	}
	if v.Gen() == gen {
		t.Error("Gen did not change")
	}
	if !v.Gone(victim.UID) || v.TaskCount(n1) != 1 || v.TaskCount(n2) != 1 {
		t.Errorf("after evict: gone %v, counts %d %d", v.Gone(victim.UID), v.TaskCount(n1), v.TaskCount(n2))
	}
	if d := v.Delta("n1"); d.Evicted != 1 || d.EvictedReq.MilliCPU != 2000 {
		t.Errorf("Delta(n1) after evict = %+v", d)
	}
	if len(v.WithAffinity()) != 0 {
		t.Error("an evicted task keeps its affinity entry")
	}
	stmt.Discard()
	if v.Gone(victim.UID) || v.TaskCount(n1) != 2 || v.TaskCount(n2) != 0 || len(v.WithAffinity()) != 1 {
		t.Errorf("after discard: gone %v, counts %d %d, affinity %d", v.Gone(victim.UID), v.TaskCount(n1), v.TaskCount(n2), len(v.WithAffinity()))
	}
	if d := v.Delta("n1"); d.Evicted != 0 || d.EvictedReq.MilliCPU != 0 || d.ZeroCPU != 1 {
		t.Errorf("Delta(n1) after discard = %+v", d)
	}
}

// TestSessionViewIsShared: plugins of one session get one view, kept up to date by one event
// handler; another session gets its own.
func TestSessionViewIsShared(t *testing.T) {
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(16, 16))
	j := c.Job("j", "q", 1)
	c.Task(j, "pend", api.Pending, "", tu.Res(map[string]float64{"memory": 1 << 30}))
	var views []*View
	builder := func(conf.Arguments) (framework.Plugin, error) {
		return &sharedViewPlugin{got: &views}, nil
	}
	open := func() *framework.Session {
		return c.Open(t, "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: a\n  - name: b\n",
			map[string]framework.PluginBuilder{"a": builder, "b": builder})
	}
	ssn := open()
	if len(views) != 2 || views[0] != views[1] {
		t.Fatalf("two plugins of one session got %d views, distinct: %v", len(views), len(views) == 2 && views[0] != views[1])
	}
	st := ssn.NewStatement()
	if err := st.Allocate(tu.TaskOf(t, ssn, "j", "pend"), ssn.Nodes["n1"]); err != nil {
		t.Fatal(err)
	}
	if d := views[0].Delta("n1"); d == nil || d.ZeroCPU != 1 {
		t.Errorf("after an allocation the shared view has %+v for n1, want one task without cpu (counted once)", d)
	}
	open()
	if len(views) != 4 || views[2] == views[0] {
		t.Error("another session shares the first session's view")
	}
}

type sharedViewPlugin struct{ got *[]*View }

func (p *sharedViewPlugin) Name() string { return "shared" }
func (p *sharedViewPlugin) OnSessionOpen(ssn *framework.Session) {
	*p.got = append(*p.got, SessionView(ssn))
}
func (p *sharedViewPlugin) OnSessionClose(*framework.Session) {}

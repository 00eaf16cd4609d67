package shuffle

import (
	"slices"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// picker is a test plugin whose victim-tasks callback chooses the offered tasks named in
// pick (in pick's order, repeats allowed) and records what it was offered.
type picker struct {
	pick    []string
	offered []string
}

func (p *picker) Name() string { return "picker" }
func (p *picker) OnSessionOpen(ssn *framework.Session) {
	ssn.AddVictimTasksFn("picker", func(tasks []*api.TaskInfo) []*api.TaskInfo {
		byName := map[string]*api.TaskInfo{}
		for _, t := range tasks {
			p.offered = append(p.offered, t.Name)
			byName[t.Name] = t
		}
		var out []*api.TaskInfo
		for _, n := range p.pick {
			if t, ok := byName[n]; ok {
				out = append(out, t)
			}
		}
		return out
	})
}
func (p *picker) OnSessionClose(*framework.Session) {}

func res(cpu float64) api.Resource { return *api.NewResource(map[string]float64{"cpu": cpu}) }

func run(t *testing.T, p *picker) *framework.Result {
	t.Helper()
	snap := &framework.Snapshot{
		Cluster: "c",
		Nodes:   []*api.Node{{Name: "n1", Allocatable: res(8)}},
		Queues:  []*api.Queue{{Name: "q", Weight: 1}},
		Jobs: []*api.Job{
			{Name: "b", Namespace: "ns", Queue: "q", MinAvailable: 1, Phase: api.JobRunning},
			{Name: "a", Namespace: "ns", Queue: "q", MinAvailable: 1, Phase: api.JobRunning},
		},
		Tasks: []*api.Task{
			{Name: "b-0", Namespace: "ns", Job: "b", Resources: res(1), Status: api.Running, Node: "n1"},
			{Name: "a-1", Namespace: "ns", Job: "a", Resources: res(1), Status: api.Running, Node: "n1"},
			{Name: "a-0", Namespace: "ns", Job: "a", Resources: res(1), Status: api.Running, Node: "n1"},
			{Name: "a-2", Namespace: "ns", Job: "a", Resources: res(1), Status: api.Releasing, Node: "n1"},
			{Name: "a-3", Namespace: "ns", Job: "a", Resources: res(1), Status: api.Pending},
		},
	}
	cfg, err := conf.Parse([]byte("actions: \"shuffle\"\ntiers:\n- plugins:\n  - name: picker\n"))
	if err != nil {
		t.Fatal(err)
	}
	reg := framework.NewRegistry()
	reg.RegisterPlugin("picker", func(conf.Arguments) (framework.Plugin, error) { return p, nil })
	reg.RegisterAction(Name, New)
	ssn, err := framework.OpenSession(snap, cfg, reg, framework.Options{Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := ssn.RunActions(reg); err != nil {
		t.Fatal(err)
	}
	return ssn.Close()
}

func TestShuffle(t *testing.T) {
	tests := []struct {
		name string
		pick []string
		want []string
	}{
		{"nothing chosen", nil, nil},
		{"chosen order kept", []string{"b-0", "a-0"}, []string{"ns/b-0", "ns/a-0"}},
		{"each task once", []string{"a-1", "a-1"}, []string{"ns/a-1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &picker{pick: tc.pick}
			r := run(t, p)
			// Only running tasks are offered, jobs and tasks in name order.
			if want := []string{"a-0", "a-1", "b-0"}; !slices.Equal(p.offered, want) {
				t.Errorf("offered %v, want %v", p.offered, want)
			}
			var got []string
			for _, d := range r.Decisions {
				if d.Kind != framework.DecisionEvict {
					t.Errorf("unexpected decision %+v", d)
					continue
				}
				if d.Action != Name || d.Reason != Rule || d.ForTask != "" || d.Node != "n1" {
					t.Errorf("decision %+v: want action %q, rule %q, node n1, no preemptor", d, Name, Rule)
				}
				got = append(got, d.Task)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("evicted %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNew(t *testing.T) {
	a, err := New(nil)
	if err != nil || a.Name() != Name {
		t.Fatalf("New: %v, %v", a, err)
	}
}

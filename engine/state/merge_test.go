package state

import (
	"reflect"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
)

var (
	at0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at1 = at0.Add(time.Minute)
	at2 = at0.Add(2 * time.Minute)
)

// committed builds a cluster whose job ns/j was made Running and whose task ns/a was bound to
// n1 with device g0 by a plan commit: the server-owned fields the tests below must keep.
func committed(t *testing.T, s *Store) {
	t.Helper()
	gpus := []api.Device{{ID: "g0", Type: "gpu"}, {ID: "g1", Type: "gpu"}}
	if _, err := s.Apply("c", Batch{Now: at0, Changes: []Change{
		{Node: &api.Node{Name: "n1", Devices: gpus}}, {Node: &api.Node{Name: "n2", Devices: gpus}},
		queue("q", ""), job("ns", "j", "q"),
		{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j", Labels: map[string]string{"v": "1"},
			Devices: []api.DeviceRequest{{Type: "gpu", Count: 1}}}},
	}}); err != nil {
		t.Fatal(err)
	}
	out, err := s.CommitPlan("c", &PlanCommit{
		BaseRevision: s.Revision("c"),
		Decisions:    []PlanDecision{{Kind: Bind, Task: "ns/a", Node: "n1", DeviceIDs: []string{"g0"}}},
		Phases:       []PhaseChange{{Job: "ns/j", Phase: api.JobRunning}},
	})
	if err != nil || out.Rejected[0] != "" {
		t.Fatalf("commit: %+v, %v", out, err)
	}
}

func TestUpsertKeepsJobPhaseAndCreation(t *testing.T) {
	for _, replicate := range []bool{false, true} {
		s := New()
		if replicate {
			s, _ = replicated()
		}
		committed(t, s)
		v := s.Snapshot("c")
		if j, _ := v.Job("ns/j"); j.Phase != api.JobRunning || !j.CreatedAt.Equal(at0) {
			t.Fatalf("after the commit: phase %s, created %v; want Running, %v", j.Phase, j.CreatedAt, at0)
		}
		// A label-only upsert leaves phase and creation time unset: both stay.
		relabel := &api.Job{Namespace: "ns", Name: "j", Queue: "q", MinAvailable: 1, Labels: map[string]string{"k": "v"}}
		if _, err := s.Apply("c", Batch{Now: at1, Changes: []Change{{Job: relabel}}}); err != nil {
			t.Fatal(err)
		}
		j, _ := s.Snapshot("c").Job("ns/j")
		if j.Phase != api.JobRunning || !j.CreatedAt.Equal(at0) || j.Labels["k"] != "v" {
			t.Errorf("replicated=%v: after a label-only upsert: %+v, want Running, created %v, the label", replicate, j, at0)
		}
		if relabel.Phase != "" || !relabel.CreatedAt.IsZero() {
			t.Errorf("the upserted object was modified: %+v", relabel)
		}
		// The resource manager may set them.
		set := &api.Job{Namespace: "ns", Name: "j", Queue: "q", Phase: api.JobPending, CreatedAt: at2}
		if _, err := s.Apply("c", Batch{Now: at1, Changes: []Change{{Job: set}}}); err != nil {
			t.Fatal(err)
		}
		if j, _ := s.Snapshot("c").Job("ns/j"); j.Phase != api.JobPending || !j.CreatedAt.Equal(at2) {
			t.Errorf("replicated=%v: explicit phase and time: %+v", replicate, j)
		}
		// A new job is Inqueue, created at the batch's time.
		if _, err := s.Apply("c", Batch{Now: at1, Changes: []Change{job("ns", "k", "q")}}); err != nil {
			t.Fatal(err)
		}
		if k, _ := s.Snapshot("c").Job("ns/k"); k.Phase != api.JobInqueue || !k.CreatedAt.Equal(at1) {
			t.Errorf("replicated=%v: new job: phase %s, created %v", replicate, k.Phase, k.CreatedAt)
		}
	}
}

func TestUpsertKeepsTaskPlacement(t *testing.T) {
	report := func(st api.TaskStatus, node string, devices ...string) *api.Task {
		return &api.Task{Namespace: "ns", Name: "a", Job: "j", Status: st, Node: node, DeviceIDs: devices,
			Devices: []api.DeviceRequest{{Type: "gpu", Count: 1}}}
	}
	tests := []struct {
		name    string
		reports []*api.Task // applied in turn, at at1 then at2
		status  api.TaskStatus
		node    string
		devices []string
		started time.Time
	}{
		{"after the commit", nil, api.Bound, "n1", []string{"g0"}, time.Time{}},
		{"running without device ids keeps them", []*api.Task{report(api.Running, "n1")},
			api.Running, "n1", []string{"g0"}, at1},
		{"running without a node keeps node and devices", []*api.Task{report(api.Running, "")},
			api.Running, "n1", []string{"g0"}, at1},
		{"no status keeps status, node and devices", []*api.Task{report(0, "")},
			api.Bound, "n1", []string{"g0"}, time.Time{}},
		{"running again keeps the first start", []*api.Task{report(api.Running, "n1"), report(0, "")},
			api.Running, "n1", []string{"g0"}, at1},
		{"other device ids replace them", []*api.Task{report(api.Running, "n1", "g1")},
			api.Running, "n1", []string{"g1"}, at1},
		{"another node drops them", []*api.Task{report(api.Running, "n2")},
			api.Running, "n2", nil, at1},
		{"pending again drops node, devices and start", []*api.Task{report(api.Running, "n1"), report(api.Pending, "")},
			api.Pending, "", nil, time.Time{}},
		{"finished keeps its start, leaves the node", []*api.Task{report(api.Running, "n1"), report(api.Succeeded, "")},
			api.Succeeded, "", nil, at1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := New()
			committed(t, s)
			for i, r := range tt.reports {
				if _, err := s.Apply("c", Batch{Now: at1.Add(time.Duration(i) * time.Minute), Changes: []Change{{Task: r}}}); err != nil {
					t.Fatalf("report %d: %v", i, err)
				}
			}
			a, _ := s.Snapshot("c").Task("ns/a")
			if a.Status != tt.status || a.Node != tt.node || !reflect.DeepEqual(a.DeviceIDs, tt.devices) || !a.StartedAt.Equal(tt.started) {
				t.Errorf("task = %s on %q with %v started %v; want %s on %q with %v started %v",
					a.Status, a.Node, a.DeviceIDs, a.StartedAt, tt.status, tt.node, tt.devices, tt.started)
			}
			// What the resource manager owns is replaced: the report had no labels.
			if len(tt.reports) > 0 && a.Labels != nil {
				t.Errorf("labels %v survived an upsert without them", a.Labels)
			}
		})
	}
}

func TestUpsertPlacedTaskNeedsANode(t *testing.T) {
	s := New()
	committed(t, s)
	mustApply(t, s, "c", pendingTask("ns", "p", "j"))
	// A pending task has no node to keep.
	_, err := s.Apply("c", batch(task("ns", "p", "j", "", api.Running)))
	wantValidation(t, err, 0, "changes[0].task.node", "must name its node")
}

func TestReplaceAllKeepsServerOwnedFields(t *testing.T) {
	s := New()
	committed(t, s)
	gpus := []api.Device{{ID: "g0", Type: "gpu"}}
	if _, err := s.Apply("c", Batch{ReplaceAll: true, Now: at2, Changes: []Change{
		{Node: &api.Node{Name: "n1", Devices: gpus}}, queue("q", ""), job("ns", "j", "q"),
		{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j", Status: api.Running, Node: "n1"}},
	}}); err != nil {
		t.Fatal(err)
	}
	v := s.Snapshot("c")
	if j, _ := v.Job("ns/j"); j.Phase != api.JobRunning || !j.CreatedAt.Equal(at0) {
		t.Errorf("job after replace_all: phase %s, created %v", j.Phase, j.CreatedAt)
	}
	if a, _ := v.Task("ns/a"); !reflect.DeepEqual(a.DeviceIDs, []string{"g0"}) || !a.StartedAt.Equal(at2) {
		t.Errorf("task after replace_all: devices %v, started %v", a.DeviceIDs, a.StartedAt)
	}
	if _, ok := v.Node("n2"); ok {
		t.Error("n2 survived replace_all")
	}
}

func TestNodeReportedAgain(t *testing.T) {
	s := New()
	committed(t, s)
	before := s.Snapshot("c")
	rev, _ := before.ModRevision(KindNode, "n1")
	// The resource manager reports n1 again, cordoned, without labels and with one device.
	mustApply(t, s, "c", Change{Node: &api.Node{Name: "n1", Unschedulable: true, Devices: []api.Device{{ID: "g0", Type: "gpu"}}}})
	v := s.Snapshot("c")
	n, _ := v.Node("n1")
	if !n.Unschedulable || len(n.Devices) != 1 || n.Labels != nil {
		t.Errorf("node = %+v: every field is the resource manager's and replaced", n)
	}
	if got, _ := v.ModRevision(KindNode, "n1"); got <= rev {
		t.Errorf("node mod revision %d, want above %d", got, rev)
	}
	// What the server placed on the node stays there.
	if a, _ := v.Task("ns/a"); a.Node != "n1" || a.Status != api.Bound || !reflect.DeepEqual(a.DeviceIDs, []string{"g0"}) {
		t.Errorf("task a = %s on %q with %v, want Bound on n1 with [g0]", a.Status, a.Node, a.DeviceIDs)
	}
	if got := taskKeys(v.TasksOnNode("n1")); !reflect.DeepEqual(got, []string{"ns/a"}) {
		t.Errorf("TasksOnNode(n1) = %v", got)
	}
}

func TestLoggedBatchesKeepTheirSemantics(t *testing.T) {
	report := Change{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j", Status: api.Running, Node: "n1"}}
	for _, whole := range []bool{false, true} {
		data, err := MarshalOp(&Op{Cluster: "c", Batch: &Batch{Now: at1, whole: whole, Changes: []Change{report}}})
		if err != nil {
			t.Fatal(err)
		}
		op, err := UnmarshalOp(data)
		if err != nil {
			t.Fatal(err)
		}
		if !op.Batch.Now.Equal(at1) || op.Batch.whole != whole {
			t.Fatalf("decoded batch: now %v, whole %v; want %v, %v", op.Batch.Now, op.Batch.whole, at1, whole)
		}
		s := New()
		committed(t, s)
		if res := s.ApplyOp(op); res.Err != nil {
			t.Fatal(res.Err)
		}
		// A batch logged before merges replaces the task whole: its devices go.
		a, _ := s.Snapshot("c").Task("ns/a")
		if got, want := len(a.DeviceIDs), map[bool]int{false: 1, true: 0}[whole]; got != want {
			t.Errorf("whole=%v: %d device ids after the report, want %d", whole, got, want)
		}
	}
}

// An owned batch's objects are filled in place, and give the store what a copy would; any
// other batch's objects are left as the caller made them, and so are an owned batch's in a
// replicated store (the log takes the batch as it came).
func TestOwnedBatchesFillInPlace(t *testing.T) {
	reports := func() []Change {
		return []Change{
			{Job: &api.Job{Namespace: "ns", Name: "j", Queue: "q", MinAvailable: 1}},
			{Task: &api.Task{Namespace: "ns", Name: "a", Job: "j"}},
			{Task: &api.Task{Namespace: "ns", Name: "b", Job: "j", Status: api.Running, Node: "n1"}},
		}
	}
	run := func(s *Store, owned bool) (changes []Change, stored string) {
		committed(t, s)
		changes = reports()
		if _, err := s.Apply("c", Batch{Now: at1, Changes: changes, Owned: owned}); err != nil {
			t.Fatal(err)
		}
		return changes, dump(&s.Snapshot("c").View)
	}
	copied, want := run(New(), false)
	if !reflect.DeepEqual(copied, reports()) {
		t.Errorf("a batch that is not owned was modified: %+v", copied)
	}
	owned, got := run(New(), true)
	if got != want {
		t.Errorf("owned batch stored\n%s\nwant\n%s", got, want)
	}
	if owned[0].Job.Phase != api.JobRunning || owned[1].Task.Status != api.Bound || !owned[2].Task.StartedAt.Equal(at1) {
		t.Errorf("owned objects not filled in place: %+v %+v %+v", owned[0].Job, owned[1].Task, owned[2].Task)
	}
	s, _ := replicated()
	logged, got := run(s, true)
	if got != want {
		t.Errorf("replicated owned batch stored\n%s\nwant\n%s", got, want)
	}
	if !reflect.DeepEqual(logged, reports()) {
		t.Errorf("a replicated owned batch was modified: %+v", logged)
	}
}

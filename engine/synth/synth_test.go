package synth_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
)

func TestGenerateIsDeterministic(t *testing.T) {
	spec := synth.Spec{Seed: 9, Nodes: 40, Jobs: 50, TasksPerJob: 3, Queues: 4, Shapes: synth.Mixed}
	a, err := synth.Generate(spec)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := synth.Generate(spec)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same spec gave different clusters")
	}
	if len(a.Nodes) != 40 || len(a.Jobs) != 50 || len(a.Tasks) != 150 || len(a.Queues) != 4 || a.Objects() != 244 {
		t.Fatalf("sizes: %d nodes, %d jobs, %d tasks, %d queues", len(a.Nodes), len(a.Jobs), len(a.Tasks), len(a.Queues))
	}
	spec.Seed = 10
	c, _ := synth.Generate(spec)
	if reflect.DeepEqual(a.Tasks, c.Tasks) {
		t.Error("another seed gave the same mixed tasks")
	}
	gpu := 0
	for _, tk := range a.Tasks {
		if tk.Resources.Get(api.ResourceGPU) > 0 {
			gpu++
		}
	}
	if gpu == 0 || gpu == len(a.Tasks) {
		t.Errorf("%d of %d mixed tasks ask for a GPU", gpu, len(a.Tasks))
	}
}

func TestValidate(t *testing.T) {
	good := synth.Spec{Nodes: 1, Jobs: 0, TasksPerJob: 1, Queues: 1, Shapes: synth.Uniform}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []func(*synth.Spec){
		func(s *synth.Spec) { s.Nodes = 0 },
		func(s *synth.Spec) { s.Jobs = -1 },
		func(s *synth.Spec) { s.TasksPerJob = 0 },
		func(s *synth.Spec) { s.Queues = 0 },
		func(s *synth.Spec) { s.Shapes = "square" },
	} {
		s := good
		bad(&s)
		if _, err := synth.Generate(s); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
}

func TestNow(t *testing.T) {
	c, _ := synth.Generate(synth.Spec{Nodes: 1, Jobs: 3, TasksPerJob: 1, Queues: 1, Shapes: synth.Uniform})
	if want := api.Epoch.Add(2*time.Second + time.Minute); !c.Now().Equal(want) {
		t.Errorf("Now = %v, want %v", c.Now(), want)
	}
	empty, _ := synth.Generate(synth.Spec{Nodes: 1, TasksPerJob: 1, Queues: 1, Shapes: synth.Uniform})
	if !empty.Now().Equal(api.Epoch.Add(time.Minute)) {
		t.Errorf("Now without jobs = %v", empty.Now())
	}
}

func TestBatchesAndLoad(t *testing.T) {
	c, _ := synth.Generate(synth.Spec{Seed: 1, Nodes: 7, Jobs: 5, TasksPerJob: 4, Queues: 2, Shapes: synth.Uniform})
	bs := c.Batches(6)
	n := 0
	for _, b := range bs {
		if len(b.Changes) > 6 {
			t.Errorf("batch of %d changes", len(b.Changes))
		}
		n += len(b.Changes)
	}
	if n != c.Objects() {
		t.Fatalf("%d changes, want %d", n, c.Objects())
	}
	st := state.New()
	if err := c.Load(st, "x"); err != nil {
		t.Fatal(err)
	}
	snap := st.Snapshot("x")
	if len(snap.Nodes()) != 7 || len(snap.Queues()) != 2 || len(snap.Jobs()) != 5 || len(snap.Tasks()) != 20 {
		t.Errorf("loaded %d nodes, %d queues, %d jobs, %d tasks", len(snap.Nodes()), len(snap.Queues()), len(snap.Jobs()), len(snap.Tasks()))
	}
}

func TestGangs(t *testing.T) {
	c, err := synth.Generate(synth.Spec{Seed: 1, Nodes: 3, Jobs: 1, TasksPerJob: 2, Queues: 2, Shapes: synth.Uniform})
	if err != nil {
		t.Fatal(err)
	}
	// 3 nodes of 32 cpu, 128Gi and 110 pods hold 16 tasks of 2 cpu / 4Gi each.
	if got := c.Slots(api.Resource{}); got != 48 {
		t.Errorf("Slots = %d, want 48", got)
	}
	at := api.Epoch.Add(time.Hour)
	b := c.Add(synth.Gangs{Prefix: "hi", Count: 3, Size: 2, MinAvailable: 1, Queues: []string{"q000", "q001"},
		Priority: 7, HasPriority: true, CreatedAt: at})
	if len(c.Jobs) != 4 || len(c.Tasks) != 8 || len(b.Changes) != 9 {
		t.Fatalf("%d jobs, %d tasks, %d changes; want 4, 8, 9", len(c.Jobs), len(c.Tasks), len(b.Changes))
	}
	if b.Changes[0].Job == nil || b.Changes[1].Task == nil || b.Changes[3].Job == nil {
		t.Error("a job's change does not come right before its tasks'")
	}
	j := c.Jobs[3]
	if j.Name != "hi-00002" || j.Queue != "q000" || j.MinAvailable != 1 || j.Priority != 7 || !j.CreatedAt.Equal(at.Add(2*time.Second)) {
		t.Errorf("third gang: %+v", j)
	}
	if tk := c.Tasks[7]; tk.Name != "hi-00002-1" || tk.Job != "hi-00002" || tk.Resources.MilliCPU != 2000 {
		t.Errorf("last task: %+v", tk)
	}
	st := state.New()
	if err := c.Load(st, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Apply("c", c.Add(synth.Gangs{Prefix: "more", Count: 1, Size: 1, Queues: []string{"q001"}, CreatedAt: at})); err != nil {
		t.Fatalf("the batch of new gangs does not apply: %v", err)
	}
}

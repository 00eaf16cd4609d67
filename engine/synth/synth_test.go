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

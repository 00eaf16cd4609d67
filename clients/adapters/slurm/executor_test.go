package slurm

import (
	"context"
	"errors"
	"reflect"
	"testing"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func bind(task, node string) *sluicev1.Decision {
	job := task[:len(task)-2]
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Bind{Bind: &sluicev1.BindDecision{Task: slurmTask(task), Job: slurmJob(job), Node: node}}}
}

// slurmTask and slurmJob name a task and a job of the adapter's namespace, as the server does.
func slurmTask(name string) *sluicev1.TaskRef {
	if name == "" {
		return nil
	}
	return &sluicev1.TaskRef{Namespace: "slurm", Name: name}
}

func slurmJob(name string) *sluicev1.JobRef { return &sluicev1.JobRef{Namespace: "slurm", Name: name} }

func evict(task, node, forTask string) *sluicev1.Decision {
	job := task[:len(task)-2]
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Evict{Evict: &sluicev1.EvictDecision{
		Task: slurmTask(task), Job: slurmJob(job), Node: node, ForTask: slurmTask(forTask), Action: "preempt"}}}
}

func pipeline(task, node string) *sluicev1.Decision {
	return &sluicev1.Decision{Kind: &sluicev1.Decision_Pipeline{Pipeline: &sluicev1.PipelineDecision{Task: slurmTask(task), Node: node}}}
}

func TestExecuteBindsAndEvictions(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	f := newFakeSlurm(t, "squeue.json")
	e := &Executor{Runner: f}
	actions := e.Execute(context.Background(), st, []*sluicev1.Decision{
		bind("job-6-1", "sn2"), // the gang job's tasks, out of order
		pipeline("job-3-0", "sn1"),
		evict("job-1-0", "sn1", "job-3-0"),
		evict("job-1-1", "sn2", "job-3-0"),
		bind("job-6-0", "sn1"),
		bind("job-2-0", "sn3"),
	})
	want := []string{
		// Evictions first; a job is evicted once, whole.
		"scontrol requeuehold 1",
		// Task order gives the node order.
		"scontrol update JobId=6 NodeList=sn1,sn2 StartTime=now",
		"scontrol release 6",
		"scontrol update JobId=2 NodeList=sn3 StartTime=now",
		"scontrol release 2",
	}
	if got := f.actions(); !reflect.DeepEqual(got, want) {
		t.Errorf("commands\n got %q\nwant %q", got, want)
	}
	if len(actions) != 3 {
		t.Fatalf("%d actions", len(actions))
	}
	a := actions[0]
	if a.Kind != ActionRequeue || a.JobID != 1 || !reflect.DeepEqual(a.Nodes, []string{"sn1", "sn2"}) || !reflect.DeepEqual(a.ForTasks, []string{"slurm/job-3-0"}) || a.Err != nil {
		t.Errorf("evict action %+v", a)
	}
	if a := actions[1]; a.Kind != ActionStart || a.JobID != 6 || !reflect.DeepEqual(a.Nodes, []string{"sn1", "sn2"}) || a.Err != nil {
		t.Errorf("start action %+v", a)
	}
}

func TestExecuteCancelMode(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{EvictMode: EvictCancel})
	f := newFakeSlurm(t, "squeue.json")
	e := &Executor{Runner: f, EvictMode: EvictCancel, Commands: Commands{Scancel: "/opt/slurm/bin/scancel"}}
	actions := e.Execute(context.Background(), st, []*sluicev1.Decision{evict("job-5-0", "sn3", "")})
	if got := f.actions(); !reflect.DeepEqual(got, []string{"scancel 5"}) {
		t.Errorf("commands %q", got)
	}
	if actions[0].Kind != ActionCancel || actions[0].Commands[0] != "/opt/slurm/bin/scancel 5" {
		t.Errorf("action %+v", actions[0])
	}
}

func TestExecuteEvictDispatchedJobHoldsIt(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	f := newFakeSlurm(t, "squeue.json")
	(&Executor{Runner: f}).Execute(context.Background(), st, []*sluicev1.Decision{evict("job-8-0", "sn1", "job-3-0")})
	if got := f.actions(); !reflect.DeepEqual(got, []string{"scontrol hold 8"}) {
		t.Errorf("commands %q", got)
	}
}

func TestExecuteRefusesWhatSlurmCannotDo(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	f := newFakeSlurm(t, "squeue.json")
	e := &Executor{Runner: f}
	actions := e.Execute(context.Background(), st, []*sluicev1.Decision{
		bind("job-6-0", "sn1"),       // half a gang
		bind("job-1-0", "sn1"),       // already running
		bind("job-9-0", "sn1"),       // unknown job
		evict("job-9-0", "sn1", ""),  // unknown job
		bind("job-2-0", "sn1"),       // fine
		bind("job-3-0", "sn1"),       // fine
		bind("job-8-0", "sn1"),       // dispatched already
		evict("job-77-0", "sn1", ""), // unknown job
	})
	if got := f.actions(); !reflect.DeepEqual(got, []string{
		"scontrol update JobId=2 NodeList=sn1 StartTime=now", "scontrol release 2",
		"scontrol update JobId=3 NodeList=sn1 StartTime=now", "scontrol release 3",
	}) {
		t.Errorf("commands %q", got)
	}
	failed := 0
	for _, a := range actions {
		if a.Err != nil {
			failed++
		}
	}
	if failed != 6 {
		t.Errorf("%d failed actions, want 6: %+v", failed, actions)
	}

	// Two tasks of one Slurm job on one node cannot be: Slurm takes distinct nodes.
	actions = e.Execute(context.Background(), st, []*sluicev1.Decision{bind("job-6-0", "sn1"), bind("job-6-1", "sn1")})
	if actions[0].Err == nil || len(f.actions()) != 0 {
		t.Errorf("a job bound twice to one node was started: %+v", actions[0])
	}
}

func TestExecuteStopsWhenUpdateFails(t *testing.T) {
	st := mustMap(t, fixtureSnapshot(t, "squeue.json"), Options{})
	f := newFakeSlurm(t, "squeue.json")
	f.setFail("scontrol update JobId=2", errors.New("exit status 1"))
	actions := (&Executor{Runner: f}).Execute(context.Background(), st, []*sluicev1.Decision{bind("job-2-0", "sn1")})
	if got := f.actions(); !reflect.DeepEqual(got, []string{"scontrol update JobId=2 NodeList=sn1 StartTime=now"}) {
		t.Errorf("released after a failed update: %q", got)
	}
	var ce *CommandError
	if !errors.As(actions[0].Err, &ce) {
		t.Errorf("error %v", actions[0].Err)
	}
}

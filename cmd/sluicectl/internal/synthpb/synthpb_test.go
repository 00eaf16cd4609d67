package synthpb_test

import (
	"context"
	"fmt"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/cmd/sluicectl/internal/synthpb"
	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
	"github.com/sluice-sched/sluice/engine/synth"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

func TestResources(t *testing.T) {
	r := *api.NewResource(map[string]float64{"cpu": 2.5, "memory": 1536 << 20, "pods": 110, api.ResourceGPU: 1})
	got := synthpb.Resources(r)
	want := map[string]string{"cpu": "2500m", "memory": "1536Mi", "pods": "110", api.ResourceGPU: "1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Resources = %v, want %v", got, want)
	}
	if got := synthpb.Resources(*api.NewResource(map[string]float64{"memory": 1000, "cpu": 64})); got["memory"] != "1000" || got["cpu"] != "64" {
		t.Errorf("Resources = %v", got)
	}
	if got := synthpb.Resources(api.Resource{}); got != nil {
		t.Errorf("empty resource = %v, want nil", got)
	}
}

func TestBatches(t *testing.T) {
	c, err := synth.Generate(synth.Spec{Seed: 3, Nodes: 5, Jobs: 4, TasksPerJob: 3, Queues: 2, Shapes: synth.Mixed})
	if err != nil {
		t.Fatal(err)
	}
	bs := synthpb.Batches(c, 4)
	n := 0
	var kinds []string
	for i, b := range bs {
		if b.GetSequence() != uint64(i+1) || b.GetReplaceAll() != (i == 0) || len(b.GetDeltas()) > 4 {
			t.Errorf("batch %d: sequence %d, replace_all %v, %d deltas", i, b.GetSequence(), b.GetReplaceAll(), len(b.GetDeltas()))
		}
		for _, d := range b.GetDeltas() {
			kinds = append(kinds, fmt.Sprintf("%T", d.GetChange())[len("*sluicev1.Delta_Upsert"):])
		}
		n += len(b.GetDeltas())
	}
	if n != c.Objects() || len(bs) != (c.Objects()+3)/4 {
		t.Fatalf("%d deltas in %d batches, want %d", n, len(bs), c.Objects())
	}
	want := "[Queue Queue Node Node Node Node Node Job Task Task Task Job Task Task Task Job Task Task Task Job Task Task Task]"
	if fmt.Sprint(kinds) != want {
		t.Errorf("order %v, want %s", kinds, want)
	}
	if one := synthpb.Batches(c, 0); len(one) != 1 || len(one[0].GetDeltas()) != c.Objects() {
		t.Errorf("size 0: %d batches", len(one))
	}
}

// TestSameClusterThroughSync streams a generated cluster through Sync into a real server and
// requires the server's dry-run plan to equal, decision by decision, the plan of an engine
// whose store was loaded directly (synth.Cluster.Load).
func TestSameClusterThroughSync(t *testing.T) {
	c, err := synth.Generate(synth.Spec{Seed: 5, Nodes: 30, Jobs: 60, TasksPerJob: 4, Queues: 3, Shapes: synth.Mixed})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	st := state.New()
	if err := c.Load(st, "x"); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(st, engine.Options{Registry: builtin.Registry()})
	if err != nil {
		t.Fatal(err)
	}
	local, err := eng.Schedule(ctx, "x", engine.ScheduleRequest{Mode: engine.DryRun, Now: c.Now()})
	if err != nil {
		t.Fatal(err)
	}

	addr, stop, err := service.StartInProcess(ctx, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	stream, err := sluicev1.NewClusterStateServiceClient(conn).Sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Hello{Hello: &sluicev1.SyncHello{Cluster: "x"}}}); err != nil {
		t.Fatal(err)
	}
	if m, err := stream.Recv(); err != nil || m.GetWelcome() == nil {
		t.Fatalf("welcome: %v %v", m, err)
	}
	for _, b := range synthpb.Batches(c, 50) {
		if err := stream.Send(&sluicev1.SyncRequest{Message: &sluicev1.SyncRequest_Batch{Batch: b}}); err != nil {
			t.Fatal(err)
		}
		m, err := stream.Recv()
		if err != nil || m.GetAck() == nil {
			t.Fatalf("batch %d: %v %v", b.GetSequence(), m, err)
		}
	}
	_ = stream.CloseSend()
	resp, err := sluicev1.NewSchedulerServiceClient(conn).Schedule(ctx, &sluicev1.ScheduleRequest{
		Cluster: "x", Mode: sluicev1.ScheduleMode_SCHEDULE_MODE_DRY_RUN, Now: timestamppb.New(c.Now())})
	if err != nil {
		t.Fatal(err)
	}

	var want, got []string
	for _, d := range local.Result.Decisions {
		if d.Kind != framework.DecisionBind {
			t.Fatalf("unexpected decision %+v", d)
		}
		want = append(want, d.Task+"@"+d.Node)
	}
	for _, d := range resp.GetPlan().GetDecisions() {
		got = append(got, d.GetBind().GetTask().GetNamespace()+"/"+d.GetBind().GetTask().GetName()+"@"+d.GetBind().GetNode())
	}
	if len(want) == 0 {
		t.Fatal("the in-process cycle placed nothing")
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("through Sync the plan differs:\n got %v\nwant %v", got, want)
	}
}

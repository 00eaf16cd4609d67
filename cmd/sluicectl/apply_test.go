package main

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// TestApplyReplaceLargerThanOneMessage replaces a cluster whose one batch would be several
// times gRPC's default 4 MiB message limit, against a server with that limit: apply sends it
// as a chunked resync, and the cluster becomes the file's.
func TestApplyReplaceLargerThanOneMessage(t *testing.T) {
	const limit = 4 << 20
	addr, stop, err := service.StartInProcess(context.Background(), builtin.Registry(),
		func(o *service.Options) { o.MaxRecvBytes = limit })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	var file strings.Builder
	file.WriteString("queues: [{name: q}]\nnodes: [{namePrefix: node-, count: 2000, allocatable: {cpu: 64, memory: 256Gi}}]\njobs:\n")
	const jobs, replicas = 12, 10000
	for j := range jobs {
		fmt.Fprintf(&file, "- {name: job-%02d, queue: q, tasks: [{name: w%02d, replicas: %d, resources: {cpu: 500m, memory: 1Gi}}]}\n", j, j, replicas)
	}
	c, err := scenario.ParseCluster("big.yaml", []byte(file.String()))
	if err != nil {
		t.Fatal(err)
	}
	batch := c.Batch()
	if size := proto.Size(batch); size < 2*limit {
		t.Fatalf("the cluster encodes to %d bytes in one batch; the test wants more than twice %d", size, limit)
	}
	path := writeFile(t, "big.yaml", file.String())
	// Something to replace.
	if code, _, errOut := sluicectl(t, clusterFile, "--server", addr, "--cluster", "big", "apply", "-f", "-"); code != 0 {
		t.Fatalf("first apply: %s", errOut)
	}
	code, out, errOut := sluicectl(t, "", "--server", addr, "--cluster", "big", "apply", "--replace", "-f", path)
	want := fmt.Sprintf("replaced %d objects into cluster big at revision 2\n", len(batch.GetDeltas()))
	if code != 0 || out != want {
		t.Fatalf("apply --replace: exit %d, out %q, err %q; want %q", code, out, errOut, want)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	cs := sluicev1.NewClusterStateServiceClient(conn)
	ctx := context.Background()
	if _, err := cs.GetNode(ctx, &sluicev1.GetNodeRequest{Cluster: "big", Name: "n1"}); err == nil {
		t.Fatal("the first apply's node survived the replacement")
	}
	resp, err := cs.ListTasks(ctx, &sluicev1.ListTasksRequest{Cluster: "big", Job: fmt.Sprintf("job-%02d", jobs-1), PageSize: 1000})
	if err != nil || len(resp.GetTasks()) != 1000 || resp.GetNextPageToken() == "" {
		t.Fatalf("tasks of the last job: %d, %v", len(resp.GetTasks()), err)
	}
}

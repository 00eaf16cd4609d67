package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/cmd/builtin"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

const scenarioFile = `name: s
config: |
  actions: "allocate"
cluster:
  queues: [{name: q}]
  nodes: [{name: n1, allocatable: {cpu: 4}}]
  jobs: [{name: j, queue: q, tasks: [{name: t, replicas: 2}]}]
expect: {binds: {}}
`

// A plain cluster file applies in both its shapes; a scenario applies its cluster, and its
// config only when asked to.
func TestApplyFileShapes(t *testing.T) {
	underCluster := "cluster:\n" + strings.ReplaceAll(clusterFile, "\n", "\n  ")
	tests := []struct {
		name, file string
		args       []string
		wantConfig string
		wantErr    string
	}{
		{name: "plain", file: clusterFile},
		{name: "under cluster", file: underCluster},
		{name: "scenario", file: scenarioFile,
			wantErr: "is a scenario; its config was not applied (pass --with-config to set it as cluster default's scheduler configuration)"},
		{name: "scenario --with-config", file: scenarioFile, args: []string{"--with-config"}, wantConfig: "actions: \"allocate\"\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			f.config = ""
			addr := serve(t, f)
			path := writeFile(t, "c.yaml", tc.file)
			code, out, errOut := sluicectl(t, "", append([]string{"--server", addr, "apply", "-f", path}, tc.args...)...)
			if code != exitOK || !strings.HasPrefix(out, "merged 5 objects into cluster default at revision 8\n") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if len(f.batches) != 1 || len(f.batches[0].Deltas) != 5 {
				t.Errorf("batches %v", f.batches)
			}
			if f.config != tc.wantConfig {
				t.Errorf("config %q, want %q", f.config, tc.wantConfig)
			}
			if tc.wantConfig != "" && !strings.Contains(out, "set the scheduler configuration of cluster default") {
				t.Errorf("stdout %q does not say the configuration was set", out)
			}
			if !strings.Contains(errOut, tc.wantErr) || (tc.wantErr == "" && errOut != "") {
				t.Errorf("stderr %q, want %q", errOut, tc.wantErr)
			}
		})
	}
}

// What is wrong in a file is reported first, with its path, whatever the file's shape; and
// nothing is sent.
func TestApplyReportsTheRealTypo(t *testing.T) {
	tests := []struct{ name, file, want string }{
		{"typo under cluster, no name", "cluster:\n  nodes: [{name: n1, alocatable: {cpu: 4}}]\n", "cluster.nodes[0].alocatable: unknown key"},
		{"typo in a scenario", strings.Replace(scenarioFile, "replicas", "replica", 1), "cluster.jobs[0].tasks[0].replica: unknown key"},
		{"typo at the top", "cluster: {}\nconfgi: x\n", "confgi: unknown key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake()
			addr := serve(t, f)
			path := writeFile(t, "c.yaml", tc.file)
			code, _, errOut := sluicectl(t, "", "--server", addr, "apply", "-f", path)
			if code != exitFailure || !strings.HasPrefix(errOut, "sluicectl: "+path+": "+tc.want) {
				t.Errorf("exit %d, stderr %q, want %q", code, errOut, tc.want)
			}
			if len(f.batches) != 0 || len(f.hellos) != 0 {
				t.Errorf("sent %d batches", len(f.batches))
			}
		})
	}
}

// --with-config needs a config, and a configuration the server refuses leaves the cluster
// as it was.
func TestApplyWithConfigErrors(t *testing.T) {
	f := newFake()
	addr := serve(t, f)
	code, _, errOut := sluicectl(t, "", "--server", addr, "apply", "--with-config", "-f", writeFile(t, "c.yaml", clusterFile))
	if code != exitFailure || !strings.Contains(errOut, "has no config (only a scenario file has one)") {
		t.Errorf("plain file --with-config: exit %d %q", code, errOut)
	}
	f.cfgErr = status.Error(codes.InvalidArgument, "unknown action \"allocat\"")
	code, _, errOut = sluicectl(t, "", "--server", addr, "apply", "--with-config", "-f", writeFile(t, "s.yaml", scenarioFile))
	if code != exitFailure || !strings.Contains(errOut, `apply: set the scenario's config: InvalidArgument: unknown action "allocat"`) {
		t.Errorf("refused config: exit %d %q", code, errOut)
	}
	if len(f.batches) != 0 {
		t.Errorf("sent %d batches after the configuration was refused", len(f.batches))
	}
}

// --with-config on a cluster that does not exist yet, against a real server (which keeps no
// configuration of a cluster no batch created): a configuration the server refuses leaves the
// cluster uncreated; a good one is set once the batch created the cluster.
func TestApplyWithConfigCreatesTheCluster(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, stop, err := service.StartInProcess(ctx, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	bad := writeFile(t, "bad.yaml", strings.Replace(scenarioFile, `"allocate"`, `"allocat"`, 1))
	code, _, errOut := sluicectl(t, "", "--server", addr, "--cluster", "fresh", "apply", "--with-config", "-f", bad)
	if code != exitFailure || !strings.Contains(errOut, "apply: set the scenario's config") {
		t.Fatalf("refused config: exit %d %q", code, errOut)
	}
	if code, _, errOut := sluicectl(t, "", "--server", addr, "--cluster", "fresh", "describe", "cluster", "fresh"); code == exitOK {
		t.Fatalf("a refused configuration created the cluster: %q", errOut)
	}
	code, out, errOut := sluicectl(t, "", "--server", addr, "--cluster", "fresh", "apply", "--with-config", "-f", writeFile(t, "s.yaml", scenarioFile))
	if code != exitOK || !strings.Contains(out, "set the scheduler configuration of cluster fresh") {
		t.Fatalf("apply --with-config of a new cluster: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut = sluicectl(t, "", "--server", addr, "--cluster", "fresh", "config", "get")
	if code != exitOK || !strings.Contains(out, `actions: "allocate"`) {
		t.Fatalf("config get: exit %d, %q %q", code, out, errOut)
	}
}

// The README's "Trying it" applies testdata/examples/cluster.yaml and schedules it: the file
// applies to a real (in-process) server, the workers and the web server are placed, and the
// big job waits, with an explanation once a cycle that is not a dry run considered it.
func TestReadmeExampleFile(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, stop, err := service.StartInProcess(ctx, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	file := filepath.Join("..", "..", "testdata", "examples", "cluster.yaml")
	if code, out, errOut := sluicectl(t, "", "--server", addr, "apply", "-f", file); code != exitOK || !strings.HasPrefix(out, "merged 11 objects into cluster default") {
		t.Fatalf("apply: exit %d, %q %q", code, out, errOut)
	}
	code, out, errOut := sluicectl(t, "", "--server", addr, "schedule", "--dry-run")
	if code != exitOK {
		t.Fatalf("schedule: exit %d %q", code, errOut)
	}
	for _, want := range []string{"BIND default/train-worker-0", "BIND default/train-worker-1", "BIND default/web-0", "default/big 0 1 "} {
		if !strings.Contains(strings.Join(lines(out), "\n"), want) {
			t.Errorf("schedule --dry-run lacks %q:\n%s", want, out)
		}
	}
	// As the README goes on: a proposal (explanations are of cycles that were not dry runs),
	// then why the big job waits.
	if code, out, errOut := sluicectl(t, "", "--server", addr, "schedule"); code != exitOK {
		t.Fatalf("schedule: exit %d %q %q", code, out, errOut)
	}
	if code, out, _ := sluicectl(t, "", "--server", addr, "explain", "default/big"); code != exitOK || !strings.Contains(out, "summary: ") {
		t.Errorf("explain: exit %d %q", code, out)
	}
}

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

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/service"
)

// sharedEnv names the directory holding the public acceptance set's scenarios/ when it is not
// ../shared beside the checkout (the Makefile passes its SHARED).
const sharedEnv = "SLUICE_SHARED"

// scenarioSet is a directory of scenarios and the name its subtests go under.
type scenarioSet struct{ name, dir string }

// scenarioSets returns the scenario sets to play: the project's testdata/scenarios and, when
// the directory exists, the shared scenarios.
func scenarioSets(t *testing.T) []scenarioSet {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found from the package directory: %v", err)
	}
	sets := []scenarioSet{{"project", filepath.Join(root, "testdata", "scenarios")}}
	shared := os.Getenv(sharedEnv)
	if shared == "" {
		shared = filepath.Join(root, "..", "shared")
	}
	if info, err := os.Stat(filepath.Join(shared, "scenarios")); err == nil && info.IsDir() {
		sets = append(sets, scenarioSet{"shared", filepath.Join(shared, "scenarios")})
	} else {
		t.Logf("no shared scenarios at %s (set %s to play them)", shared, sharedEnv)
	}
	return sets
}

// TestScenarios plays every scenario file through the gRPC API of one in-process server, as
// `sluicectl scenario run` does, one parallel subtest per file (each scenario has a cluster of
// its own), so that a scenario that fails fails `go test`.
func TestScenarios(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	addr, stop, err := service.StartInProcess(ctx, builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	seen := map[string]string{}
	for _, set := range scenarioSets(t) {
		dir := set.dir
		files, err := scenario.Files(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		if len(files) == 0 {
			t.Errorf("%s: no scenario files", dir)
		}
		for _, file := range files {
			rel, _ := filepath.Rel(dir, file)
			name := set.name + "/" + strings.TrimSuffix(rel, filepath.Ext(rel))
			sc, loadErr := scenario.LoadFile(file)
			var dup string
			if loadErr == nil {
				dup = seen[sc.Name]
				seen[sc.Name] = file
			}
			t.Run(name, func(t *testing.T) {
				switch {
				case loadErr != nil:
					t.Fatalf("%s: %v", file, loadErr)
				case dup != "":
					t.Fatalf("%s: duplicate scenario name %s (also in %s)", file, sc.Name, dup)
				}
				t.Parallel()
				if res := scenario.Run(ctx, conn, sc, scenario.ClusterName(sc.Name)); !res.Passed() {
					t.Errorf("%s: %s", file, res.Failure)
				}
			})
		}
	}
}

// TestScenarioEpochIsTheEngines: scenario files and the engine's generated clusters and tests
// count time from one instant, kept twice because clients do not import the engine.
func TestScenarioEpochIsTheEngines(t *testing.T) {
	if !scenario.Epoch.Equal(api.Epoch) {
		t.Errorf("scenario.Epoch = %v, api.Epoch = %v; want one instant", scenario.Epoch, api.Epoch)
	}
}

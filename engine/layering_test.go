package engine_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/sluice-sched/sluice"

// TestLayering keeps the architecture's import rules true: the engine never imports plugins,
// the service or generated code; the service never imports plugins or actions; plugins never
// import the state store, memdb, gen or the service; clients (libraries and adapters, which
// users build against the API alone) never import the engine, plugins, the service or cmd;
// engine/api imports only the standard library.
func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Deps \",\"}}", module+"/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	rules := []struct {
		pkgPrefix string
		forbidden []string
	}{
		{module + "/engine", []string{module + "/plugins", module + "/service", module + "/gen", module + "/cmd", module + "/clients", "google.golang.org/grpc"}},
		{module + "/plugins", []string{module + "/engine/state", "github.com/hashicorp/go-memdb", module + "/gen", module + "/service", module + "/engine/actions"}},
		// The service takes a registry; cmd/builtin assembles the built-in one.
		{module + "/service", []string{module + "/plugins", module + "/engine/actions", module + "/cmd"}},
		{module + "/clients", []string{module + "/engine", module + "/plugins", module + "/service", module + "/cmd"}},
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, depList, _ := strings.Cut(line, "|")
		deps := strings.Split(depList, ",")
		if pkg == module+"/engine/api" {
			for _, d := range deps {
				if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
					t.Errorf("engine/api imports %s; it may import only the standard library", d)
				}
			}
		}
		for _, r := range rules {
			if pkg != r.pkgPrefix && !strings.HasPrefix(pkg, r.pkgPrefix+"/") {
				continue
			}
			checked++
			for _, d := range deps {
				for _, f := range r.forbidden {
					if d == f || strings.HasPrefix(d, f+"/") {
						t.Errorf("%s imports %s", pkg, d)
					}
				}
			}
		}
	}
	if checked < 5 {
		t.Fatalf("only %d packages checked; the go list output looks wrong", checked)
	}
}

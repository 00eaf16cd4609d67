package durability

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A user who starts a durable sluiced and applies a file at once (README: "Trying it") gets
// the file applied: sluicectl waits while nothing listens yet and while the raft member
// elects itself, instead of failing with UNAVAILABLE.
func TestSluicectlAppliesWhileTheLeaderIsElected(t *testing.T) {
	need(t)
	ctl := filepath.Join(t.TempDir(), "sluicectl")
	if out, err := exec.Command("go", "build", "-o", ctl, "github.com/sluice-sched/sluice/cmd/sluicectl").CombinedOutput(); err != nil {
		t.Fatalf("building sluicectl: %v\n%s", err, out)
	}
	file := filepath.Join(t.TempDir(), "c.yaml")
	cluster := "cluster:\n  queues: [{name: q}]\n  nodes: [{name: n1, allocatable: {cpu: 4}}]\n  jobs: [{name: j, queue: q, tasks: [{name: t, replicas: 2}]}]\n"
	if err := os.WriteFile(file, []byte(cluster), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	for round := range 2 {
		// The first start bootstraps a new data directory; the second restores it.
		p := newProc(t, "s1", "--data-dir", data)
		p.start()
		start := time.Now()
		cmd := exec.Command(ctl, "--server", p.grpc, "--wait", "30s", "--cluster", "c", "apply", "--replace", "-f", file)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("round %d: sluicectl apply: %v\nstdout %s\nstderr %s", round, err, stdout.String(), stderr.String())
		}
		if !strings.HasPrefix(stdout.String(), "replaced 5 objects into cluster c at revision") {
			t.Errorf("round %d: stdout %q", round, stdout.String())
		}
		report(t, "round %d: applied %s after the start (stderr %q)", round, time.Since(start).Round(time.Millisecond), strings.TrimSpace(stderr.String()))
		if err := p.stop(); err != nil {
			t.Fatal(err)
		}
	}
}

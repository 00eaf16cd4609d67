package main

import (
	"context"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/service"
)

// realServer starts a complete in-process server (the built-in plugins) for the test.
func realServer(t *testing.T) string {
	t.Helper()
	addr, stop, err := service.StartInProcess(context.Background(), builtin.Registry())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return addr
}

const whatifCluster = `
queues:
- {name: research, weight: 1}
nodes:
- {name: n1, allocatable: {cpu: 6, memory: 32Gi, pods: 110}}
- {name: n2, allocatable: {cpu: 6, memory: 32Gi, pods: 110}}
jobs:
- {name: train, queue: research, minAvailable: 2, tasks: [{name: train-w, replicas: 2, resources: {cpu: 4, memory: 8Gi}}]}
`

func TestWhatIf(t *testing.T) {
	addr := realServer(t)
	if code, _, errOut := sluicectl(t, "", "--server", addr, "apply", "-f", writeFile(t, "c.yaml", whatifCluster)); code != 0 {
		t.Fatalf("apply: %s", errOut)
	}
	if code, _, errOut := sluicectl(t, "", "--server", addr, "schedule", "--commit"); code != 0 {
		t.Fatalf("schedule: %s", errOut)
	}
	_, before, _ := sluicectl(t, "", "--server", addr, "get", "tasks")

	// The train gang holds 4 of each node's 6 cpu (a node cannot take both); a gang of two
	// 2-cpu tasks fits beside it.
	fits := writeFile(t, "fits.yaml", `
jobs:
- {name: extra, queue: research, minAvailable: 2, tasks: [{name: extra-w, replicas: 2, resources: {cpu: 2, memory: 4Gi}}]}
`)
	code, out, errOut := sluicectl(t, "", "--server", addr, "whatif", "-f", fits)
	if code != 0 {
		t.Fatalf("whatif: %s", errOut)
	}
	for _, want := range []string{"Would place:", "default/extra-w-0", "default/extra-w-1", "nothing was stored"} {
		if !strings.Contains(out, want) {
			t.Errorf("whatif output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "train-w") || strings.Contains(out, "Would wait") {
		t.Errorf("whatif shows what it did not try:\n%s", out)
	}

	// Draining n1 sends its train task back to pending; n2 has 2 cpu left, so the gang
	// would wait, and says why.
	drain := writeFile(t, "drain.yaml", "# drain\ndrainNodes: [n1]\n")
	code, out, errOut = sluicectl(t, "", "--server", addr, "whatif", "-f", drain)
	if code != 0 {
		t.Fatalf("whatif drain: %s", errOut)
	}
	if !strings.Contains(out, "Would wait:") || !strings.Contains(out, "default/train") || !strings.Contains(out, "unschedulable") {
		t.Errorf("whatif drain output:\n%s", out)
	}
	// Removing n1 and adding a bigger node moves its task there.
	move := writeFile(t, "move.yaml", "removeNodes: [n1]\nnodes:\n- {name: n3, allocatable: {cpu: 16, memory: 64Gi, pods: 110}}\n")
	code, out, errOut = sluicectl(t, "", "--server", addr, "whatif", "-f", move)
	if code != 0 || !strings.Contains(out, "n3") || !strings.Contains(out, "Would place:") {
		t.Errorf("whatif remove: %d %s\n%s", code, errOut, out)
	}

	// Nothing of it was stored.
	if _, after, _ := sluicectl(t, "", "--server", addr, "get", "tasks"); after != before {
		t.Errorf("what-ifs changed the cluster:\nbefore\n%s\nafter\n%s", before, after)
	}
	if _, nodes, _ := sluicectl(t, "", "--server", addr, "get", "nodes"); strings.Contains(nodes, "n3") {
		t.Errorf("the hypothetical node was stored:\n%s", nodes)
	}

	// Refusals: the server's, with the field; the file's, with its line; an unknown node.
	bad := writeFile(t, "bad.yaml", "jobs:\n- {name: x, queue: nope, tasks: [{name: x-0, resources: {cpu: 1}}]}\n")
	code, _, errOut = sluicectl(t, "", "--server", addr, "whatif", "-f", bad)
	if code == 0 || !strings.Contains(errOut, "hypothetical.deltas[0].upsert_job.queue") {
		t.Errorf("unknown queue: exit %d, %s", code, errOut)
	}
	bad = writeFile(t, "bad2.yaml", "drainNodes: [n1]\njobs:\n- {name: x, queue: research, tasks: [{name: x-0, resources: {cpu: lots}}]}\n")
	code, _, errOut = sluicectl(t, "", "--server", addr, "whatif", "-f", bad)
	if code == 0 || !strings.Contains(errOut, "bad2.yaml:3:") || !strings.Contains(errOut, "resources.cpu") {
		t.Errorf("bad quantity: exit %d, %s", code, errOut)
	}
	bad = writeFile(t, "bad3.yaml", "drainNodes: [ghost]\n")
	code, _, errOut = sluicectl(t, "", "--server", addr, "whatif", "-f", bad)
	if code == 0 || !strings.Contains(errOut, "ghost") {
		t.Errorf("unknown node: exit %d, %s", code, errOut)
	}
}

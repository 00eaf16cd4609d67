package scenario

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

func TestNumaParse(t *testing.T) {
	sc := mustParse(t, minimalHead+`cluster:
  nodes:
  - namePrefix: n
    count: 2
    allocatable: {cpu: 8, memory: 16Gi}
    numa:
      topologyManagerPolicy: single-numa-node
      cpuManagerPolicy: static
      reservedCPU: 500m
      cells:
      - {cpus: "0-3", threadsPerCore: 2}
      - id: 1
        socket: 0
        cpus: [{id: 4, core: 9}, {id: 5, core: 9}, {id: 6, socket: 1}]
      held: {default/t: "1,4", system: 6}
  jobs:
  - name: j
    tasks:
    - {name: t, status: Running, node: n-0, guaranteed: true, resources: {cpu: 2, memory: 1Gi}}
    - {name: u, resources: {cpu: 2}}
expect: {binds: {}}
`)
	want := &sluicev1.NumaTopology{
		TopologyManagerPolicy: "single-numa-node", CpuManagerPolicy: "static", ReservedCpu: "500m",
		Cells: []*sluicev1.NumaCell{
			{Id: 0, Cpus: []*sluicev1.NumaCpu{
				{Id: 0, Core: 0}, {Id: 1, Core: 0, Holder: "default/t"}, {Id: 2, Core: 2}, {Id: 3, Core: 2},
			}},
			{Id: 1, Cpus: []*sluicev1.NumaCpu{
				{Id: 4, Core: 9, Holder: "default/t"}, {Id: 5, Core: 9}, {Id: 6, Socket: 1, Core: 6, Holder: "system"},
			}},
		},
	}
	for _, n := range sc.Cluster.Nodes {
		if !proto.Equal(n.GetNumaTopology(), want) {
			t.Errorf("%s topology\n%s\nwant\n%s", n.GetName(), prototext.Format(n.GetNumaTopology()), prototext.Format(want))
		}
	}
	if !sc.Cluster.Tasks[0].GetGuaranteed() || sc.Cluster.Tasks[1].GetGuaranteed() {
		t.Errorf("guaranteed: %v, %v", sc.Cluster.Tasks[0].GetGuaranteed(), sc.Cluster.Tasks[1].GetGuaranteed())
	}
	// Defaults: policies none, cell ids by position, sockets by cell id, one thread per core.
	sc = mustParse(t, minimalHead+"cluster:\n  nodes: [{name: n1, allocatable: {cpu: 2}, numa: {cells: [{cpus: 0}, {cpus: 1}]}}]\nexpect: {binds: {}}\n")
	got := sc.Cluster.Nodes[0].GetNumaTopology()
	if got.GetTopologyManagerPolicy() != "none" || got.GetCpuManagerPolicy() != "none" || got.GetReservedCpu() != "" ||
		got.GetCells()[1].GetId() != 1 || got.GetCells()[1].GetCpus()[0].GetSocket() != 1 || got.GetCells()[1].GetCpus()[0].GetCore() != 1 {
		t.Errorf("defaults: %s", prototext.Format(got))
	}
}

func TestNumaParseErrors(t *testing.T) {
	node := func(numa string) string {
		return minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: 8}, numa: " + numa + "}]\nexpect: {binds: {}}\n"
	}
	const np = "bad.yaml: cluster.nodes[0].numa"
	tests := []struct{ name, src, want string }{
		{"unknown key", node(`{cells: [{cpus: 0}], policy: none}`), np + `.policy: unknown key (expected one of: topologyManagerPolicy`},
		{"bad topology policy", node(`{topologyManagerPolicy: strict, cells: [{cpus: 0}]}`),
			np + `.topologyManagerPolicy: invalid value "strict" (expected one of: none, best-effort, restricted, single-numa-node)`},
		{"bad cpu policy", node(`{cpuManagerPolicy: Static, cells: [{cpus: 0}]}`), np + `.cpuManagerPolicy: invalid value "Static"`},
		{"bad reserved", node(`{reservedCPU: two, cells: [{cpus: 0}]}`), np + `.reservedCPU: invalid quantity "two"`},
		{"no cells key", node(`{cpuManagerPolicy: static}`), np + `: missing required key "cells"`},
		{"no cells", node(`{cells: []}`), np + `.cells: must list 1 to 8 NUMA cells, got 0`},
		{"nine cells", node(`{cells: [{cpus: 0}, {cpus: 1}, {cpus: 2}, {cpus: 3}, {cpus: 4}, {cpus: 5}, {cpus: 6}, {cpus: 7}, {cpus: 8}]}`),
			np + `.cells: must list 1 to 8 NUMA cells, got 9`},
		{"duplicate cell", node(`{cells: [{id: 1, cpus: 0}, {id: 1, cpus: 1}]}`), np + `.cells[1].id: duplicate NUMA cell id 1`},
		{"cell id too big", node(`{cells: [{id: 64, cpus: 0}]}`), np + `.cells[0].id: must be between 0 and 63, got 64`},
		{"bad cpu list", node(`{cells: [{cpus: "3-1"}]}`), np + `.cells[0].cpus: invalid CPU list "3-1"`},
		{"cpu list junk", node(`{cells: [{cpus: "0,a"}]}`), np + `.cells[0].cpus: invalid CPU list "0,a"`},
		{"repeat in a list", node(`{cells: [{cpus: "0-2,1"}]}`), np + `.cells[0].cpus: CPU 1 appears twice in "0-2,1"`},
		{"cpu in two cells", node(`{cells: [{cpus: "0-1"}, {cpus: "1-2"}]}`), np + `.cells[1].cpus: duplicate CPU id 1`},
		{"threads do not divide", node(`{cells: [{cpus: "0-2", threadsPerCore: 2}]}`), np + `.cells[0].cpus: 3 CPUs do not split into cores of 2 threads`},
		{"threads with a cpu list", node(`{cells: [{cpus: [{id: 0}], threadsPerCore: 2}]}`), np + `.cells[0].threadsPerCore: only with cpus given as a CPU list`},
		{"cpu without id", node(`{cells: [{cpus: [{core: 0}]}]}`), np + `.cells[0].cpus[0]: missing required key "id"`},
		{"empty cpu list", node(`{cells: [{cpus: []}]}`), np + `.cells[0].cpus: a NUMA cell has at least one CPU`},
		{"held unknown cpu", node(`{cells: [{cpus: 0}], held: {system: 1}}`), np + `.held.system: CPU 1 is in no cell`},
		{"held twice", node(`{cells: [{cpus: "0-1"}], held: {a: 0, b: "0-1"}}`), np + `.held.b: CPU 0 is already held by "a"`},
		{"guaranteed without memory", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, guaranteed: true, resources: {cpu: 2}}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].guaranteed: a guaranteed task must request cpu and memory (resources lacks memory)`},
		{"guaranteed with zero cpu", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, guaranteed: true, resources: {cpu: 0, memory: 1Gi}}]}]\nexpect: {binds: {}}\n",
			`resources lacks cpu`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			var pe *ParseError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n  %v\nwant it to contain\n  %s", err, tc.want)
			}
		})
	}
}

package service

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// numaNode builds a node with two cells of two hyperthreaded CPUs each, and lets the caller
// adjust the topology.
func numaNode(name string, edit func(*sluicev1.NumaTopology)) *sluicev1.Delta {
	t := &sluicev1.NumaTopology{
		TopologyManagerPolicy: "single-numa-node", CpuManagerPolicy: "static", ReservedCpu: "1500m",
		Cells: []*sluicev1.NumaCell{
			{Id: 0, Cpus: []*sluicev1.NumaCpu{{Id: 0}, {Id: 1, Holder: "default/t0"}}},
			{Id: 1, Cpus: []*sluicev1.NumaCpu{{Id: 2, Socket: 1, Core: 1}, {Id: 3, Socket: 1, Core: 1, Holder: "system"}}},
		},
	}
	if edit != nil {
		edit(t)
	}
	return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
		Name: name, Allocatable: cpuMem("4", "8Gi"), NumaTopology: t,
	}}}
}

func TestNumaValidation(t *testing.T) {
	h := newHarness(t)
	base := h.apply("c1", node("n1", cpuMem("4", "8Gi")), job("j1", "", 1))
	const np = "batch.deltas[0].upsert_node.numa_topology"
	annotated := func(v string) map[string]string { return map[string]string{"volcano.sh/numa-topology-policy": v} }
	tests := []struct {
		name  string
		delta *sluicev1.Delta
		field string
	}{
		{"unknown topology policy", numaNode("n2", func(t *sluicev1.NumaTopology) { t.TopologyManagerPolicy = "strict" }),
			np + ".topology_manager_policy"},
		{"unknown cpu manager policy", numaNode("n2", func(t *sluicev1.NumaTopology) { t.CpuManagerPolicy = "dynamic" }),
			np + ".cpu_manager_policy"},
		{"no cells", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells = nil }), np + ".cells"},
		{"too many cells", numaNode("n2", func(t *sluicev1.NumaTopology) {
			for i := int32(2); i < 9; i++ {
				t.Cells = append(t.Cells, &sluicev1.NumaCell{Id: i, Cpus: []*sluicev1.NumaCpu{{Id: 10 + i}}})
			}
		}), np + ".cells"},
		{"cell id out of range", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[1].Id = 64 }), np + ".cells[1].id"},
		{"duplicate cell id", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[1].Id = 0 }), np + ".cells[1].id"},
		{"empty cell", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[0].Cpus = nil }), np + ".cells[0].cpus"},
		{"negative cpu id", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[0].Cpus[0].Id = -1 }),
			np + ".cells[0].cpus[0].id"},
		{"duplicate cpu id across cells", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[1].Cpus[0].Id = 1 }),
			np + ".cells[1].cpus[0].id"},
		{"negative socket", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[1].Cpus[1].Socket = -2 }),
			np + ".cells[1].cpus[1].socket"},
		{"negative core", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[0].Cpus[1].Core = -1 }),
			np + ".cells[0].cpus[1].core"},
		{"holder with a control character", numaNode("n2", func(t *sluicev1.NumaTopology) { t.Cells[0].Cpus[0].Holder = "a\nb" }),
			np + ".cells[0].cpus[0].holder"},
		{"bad reserved quantity", numaNode("n2", func(t *sluicev1.NumaTopology) { t.ReservedCpu = "two" }), np + ".reserved_cpu"},
		{"reserving more than the node has", numaNode("n2", func(t *sluicev1.NumaTopology) { t.ReservedCpu = "4500m" }),
			np + ".reserved_cpu"},
		{"guaranteed without memory", taskMsg(&sluicev1.Task{Name: "t", Job: "j1", Resources: cpu("2"), Guaranteed: true}),
			"batch.deltas[0].upsert_task.guaranteed"},
		{"guaranteed without resources", taskMsg(&sluicev1.Task{Name: "t", Job: "j1", Guaranteed: true}),
			"batch.deltas[0].upsert_task.guaranteed"},
		{"unknown task numa policy", taskMsg(&sluicev1.Task{Name: "t", Job: "j1", Annotations: annotated("single-numa")}),
			`batch.deltas[0].upsert_task.annotations["volcano.sh/numa-topology-policy"]`},
		{"empty job numa policy", &sluicev1.Delta{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{Name: "j2", Annotations: annotated("")}}},
			`batch.deltas[0].upsert_job.annotations["volcano.sh/numa-topology-policy"]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(tc.delta)})
			wantViolation(t, err, tc.field, ReasonInvalidField)
			if rev := h.store.Revision("c1"); rev != base {
				t.Fatalf("revision moved from %d to %d", base, rev)
			}
		})
	}
	// A bad cpu quantity on a guaranteed task is reported once, at the quantity.
	_, err := h.cs.ApplyDeltas(ctxT(t), &sluicev1.ApplyDeltasRequest{Cluster: "c1", Batch: batchOf(
		taskMsg(&sluicev1.Task{Name: "t", Job: "j1", Resources: cpuMem("lots", "1Gi"), Guaranteed: true}))})
	st := wantCode(t, err, codes.InvalidArgument)
	if fields, _ := fieldsOf(st); len(fields) != 1 || fields[0] != `batch.deltas[0].upsert_task.resources["cpu"]` {
		t.Fatalf("violations %q, want only the cpu quantity", fields)
	}
}

func TestNumaRoundTrip(t *testing.T) {
	h := newHarness(t)
	in := numaNode("n1", nil)
	h.apply("c1", in, job("j1", "", 1),
		taskMsg(&sluicev1.Task{Name: "t0", Job: "j1", Resources: cpuMem("2", "1Gi"), Guaranteed: true,
			Annotations: map[string]string{"volcano.sh/numa-topology-policy": "restricted"}}),
		numaNode("n2", func(t *sluicev1.NumaTopology) {
			t.TopologyManagerPolicy, t.CpuManagerPolicy, t.ReservedCpu = "", "", ""
		}))

	n, err := h.cs.GetNode(ctxT(t), &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n.GetNode().GetNumaTopology(), in.GetUpsertNode().GetNumaTopology(); !proto.Equal(got, want) {
		t.Errorf("topology read back\n%v\nwant\n%v", got, want)
	}
	// Empty policies read back as their documented default.
	n2, err := h.cs.GetNode(ctxT(t), &sluicev1.GetNodeRequest{Cluster: "c1", Name: "n2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := n2.GetNode().GetNumaTopology(); got.GetTopologyManagerPolicy() != "none" ||
		got.GetCpuManagerPolicy() != "none" || got.GetReservedCpu() != "" || len(got.GetCells()) != 2 {
		t.Errorf("defaults read back as %v", got)
	}
	tk, err := h.cs.GetTask(ctxT(t), &sluicev1.GetTaskRequest{Cluster: "c1", Name: "t0"})
	if err != nil {
		t.Fatal(err)
	}
	if !tk.GetTask().GetGuaranteed() {
		t.Errorf("task read back as not guaranteed: %v", tk.GetTask())
	}
}

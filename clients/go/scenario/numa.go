package scenario

import (
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// The keys this file decodes extend FORMAT.md; docs/scenario-numa.md documents them: a
// node's `numa` topology and a task's `guaranteed`.

var (
	numaKeys         = []string{"topologyManagerPolicy", "cpuManagerPolicy", "reservedCPU", "cells", "held"}
	numaCellKeys     = []string{"id", "socket", "cpus", "threadsPerCore"}
	numaCPUKeys      = []string{"id", "socket", "core"}
	topologyPolicies = []string{"none", "best-effort", "restricted", "single-numa-node"}
	cpuPolicies      = []string{"none", "static"}
)

// Limits the server enforces too (see NumaTopology in types.proto).
const (
	maxNumaCells = 8
	maxNumaID    = 63
	maxCPUID     = 1<<16 - 1
)

// numa decodes a node's NUMA topology.
func (d *decoder) numa(n *yaml.Node, path string) *sluicev1.NumaTopology {
	f := d.mapping(n, path, numaKeys...)
	t := &sluicev1.NumaTopology{
		TopologyManagerPolicy: f.optEnum("topologyManagerPolicy", "none", topologyPolicies...),
		CpuManagerPolicy:      f.optEnum("cpuManagerPolicy", "none", cpuPolicies...),
	}
	if v := f.get("reservedCPU"); v != nil {
		t.ReservedCpu = d.quantity(v, f.at("reservedCPU"))
	}
	cpus := map[int]*sluicev1.NumaCpu{}
	cellIDs := map[int32]bool{}
	cellsNode := f.need("cells")
	d.list(cellsNode, f.at("cells"), func(i int, e *yaml.Node, p string) {
		cell := d.numaCell(i, e, p, cpus)
		if cellIDs[cell.Id] {
			d.failf(e, join(p, "id"), "duplicate NUMA cell id %d", cell.Id)
		}
		cellIDs[cell.Id] = true
		t.Cells = append(t.Cells, cell)
	})
	if len(t.Cells) == 0 || len(t.Cells) > maxNumaCells {
		d.failf(cellsNode, f.at("cells"), "must list 1 to %d NUMA cells, got %d", maxNumaCells, len(t.Cells))
	}
	if v := f.get("held"); v != nil {
		d.entries(v, f.at("held"), func(holder string, e *yaml.Node, p string) {
			for _, id := range d.cpuList(e, p) {
				c, ok := cpus[id]
				switch {
				case !ok:
					d.failf(e, p, "CPU %d is in no cell", id)
				case c.Holder != "":
					d.failf(e, p, "CPU %d is already held by %q", id, c.Holder)
				}
				c.Holder = holder
			}
		})
	}
	return t
}

// numaCell decodes cell i; cpus collects the node's CPUs by id, across cells.
func (d *decoder) numaCell(i int, n *yaml.Node, path string, cpus map[int]*sluicev1.NumaCpu) *sluicev1.NumaCell {
	f := d.mapping(n, path, numaCellKeys...)
	cell := &sluicev1.NumaCell{Id: int32(f.optInt("id", int64(i), 0, maxNumaID))}
	socket := int32(f.optInt("socket", int64(cell.Id), 0, math.MaxInt32))
	add := func(c *sluicev1.NumaCpu, e *yaml.Node, p string) {
		if _, dup := cpus[int(c.Id)]; dup {
			d.failf(e, p, "duplicate CPU id %d", c.Id)
		}
		cpus[int(c.Id)] = c
		cell.Cpus = append(cell.Cpus, c)
	}
	list := f.need("cpus")
	if deref(list).Kind == yaml.SequenceNode {
		if f.has("threadsPerCore") {
			d.failf(f.get("threadsPerCore"), f.at("threadsPerCore"), "only with cpus given as a CPU list (give each CPU's core instead)")
		}
		d.list(list, f.at("cpus"), func(_ int, e *yaml.Node, p string) {
			cf := d.mapping(e, p, numaCPUKeys...)
			id := d.intIn(cf.need("id"), cf.at("id"), 0, maxCPUID)
			add(&sluicev1.NumaCpu{
				Id:     int32(id),
				Socket: int32(cf.optInt("socket", int64(socket), 0, math.MaxInt32)),
				Core:   int32(cf.optInt("core", id, 0, math.MaxInt32)),
			}, e, p)
		})
	} else {
		ids := d.cpuList(list, f.at("cpus"))
		threads := int(f.optInt("threadsPerCore", 1, 1, 64))
		if len(ids)%threads != 0 {
			d.failf(list, f.at("cpus"), "%d CPUs do not split into cores of %d threads", len(ids), threads)
		}
		for k, id := range ids {
			// The threads of a core are consecutive in the list; the core takes the id of
			// its first CPU.
			add(&sluicev1.NumaCpu{Id: int32(id), Socket: socket, Core: int32(ids[k-k%threads])}, list, f.at("cpus"))
		}
	}
	if len(cell.Cpus) == 0 {
		d.failf(list, f.at("cpus"), "a NUMA cell has at least one CPU")
	}
	return cell
}

// cpuList decodes a CPU list in the kernel's syntax, "0-3,8,10-11" (a single number may be
// written as one), in ascending order without repeats.
func (d *decoder) cpuList(n *yaml.Node, path string) []int {
	s := d.str(n, path)
	seen := map[int]bool{}
	var out []int
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, errA := strconv.Atoi(lo)
		b, errB := a, error(nil)
		if isRange {
			b, errB = strconv.Atoi(hi)
		}
		if errA != nil || errB != nil || a < 0 || b < a || b > maxCPUID {
			d.failf(n, path, "invalid CPU list %q (expected ids from 0 to %d such as \"0-3,8,10-11\")", s, maxCPUID)
		}
		for id := a; id <= b; id++ {
			if seen[id] {
				d.failf(n, path, "CPU %d appears twice in %q", id, s)
			}
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// checkGuaranteed fails a guaranteed task that does not request cpu and memory (Kubernetes'
// Guaranteed QoS class needs both).
func (d *decoder) checkGuaranteed(n *yaml.Node, path string, resources map[string]string) {
	for _, r := range []string{"cpu", "memory"} {
		if q, err := resource.ParseQuantity(resources[r]); err != nil || q.Sign() <= 0 {
			d.failf(n, path, "a guaranteed task must request cpu and memory (resources lacks %s)", r)
		}
	}
}

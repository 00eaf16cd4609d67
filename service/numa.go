package service

import (
	"math"

	"github.com/sluice-sched/sluice/engine/api"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// This file validates and converts a node's NUMA topology and the task fields that ask for
// exclusive CPUs (see NumaTopology and Task.guaranteed in types.proto).

// Limits of a NUMA topology: the topology manager handles at most 8 NUMA cells (the
// kubelet's default limit, and what keeps the 2^cells hint masks cheap); NUMA ids fit its
// 64-bit masks.
const (
	maxNumaCells  = 8
	maxNumaCellID = 63
	maxCPUID      = 1<<16 - 1
)

// Known NUMA policies.
var (
	topologyPolicies = []string{"", api.TopologyPolicyNone, api.TopologyPolicyBestEffort,
		api.TopologyPolicyRestricted, api.TopologyPolicySingleNumaNode}
	cpuManagerPolicies = []string{"", api.CPUManagerPolicyNone, api.CPUManagerPolicyStatic}
)

// checkNumaTopology checks a node's NUMA topology (nil is fine): known policies, 1 to 8
// cells with unique ids, each with CPUs of unique ids and non-negative socket and core.
// The reserved CPU quantity is checked as it is parsed.
func checkNumaTopology(fe *fieldErrors, p string, t *sluicev1.NumaTopology) {
	if t == nil {
		return
	}
	checkOneOf(fe, sub(p, "topology_manager_policy"), t.GetTopologyManagerPolicy(), topologyPolicies)
	checkOneOf(fe, sub(p, "cpu_manager_policy"), t.GetCpuManagerPolicy(), cpuManagerPolicies)
	cells := t.GetCells()
	switch {
	case len(cells) == 0:
		fe.add(sub(p, "cells"), "must list the node's NUMA cells (at least one)")
	case len(cells) > maxNumaCells:
		fe.add(sub(p, "cells"), "at most %d NUMA cells are supported, got %d", maxNumaCells, len(cells))
	}
	cellIDs, cpuIDs := map[int32]int{}, map[int32]string{}
	for i, c := range cells {
		cp := idx(sub(p, "cells"), i)
		checkRange(fe, sub(cp, "id"), int64(c.GetId()), 0, maxNumaCellID)
		if j, dup := cellIDs[c.GetId()]; dup {
			fe.add(sub(cp, "id"), "duplicate NUMA cell id %d (also cells[%d])", c.GetId(), j)
		}
		cellIDs[c.GetId()] = i
		if len(c.GetCpus()) == 0 {
			fe.add(sub(cp, "cpus"), "must not be empty: a NUMA cell has at least one CPU")
		}
		for k, cpu := range c.GetCpus() {
			xp := idx(sub(cp, "cpus"), k)
			checkRange(fe, sub(xp, "id"), int64(cpu.GetId()), 0, maxCPUID)
			if where, dup := cpuIDs[cpu.GetId()]; dup {
				fe.add(sub(xp, "id"), "duplicate CPU id %d (also %s)", cpu.GetId(), where)
			}
			cpuIDs[cpu.GetId()] = idx(sub(idx("cells", i), "cpus"), k)
			checkRange(fe, sub(xp, "socket"), int64(cpu.GetSocket()), 0, math.MaxInt32)
			checkRange(fe, sub(xp, "core"), int64(cpu.GetCore()), 0, math.MaxInt32)
			checkRefName(fe, sub(xp, "holder"), cpu.GetHolder())
		}
	}
}

// checkNumaPolicyAnnotation checks the value of a task's or job's NUMA policy annotation,
// when there is one.
func checkNumaPolicyAnnotation(fe *fieldErrors, p string, annotations map[string]string) {
	if v, ok := annotations[api.NumaPolicyAnnotation]; ok {
		checkOneOf(fe, key(sub(p, "annotations"), api.NumaPolicyAnnotation), v, topologyPolicies[1:])
	}
}

// numaFromProto converts a NUMA topology (nil stays nil), applying the documented defaults
// (empty policies mean "none"). Reserved CPU beyond the node's CPUs is recorded.
func numaFromProto(fe *fieldErrors, p string, t *sluicev1.NumaTopology) *api.NumaTopology {
	if t == nil {
		return nil
	}
	out := &api.NumaTopology{
		TopologyManagerPolicy: orDefault(t.GetTopologyManagerPolicy(), api.TopologyPolicyNone),
		CPUManagerPolicy:      orDefault(t.GetCpuManagerPolicy(), api.CPUManagerPolicyNone),
	}
	cpus := 0
	for _, c := range t.GetCells() {
		cell := api.NumaCell{ID: int(c.GetId())}
		for _, cpu := range c.GetCpus() {
			cell.CPUs = append(cell.CPUs, api.NumaCPU{
				ID: int(cpu.GetId()), Socket: int(cpu.GetSocket()), Core: int(cpu.GetCore()), Holder: cpu.GetHolder(),
			})
		}
		cpus += len(cell.CPUs)
		out.Cells = append(out.Cells, cell)
	}
	if s := t.GetReservedCpu(); s != "" {
		rp := sub(p, "reserved_cpu")
		if v, ok := quantity(fe, rp, s, milliUnits); ok {
			out.ReservedMilliCPU = v
			if v > int64(cpus)*1000 {
				fe.add(rp, "reserves %s CPUs but the node has %d", quoteShort(s), cpus)
			}
		}
	}
	return out
}

// numaToProto converts a NUMA topology back (nil stays nil).
func numaToProto(t *api.NumaTopology) *sluicev1.NumaTopology {
	if t == nil {
		return nil
	}
	out := &sluicev1.NumaTopology{
		TopologyManagerPolicy: t.TopologyManagerPolicy,
		CpuManagerPolicy:      t.CPUManagerPolicy,
	}
	if t.ReservedMilliCPU != 0 {
		out.ReservedCpu = formatMilli(float64(t.ReservedMilliCPU))
	}
	for _, c := range t.Cells {
		cell := &sluicev1.NumaCell{Id: int32(c.ID)}
		for _, cpu := range c.CPUs {
			cell.Cpus = append(cell.Cpus, &sluicev1.NumaCpu{
				Id: int32(cpu.ID), Socket: int32(cpu.Socket), Core: int32(cpu.Core), Holder: cpu.Holder,
			})
		}
		out.Cells = append(out.Cells, cell)
	}
	return out
}

// checkGuaranteed records a guaranteed task that does not request cpu and memory, which
// Kubernetes' Guaranteed QoS class requires (limits set for both, equal to the requests).
func checkGuaranteed(fe *fieldErrors, p string, t *api.Task) {
	if t.Guaranteed && (t.Resources.MilliCPU <= 0 || t.Resources.Memory <= 0) {
		fe.add(sub(p, "guaranteed"), "a guaranteed task must request cpu and memory")
	}
}

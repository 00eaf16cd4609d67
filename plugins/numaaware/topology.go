package numaaware

import (
	"slices"

	"github.com/sluice-sched/sluice/engine/api"
)

// coreID identifies a physical core: core ids are unique only within their socket.
type coreID struct{ socket, core int }

// cpuInfo places one logical CPU.
type cpuInfo struct {
	numa int
	core coreID
}

// topology indexes a node's NUMA layout for the CPU manager's algorithms. It is built once
// per session and never changes.
type topology struct {
	cpus    map[int]cpuInfo
	all     cpuSet
	numa    numaMask
	byNuma  map[int]cpuSet
	sockets []int // ascending
	bySock  map[int]cpuSet
	cores   []coreID // by socket, then core
	byCore  map[coreID]cpuSet
	// cpusPerSocket and cpusPerCore are the kubelet's CPUsPerSocket and CPUsPerCore: the
	// node's CPU count over its socket and core counts.
	cpusPerSocket, cpusPerCore int
	// reserved are the CPUs kept for the system, chosen by topology among all CPUs.
	reserved cpuSet
}

// newTopology indexes t.
func newTopology(t *api.NumaTopology) *topology {
	topo := &topology{
		cpus: map[int]cpuInfo{}, byNuma: map[int]cpuSet{}, bySock: map[int]cpuSet{}, byCore: map[coreID]cpuSet{},
	}
	for _, cell := range t.Cells {
		topo.numa |= maskOf(cell.ID)
		for _, c := range cell.CPUs {
			core := coreID{c.Socket, c.Core}
			topo.cpus[c.ID] = cpuInfo{numa: cell.ID, core: core}
			topo.all = topo.all.with(c.ID)
			topo.byNuma[cell.ID] = topo.byNuma[cell.ID].with(c.ID)
			topo.bySock[c.Socket] = topo.bySock[c.Socket].with(c.ID)
			topo.byCore[core] = topo.byCore[core].with(c.ID)
		}
	}
	for s := range topo.bySock {
		topo.sockets = append(topo.sockets, s)
	}
	slices.Sort(topo.sockets)
	for c := range topo.byCore {
		topo.cores = append(topo.cores, c)
	}
	slices.SortFunc(topo.cores, compareCores)
	if n := topo.all.size(); n > 0 {
		topo.cpusPerSocket = n / len(topo.sockets)
		topo.cpusPerCore = n / len(topo.cores)
	}
	reserve := int((t.ReservedMilliCPU + 999) / 1000)
	if r, ok := topo.take(topo.all, reserve); ok {
		topo.reserved = r
	}
	return topo
}

func compareCores(a, b coreID) int {
	if a.socket != b.socket {
		return a.socket - b.socket
	}
	return a.core - b.core
}

// inNuma returns the CPUs of the NUMA nodes in m.
func (t *topology) inNuma(m numaMask) cpuSet {
	var out cpuSet
	for _, id := range m.ids() {
		out = out.union(t.byNuma[id])
	}
	return out
}

// numaCount is the number of NUMA nodes that the CPUs of s lie on.
func (t *topology) numaCount(s cpuSet) int {
	var m numaMask
	for _, id := range s.list() {
		m |= maskOf(t.cpus[id].numa)
	}
	return m.count()
}

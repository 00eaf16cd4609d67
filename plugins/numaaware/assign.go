package numaaware

import "slices"

// take chooses n CPUs among avail as the kubelet's static CPU manager does (topology-aware
// best fit, the version Volcano carries):
//
//  1. while at least a socket's worth of CPUs is still needed, whole free sockets (every CPU
//     available), lowest socket id first;
//  2. while at least a core's worth is still needed, whole free cores, from the socket with
//     the fewest free cores first, then by socket id and core id;
//  3. then single CPUs, core by core: first cores on the sockets the choice already uses
//     most, then on sockets with fewer available CPUs, then cores with fewer available CPUs,
//     then by socket and core id; within a core by CPU id.
//
// Volcano's copy tests "free" by intersecting socket and core ids with CPU ids, and sorts
// with comparators that are not orders; Sluice uses the kubelet's meaning and strict
// orders (docs/volcano-compatibility.md). ok is false when avail has fewer than n CPUs.
func (t *topology) take(avail cpuSet, n int) (cpuSet, bool) {
	a := accumulator{topo: t, avail: avail.intersect(t.all), need: n}
	if n <= 0 {
		return cpuSet{}, true
	}
	if n > a.avail.size() {
		return cpuSet{}, false
	}
	if a.claimWhole(a.freeSockets(), t.cpusPerSocket) || a.claimWhole(a.freeCores(), t.cpusPerCore) {
		return a.result, true
	}
	for _, id := range a.freeCPUs() {
		a.claim(newCPUSet(id))
		if a.need <= 0 {
			return a.result, true
		}
	}
	return cpuSet{}, false
}

// accumulator is one run of take: what is still available, chosen and needed.
type accumulator struct {
	topo          *topology
	avail, result cpuSet
	need          int
}

func (a *accumulator) claim(s cpuSet) {
	a.result = a.result.union(s)
	a.avail = a.avail.minus(s)
	a.need -= s.size()
}

// claimWhole claims the groups (whole sockets or cores of per CPUs) in order while at least
// per CPUs are still needed. It reports whether the need is met.
func (a *accumulator) claimWhole(groups []cpuSet, per int) bool {
	if a.need < per {
		return false
	}
	for _, g := range groups {
		a.claim(g)
		if a.need <= 0 {
			return true
		}
		if a.need < per {
			break
		}
	}
	return false
}

// freeSockets are the CPUs of the sockets whose every CPU is available, by socket id.
func (a *accumulator) freeSockets() []cpuSet {
	var out []cpuSet
	for _, s := range a.topo.sockets {
		if cpus := a.topo.bySock[s]; cpus.subsetOf(a.avail) {
			out = append(out, cpus)
		}
	}
	return out
}

// freeCores are the CPUs of the cores whose every CPU is available: sockets with fewer free
// cores first, then by socket id; within a socket by core id.
func (a *accumulator) freeCores() []cpuSet {
	free := map[int][]coreID{}
	for _, c := range a.topo.cores {
		if a.topo.byCore[c].subsetOf(a.avail) {
			free[c.socket] = append(free[c.socket], c)
		}
	}
	sockets := slices.Clone(a.topo.sockets)
	slices.SortStableFunc(sockets, func(x, y int) int { return len(free[x]) - len(free[y]) })
	var out []cpuSet
	for _, s := range sockets {
		for _, c := range free[s] {
			out = append(out, a.topo.byCore[c])
		}
	}
	return out
}

// freeCPUs lists the available CPUs core by core in take's third order.
func (a *accumulator) freeCPUs() []int {
	type coreKey struct {
		id                             coreID
		coloc, sockFree, coreFree, pos int
	}
	var keys []coreKey
	for i, c := range a.topo.cores {
		free := a.topo.byCore[c].intersect(a.avail).size()
		if free == 0 {
			continue
		}
		sock := a.topo.bySock[c.socket]
		keys = append(keys, coreKey{
			id:       c,
			coloc:    sock.intersect(a.result).size(),
			sockFree: sock.intersect(a.avail).size(),
			coreFree: free,
			pos:      i,
		})
	}
	slices.SortFunc(keys, func(x, y coreKey) int {
		switch {
		case x.coloc != y.coloc:
			return y.coloc - x.coloc
		case x.sockFree != y.sockFree:
			return x.sockFree - y.sockFree
		case x.coreFree != y.coreFree:
			return x.coreFree - y.coreFree
		}
		return x.pos - y.pos // socket id, then core id
	})
	var out []int
	for _, k := range keys {
		out = append(out, a.topo.byCore[k.id].intersect(a.avail).list()...)
	}
	return out
}

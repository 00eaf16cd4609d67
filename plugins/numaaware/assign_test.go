package numaaware

import (
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// TestAllocate translates Volcano's Test_Allocate (provider/cpumanager): the CPUs chosen for
// a request and a best hint on the two-socket machine.
func TestAllocate(t *testing.T) {
	ns := newNodeState("n", volcanoTopology())
	tests := []struct {
		name    string
		request int
		avail   cpuSet
		best    hint
		want    cpuSet
		ok      bool
	}{
		{"test-1: a whole socket on node 0", 4, newCPUSet(0, 1, 2, 3, 4, 5, 6, 7), h(true, 0), newCPUSet(0, 1, 2, 3), true},
		{"test-2: node 1", 4, newCPUSet(1, 2, 3, 4, 5, 6, 7), h(true, 1), newCPUSet(4, 5, 6, 7), true},
		{"test-3: a socket and one more", 5, newCPUSet(0, 1, 2, 3, 4, 5, 6, 7), h(true, 0, 1), newCPUSet(0, 1, 2, 3, 4), true},
		{"test-4: the free socket, then the lone thread", 5, newCPUSet(1, 2, 3, 4, 5, 6, 7), h(true, 0, 1), newCPUSet(1, 4, 5, 6, 7), true},
		{"test-5: not enough", 8, newCPUSet(1, 2, 3, 4, 5, 6, 7), h(true, 0, 1), cpuSet{}, false},
		{"no hint takes from anywhere", 2, newCPUSet(1, 3, 6, 7), hint{}, newCPUSet(6, 7), true},
		{"aligned first, then the rest", 3, newCPUSet(0, 4, 5, 6), h(false, 0), newCPUSet(0, 4, 5), true},
		{"a fractional request takes nothing", 0, newCPUSet(0, 1), h(true, 0), cpuSet{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := allocate(needs{guaranteed: true, cpus: tc.request}, ns, tc.best, tc.avail)
			if ok != tc.ok || !got.equal(tc.want) {
				t.Errorf("allocate = %v, %t; want %v, %t", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// TestTake pins the kubelet's meaning of free sockets and cores, where Volcano's copy
// intersects socket and core ids with CPU ids.
func TestTake(t *testing.T) {
	topo := newTopology(volcanoTopology())
	tests := []struct {
		name  string
		avail cpuSet
		n     int
		want  cpuSet
	}{
		// Socket 0 is not free (CPU 0 is taken), socket 1 is: take it whole.
		{"a free socket", newCPUSet(1, 2, 3, 4, 5, 6, 7), 4, newCPUSet(4, 5, 6, 7)},
		// Less than a socket's worth: whole cores, from socket 0 (one free core) before
		// socket 1 (two).
		{"a whole core from the socket with fewer", newCPUSet(1, 2, 3, 4, 5, 6, 7), 2, newCPUSet(2, 3)},
		// No socket is free: a free core of each.
		{"whole cores when no socket is free", newCPUSet(1, 2, 3, 5, 6, 7), 4, newCPUSet(2, 3, 6, 7)},
		// One CPU: cores with fewer free CPUs and sockets with fewer free CPUs first.
		{"a single thread fills a half-used core", newCPUSet(0, 1, 2, 3, 5, 6, 7), 1, newCPUSet(5)},
		// Three CPUs: a whole core on socket 0, then a thread on the same socket.
		{"threads stay on the socket already used", newCPUSet(0, 1, 2, 4, 5, 6, 7), 3, newCPUSet(0, 1, 2)},
		{"nothing", newCPUSet(0), 0, cpuSet{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := topo.take(tc.avail, tc.n)
			if !ok || !got.equal(tc.want) {
				t.Errorf("take = %v, %t; want %v", got, ok, tc.want)
			}
		})
	}
	if _, ok := topo.take(newCPUSet(0, 1), 3); ok {
		t.Error("take of 3 among 2 succeeded")
	}
}

// TestCoresAreSocketScoped: core ids repeat across sockets (the resource exporter reports
// them per socket); a core is its socket and id, so threads of core 0 on two sockets are not
// one core.
func TestCoresAreSocketScoped(t *testing.T) {
	spec := &api.NumaTopology{Cells: []api.NumaCell{
		{ID: 0, CPUs: []api.NumaCPU{{ID: 0, Socket: 0, Core: 0}, {ID: 1, Socket: 0, Core: 0}}},
		{ID: 1, CPUs: []api.NumaCPU{{ID: 2, Socket: 1, Core: 0}, {ID: 3, Socket: 1, Core: 0}}},
	}}
	topo := newTopology(spec)
	if len(topo.cores) != 2 || topo.cpusPerCore != 2 || topo.cpusPerSocket != 2 {
		t.Fatalf("cores %v, %d per core, %d per socket", topo.cores, topo.cpusPerCore, topo.cpusPerSocket)
	}
	// With CPUs 1 and 2 free no core is free: the two threads are taken one by one.
	if got, ok := topo.take(newCPUSet(1, 2), 2); !ok || !got.equal(newCPUSet(1, 2)) {
		t.Errorf("take = %v, %t", got, ok)
	}
}

// TestReserved: reserved CPU is rounded up and chosen by topology among all CPUs.
func TestReserved(t *testing.T) {
	for _, tc := range []struct {
		milli int64
		want  cpuSet
	}{
		{0, cpuSet{}},
		{500, newCPUSet(0)},
		{1500, newCPUSet(0, 1)},
		{4000, newCPUSet(0, 1, 2, 3)},
	} {
		spec := volcanoTopology()
		spec.ReservedMilliCPU = tc.milli
		if got := newTopology(spec).reserved; !got.equal(tc.want) {
			t.Errorf("reserved %dm = %v, want %v", tc.milli, got, tc.want)
		}
	}
}

func TestCPUSet(t *testing.T) {
	a, b := newCPUSet(0, 1, 2, 64, 65, 130), newCPUSet(2, 3, 65)
	for _, tc := range []struct{ got, want string }{
		{a.String(), "0-2,64-65,130"},
		{a.union(b).String(), "0-3,64-65,130"},
		{a.intersect(b).String(), "2,65"},
		{a.minus(b).String(), "0-1,64,130"},
		{b.minus(a).String(), "3"},
		{cpuSet{}.String(), ""},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if a.size() != 6 || !a.has(130) || a.has(3) || a.has(-1) || !newCPUSet(2).subsetOf(b) || a.subsetOf(b) {
		t.Error("size, has or subsetOf is wrong")
	}
	if !a.equal(newCPUSet(130, 65, 64, 2, 1, 0)) || a.equal(b) {
		t.Error("equal is wrong")
	}
}

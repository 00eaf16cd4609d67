package numaaware

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
)

// volcanoTopology is the machine of Volcano's cpu_mng_test.go: two sockets, one NUMA node
// each, two hyperthreaded cores per socket. CPUs 0-3 are NUMA node 0 (cores 0 and 1), 4-7
// NUMA node 1 (cores 2 and 3).
func volcanoTopology() *api.NumaTopology {
	t := &api.NumaTopology{TopologyManagerPolicy: api.TopologyPolicyBestEffort, CPUManagerPolicy: api.CPUManagerPolicyStatic}
	for cell := 0; cell < 2; cell++ {
		c := api.NumaCell{ID: cell}
		for i := 0; i < 4; i++ {
			id := cell*4 + i
			c.CPUs = append(c.CPUs, api.NumaCPU{ID: id, Socket: cell, Core: id / 2})
		}
		t.Cells = append(t.Cells, c)
	}
	return t
}

func h(preferred bool, ids ...int) hint { return hint{mask: maskOf(ids...), preferred: preferred} }

func (x hint) String() string { return fmt.Sprintf("{%v %t}", x.mask.ids(), x.preferred) }

// TestCPUHints translates Volcano's Test_GetTopologyHints (provider/cpumanager).
func TestCPUHints(t *testing.T) {
	topo := newTopology(volcanoTopology())
	tests := []struct {
		name    string
		request int
		avail   cpuSet
		want    []hint
	}{
		{"test-1: 4 of 8 free fit either node", 4, newCPUSet(0, 1, 2, 3, 4, 5, 6, 7), []hint{h(true, 0), h(true, 1), h(false, 0, 1)}},
		{"test-2: node 0 short of one", 4, newCPUSet(1, 2, 3, 4, 5, 6, 7), []hint{h(true, 1), h(false, 0, 1)}},
		{"test-3: 5 need both nodes", 5, newCPUSet(0, 1, 2, 3, 4, 5, 6, 7), []hint{h(true, 0, 1)}},
		{"test-4: 8 need both nodes", 8, newCPUSet(0, 1, 2, 3, 4, 5, 6, 7), []hint{h(true, 0, 1)}},
		{"test-5: 9 fit nowhere", 9, newCPUSet(0, 1, 2, 3, 4, 5, 6, 7), noNuma},
		// Preference follows the machine, not what is free: one node could hold 4.
		{"test-6: split free CPUs are not preferred", 4, newCPUSet(2, 3, 4, 5), []hint{h(false, 0, 1)}},
		{"no whole cpus: no preference", 0, newCPUSet(0), anyNuma},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := cpuHints(topo, tc.avail, tc.request); !slices.Equal(got, tc.want) {
				t.Errorf("hints %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSubMasksOrder(t *testing.T) {
	var got []string
	for _, m := range subMasks(maskOf(0, 2, 3)) {
		got = append(got, fmt.Sprint(m.ids()))
	}
	want := "[[0] [2] [3] [0 2] [0 3] [2 3] [0 2 3]]"
	if fmt.Sprint(got) != want {
		t.Errorf("subMasks = %v, want %s", got, want)
	}
}

func TestNarrower(t *testing.T) {
	tests := []struct {
		a, b numaMask
		want bool
	}{
		{maskOf(0), maskOf(0, 1), true},
		{maskOf(0, 1), maskOf(1), false},
		{maskOf(0), maskOf(1), true},       // as many nodes: the lower mask
		{maskOf(1, 2), maskOf(0, 3), true}, // the kubelet compares the masks as numbers: 6 < 9
		{maskOf(0, 3), maskOf(1, 2), false},
		{maskOf(0), maskOf(0), false},
	}
	for _, tc := range tests {
		if got := tc.a.narrower(tc.b); got != tc.want {
			t.Errorf("%v narrower than %v = %t, want %t", tc.a.ids(), tc.b.ids(), got, tc.want)
		}
	}
}

// policyCases are the provider hints of Volcano's policy tests (policy_*_test.go), a cpu and a
// gpu provider on a machine of NUMA nodes 0 and 1, with what each policy picks.
var policyCases = []struct {
	name                               string
	cpu, gpu                           []hint
	bestEffort, restricted, singleNuma hint
}{
	{"test-1", []hint{h(false, 0, 1), h(true, 0)}, []hint{h(false, 0, 1), h(true, 0)},
		h(true, 0), h(true, 0), h(true, 0)},
	{"test-2", []hint{h(false, 0, 1), h(true, 1)}, []hint{h(false, 0, 1), h(true, 1)},
		h(true, 1), h(true, 1), h(true, 1)},
	{"test-3", []hint{h(false, 0, 1), h(true, 0), h(true, 1)}, []hint{h(false, 0, 1), h(true, 0), h(true, 1)},
		h(true, 0), h(true, 0), h(true, 0)},
	{"test-4", []hint{h(false, 0, 1), h(true, 0)}, []hint{h(false, 0, 1), h(true, 1)},
		h(false, 0), h(false, 0), h(false, 0, 1)},
	{"test-5", []hint{h(false, 0, 1), h(true, 0)}, []hint{h(true, 0, 1)},
		h(true, 0), h(true, 0), h(false, 0, 1)},
	{"test-6", []hint{h(true, 0, 1)}, []hint{h(true, 0, 1)},
		h(true, 0, 1), h(true, 0, 1), h(false, 0, 1)},
}

// TestPolicies translates Volcano's Test_best_effort_predicate, Test_restricted_predicate,
// Test_single_numa_node_predicate and Test_none_predicate: the best hint, and whether the
// policy admits it (best-effort always; restricted and single-numa-node only when preferred).
func TestPolicies(t *testing.T) {
	all := maskOf(0, 1)
	for _, tc := range policyCases {
		res := [][]hint{tc.cpu, tc.gpu}
		for _, p := range []struct {
			name       string
			want       hint
			wantsAdmit bool
		}{
			{api.TopologyPolicyBestEffort, tc.bestEffort, true},
			{api.TopologyPolicyRestricted, tc.restricted, tc.restricted.preferred},
			{api.TopologyPolicySingleNumaNode, tc.singleNuma, tc.singleNuma.preferred},
		} {
			best, admit := policies[p.name](all, res)
			if best != p.want || admit != p.wantsAdmit {
				t.Errorf("%s %s: best %v admit %t, want %v admit %t", tc.name, p.name, best, admit, p.want, p.wantsAdmit)
			}
		}
	}
	// none: no hint at all, always admitted, whatever the providers say.
	if best, admit := policies[api.TopologyPolicyNone](all, [][]hint{noNuma}); best != (hint{}) || !admit {
		t.Errorf("none: best %v admit %t", best, admit)
	}
}

// TestMergeSpecialHints covers the provider answers that are not masks: no preference counts
// as every NUMA node and preferred; no possible placement as every node, not preferred.
func TestMergeSpecialHints(t *testing.T) {
	all := maskOf(0, 1)
	tests := []struct {
		name      string
		resources [][]hint
		want      hint
	}{
		{"no resources", nil, h(true, 0, 1)},
		{"no preference", [][]hint{anyNuma}, h(true, 0, 1)},
		{"no preference and a preferred node", [][]hint{anyNuma, {h(true, 1)}}, h(true, 1)},
		{"impossible", [][]hint{noNuma}, h(false, 0, 1)},
		{"disjoint preferred hints", [][]hint{{h(true, 0)}, {h(true, 1)}}, h(false, 0, 1)},
	}
	for _, tc := range tests {
		if got := mergeHints(all, tc.resources); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	// single-numa-node keeps a no-preference hint but drops a wide preferred one.
	if best, admit := policies[api.TopologyPolicySingleNumaNode](all, [][]hint{anyNuma}); !admit || best != h(true, 0, 1) {
		t.Errorf("single-numa-node with no preference: %v %t", best, admit)
	}
}

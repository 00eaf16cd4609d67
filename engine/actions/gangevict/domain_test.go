package gangevict

import (
	"fmt"
	"slices"
	"testing"

	"github.com/sluice-sched/sluice/engine/actions/gangevict/evicttest"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// testPolicy evicts any running task of another job, vetted as a gang preemption.
var testPolicy = Policy{
	Action: "test",
	Kind:   framework.EvictionKindGangPreempt,
	Candidate: func(_ *framework.Session, job, victim *api.JobInfo, t *api.TaskInfo) bool {
		return t.Status == api.Running && victim.UID != job.UID
	},
	Sort: func(_ *framework.Session, _ *api.JobInfo, bundles []*Bundle, need *api.Resource) {
		SortBundles(bundles, need, nil)
	},
	Rule: func(*framework.Session, *api.JobInfo, *api.JobInfo) string { return "test" },
}

// open opens a session on the snapshot with the test policy's action configured.
func open(t *testing.T, snap *framework.Snapshot, stub *evicttest.Stub) *framework.Session {
	t.Helper()
	if stub == nil {
		stub = &evicttest.Stub{}
	}
	ssn, _ := evicttest.Open(t, snap, evicttest.Config("test", ""), stub,
		map[string]framework.ActionBuilder{"test": Builder(testPolicy)})
	return ssn
}

func domainNames(ds []Domain) []string {
	var out []string
	for _, d := range ds {
		names := make([]string, 0, len(d.Nodes))
		for _, n := range d.Nodes {
			names = append(names, n.Name)
		}
		out = append(out, fmt.Sprintf("%s%v", d.HyperNode, names))
	}
	return out
}

// TestDomains covers Volcano's GetCandidateDomains and PickDomainsFromGradients (cap and
// fallback) with the network-topology-aware gradient for eviction.
func TestDomains(t *testing.T) {
	p := evicttest.Starving("p", "q1", 1, 2, 2)
	tests := []struct {
		name string
		snap *framework.Snapshot
		max  int
		want []string
	}{
		{
			name: "no topology constraint: the whole cluster",
			snap: evicttest.Topology(evicttest.Cluster(p)),
			max:  8,
			want: []string{"[n0 n1 n2 n3]"},
		},
		{
			name: "hard constraint without hypernodes: the whole cluster",
			snap: evicttest.Cluster(p.Hard(1)),
			max:  8,
			want: []string{"[n0 n1 n2 n3]"},
		},
		{
			name: "tier 1",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(1))),
			max:  8,
			want: []string{"s0[n0 n1]", "s1[n2 n3]"},
		},
		{
			name: "tier 2: widest first",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(2))),
			max:  8,
			want: []string{"s2[n0 n1 n2 n3]", "s0[n0 n1]", "s1[n2 n3]"},
		},
		{
			name: "maxDomains caps the list",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(2))),
			max:  2,
			want: []string{"s2[n0 n1 n2 n3]", "s0[n0 n1]"},
		},
		{
			name: "hypernodes smaller than the job's minimum resources are left out",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(2).With(func(j *api.Job, _ []*api.Task) {
				j.MinResources = evicttest.CPU(3)
			}))),
			max:  8,
			want: []string{"s2[n0 n1 n2 n3]"},
		},
		{
			name: "a job with a running task stays within its highest allowed ancestor",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(1).With(func(_ *api.Job, ts []*api.Task) {
				ts[0].Status, ts[0].Node = api.Running, "n2"
			}))),
			max:  8,
			want: []string{"s1[n2 n3]"},
		},
		{
			name: "placed tasks count regardless of the minimum resources",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(2).With(func(j *api.Job, ts []*api.Task) {
				j.MinResources = evicttest.CPU(3)
				ts[0].Status, ts[0].Node = api.Running, "n2"
			}))),
			max:  8,
			want: []string{"s2[n0 n1 n2 n3]", "s0[n0 n1]", "s1[n2 n3]"},
		},
		{
			name: "placed tasks already beyond the allowed tier: no domain",
			snap: evicttest.Topology(evicttest.Cluster(p.Hard(1).With(func(_ *api.Job, ts []*api.Task) {
				ts[0].Status, ts[0].Node = api.Running, "n0"
				ts[1].Status, ts[1].Node = api.Running, "n2"
			}))),
			max:  8,
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn := open(t, tc.snap, nil)
			got := domainNames(Domains(ssn, ssn.Jobs["ns/p"], tc.max))
			if !slices.Equal(got, tc.want) {
				t.Errorf("domains %v, want %v", got, tc.want)
			}
		})
	}
}

// TestGradientCap checks Volcano's reverseAndCapEvictionGradients: at most eight hypernodes,
// the widest tier first, the last ones of a tier that does not fit whole.
func TestGradientCap(t *testing.T) {
	snap := evicttest.Cluster(evicttest.Starving("p", "q1", 1, 1, 1).Hard(2))
	snap.Nodes = nil
	top := &api.HyperNode{Name: "top", Tier: 2}
	for i := range 10 {
		node, hn := fmt.Sprintf("n%d", i), fmt.Sprintf("h%d", i)
		snap.Nodes = append(snap.Nodes, evicttest.Node(node, 1))
		snap.HyperNodes = append(snap.HyperNodes, &api.HyperNode{Name: hn, Tier: 1, Members: []string{node}})
		top.Members = append(top.Members, hn)
	}
	snap.HyperNodes = append(snap.HyperNodes, top)
	ssn := open(t, snap, nil)
	var got []string
	for _, d := range Gradient(ssn, ssn.Jobs["ns/p"], "", 2) {
		got = append(got, d.HyperNode)
	}
	if want := []string{"top", "h3", "h4", "h5", "h6", "h7", "h8", "h9"}; !slices.Equal(got, want) {
		t.Errorf("gradient %v, want %v", got, want)
	}
	got = nil
	for _, d := range Gradient(ssn, ssn.Jobs["ns/p"], "h1", 2) {
		got = append(got, d.HyperNode)
	}
	if want := []string{"h1"}; !slices.Equal(got, want) {
		t.Errorf("gradient under h1 %v, want %v", got, want)
	}
}

// TestParseOptions covers Volcano's TestParseArguments and
// TestParseArguments_InvalidMaxDomainsFallsBackToDefault.
func TestParseOptions(t *testing.T) {
	tests := []struct {
		args    conf.Arguments
		want    Options
		wantErr bool
	}{
		{nil, Options{MaxDomains: 8, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": 3, "allowWholeBundle": false}, Options{MaxDomains: 3}, false},
		{conf.Arguments{"maxDomains": "5", "allowWholeBundle": "true"}, Options{MaxDomains: 5, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": 0}, Options{MaxDomains: 8, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": -1}, Options{MaxDomains: 8, AllowWholeBundle: true}, false},
		{conf.Arguments{"maxDomains": 1.5}, Options{}, true},
		{conf.Arguments{"allowWholeBundle": "sometimes"}, Options{}, true},
	}
	for _, tc := range tests {
		got, err := ParseOptions(tc.args)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseOptions(%v) = %+v, %v; want %+v, error %v", tc.args, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestJobEvictable(t *testing.T) {
	tests := []struct {
		annotations, labels map[string]string
		want                bool
	}{
		{nil, nil, true},
		{map[string]string{PreemptableKey: "false"}, nil, false},
		{map[string]string{PreemptableKey: "true"}, map[string]string{PreemptableKey: "false"}, true},
		{nil, map[string]string{PreemptableKey: "false"}, false},
		{nil, map[string]string{PreemptableKey: "1"}, true},
		{map[string]string{PreemptableKey: "maybe"}, nil, false},
	}
	for _, tc := range tests {
		j := api.NewJobInfo(&api.Job{Name: "j", Annotations: tc.annotations, Labels: tc.labels}, 0)
		if got := jobEvictable(j); got != tc.want {
			t.Errorf("annotations %v labels %v: evictable %v, want %v", tc.annotations, tc.labels, got, tc.want)
		}
	}
}

package drf

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

const hierarchyConfig = "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: drf\n    enableHierarchy: true\n"

// queueSpec and jobSpec describe a hierarchical cluster compactly: a job runs `running` tasks
// and waits with `pending` more, each asking for res.
type queueSpec struct {
	name, parent string
	weight       int32
}

type jobSpec struct {
	name, queue      string
	running, pending int
	res              api.Resource
}

// hierarchical builds one node offering node, the queues and the jobs (job j's tasks are
// j-run-<i> and j-wait-<i>).
func hierarchical(node api.Resource, queues []queueSpec, jobs []jobSpec) *tu.Cluster {
	c := tu.NewCluster()
	c.Node("n1", node)
	for _, q := range queues {
		c.Queue(q.name, q.weight).Parent = q.parent
	}
	for _, j := range jobs {
		job := c.Job(j.name, j.queue, 0)
		c.Tasks(job, j.name+"-run", j.running, api.Running, "n1", j.res)
		c.Tasks(job, j.name+"-wait", j.pending, api.Pending, "", j.res)
	}
	return c
}

func openHierarchy(t *testing.T, c *tu.Cluster) (*framework.Session, *plugin) {
	t.Helper()
	ssn := c.Open(t, hierarchyConfig, builders)
	return ssn, ssn.Plugins()[0].(*plugin)
}

func cores(n float64) api.Resource { return tu.CPU(n, 0) }
func gib(n float64) api.Resource   { return tu.CPU(0, n) }

func TestQueuePaths(t *testing.T) {
	tests := []struct {
		name    string
		queues  []queueSpec
		want    map[string]string
		wantErr string
	}{
		{"top-level queues", []queueSpec{{"a", "", 1}, {"b", "root", 1}}, map[string]string{"a": "a", "b": "b"}, ""},
		{"nested", []queueSpec{{"eng", "", 1}, {"dev", "eng", 1}, {"ci", "dev", 1}},
			map[string]string{"eng": "eng", "dev": "eng/dev", "ci": "eng/dev/ci"}, ""},
		{"a declared root is the top itself", []queueSpec{{"root", "", 1}, {"a", "root", 1}}, map[string]string{"root": "", "a": "a"}, ""},
		{"missing parent", []queueSpec{{"a", "ghost", 1}}, nil, "parent queue ghost is not in the session"},
		{"cycle", []queueSpec{{"a", "b", 1}, {"b", "a", 1}}, nil, "cycle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			queues := map[string]*api.QueueInfo{}
			for _, q := range tc.queues {
				queues[q.name] = api.NewQueueInfo(&api.Queue{Name: q.name, Parent: q.parent, Weight: q.weight})
			}
			paths, err := queuePaths(queues)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("queuePaths error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for q, want := range tc.want {
				if got := strings.Join(paths[q], "/"); got != want {
					t.Errorf("path of %s = %q, want %q", q, got, want)
				}
			}
		})
	}
}

func TestResourceSaturated(t *testing.T) {
	demanding := map[string]bool{"cpu": true, "memory": true}
	cpuFull := map[string]bool{"memory": true}
	tests := []struct {
		name               string
		allocated, request api.Resource
		demanding          map[string]bool
		want               bool
	}{
		{"holds nothing", api.Resource{}, tu.CPU(2, 2), demanding, false},
		{"holds part of what it asks", tu.CPU(1, 1), tu.CPU(2, 2), demanding, false},
		{"holds all of one resource", tu.CPU(2, 1), tu.CPU(2, 2), demanding, true},
		{"holds a resource no longer in demand", tu.CPU(1, 1), tu.CPU(2, 2), cpuFull, true},
		{"a resource it does not ask for does not count", cores(1), gib(2), cpuFull, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := resourceSaturated(&tc.allocated, &tc.request, tc.demanding); got != tc.want {
				t.Errorf("resourceSaturated = %v, want %v", got, tc.want)
			}
		})
	}
}

// figures are a tree node's derived share and saturation.
type figures struct {
	share     float64
	saturated bool
}

// TestRefresh checks the derived figures of Volcano's "rescaling" shape: sci asks for cpu and
// memory, eng's children dev for cpu only and prod for memory only, on a 10-cpu/10Gi node.
func TestRefresh(t *testing.T) {
	queues := []queueSpec{{"sci", "", 1}, {"eng", "", 1}, {"dev", "eng", 1}, {"prod", "eng", 1}}
	tests := []struct {
		name string
		jobs []jobSpec
		// want maps a node of the tree (a queue, or "root") to its share and saturation.
		want map[string]figures
	}{
		{
			// dev 0.2, prod 0.4: eng scales prod to dev's 0.2, so eng counts 2 cpu + 2Gi.
			name: "demanding children are scaled to the smallest share",
			jobs: []jobSpec{{"pg1", "sci", 1, 9, tu.CPU(1, 1)}, {"pg21", "dev", 2, 8, cores(1)}, {"pg22", "prod", 4, 6, gib(1)}},
			want: map[string]figures{"sci": {0.1, false}, "dev": {0.2, false}, "prod": {0.4, false}, "eng": {0.2, false}, "root": {0.2, false}},
		},
		{
			// dev holds all it asks for: it is saturated and counted as it is, and the
			// demanding prod alone sets the scale.
			name: "a saturated child is not scaled",
			jobs: []jobSpec{{"pg1", "sci", 1, 9, tu.CPU(1, 1)}, {"pg21", "dev", 2, 0, cores(1)}, {"pg22", "prod", 4, 6, gib(1)}},
			want: map[string]figures{"dev": {0.2, true}, "prod": {0.4, false}, "eng": {0.4, false}},
		},
		{
			// A child holding nothing neither scales the others nor counts.
			name: "an empty child is left out",
			jobs: []jobSpec{{"pg1", "sci", 0, 10, tu.CPU(1, 1)}, {"pg21", "dev", 3, 7, cores(1)}, {"pg22", "prod", 0, 10, gib(1)}},
			want: map[string]figures{"dev": {0.3, false}, "prod": {0, false}, "eng": {0.3, false}, "sci": {0, false}},
		},
		{
			// Every cpu is taken: each job holding cpu is saturated, and so is eng once both
			// children are; root is not while sci (holding nothing) is demanding.
			name: "a resource no longer in demand saturates",
			jobs: []jobSpec{{"pg1", "sci", 0, 10, tu.CPU(1, 1)}, {"pg21", "dev", 10, 5, cores(1)}, {"pg22", "prod", 2, 5, gib(1)}},
			want: map[string]figures{"dev": {1, true}, "prod": {0.2, false}, "eng": {1, false}, "root": {1, false}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, p := openHierarchy(t, hierarchical(tu.CPU(10, 10), queues, tc.jobs))
			p.tree.refresh()
			nodes := map[string]*hnode{}
			var walk func(n *hnode)
			walk = func(n *hnode) {
				nodes[n.name] = n
				for _, c := range n.children {
					walk(c)
				}
			}
			walk(p.tree.root)
			for name, want := range tc.want {
				n := nodes[name]
				if n == nil {
					t.Fatalf("no node %s in the tree", name)
				}
				if math.Abs(n.attr.share-want.share) > 1e-9 || n.saturated != want.saturated {
					t.Errorf("%s: share %v saturated %v, want %v %v", name, n.attr.share, n.saturated, want.share, want.saturated)
				}
			}
		})
	}
}

func TestQueueOrder(t *testing.T) {
	queues := []queueSpec{{"a", "", 2}, {"b", "", 1}, {"c", "", 1}, {"c1", "c", 1}, {"c2", "c", 1}, {"empty", "", 1}}
	tests := []struct {
		name string
		jobs []jobSpec
		l, r string
		// want is the sign of the comparison: -1 when l goes first.
		want int
	}{
		{"smaller weighted share first", []jobSpec{{"ja", "a", 2, 9, cores(1)}, {"jb", "b", 2, 9, cores(1)}}, "a", "b", -1},
		{"weight divides the share", []jobSpec{{"ja", "a", 3, 9, cores(1)}, {"jb", "b", 2, 9, cores(1)}}, "a", "b", -1},
		{"equal weighted shares tie", []jobSpec{{"ja", "a", 4, 9, cores(1)}, {"jb", "b", 2, 9, cores(1)}}, "a", "b", 0},
		{"larger weighted share last", []jobSpec{{"ja", "a", 6, 9, cores(1)}, {"jb", "b", 2, 9, cores(1)}}, "a", "b", 1},
		{"saturated goes last whatever its share", []jobSpec{{"ja", "a", 1, 0, cores(1)}, {"jb", "b", 3, 9, cores(1)}}, "a", "b", 1},
		// c holds 4 cpu, but scaled to c1's share it counts 2, below b's 3.
		{"cousins compare their ancestors under root", []jobSpec{{"jb", "b", 3, 9, cores(1)}, {"j1", "c1", 1, 9, cores(1)}, {"j2", "c2", 3, 9, cores(1)}}, "c2", "b", -1},
		{"siblings compare themselves", []jobSpec{{"j1", "c1", 2, 9, cores(1)}, {"j2", "c2", 1, 9, cores(1)}}, "c1", "c2", 1},
		{"an ancestor ties with its descendant", []jobSpec{{"j1", "c1", 2, 9, cores(1)}, {"j2", "c2", 1, 9, cores(1)}}, "c", "c1", 0},
		{"a queue without jobs has no node and ties", []jobSpec{{"ja", "a", 2, 9, cores(1)}}, "empty", "a", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ssn, p := openHierarchy(t, hierarchical(cores(12), queues, tc.jobs))
			got := p.tree.compare(tc.l, tc.r)
			if sign(got) != tc.want {
				t.Fatalf("compare(%s, %s) = %v, want sign %d", tc.l, tc.r, got, tc.want)
			}
			// The session's queue order follows, ties falling back to the name.
			wantFirst := tc.want < 0 || (tc.want == 0 && tc.l < tc.r)
			if first := ssn.QueueOrderFn(ssn.Queues[tc.l], ssn.Queues[tc.r]); first != wantFirst {
				t.Errorf("QueueOrderFn(%s, %s) = %v, want %v", tc.l, tc.r, first, wantFirst)
			}
		})
	}
}

func sign(f float64) int {
	switch {
	case f < 0:
		return -1
	case f > 0:
		return 1
	}
	return 0
}

// TestQueueOrderFollowsStatements: placements and evictions move the queue order at once, and
// a discarded statement puts it back.
func TestQueueOrderFollowsStatements(t *testing.T) {
	c := hierarchical(cores(12), []queueSpec{{"a", "", 1}, {"b", "", 1}},
		[]jobSpec{{"ja", "a", 2, 5, cores(1)}, {"jb", "b", 4, 4, cores(1)}})
	ssn, _ := openHierarchy(t, c)
	a, b := ssn.Queues["a"], ssn.Queues["b"]
	st := ssn.NewStatement()
	pipeline := func(names ...string) {
		for _, name := range names {
			if err := st.Pipeline(tu.TaskOf(t, ssn, "ja", name), "n1"); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := []struct {
		what   string
		do     func()
		aFirst bool
	}{
		{"before: a holds 2 cpu, b 4", func() {}, true},
		{"pipelining three of a's: 5", func() { pipeline("ja-wait-0", "ja-wait-1", "ja-wait-2") }, false},
		{"evicting two of a's: 3", func() {
			for _, name := range []string{"ja-run-0", "ja-run-1"} {
				if err := st.Evict(tu.TaskOf(t, ssn, "ja", name), framework.EvictReason{Action: "test"}); err != nil {
					t.Fatal(err)
				}
			}
		}, true},
		{"pipelining two more: 5", func() { pipeline("ja-wait-3", "ja-wait-4") }, false},
		{"discarding the statement: 2 again", st.Discard, true},
	}
	for _, step := range steps {
		step.do()
		if got := ssn.QueueOrderFn(a, b); got != step.aFirst {
			t.Errorf("%s: a before b = %v, want %v", step.what, got, step.aFirst)
		}
	}
}

// TestReclaimable follows drf-hierarchy-reclaim-by-weight: a (weight 1) runs eight 1-cpu tasks
// on an 8-cpu node, b (weight 3) waits with eight.
func TestReclaimable(t *testing.T) {
	c := hierarchical(cores(8), []queueSpec{{"a", "", 1}, {"b", "", 3}, {"c", "", 1}},
		[]jobSpec{{"ja", "a", 8, 0, cores(1)}, {"jb", "b", 0, 8, cores(1)}, {"jc", "c", 0, 1, cores(1)}})
	ssn, p := openHierarchy(t, c)
	var running []*api.TaskInfo
	for i := range 8 {
		running = append(running, tu.TaskOf(t, ssn, "ja", "ja-run-"+string(rune('0'+i))))
	}
	reclaimer := tu.TaskOf(t, ssn, "jb", "jb-wait-0")

	// b with one task: 1/8/3 against a less one: 7/8. Each candidate is judged alone, so all
	// of a's tasks qualify.
	if got := ssn.Reclaimable(reclaimer, running); len(got) != 8 {
		t.Fatalf("Reclaimable = %v, want all 8 of a's tasks", tu.Names(got))
	}
	before := p.tree.compare("a", "b")

	// Five reclaimed: b holds 5 (5/24 with the next), a 3 (2/8 less one). Still below: one
	// more qualifies at k = 4 ... but at k = 5, 6/24 = 2/8: equal is not enough.
	st := ssn.NewStatement()
	for i := range 5 {
		if err := st.Evict(running[i], framework.EvictReason{Action: "test"}); err != nil {
			t.Fatal(err)
		}
		if err := st.Pipeline(tu.TaskOf(t, ssn, "jb", "jb-wait-"+string(rune('0'+i))), "n1"); err != nil {
			t.Fatal(err)
		}
	}
	if got := ssn.Reclaimable(tu.TaskOf(t, ssn, "jb", "jb-wait-5"), running[5:]); len(got) != 0 {
		t.Errorf("after five: Reclaimable = %v, want none (equal weighted shares)", tu.Names(got))
	}
	// c (weight 1, nothing held) against a holding 3: 1/8 < 2/8.
	if got := ssn.Reclaimable(tu.TaskOf(t, ssn, "jc", "jc-wait-0"), running[5:6]); !slices.Equal(tu.Names(got), []string{"ja-run-5"}) {
		t.Errorf("c: Reclaimable = %v, want [ja-run-5]", tu.Names(got))
	}
	st.Discard()
	if after := p.tree.compare("a", "b"); after != before {
		t.Errorf("reclaimable changed the session's tree: compare(a, b) %v, was %v", after, before)
	}
}

func TestReclaimableUnknownJobs(t *testing.T) {
	c := hierarchical(cores(4), []queueSpec{{"a", "", 1}, {"b", "", 1}},
		[]jobSpec{{"ja", "a", 4, 0, cores(1)}, {"jb", "b", 0, 1, cores(1)}})
	ssn, p := openHierarchy(t, c)
	one := cores(1)
	ghost := &api.TaskInfo{UID: "ns/ghost-0", Name: "ghost-0", Job: "ns/ghost", Resreq: &one}
	if got, v := p.reclaimable(ssn, ghost, []*api.TaskInfo{tu.TaskOf(t, ssn, "ja", "ja-run-0")}); got != nil || v != framework.Permit {
		t.Errorf("unknown reclaimer: %v, %v; want no victims, Permit", tu.Names(got), v)
	}
	got, _ := p.reclaimable(ssn, tu.TaskOf(t, ssn, "jb", "jb-wait-0"), []*api.TaskInfo{ghost, tu.TaskOf(t, ssn, "ja", "ja-run-0")})
	if !slices.Equal(tu.Names(got), []string{"ja-run-0"}) {
		t.Errorf("a candidate of an unknown job is skipped: got %v, want [ja-run-0]", tu.Names(got))
	}
}

// TestBrokenHierarchyLeavesThePluginOut: as in Volcano, when the hierarchy cannot be built the
// plugin registers nothing, not even its job order.
func TestBrokenHierarchyLeavesThePluginOut(t *testing.T) {
	c := cluster()
	c.Snap.Queues[0].Parent = "ghost"
	ssn, p := openHierarchy(t, c)
	if p.tree != nil {
		t.Error("a tree was built over a missing parent")
	}
	// big (created first, larger share) goes first by creation order alone.
	if !ssn.JobOrderFn(tu.JobOf(t, ssn, "big"), tu.JobOf(t, ssn, "small")) {
		t.Error("drf's job order is registered although the hierarchy is broken")
	}
}

// TestReclaimableJudgesEachCandidateAlone: a candidate is put back before the next is judged.
// x's children xa (2 cpu) and xd (3 cpu) count as 2 × the smaller; b holds 2 and reclaims one
// more (3). Taking one of xd's leaves x at 2 × min(2, 2) = 4 > 3: a victim; taking one of xa's
// leaves x at 2 × min(1, 3) = 2: not one. Judged after xa's (not put back), xd's would leave
// x at 2 × min(1, 2) = 2 and not be one either.
func TestReclaimableJudgesEachCandidateAlone(t *testing.T) {
	c := hierarchical(cores(10), []queueSpec{{"x", "", 1}, {"xa", "x", 1}, {"xd", "x", 1}, {"b", "", 1}},
		[]jobSpec{{"ja", "xa", 2, 5, cores(1)}, {"jd", "xd", 3, 5, cores(1)}, {"jb", "b", 2, 5, cores(1)}})
	ssn, _ := openHierarchy(t, c)
	cands := []*api.TaskInfo{tu.TaskOf(t, ssn, "ja", "ja-run-0"), tu.TaskOf(t, ssn, "jd", "jd-run-0")}
	if got := ssn.Reclaimable(tu.TaskOf(t, ssn, "jb", "jb-wait-0"), cands); !slices.Equal(tu.Names(got), []string{"jd-run-0"}) {
		t.Errorf("Reclaimable = %v, want [jd-run-0]", tu.Names(got))
	}
}

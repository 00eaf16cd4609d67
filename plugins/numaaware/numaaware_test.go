package numaaware

import (
	"strings"
	"testing"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	tu "github.com/sluice-sched/sluice/plugins/internal/testutil"
)

var builders = map[string]framework.PluginBuilder{Name: New}

// machine is the two-socket machine of volcanoTopology with the given policy, CPUs held by
// the given holders, and reserved milli-CPU.
func machine(policy string, held map[int]string, reservedMilli int64) *api.NumaTopology {
	t := volcanoTopology()
	t.TopologyManagerPolicy = policy
	t.ReservedMilliCPU = reservedMilli
	for ci := range t.Cells {
		for k := range t.Cells[ci].CPUs {
			t.Cells[ci].CPUs[k].Holder = held[t.Cells[ci].CPUs[k].ID]
		}
	}
	return t
}

// taskSpec describes a pending task of its own job.
type taskSpec struct {
	cpu        float64
	guaranteed bool
	policy     string // task annotation, "" for none
	jobPolicy  string // job annotation, "" for none
}

// open builds a cluster of the given nodes (name to topology, nil for none; every node
// offers 8 cpus) and one pending task, and opens a session with config.
func open(t *testing.T, config string, nodes map[string]*api.NumaTopology, ts taskSpec) (*framework.Session, *api.TaskInfo) {
	t.Helper()
	c := tu.NewCluster()
	c.Queue("q", 1)
	for _, name := range []string{"n1", "n2", "n3"} {
		if topo, ok := nodes[name]; ok {
			c.Node(name, tu.CPU(8, 16)).NumaTopology = topo
		}
	}
	j := c.Job("j", "q", 1)
	if ts.jobPolicy != "" {
		j.Annotations = map[string]string{api.NumaPolicyAnnotation: ts.jobPolicy}
	}
	task := c.Task(j, "t", api.Pending, "", tu.CPU(ts.cpu, 1))
	task.Guaranteed = ts.guaranteed
	if ts.policy != "" {
		task.Annotations = map[string]string{api.NumaPolicyAnnotation: ts.policy}
	}
	ssn := c.Open(t, config, builders)
	return ssn, tu.TaskOf(t, ssn, "j", "t")
}

func TestPredicate(t *testing.T) {
	const (
		be, re, sn = api.TopologyPolicyBestEffort, api.TopologyPolicyRestricted, api.TopologyPolicySingleNumaNode
	)
	notStatic := machine(sn, nil, 0)
	notStatic.CPUManagerPolicy = api.CPUManagerPolicyNone
	tests := []struct {
		name       string
		node       *api.NumaTopology
		task       taskSpec
		reason     string // "" when the node fits
		unresolved bool
	}{
		{"not guaranteed: never the plugin's", nil, taskSpec{cpu: 4, policy: sn}, "", false},
		{"policy without topology", nil, taskSpec{cpu: 4, guaranteed: true, policy: sn}, reasonNoTopology, false},
		{"policy on a node without static cpu manager", notStatic, taskSpec{cpu: 4, guaranteed: true, policy: sn}, reasonNotStatic, false},
		{"policy differs", machine(be, nil, 0), taskSpec{cpu: 4, guaranteed: true, policy: sn},
			"numa policy single-numa-node differs from the node's best-effort", false},
		{"no free cpu", machine(sn, map[int]string{0: "x", 1: "x", 2: "x", 3: "x", 4: "x", 5: "x", 6: "x", 7: "x"}, 0),
			taskSpec{cpu: 1, guaranteed: true, policy: sn}, reasonNoFreeCPUs, false},
		{"single-numa-node: one node holds 4", machine(sn, nil, 0), taskSpec{cpu: 4, guaranteed: true, policy: sn}, "", false},
		{"single-numa-node: 3 free on each node", machine(sn, map[int]string{0: "x", 4: "x"}, 0),
			taskSpec{cpu: 4, guaranteed: true, policy: sn}, "no cpu alignment for numa policy single-numa-node", true},
		{"single-numa-node: 5 never fit one node", machine(sn, nil, 0), taskSpec{cpu: 5, guaranteed: true, policy: sn},
			"no cpu alignment", true},
		{"restricted: 5 on both nodes is the narrowest possible", machine(re, nil, 0), taskSpec{cpu: 5, guaranteed: true, policy: re}, "", false},
		{"restricted: split when one node could hold it", machine(re, map[int]string{0: "x", 4: "x"}, 0),
			taskSpec{cpu: 4, guaranteed: true, policy: re}, "no cpu alignment", true},
		{"best-effort: split is fine", machine(be, map[int]string{0: "x", 4: "x"}, 0), taskSpec{cpu: 4, guaranteed: true, policy: be}, "", false},
		{"best-effort: too few cpus", machine(be, map[int]string{0: "x", 4: "x"}, 0),
			taskSpec{cpu: 7, guaranteed: true, policy: be}, reasonInsufficient, false},
		{"reserved cpus are never given", machine(sn, map[int]string{4: "x"}, 1000),
			taskSpec{cpu: 4, guaranteed: true, policy: sn}, "no cpu alignment", true},
		{"reserved cpu 0 leaves node 1", machine(sn, nil, 1000), taskSpec{cpu: 4, guaranteed: true, policy: sn}, "", false},
		{"no policy: a none node is not the plugin's", machine(api.TopologyPolicyNone, nil, 0), taskSpec{cpu: 8, guaranteed: true}, "", false},
		{"no policy: a static node's policy still applies", machine(sn, nil, 0), taskSpec{cpu: 5, guaranteed: true},
			"no cpu alignment", true},
		{"no policy: a node without topology is fine", nil, taskSpec{cpu: 5, guaranteed: true}, "", false},
		{"the job's policy applies", machine(be, nil, 0), taskSpec{cpu: 4, guaranteed: true, jobPolicy: sn}, "differs", false},
		{"the task's none overrides the job's", machine(sn, nil, 0), taskSpec{cpu: 5, guaranteed: true, policy: "none", jobPolicy: be},
			"no cpu alignment", true},
		{"a fractional cpu has no preference", machine(sn, nil, 0), taskSpec{cpu: 4.5, guaranteed: true, policy: sn}, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			nodes := map[string]*api.NumaTopology{"n1": tc.node}
			ssn, task := open(t, tu.OneTier(Name), nodes, tc.task)
			err := ssn.PredicateFn(task, ssn.Nodes["n1"])
			if tc.reason == "" {
				if err != nil {
					t.Fatalf("predicate failed: %v", err)
				}
				return
			}
			fe, ok := err.(*api.FitError)
			if !ok || !strings.Contains(fe.Error(), tc.reason) {
				t.Fatalf("predicate error %v, want a fit error with %q", err, tc.reason)
			}
			if fe.Resolvable() == tc.unresolved {
				t.Errorf("code %v, want unresolvable %t", fe.Code, tc.unresolved)
			}
		})
	}
}

// TestScore: fewer NUMA nodes score higher, normalized over the candidates and weighted.
func TestScore(t *testing.T) {
	be := api.TopologyPolicyBestEffort
	nodes := map[string]*api.NumaTopology{
		"n1": machine(be, nil, 0),                            // 4 CPUs on one NUMA node
		"n2": machine(be, map[int]string{0: "x", 4: "x"}, 0), // 4 CPUs span both
		"n3": machine(be, map[int]string{0: "x", 1: "x"}, 0), // node 1 is whole
	}
	config := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: numa-aware\n    arguments:\n      weight: 3\n"
	ssn, task := open(t, config, nodes, taskSpec{cpu: 4, guaranteed: true, policy: be})
	got, err := ssn.BatchNodeOrderFn(task, ssn.NodeList)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{"n1": 150, "n2": 0, "n3": 150}
	for n, w := range want {
		if got[n] != w {
			t.Errorf("score %s = %v, want %v (all %v)", n, got[n], w, got)
		}
	}
	// No policy, or not guaranteed: no score.
	for _, ts := range []taskSpec{{cpu: 4, guaranteed: true}, {cpu: 4, policy: be}} {
		ssn, task := open(t, config, nodes, ts)
		if got, _ := ssn.BatchNodeOrderFn(task, ssn.NodeList); len(got) != 0 && (got["n1"] != 0 || got["n2"] != 0) {
			t.Errorf("%+v scored %v", ts, got)
		}
	}
	// Volcano's reversed normalization: candidates spanning as many NUMA nodes as the most
	// spread one score 0, so equal candidates all do; only when the CPUs span no NUMA node
	// at all (a fractional cpu request) does every candidate score the maximum.
	for _, tc := range []struct {
		cpu  float64
		want float64
	}{{2, 0}, {1.5, 300}} {
		ssn, task = open(t, config, map[string]*api.NumaTopology{"n1": nodes["n1"], "n3": nodes["n3"]},
			taskSpec{cpu: tc.cpu, guaranteed: true, policy: be})
		if got, _ := ssn.BatchNodeOrderFn(task, ssn.NodeList); got["n1"] != tc.want || got["n3"] != tc.want {
			t.Errorf("equal candidates for %v cpus scored %v, want %v", tc.cpu, got, tc.want)
		}
	}
}

// TestEvents: an allocation takes the task's CPUs for the rest of the session, a discard
// gives them back, an eviction keeps them while the task releases.
func TestEvents(t *testing.T) {
	sn := api.TopologyPolicySingleNumaNode
	c := tu.NewCluster()
	c.Queue("q", 1)
	c.Node("n1", tu.CPU(8, 16)).NumaTopology = machine(sn, nil, 0)
	j := c.Job("j", "q", 1)
	for _, name := range []string{"a", "b", "c"} {
		task := c.Task(j, name, api.Pending, "", tu.CPU(4, 1))
		task.Guaranteed = true
		task.Annotations = map[string]string{api.NumaPolicyAnnotation: sn}
	}
	ssn := c.Open(t, tu.OneTier(Name), builders)
	p := ssn.Plugins()[0].(*plugin)
	n1 := ssn.Nodes["n1"]
	a, b, cc := tu.TaskOf(t, ssn, "j", "a"), tu.TaskOf(t, ssn, "j", "b"), tu.TaskOf(t, ssn, "j", "c")

	st := ssn.NewStatement()
	for _, task := range []*api.TaskInfo{a, b} {
		if err := ssn.PredicateFn(task, n1); err != nil {
			t.Fatalf("%s: %v", task.Name, err)
		}
		if err := st.Allocate(task, n1); err != nil {
			t.Fatal(err)
		}
	}
	if got := p.nodes["n1"].free.String(); got != "" {
		t.Fatalf("free after two allocations: %q", got)
	}
	if p.held[a.UID].cpus.String() != "0-3" || p.held[b.UID].cpus.String() != "4-7" {
		t.Fatalf("held %v", p.held)
	}
	if err := ssn.PredicateFn(cc, n1); err == nil || !strings.Contains(err.Error(), reasonNoFreeCPUs) {
		t.Fatalf("third task: %v", err)
	}
	st.Discard()
	if got := p.nodes["n1"].free.String(); got != "0-7" || len(p.held) != 0 {
		t.Fatalf("after discard: free %q, held %v", got, p.held)
	}

	// Commit a, then evict it: a releasing task keeps its CPUs; discarding the eviction
	// changes nothing either.
	st = ssn.NewStatement()
	if err := st.Allocate(a, n1); err != nil {
		t.Fatal(err)
	}
	st.Commit()
	ev := ssn.NewStatement()
	if err := ev.Evict(a, framework.EvictReason{}); err != nil {
		t.Fatal(err)
	}
	if got := p.nodes["n1"].free.String(); got != "4-7" {
		t.Fatalf("after eviction: free %q", got)
	}
	ev.Discard()
	if got := p.nodes["n1"].free.String(); got != "4-7" || p.held[a.UID].cpus.String() != "0-3" {
		t.Fatalf("after a discarded eviction: free %q, held %v", got, p.held)
	}
}

// TestAccountPlaced: tasks the snapshot places on a node hold CPUs: those the topology names
// them holders of, else those the node's policy would choose now, in task order.
func TestAccountPlaced(t *testing.T) {
	sn := api.TopologyPolicySingleNumaNode
	c := tu.NewCluster()
	c.Queue("q", 1)
	// ns/known holds CPUs 4 and 5 by the topology's word.
	c.Node("n1", tu.CPU(8, 16)).NumaTopology = machine(sn, map[int]string{4: "ns/known", 5: "ns/known"}, 0)
	c.Node("n2", tu.CPU(8, 16)).NumaTopology = machine(api.TopologyPolicyNone, nil, 0)
	j := c.Job("j", "q", 1)
	placed := func(name, node string, cpu float64, status api.TaskStatus) {
		task := c.Task(j, name, status, node, tu.CPU(cpu, 1))
		task.Guaranteed = true
	}
	placed("known", "n1", 2, api.Running)
	placed("r1", "n1", 3, api.Running)   // unreported: takes 3 on NUMA node 0
	placed("r2", "n1", 2, api.Releasing) // releasing tasks hold theirs too: NUMA node 1's last 2
	placed("p", "n2", 2, api.Running)    // a node whose policy is none is not accounted
	c.Task(j, "burstable", api.Running, "n1", tu.CPU(1, 1))
	ssn := c.Open(t, tu.OneTier(Name), builders)
	p := ssn.Plugins()[0].(*plugin)
	if got := p.nodes["n1"].free.String(); got != "3" {
		t.Errorf("n1 free %q, want 3", got)
	}
	if got := p.nodes["n2"].free.String(); got != "0-7" {
		t.Errorf("n2 free %q, want 0-7", got)
	}
	if got, got2 := p.held["ns/r1"].cpus.String(), p.held["ns/r2"].cpus.String(); got != "0-2" || got2 != "6-7" {
		t.Errorf("r1 holds %q, r2 %q", got, got2)
	}
	if _, ok := p.held["ns/known"]; ok {
		t.Error("a task the topology names a holder was accounted again")
	}
	// A pending 2-CPU single-numa-node task no longer fits on n1.
	c2 := *c
	pend := c2.Task(j, "new", api.Pending, "", tu.CPU(2, 1))
	pend.Guaranteed = true
	pend.Annotations = map[string]string{api.NumaPolicyAnnotation: sn}
	ssn = c2.Open(t, tu.OneTier(Name), builders)
	if err := ssn.PredicateFn(tu.TaskOf(t, ssn, "j", "new"), ssn.Nodes["n1"]); err == nil {
		t.Error("a 2-CPU task fits n1 with one CPU free")
	}
}

func TestClassKey(t *testing.T) {
	nodes := map[string]*api.NumaTopology{"n1": machine(api.TopologyPolicyBestEffort, nil, 0)}
	for _, tc := range []struct {
		task taskSpec
		key  string
		ok   bool
	}{
		{taskSpec{cpu: 2}, "", true},
		{taskSpec{cpu: 2, guaranteed: true}, "guaranteed", true},
		{taskSpec{cpu: 2, guaranteed: true, policy: "none"}, "guaranteed", true},
		{taskSpec{cpu: 2, guaranteed: true, policy: api.TopologyPolicyBestEffort}, "", false},
	} {
		ssn, task := open(t, tu.OneTier(Name), nodes, tc.task)
		p := ssn.Plugins()[0].(*plugin)
		if key, ok := p.classKey(task); key != tc.key || ok != tc.ok {
			t.Errorf("%+v: class %q %t, want %q %t", tc.task, key, ok, tc.key, tc.ok)
		}
	}
}

// TestPredicateDisabled: without its predicate the plugin does nothing, as in Volcano.
func TestPredicateDisabled(t *testing.T) {
	config := "actions: \"allocate\"\ntiers:\n- plugins:\n  - name: numa-aware\n    enablePredicate: false\n"
	nodes := map[string]*api.NumaTopology{"n1": machine(api.TopologyPolicySingleNumaNode, nil, 0)}
	ssn, task := open(t, config, nodes, taskSpec{cpu: 4, guaranteed: true, policy: api.TopologyPolicySingleNumaNode})
	if got, _ := ssn.BatchNodeOrderFn(task, ssn.NodeList); len(got) != 0 && got["n1"] != 0 {
		t.Errorf("scored %v", got)
	}
	if p := ssn.Plugins()[0].(*plugin); p.nodes != nil {
		t.Error("the plugin indexed nodes with its predicate disabled")
	}
}

func TestNew(t *testing.T) {
	if _, err := New(conf.Arguments{ArgWeight: "heavy"}); err == nil || !strings.Contains(err.Error(), ArgWeight) {
		t.Errorf("New with a malformed weight: %v", err)
	}
	p, err := New(conf.Arguments{ArgWeight: 7})
	if err != nil || p.(*plugin).weight != 7 {
		t.Errorf("New: %v, %v", p, err)
	}
	if p, _ := New(nil); p.(*plugin).weight != 1 {
		t.Error("default weight is not 1")
	}
}

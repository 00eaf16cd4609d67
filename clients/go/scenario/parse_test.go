package scenario

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// sharedScenarios is the public acceptance set, beside the repository.
const sharedScenarios = "../../../../shared/scenarios"

// minimal is a valid scenario; tests replace its cluster and expect parts.
const minimalHead = `name: t
config: |
  actions: "allocate"
`

func mustParse(t *testing.T, src string) *Scenario {
	t.Helper()
	sc, err := Parse("t.yaml", []byte(src))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return sc
}

func TestSharedScenariosParse(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(sharedScenarios, "*.yaml"))
	if len(files) == 0 {
		t.Skip("shared scenarios not found at " + sharedScenarios)
	}
	names := map[string]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sc, err := Parse(f, data)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); sc.Name != want {
			t.Errorf("%s: name %q, want %q", f, sc.Name, want)
		}
		if other, dup := names[sc.Name]; dup {
			t.Errorf("%s: name %q also in %s", f, sc.Name, other)
		}
		names[sc.Name] = f
		if len(sc.Cluster.Batch().Deltas) == 0 {
			t.Errorf("%s: empty batch", f)
		}
		// A scenario file is also a valid cluster file.
		if _, err := ParseCluster(f, data); err != nil {
			t.Errorf("ParseCluster(%s): %v", f, err)
		}
	}
}

func TestDefaultsAndExpansion(t *testing.T) {
	sc := mustParse(t, minimalHead+`
cluster:
  nodes:
  - {namePrefix: n, count: 3, allocatable: {cpu: 8, memory: 32Gi}}
  - {name: gpu, allocatable: {cpu: 500m, nvidia.com/gpu: 2}, labels: {kubernetes.io/hostname: custom},
     devices: [{id: g0, type: nvidia.com/gpu, memory: 80Gi}, {id: g1, type: nvidia.com/gpu, cores: 50}]}
  jobs:
  - name: a
    tasks:
    - {name: w, replicas: 3, resources: {cpu: 1}}
    - {name: solo}
  - name: b
    namespace: ns1
    queue: default
    priority: 5
    createdAt: 7.5
    minAvailable: 2
    phase: Running
    tasks:
    - {name: r, role: worker, status: Running, node: n-1, startedAt: 3, preemptable: false, priority: 9}
expect:
  binds: {}
`)
	c := sc.Cluster
	if sc.Cycles != 1 || sc.CycleSeconds != 1 || sc.Now != 0 {
		t.Errorf("cycles/cycleSeconds/now = %d/%g/%g, want 1/1/0", sc.Cycles, sc.CycleSeconds, sc.Now)
	}
	var nodeNames []string
	for _, n := range c.Nodes {
		nodeNames = append(nodeNames, n.Name)
	}
	if want := []string{"n-0", "n-1", "n-2", "gpu"}; !slices.Equal(nodeNames, want) {
		t.Errorf("nodes %v, want %v", nodeNames, want)
	}
	if got := c.Nodes[2].Labels["kubernetes.io/hostname"]; got != "n-2" {
		t.Errorf("n-2 hostname label %q", got)
	}
	if got := c.Nodes[3].Labels["kubernetes.io/hostname"]; got != "custom" {
		t.Errorf("explicit hostname label replaced: %q", got)
	}
	if got := c.Nodes[0].Allocatable; !maps.Equal(got, map[string]string{"cpu": "8", "memory": "32Gi"}) {
		t.Errorf("allocatable %v", got)
	}
	if got := c.Nodes[3].Devices; got[0].Cores != 100 || got[0].Memory != "80Gi" || got[1].Cores != 50 {
		t.Errorf("devices %v", got)
	}

	var taskNames []string
	for _, tk := range c.Tasks {
		taskNames = append(taskNames, tk.Namespace+"/"+tk.Name)
	}
	if want := []string{"default/w-0", "default/w-1", "default/w-2", "default/solo", "ns1/r"}; !slices.Equal(taskNames, want) {
		t.Errorf("tasks %v, want %v", taskNames, want)
	}
	w1 := c.Tasks[1]
	if w1.Role != "w" || w1.Job != "a" || w1.Status != sluicev1.TaskStatus_TASK_STATUS_PENDING ||
		!w1.GetPreemptable() || w1.Preemptable == nil || w1.Priority != nil || w1.PriorityClass != "" ||
		w1.Node != "" || w1.StartedAt != nil || w1.Resources["cpu"] != "1" {
		t.Errorf("replica defaults wrong: %v", w1)
	}
	if solo := c.Tasks[3]; solo.Role != "solo" || len(solo.Resources) != 0 {
		t.Errorf("solo task: %v", solo)
	}
	r := c.Tasks[4]
	if r.Role != "worker" || r.Status != sluicev1.TaskStatus_TASK_STATUS_RUNNING || r.Node != "n-1" ||
		r.GetPreemptable() || r.GetPriority() != 9 || !r.StartedAt.AsTime().Equal(Epoch.Add(3*time.Second)) ||
		r.Namespace != "ns1" {
		t.Errorf("task r: %v", r)
	}

	a, b := c.Jobs[0], c.Jobs[1]
	if a.Namespace != "default" || a.Queue != "default" || a.GetMinAvailable() != 1 ||
		a.Phase != sluicev1.JobPhase_JOB_PHASE_INQUEUE || !a.CreatedAt.AsTime().Equal(Epoch) || a.Priority != nil {
		t.Errorf("job a defaults: %v", a)
	}
	if b.Namespace != "ns1" || b.GetPriority() != 5 || b.GetMinAvailable() != 2 ||
		b.Phase != sluicev1.JobPhase_JOB_PHASE_RUNNING || !b.CreatedAt.AsTime().Equal(Epoch.Add(7500*time.Millisecond)) {
		t.Errorf("job b: %v", b)
	}
	if sc.Expect.Binds == nil || len(sc.Expect.Binds) != 0 || sc.Expect.BindCounts != nil || sc.Expect.Evicted != nil {
		t.Errorf("expect: binds must be checked and empty, others unchecked: %+v", sc.Expect)
	}
}

func TestCreatedAtDefaultIsIndex(t *testing.T) {
	sc := mustParse(t, minimalHead+`
now: 100
cycleSeconds: 30
cycles: 3
cluster:
  jobs:
  - {name: j0, tasks: []}
  - {name: j1, createdAt: 50, tasks: []}
  - {name: j2, tasks: []}
expect: {jobPhases: {default/j0: Inqueue}}
`)
	for i, want := range []time.Duration{0, 50 * time.Second, 2 * time.Second} {
		if got := sc.Cluster.Jobs[i].CreatedAt.AsTime(); !got.Equal(Epoch.Add(want)) {
			t.Errorf("job %d createdAt %v, want epoch+%v", i, got, want)
		}
	}
	if got := sc.CycleTime(2); !got.Equal(Epoch.Add(160 * time.Second)) {
		t.Errorf("CycleTime(2) = %v", got)
	}
}

func TestQueuesAndOtherSections(t *testing.T) {
	sc := mustParse(t, minimalHead+`
cluster:
  priorityClasses: [{name: low, value: -5}]
  queues:
  - {name: child, parent: mid, weight: 3, capability: {cpu: 10}, state: Closed, reclaimable: false,
     nodeGroupAffinity: {required: [g1], preferred: [g2]}, nodeGroupAntiAffinity: {required: [g3]}}
  - {name: mid, parent: top, priority: 2}
  - {name: top, parent: root, deserved: {cpu: 5}, guarantee: {memory: 1Gi}}
  hypernodes:
  - {name: s1, tier: 2, members: [h1]}
  - {name: h1, tier: 1, members: [n1]}
  quotas: [{namespace: default, hard: {cpu: 100}}]
  disruptionBudgets:
  - {name: pdb, selector: {app: x}, minAvailable: 50%}
  - {name: pdb2, namespace: other, maxUnavailable: 1}
  nodes:
  - {name: n1, allocatable: {cpu: 4}, taints: [{key: k, effect: NoSchedule}], unschedulable: true, usage: {cpu: 40}}
  jobs:
  - name: j
    queue: child
    priorityClass: low
    minAvailableByRole: {ps: 1, worker: 2}
    networkTopology: {mode: hard}
    minResources: {cpu: 2}
    labels: {team: a}
    annotations: {volcano.sh/sla-waiting-time: 10m, sla-waiting-time: 30}
    tasks:
    - {name: ps, priorityClass: system-node-critical}
    - name: worker
      replicas: 2
      nodeSelector: {zone: a}
      tolerations: [{operator: Exists}, {key: k, value: v, effect: NoSchedule}]
      ports: [8080]
      devices: [{type: nvidia.com/gpu, memory: 10Gi, cores: 30}]
      topologySpread: [{topologyKey: zone, selector: {app: w}}]
      affinity:
        nodeRequired: [{matchExpressions: [{key: zone, operator: In, values: [a, b]}, {key: n, operator: Gt, values: [3]}]}]
        nodePreferred: [{weight: 50, matchExpressions: [{key: disk, operator: Exists}]}]
        taskAffinity: [{selector: {app: ps}, topologyKey: zone, required: true}]
        taskAntiAffinity: [{selector: {app: w}, topologyKey: kubernetes.io/hostname, weight: 10}]
expect:
  queues: {child: {allocated: {cpu: 0}}, default: {deserved: {cpu: 1}}}
`)
	c := sc.Cluster
	var order []string
	for _, q := range c.Queues {
		order = append(order, q.Name+"<"+q.Parent)
	}
	if want := []string{"top<", "mid<top", "child<mid"}; !slices.Equal(order, want) {
		t.Errorf("queue order %v, want %v (parents first, root as empty)", order, want)
	}
	child := c.Queues[2]
	if child.Weight != 3 || child.State != sluicev1.QueueState_QUEUE_STATE_CLOSED || child.GetReclaimable() ||
		child.Reclaimable == nil || child.NodeGroupAffinity.GetRequired()[0] != "g1" ||
		child.NodeGroupAffinity.GetPreferred()[0] != "g2" || child.NodeGroupAntiAffinity.GetRequired()[0] != "g3" {
		t.Errorf("child queue: %v", child)
	}
	if top := c.Queues[0]; top.Weight != 1 || top.State != sluicev1.QueueState_QUEUE_STATE_OPEN || !top.GetReclaimable() {
		t.Errorf("queue defaults: %v", top)
	}
	var pcs []string
	for _, pc := range c.PriorityClasses {
		pcs = append(pcs, pc.Name)
	}
	if want := []string{"low", "system-node-critical"}; !slices.Equal(pcs, want) {
		t.Errorf("priority classes %v, want %v (built-in added)", pcs, want)
	}
	if b := c.DisruptionBudgets; b[0].GetMinAvailable() != "50%" || b[0].MaxUnavailable != nil || b[0].Namespace != "default" ||
		b[1].GetMaxUnavailable() != "1" || b[1].Namespace != "other" {
		t.Errorf("budgets %v", b)
	}
	j := c.Jobs[0]
	if j.NetworkTopology.GetMode() != sluicev1.NetworkTopologyMode_NETWORK_TOPOLOGY_MODE_HARD || j.NetworkTopology.GetHighestTierAllowed() != 1 ||
		j.MinAvailableByRole["worker"] != 2 || j.Annotations["sla-waiting-time"] != "30" {
		t.Errorf("job %v", j)
	}
	w := c.Tasks[1]
	wantAff := &sluicev1.Affinity{
		NodeRequired: []*sluicev1.NodeSelectorTerm{{MatchExpressions: []*sluicev1.NodeSelectorRequirement{
			{Key: "zone", Operator: "In", Values: []string{"a", "b"}},
			{Key: "n", Operator: "Gt", Values: []string{"3"}},
		}}},
		NodePreferred: []*sluicev1.PreferredSchedulingTerm{{Weight: 50, MatchExpressions: []*sluicev1.NodeSelectorRequirement{
			{Key: "disk", Operator: "Exists"},
		}}},
		TaskAffinity:     []*sluicev1.TaskAffinityTerm{{Selector: map[string]string{"app": "ps"}, TopologyKey: "zone", Required: true}},
		TaskAntiAffinity: []*sluicev1.TaskAffinityTerm{{Selector: map[string]string{"app": "w"}, TopologyKey: "kubernetes.io/hostname", Weight: 10}},
	}
	checkProto(t, "affinity", wantAff, w.Affinity)
	if w.Role != "worker" || w.Name != "worker-0" || w.Ports[0] != 8080 || w.NodeSelector["zone"] != "a" ||
		w.Tolerations[0].Operator != sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS ||
		w.Tolerations[0].Effect != sluicev1.TaintEffect_TAINT_EFFECT_UNSPECIFIED ||
		w.Tolerations[1].Operator != sluicev1.TolerationOperator_TOLERATION_OPERATOR_EQUAL ||
		w.Tolerations[1].Effect != sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE ||
		w.Devices[0].Count != 1 || w.Devices[0].Memory != "10Gi" || w.Devices[0].Cores != 30 ||
		w.TopologySpread[0].MaxSkew != 1 || w.TopologySpread[0].WhenUnsatisfiable != sluicev1.WhenUnsatisfiable_WHEN_UNSATISFIABLE_DO_NOT_SCHEDULE {
		t.Errorf("worker task %v", w)
	}
	if n := c.Nodes[0]; !n.Unschedulable || n.Usage["cpu"] != 40 || n.Taints[0].Effect != sluicev1.TaintEffect_TAINT_EFFECT_NO_SCHEDULE {
		t.Errorf("node %v", n)
	}
}

func TestParseErrors(t *testing.T) {
	const okCluster = `
cluster:
  nodes: [{name: n1, allocatable: {cpu: 4}}]
  jobs: [{name: j, tasks: [{name: t}]}]
`
	tests := []struct {
		name, src, want string
	}{
		{"empty file", ``, `bad.yaml: empty file`},
		{"not yaml", "name: [", `bad.yaml: invalid YAML`},
		{"two documents", minimalHead + okCluster + "expect: {binds: {}}\n---\nname: x\n", `bad.yaml: expected a single YAML document`},
		{"top not mapping", "- a\n", `bad.yaml: expected a mapping, got a list`},
		{"unknown top key", minimalHead + okCluster + "expect: {binds: {}}\ncycle: 2\n",
			`bad.yaml: cycle: unknown key (expected one of: name, description, config, now, cycleSeconds, cycles, cluster, expect)`},
		{"duplicate key", minimalHead + okCluster + "expect: {binds: {}}\ncycles: 2\ncycles: 3\n", `bad.yaml: cycles: duplicate key`},
		{"missing name", "config: x\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: missing required key "name"`},
		{"missing config", "name: x\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: missing required key "config"`},
		{"missing cluster", minimalHead + "expect: {binds: {}}\n", `bad.yaml: missing required key "cluster"`},
		{"missing expect", minimalHead + okCluster, `bad.yaml: missing required key "expect"`},
		{"empty expect", minimalHead + okCluster + "expect: {}\n", `bad.yaml: expect: expected at least one of: binds, bindCounts`},
		{"bad name", "name: Big Name\nconfig: x\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: name: invalid name "Big Name"`},
		{"config not string", "name: x\nconfig: {actions: a}\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: config: expected a string, got a mapping`},
		{"cycles zero", minimalHead + "cycles: 0\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: cycles: must be between 1 and 10000, got 0`},
		{"cycles not int", minimalHead + "cycles: two\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: cycles: expected an integer, got "two"`},
		{"now not number", minimalHead + "now: soon\n" + okCluster + "expect: {binds: {}}\n", `bad.yaml: now: expected a number, got "soon"`},

		{"bad quantity", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: lots}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].allocatable.cpu: invalid quantity "lots"`},
		{"bad quantity dotted name", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {nvidia.com/gpu: 2x}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].allocatable["nvidia.com/gpu"]: invalid quantity "2x"`},
		{"negative quantity", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: -1}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].allocatable.cpu: invalid quantity "-1": must not be negative`},
		{"bad task quantity", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, resources: {memory: 8GB}}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].resources.memory: invalid quantity "8GB"`},
		{"unknown node key", minimalHead + "cluster:\n  nodes: [{name: n1, alocatable: {cpu: 1}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].alocatable: unknown key (expected one of: name, count, namePrefix, allocatable`},
		{"unknown task key", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, replica: 2}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].replica: unknown key`},
		{"unknown cluster key", minimalHead + "cluster:\n  node: []\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.node: unknown key (expected one of: priorityClasses, queues, hypernodes, quotas, disruptionBudgets, nodes, jobs)`},
		{"unknown expect key", minimalHead + okCluster + "expect: {bind: {}}\n", `bad.yaml: expect.bind: unknown key`},
		{"missing allocatable", minimalHead + "cluster:\n  nodes: [{name: n1}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0]: missing required key "allocatable"`},
		{"missing node name", minimalHead + "cluster:\n  nodes: [{allocatable: {cpu: 1}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0]: missing required key "name"`},
		{"count without prefix", minimalHead + "cluster:\n  nodes: [{count: 2, allocatable: {cpu: 1}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0]: missing required key "namePrefix" (needed with count)`},
		{"missing tasks", minimalHead + "cluster:\n  jobs: [{name: j}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0]: missing required key "tasks"`},
		{"missing task name", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{replicas: 2}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0]: missing required key "name"`},
		{"missing pc value", minimalHead + "cluster:\n  priorityClasses: [{name: p}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.priorityClasses[0]: missing required key "value"`},
		{"missing taint effect", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: 1}, taints: [{key: k}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].taints[0]: missing required key "effect"`},
		{"budget without bound", minimalHead + "cluster:\n  disruptionBudgets: [{name: b}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.disruptionBudgets[0]: missing required key "minAvailable" or "maxUnavailable"`},
		{"budget both bounds", minimalHead + "cluster:\n  disruptionBudgets: [{name: b, minAvailable: 1, maxUnavailable: 1}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.disruptionBudgets[0]: expected only one of minAvailable and maxUnavailable`},
		{"budget bad percent", minimalHead + "cluster:\n  disruptionBudgets: [{name: b, minAvailable: half}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.disruptionBudgets[0].minAvailable: invalid value "half"`},

		{"bad status", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, status: running}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].status: invalid value "running" (expected one of: Pending, Bound, Running, Releasing, Succeeded, Failed)`},
		{"bad effect", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: 1}, taints: [{key: k, effect: NoEntry}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].taints[0].effect: invalid value "NoEntry" (expected one of: NoSchedule, PreferNoSchedule, NoExecute)`},
		{"bad toleration operator", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, tolerations: [{key: k, operator: Equals}]}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].tolerations[0].operator: invalid value "Equals" (expected one of: Equal, Exists)`},
		{"bad expression operator", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, affinity: {nodeRequired: [{matchExpressions: [{key: z, operator: in, values: [a]}]}]}}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].affinity.nodeRequired[0].matchExpressions[0].operator: invalid value "in" (expected one of: In, NotIn, Exists, DoesNotExist, Gt, Lt)`},
		{"Gt needs integer", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, affinity: {nodeRequired: [{matchExpressions: [{key: z, operator: Gt, values: [a]}]}]}}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].affinity.nodeRequired[0].matchExpressions[0].values[0]: operator Gt needs an integer, got "a"`},
		{"In needs values", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, affinity: {nodeRequired: [{matchExpressions: [{key: z, operator: In}]}]}}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].affinity.nodeRequired[0].matchExpressions[0]: operator In needs at least one value in values`},
		{"bad phase", minimalHead + "cluster:\n  jobs: [{name: j, phase: Queued, tasks: []}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].phase: invalid value "Queued" (expected one of: Pending, Inqueue, Running)`},
		{"bad whenUnsatisfiable", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, topologySpread: [{topologyKey: z, whenUnsatisfiable: Never}]}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].topologySpread[0].whenUnsatisfiable: invalid value "Never" (expected one of: DoNotSchedule, ScheduleAnyway)`},
		{"bad mode", minimalHead + "cluster:\n  jobs: [{name: j, networkTopology: {mode: strict}, tasks: []}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].networkTopology.mode: invalid value "strict" (expected one of: hard, soft)`},
		{"bad queue state", minimalHead + "cluster:\n  queues: [{name: q, state: open}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.queues[0].state: invalid value "open" (expected one of: Open, Closed)`},
		{"bad expected phase", minimalHead + okCluster + "expect: {jobPhases: {default/j: Done}}\n",
			`bad.yaml: expect.jobPhases["default/j"]: invalid value "Done" (expected one of: Pending, Inqueue, Running, Completed, Unknown)`},
		{"preemptable not bool", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, preemptable: maybe}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].preemptable: expected true or false, got "maybe"`},
		{"bad port", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, ports: [70000]}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].ports[0]: must be between 1 and 65535, got 70000`},
		{"running without node", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, status: Running}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0]: missing required key "node" (required for status Running)`},
		{"bound without node", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, status: Bound}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0]: missing required key "node" (required for status Bound)`},
		{"pending with node", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: 1}}]\n  jobs: [{name: j, tasks: [{name: t, node: n1}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].node: a Pending task has no node`},

		{"undeclared node", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: 1}}]\n  jobs: [{name: j, tasks: [{name: t, status: Running, node: n2}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].node: node "n2" is not declared in nodes`},
		{"undeclared queue", minimalHead + "cluster:\n  jobs: [{name: j, queue: gpu, tasks: []}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].queue: queue "gpu" is not declared in queues`},
		{"undeclared priority class", minimalHead + "cluster:\n  jobs: [{name: j, priorityClass: high, tasks: []}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].priorityClass: priority class "high" is not declared in priorityClasses`},
		{"undeclared task priority class", minimalHead + "cluster:\n  jobs: [{name: j, tasks: [{name: t, priorityClass: high}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].tasks[0].priorityClass: priority class "high" is not declared in priorityClasses`},
		{"undeclared hypernode member node", minimalHead + "cluster:\n  hypernodes: [{name: h, tier: 1, members: [n9]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.hypernodes[0].members[0]: member "n9" of tier-1 hypernode "h" is not a declared node`},
		{"undeclared hypernode member", minimalHead + "cluster:\n  hypernodes: [{name: s, tier: 2, members: [h9]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.hypernodes[0].members[0]: member "h9" of tier-2 hypernode "s" is not a declared hypernode`},
		{"undeclared parent queue", minimalHead + "cluster:\n  queues: [{name: a, parent: b}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.queues[0].parent: parent queue "b" is not declared in queues`},
		{"queue cycle", minimalHead + "cluster:\n  queues: [{name: a, parent: b}, {name: b, parent: a}]\nexpect: {binds: {}}\n",
			`is part of a parent cycle`},
		{"undeclared role", minimalHead + "cluster:\n  jobs: [{name: j, minAvailableByRole: {ps: 1}, tasks: [{name: t}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[0].minAvailableByRole.ps: no task of job "default/j" has role "ps"`},
		{"expect undeclared task", minimalHead + okCluster + "expect: {binds: {default/x: n1}}\n",
			`bad.yaml: expect.binds["default/x"]: task "default/x" is not declared in the cluster`},
		{"expect task without namespace", minimalHead + okCluster + "expect: {binds: {t: n1}}\n",
			`bad.yaml: expect.binds.t: task "t": expected namespace/name`},
		{"expect undeclared node", minimalHead + okCluster + "expect: {binds: {default/t: n7}}\n",
			`bad.yaml: expect.binds["default/t"]: node "n7" is not declared in nodes`},
		{"expect undeclared job", minimalHead + okCluster + "expect: {bindCounts: {default/k: 1}}\n",
			`bad.yaml: expect.bindCounts["default/k"]: job "default/k" is not declared in the cluster`},
		{"expect undeclared queue", minimalHead + okCluster + "expect: {queues: {q: {deserved: {cpu: 1}}}}\n",
			`bad.yaml: expect.queues.q: queue "q" is not declared in queues`},
		{"expect bad queue quantity", minimalHead + okCluster + "expect: {queues: {default: {deserved: {cpu: many}}}}\n",
			`bad.yaml: expect.queues.default.deserved.cpu: invalid quantity "many"`},
		{"expect undeclared device", minimalHead + okCluster + "expect: {deviceBinds: {default/t: [gpu-0]}}\n",
			`bad.yaml: expect.deviceBinds["default/t"][0]: device "gpu-0" is not declared on any node`},
		{"duplicate node", minimalHead + "cluster:\n  nodes: [{namePrefix: n, count: 2, allocatable: {cpu: 1}}, {name: n-1, allocatable: {cpu: 1}}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[1]: duplicate node "n-1"`},
		{"duplicate task", minimalHead + "cluster:\n  jobs: [{name: a, tasks: [{name: t, replicas: 2}]}, {name: b, tasks: [{name: t-1}]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[1].tasks[0].name: duplicate task "default/t-1"`},
		{"duplicate job", minimalHead + "cluster:\n  jobs: [{name: a, tasks: []}, {name: a, tasks: []}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.jobs[1].name: duplicate job "default/a"`},
		{"labels not a map", minimalHead + "cluster:\n  nodes: [{name: n1, allocatable: {cpu: 1}, labels: [a]}]\nexpect: {binds: {}}\n",
			`bad.yaml: cluster.nodes[0].labels: expected a mapping, got a list`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("bad.yaml", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error, want %q", tc.want)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T %v is not a *ParseError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error\n  %s\nwant it to contain\n  %s", err, tc.want)
			}
			if pe.File != "bad.yaml" {
				t.Errorf("File = %q", pe.File)
			}
		})
	}
}

func TestParseErrorLine(t *testing.T) {
	_, err := Parse("bad.yaml", []byte(minimalHead+"cluster:\n  nodes:\n  - name: n1\n    allocatable: {cpu: lots}\nexpect: {binds: {}}\n"))
	var pe *ParseError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v", err)
	}
	if pe.Line != 7 || pe.Path != "cluster.nodes[0].allocatable.cpu" {
		t.Errorf("line %d path %q, want 7 and cluster.nodes[0].allocatable.cpu", pe.Line, pe.Path)
	}
	if got, want := err.Error(), `bad.yaml: cluster.nodes[0].allocatable.cpu: invalid quantity "lots" (expected Kubernetes quantity syntax such as 4, 500m, 8Gi)`; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
}

func TestParseCluster(t *testing.T) {
	const clusterOnly = `
queues: [{name: q}]
nodes: [{name: n1, allocatable: {cpu: 4}}]
jobs:
- {name: j, queue: q, tasks: [{name: t, status: Running, node: n1}]}
`
	c, err := ParseCluster("c.yaml", []byte(clusterOnly))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 1 || len(c.Jobs) != 1 || len(c.Tasks) != 1 || len(c.Queues) != 1 {
		t.Errorf("cluster %+v", c)
	}

	sc := minimalHead + "cluster:\n" + indent(clusterOnly) + "expect: {binds: {}}\n"
	c2, err := ParseCluster("s.yaml", []byte(sc))
	if err != nil {
		t.Fatal(err)
	}
	checkProto(t, "cluster of scenario file", c.Batch(), c2.Batch())

	// Errors in a cluster-only file have paths from its top.
	_, err = ParseCluster("c.yaml", []byte("nodes: [{name: n1, allocatable: {cpu: x}}]\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `c.yaml: nodes[0].allocatable.cpu: invalid quantity "x"`) {
		t.Errorf("err = %v", err)
	}
	_, err = ParseCluster("c.yaml", []byte("name: x\n"))
	if err == nil || !strings.HasPrefix(err.Error(), `c.yaml: name: unknown key`) {
		t.Errorf("err = %v", err)
	}

	// Undeclared references: rejected by ParseCluster, allowed by
	// ParseClusterPartial.
	const partial = `
jobs:
- {name: j, queue: q9, priorityClass: p9, tasks: [{name: t, status: Running, node: n9}]}
hypernodes: [{name: h, tier: 1, members: [n9]}]
`
	if _, err := ParseCluster("p.yaml", []byte(partial)); err == nil {
		t.Error("ParseCluster accepted undeclared references")
	}
	pc, err := ParseClusterPartial("p.yaml", []byte(partial))
	if err != nil {
		t.Fatalf("ParseClusterPartial: %v", err)
	}
	if pc.Jobs[0].Queue != "q9" || pc.Tasks[0].Node != "n9" || len(pc.PriorityClasses) != 0 {
		t.Errorf("partial cluster %+v", pc)
	}
	// Everything else stays strict.
	if _, err := ParseClusterPartial("p.yaml", []byte("jobs: [{name: j, tasks: [{name: t, status: Runing}]}]\n")); err == nil {
		t.Error("ParseClusterPartial accepted a bad status")
	}
}

func indent(s string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = "  " + l
	}
	return strings.Join(lines, "\n") + "\n"
}

func TestBatchOfSampleScenario(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedScenarios, "preempt-lower-priority.yaml"))
	if err != nil {
		t.Skip("shared scenarios not found")
	}
	sc, err := Parse("preempt-lower-priority.yaml", data)
	if err != nil {
		t.Fatal(err)
	}
	b := sc.Cluster.Batch()
	if !b.ReplaceAll {
		t.Error("batch is not replace_all")
	}
	pcs := func(name string, v int32) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertPriorityClass{UpsertPriorityClass: &sluicev1.PriorityClass{Name: name, Value: v}}}
	}
	low := func(i string) *sluicev1.Delta {
		return &sluicev1.Delta{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{
			Name: "low-" + i, Namespace: "default", Job: "low", Role: "low",
			Resources: map[string]string{"cpu": "1", "memory": "1Gi"},
			Status:    sluicev1.TaskStatus_TASK_STATUS_RUNNING, Node: "n1", Preemptable: proto.Bool(true),
		}}}
	}
	want := &sluicev1.DeltaBatch{ReplaceAll: true, Deltas: []*sluicev1.Delta{
		pcs("low", 10), pcs("high", 1000),
		{Change: &sluicev1.Delta_UpsertNode{UpsertNode: &sluicev1.Node{
			Name: "n1", Allocatable: map[string]string{"cpu": "4", "memory": "16Gi", "pods": "110"},
			Labels: map[string]string{"kubernetes.io/hostname": "n1"},
		}}},
		{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
			Name: "low", Namespace: "default", Queue: "default", PriorityClass: "low", MinAvailable: proto.Int32(1),
			Phase: sluicev1.JobPhase_JOB_PHASE_RUNNING, CreatedAt: ts(0),
		}}},
		{Change: &sluicev1.Delta_UpsertJob{UpsertJob: &sluicev1.Job{
			Name: "high", Namespace: "default", Queue: "default", PriorityClass: "high", MinAvailable: proto.Int32(1),
			Phase: sluicev1.JobPhase_JOB_PHASE_INQUEUE, CreatedAt: ts(1),
		}}},
		low("0"), low("1"), low("2"), low("3"),
		{Change: &sluicev1.Delta_UpsertTask{UpsertTask: &sluicev1.Task{
			Name: "high-0", Namespace: "default", Job: "high", Role: "high-0",
			Resources: map[string]string{"cpu": "2", "memory": "1Gi"},
			Status:    sluicev1.TaskStatus_TASK_STATUS_PENDING, Preemptable: proto.Bool(true),
		}}},
	}}
	checkProto(t, "batch", want, b)
	if sc.Cycles != 2 {
		t.Errorf("cycles %d", sc.Cycles)
	}
	if !maps.Equal(sc.Expect.EvictCounts, map[string]int{"default/low": 2}) || !maps.Equal(sc.Expect.Binds, map[string]string{"default/high-0": "n1"}) {
		t.Errorf("expect %+v", sc.Expect)
	}
}

func TestBatchOrderAndCopies(t *testing.T) {
	sc := mustParse(t, minimalHead+`
cluster:
  jobs: [{name: j, queue: leaf, tasks: [{name: t}]}]
  nodes: [{name: n1, allocatable: {cpu: 1}}]
  disruptionBudgets: [{name: b, maxUnavailable: 1}]
  quotas: [{namespace: default, hard: {cpu: 1}}]
  hypernodes: [{name: s, tier: 2, members: [h]}, {name: h, tier: 1, members: [n1]}]
  queues: [{name: leaf, parent: mid}, {name: mid}]
  priorityClasses: [{name: p, value: 1}]
expect: {binds: {}}
`)
	b := sc.Cluster.Batch()
	var kinds []string
	for _, d := range b.Deltas {
		switch c := d.Change.(type) {
		case *sluicev1.Delta_UpsertPriorityClass:
			kinds = append(kinds, "pc:"+c.UpsertPriorityClass.Name)
		case *sluicev1.Delta_UpsertQueue:
			kinds = append(kinds, "queue:"+c.UpsertQueue.Name)
		case *sluicev1.Delta_UpsertHyperNode:
			kinds = append(kinds, "hyper:"+c.UpsertHyperNode.Name)
		case *sluicev1.Delta_UpsertNamespaceQuota:
			kinds = append(kinds, "quota:"+c.UpsertNamespaceQuota.Namespace)
		case *sluicev1.Delta_UpsertDisruptionBudget:
			kinds = append(kinds, "budget:"+c.UpsertDisruptionBudget.Name)
		case *sluicev1.Delta_UpsertNode:
			kinds = append(kinds, "node:"+c.UpsertNode.Name)
		case *sluicev1.Delta_UpsertJob:
			kinds = append(kinds, "job:"+c.UpsertJob.Name)
		case *sluicev1.Delta_UpsertTask:
			kinds = append(kinds, "task:"+c.UpsertTask.Name)
		}
	}
	want := []string{"pc:p", "queue:mid", "queue:leaf", "hyper:h", "hyper:s", "quota:default", "budget:b", "node:n1", "job:j", "task:t"}
	if !slices.Equal(kinds, want) {
		t.Errorf("batch order %v, want %v", kinds, want)
	}
	b.Deltas[len(b.Deltas)-1].GetUpsertTask().Name = "changed"
	if sc.Cluster.Tasks[0].Name != "t" {
		t.Error("Batch shares messages with the cluster")
	}
	if sc.Cluster.Len() != 10 {
		t.Errorf("Len = %d", sc.Cluster.Len())
	}
}

// checkProto fails the test when got is not want.
func checkProto(t *testing.T, what string, want, got proto.Message) {
	t.Helper()
	if !proto.Equal(want, got) {
		opts := protojson.MarshalOptions{Multiline: true}
		t.Errorf("%s:\n got %s\nwant %s", what, opts.Format(got), opts.Format(want))
	}
}

func ts(sec int64) *timestamppb.Timestamp {
	return timestamppb.New(Epoch.Add(time.Duration(sec) * time.Second))
}

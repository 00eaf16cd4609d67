package scenario

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"
	"gopkg.in/yaml.v3"

	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
)

// Allowed keys, in the order FORMAT.md lists them (used in error messages).
var (
	topKeys       = []string{"name", "description", "config", "now", "cycleSeconds", "cycles", "cluster", "expect"}
	clusterKeys   = []string{"priorityClasses", "queues", "hypernodes", "quotas", "disruptionBudgets", "nodes", "jobs"}
	pcKeys        = []string{"name", "value"}
	queueKeys     = []string{"name", "parent", "weight", "capability", "deserved", "guarantee", "priority", "state", "reclaimable", "nodeGroupAffinity", "nodeGroupAntiAffinity"}
	groupKeys     = []string{"required", "preferred"}
	hyperKeys     = []string{"name", "tier", "members"}
	quotaKeys     = []string{"namespace", "hard"}
	budgetKeys    = []string{"name", "namespace", "selector", "minAvailable", "maxUnavailable"}
	nodeKeys      = []string{"name", "count", "namePrefix", "allocatable", "labels", "taints", "unschedulable", "usage", "devices", "numa"}
	taintKeys     = []string{"key", "value", "effect"}
	deviceKeys    = []string{"id", "type", "model", "memory", "cores"}
	jobKeys       = []string{"name", "namespace", "queue", "priorityClass", "priority", "minAvailable", "minAvailableByRole", "networkTopology", "minResources", "phase", "createdAt", "annotations", "labels", "tasks"}
	topologyKeys  = []string{"mode", "highestTierAllowed"}
	taskKeys      = []string{"name", "replicas", "role", "resources", "priority", "priorityClass", "status", "node", "startedAt", "nodeSelector", "tolerations", "labels", "annotations", "affinity", "topologySpread", "ports", "devices", "preemptable", "guaranteed"}
	tolKeys       = []string{"key", "operator", "value", "effect"}
	affinityKeys  = []string{"nodeRequired", "nodePreferred", "taskAffinity", "taskAntiAffinity"}
	termKeys      = []string{"matchExpressions"}
	prefTermKeys  = []string{"weight", "matchExpressions"}
	exprKeys      = []string{"key", "operator", "values"}
	taskTermKeys  = []string{"selector", "topologyKey", "required", "weight"}
	spreadKeys    = []string{"maxSkew", "topologyKey", "whenUnsatisfiable", "selector"}
	devReqKeys    = []string{"type", "count", "memory", "cores", "model"}
	expectKeys    = []string{"binds", "bindCounts", "pipelined", "evicted", "evictCounts", "jobPhases", "queues", "deviceBinds", "unschedulable"}
	queueExpKeys  = []string{"deserved", "allocated"}
	effects       = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
	jobPhaseNames = []string{"Pending", "Inqueue", "Running"}
	taskStatuses  = []string{"Pending", "Bound", "Running", "Releasing", "Succeeded", "Failed"}
	allPhaseNames = []string{"Pending", "Inqueue", "Running", "Completed", "Unknown"}
)

// builtinPriorityClasses are Kubernetes' built-in classes, usable without a
// declaration.
var builtinPriorityClasses = map[string]int32{
	"system-cluster-critical": 2000000000,
	"system-node-critical":    2000001000,
}

var (
	scenarioName   = regexp.MustCompile(`^[a-z0-9]([a-z0-9._-]*[a-z0-9])?$`)
	intOrPercent   = regexp.MustCompile(`^[0-9]+%$`)
	maxExpandCount = int64(100000)
)

// Parse decodes a scenario file strictly. path names the file in errors.
// Errors are *ParseError values naming the file, the key path and what was
// expected.
func Parse(path string, data []byte) (sc *Scenario, err error) {
	d := &decoder{file: path}
	defer catch(&err)
	root := d.document(data)
	return d.scenario(root), nil
}

// document decodes data as exactly one YAML document and returns its root.
func (d *decoder) document(data []byte) *yaml.Node {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.failf(nil, "", "empty file")
		}
		d.failf(nil, "", "invalid YAML (%v)", err)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		d.failf(&extra, "", "expected a single YAML document")
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		d.failf(&doc, "", "empty file")
	}
	return doc.Content[0]
}

// scenario decodes a whole scenario.
func (d *decoder) scenario(n *yaml.Node) *Scenario {
	f := d.mapping(n, "", topKeys...)
	sc := &Scenario{File: d.file}
	sc.Name = d.name(f.need("name"), "name")
	if !scenarioName.MatchString(sc.Name) {
		d.failf(f.get("name"), "name", "invalid name %q (expected kebab-case: lower-case letters, digits and dashes)", sc.Name)
	}
	sc.Description = f.optStr("description", "")
	sc.Config = f.str("config")
	if strings.TrimSpace(sc.Config) == "" {
		d.failf(f.get("config"), "config", "must not be empty (expected the scheduler configuration as text)")
	}
	sc.Now = f.optFloat("now", 0, 0)
	sc.CycleSeconds = f.optFloat("cycleSeconds", 1, 0)
	sc.Cycles = int(f.optInt("cycles", 1, 1, 10000))
	var idx *index
	sc.Cluster, idx = d.cluster(f.need("cluster"), "cluster", true)
	sc.Expect = d.expect(f.need("expect"), "expect", idx)
	return sc
}

// index records the declared objects of a cluster for reference checks.
type index struct {
	checkRefs bool
	nodes     map[string]bool
	devices   map[string]bool
	queues    map[string]bool
	pcs       map[string]bool
	hyper     map[string]int32
	jobs      map[string]bool
	tasks     map[string]bool
}

// cluster decodes a cluster section.
func (d *decoder) cluster(n *yaml.Node, path string, checkRefs bool) (*Cluster, *index) {
	f := d.mapping(n, path, clusterKeys...)
	c := &Cluster{}
	idx := &index{
		checkRefs: checkRefs,
		nodes:     map[string]bool{},
		devices:   map[string]bool{},
		queues:    map[string]bool{},
		pcs:       map[string]bool{},
		hyper:     map[string]int32{},
		jobs:      map[string]bool{},
		tasks:     map[string]bool{},
	}
	// Sections are decoded in dependency order, whatever their order in the
	// file, so that references can be checked as they are met.
	if v := f.get("priorityClasses"); v != nil {
		d.list(v, f.at("priorityClasses"), func(_ int, e *yaml.Node, p string) {
			pc := d.priorityClass(e, p)
			if idx.pcs[pc.Name] {
				d.failf(e, join(p, "name"), "duplicate priority class %q", pc.Name)
			}
			idx.pcs[pc.Name] = true
			c.PriorityClasses = append(c.PriorityClasses, pc)
		})
	}
	if v := f.get("queues"); v != nil {
		d.queues(c, idx, v, f.at("queues"))
	}
	if v := f.get("nodes"); v != nil {
		d.list(v, f.at("nodes"), func(_ int, e *yaml.Node, p string) {
			for _, node := range d.node(e, p) {
				if idx.nodes[node.Name] {
					d.failf(e, p, "duplicate node %q", node.Name)
				}
				idx.nodes[node.Name] = true
				for _, dev := range node.Devices {
					idx.devices[dev.Id] = true
				}
				c.Nodes = append(c.Nodes, node)
			}
		})
	}
	if v := f.get("hypernodes"); v != nil {
		d.hypernodes(c, idx, v, f.at("hypernodes"))
	}
	if v := f.get("quotas"); v != nil {
		seen := map[string]bool{}
		d.list(v, f.at("quotas"), func(_ int, e *yaml.Node, p string) {
			q := d.mapping(e, p, quotaKeys...)
			quota := &sluicev1.NamespaceQuota{
				Namespace: d.namespace(q.need("namespace"), q.at("namespace")),
				Hard:      d.resources(q.need("hard"), q.at("hard")),
			}
			if seen[quota.Namespace] {
				d.failf(e, q.at("namespace"), "duplicate quota for namespace %q", quota.Namespace)
			}
			seen[quota.Namespace] = true
			c.Quotas = append(c.Quotas, quota)
		})
	}
	if v := f.get("disruptionBudgets"); v != nil {
		seen := map[string]bool{}
		d.list(v, f.at("disruptionBudgets"), func(_ int, e *yaml.Node, p string) {
			b := d.budget(e, p)
			key := b.Namespace + "/" + b.Name
			if seen[key] {
				d.failf(e, join(p, "name"), "duplicate disruption budget %q", key)
			}
			seen[key] = true
			c.DisruptionBudgets = append(c.DisruptionBudgets, b)
		})
	}
	if v := f.get("jobs"); v != nil {
		d.list(v, f.at("jobs"), func(i int, e *yaml.Node, p string) {
			d.job(c, idx, i, e, p)
		})
	}
	return c, idx
}

func (d *decoder) priorityClass(n *yaml.Node, path string) *sluicev1.PriorityClass {
	f := d.mapping(n, path, pcKeys...)
	return &sluicev1.PriorityClass{
		Name:  d.name(f.need("name"), f.at("name")),
		Value: int32(d.intIn(f.need("value"), f.at("value"), math.MinInt32, math.MaxInt32)),
	}
}

// usePriorityClass checks a reference to a priority class, adding a
// built-in class to the cluster the first time it is used undeclared.
func (d *decoder) usePriorityClass(c *Cluster, idx *index, name string, n *yaml.Node, path string) {
	if idx.pcs[name] || !idx.checkRefs {
		return
	}
	if v, ok := builtinPriorityClasses[name]; ok {
		idx.pcs[name] = true
		c.PriorityClasses = append(c.PriorityClasses, &sluicev1.PriorityClass{Name: name, Value: v})
		return
	}
	d.failf(n, path, "priority class %q is not declared in priorityClasses", name)
}

// queues decodes the queues section and checks parents.
func (d *decoder) queues(c *Cluster, idx *index, n *yaml.Node, path string) {
	type parentRef struct {
		node *yaml.Node
		path string
	}
	refs := map[string]parentRef{}
	d.list(n, path, func(_ int, e *yaml.Node, p string) {
		f := d.mapping(e, p, queueKeys...)
		q := &sluicev1.Queue{
			Name:     d.name(f.need("name"), f.at("name")),
			Parent:   f.optStr("parent", ""),
			Weight:   int32(f.optInt("weight", 1, 1, math.MaxInt32)),
			Priority: int32(f.optInt("priority", 0, math.MinInt32, math.MaxInt32)),
		}
		if idx.queues[q.Name] {
			d.failf(e, f.at("name"), "duplicate queue %q", q.Name)
		}
		idx.queues[q.Name] = true
		if v := f.get("capability"); v != nil {
			q.Capability = d.resources(v, f.at("capability"))
		}
		if v := f.get("deserved"); v != nil {
			q.Deserved = d.resources(v, f.at("deserved"))
		}
		if v := f.get("guarantee"); v != nil {
			q.Guarantee = d.resources(v, f.at("guarantee"))
		}
		switch f.optEnum("state", "Open", "Open", "Closed") {
		case "Open":
			q.State = sluicev1.QueueState_QUEUE_STATE_OPEN
		case "Closed":
			q.State = sluicev1.QueueState_QUEUE_STATE_CLOSED
		}
		q.Reclaimable = proto.Bool(f.optBool("reclaimable", true))
		if v := f.get("nodeGroupAffinity"); v != nil {
			q.NodeGroupAffinity = d.nodeGroups(v, f.at("nodeGroupAffinity"))
		}
		if v := f.get("nodeGroupAntiAffinity"); v != nil {
			q.NodeGroupAntiAffinity = d.nodeGroups(v, f.at("nodeGroupAntiAffinity"))
		}
		if q.Parent != "" {
			refs[q.Name] = parentRef{f.get("parent"), f.at("parent")}
		}
		c.Queues = append(c.Queues, q)
	})
	// "root" is the implicit top of the hierarchy unless declared.
	for _, q := range c.Queues {
		if q.Parent == "root" && !idx.queues["root"] {
			q.Parent = ""
		}
	}
	for _, q := range c.Queues {
		if q.Parent == "" {
			continue
		}
		ref := refs[q.Name]
		if q.Parent == q.Name {
			d.failf(ref.node, ref.path, "queue %q cannot be its own parent", q.Name)
		}
		if !idx.queues[q.Parent] && idx.checkRefs {
			d.failf(ref.node, ref.path, "parent queue %q is not declared in queues", q.Parent)
		}
	}
	ordered, cycle := parentsFirst(c.Queues)
	if cycle != "" {
		ref := refs[cycle]
		d.failf(ref.node, ref.path, "queue %q is part of a parent cycle", cycle)
	}
	c.Queues = ordered
}

// parentsFirst orders queues so that every parent comes before its
// children, otherwise keeping their order. It returns the name of a queue on
// a cycle if there is one.
func parentsFirst(queues []*sluicev1.Queue) ([]*sluicev1.Queue, string) {
	byName := map[string]*sluicev1.Queue{}
	for _, q := range queues {
		byName[q.Name] = q
	}
	const (
		visiting = 1
		done     = 2
	)
	state := map[string]int{}
	out := make([]*sluicev1.Queue, 0, len(queues))
	var visit func(q *sluicev1.Queue) string
	visit = func(q *sluicev1.Queue) string {
		switch state[q.Name] {
		case done:
			return ""
		case visiting:
			return q.Name
		}
		state[q.Name] = visiting
		if p, ok := byName[q.Parent]; ok && q.Parent != "" {
			if c := visit(p); c != "" {
				return c
			}
		}
		state[q.Name] = done
		out = append(out, q)
		return ""
	}
	for _, q := range queues {
		if c := visit(q); c != "" {
			return nil, c
		}
	}
	return out, ""
}

func (d *decoder) nodeGroups(n *yaml.Node, path string) *sluicev1.NodeGroupAffinity {
	f := d.mapping(n, path, groupKeys...)
	g := &sluicev1.NodeGroupAffinity{}
	if v := f.get("required"); v != nil {
		g.Required = d.strList(v, f.at("required"))
	}
	if v := f.get("preferred"); v != nil {
		g.Preferred = d.strList(v, f.at("preferred"))
	}
	return g
}

// hypernodes decodes the hypernodes section and checks members.
func (d *decoder) hypernodes(c *Cluster, idx *index, n *yaml.Node, path string) {
	type memberRef struct {
		node *yaml.Node
		path string
	}
	var refs [][]memberRef
	d.list(n, path, func(_ int, e *yaml.Node, p string) {
		f := d.mapping(e, p, hyperKeys...)
		h := &sluicev1.HyperNode{
			Name: d.name(f.need("name"), f.at("name")),
			Tier: int32(d.intIn(f.need("tier"), f.at("tier"), 1, math.MaxInt32)),
		}
		if _, dup := idx.hyper[h.Name]; dup {
			d.failf(e, f.at("name"), "duplicate hypernode %q", h.Name)
		}
		idx.hyper[h.Name] = h.Tier
		var mine []memberRef
		d.list(f.need("members"), f.at("members"), func(_ int, m *yaml.Node, mp string) {
			h.Members = append(h.Members, d.name(m, mp))
			mine = append(mine, memberRef{m, mp})
		})
		refs = append(refs, mine)
		c.HyperNodes = append(c.HyperNodes, h)
	})
	if !idx.checkRefs {
		return
	}
	for i, h := range c.HyperNodes {
		for j, m := range h.Members {
			ref := refs[i][j]
			if h.Tier == 1 {
				if !idx.nodes[m] {
					d.failf(ref.node, ref.path, "member %q of tier-1 hypernode %q is not a declared node", m, h.Name)
				}
				continue
			}
			tier, ok := idx.hyper[m]
			if !ok {
				d.failf(ref.node, ref.path, "member %q of tier-%d hypernode %q is not a declared hypernode", m, h.Tier, h.Name)
			}
			if tier >= h.Tier {
				d.failf(ref.node, ref.path, "member %q of tier-%d hypernode %q has tier %d (expected a lower tier)", m, h.Tier, h.Name, tier)
			}
		}
	}
}

func (d *decoder) budget(n *yaml.Node, path string) *sluicev1.DisruptionBudget {
	f := d.mapping(n, path, budgetKeys...)
	b := &sluicev1.DisruptionBudget{
		Name:      d.name(f.need("name"), f.at("name")),
		Namespace: "default",
	}
	if v := f.get("namespace"); v != nil {
		b.Namespace = d.namespace(v, f.at("namespace"))
	}
	if v := f.get("selector"); v != nil {
		b.Selector = d.strMap(v, f.at("selector"))
	}
	switch {
	case f.has("minAvailable") && f.has("maxUnavailable"):
		d.failf(n, path, "expected only one of minAvailable and maxUnavailable")
	case f.has("minAvailable"):
		b.MinAvailable = proto.String(d.intOrPercent(f.get("minAvailable"), f.at("minAvailable")))
	case f.has("maxUnavailable"):
		b.MaxUnavailable = proto.String(d.intOrPercent(f.get("maxUnavailable"), f.at("maxUnavailable")))
	default:
		d.failf(n, path, "missing required key \"minAvailable\" or \"maxUnavailable\"")
	}
	return b
}

// intOrPercent decodes a non-negative integer or a percentage such as "50%".
func (d *decoder) intOrPercent(n *yaml.Node, path string) string {
	n = d.scalar(n, path, "an integer or a percentage")
	if n.ShortTag() == "!!int" {
		return fmt.Sprint(d.intIn(n, path, 0, math.MaxInt32))
	}
	if !intOrPercent.MatchString(n.Value) {
		d.failf(n, path, "invalid value %q (expected an integer or a percentage such as \"50%%\")", n.Value)
	}
	return n.Value
}

// namespace decodes a namespace name.
func (d *decoder) namespace(n *yaml.Node, path string) string {
	s := d.name(n, path)
	if strings.Contains(s, "/") {
		d.failf(n, path, "invalid namespace %q (must not contain \"/\")", s)
	}
	return s
}

// node decodes one nodes entry, expanded to its nodes.
func (d *decoder) node(n *yaml.Node, path string) []*sluicev1.Node {
	f := d.mapping(n, path, nodeKeys...)
	var names []string
	switch {
	case f.has("count"):
		if f.has("name") {
			d.failf(f.get("name"), f.at("name"), "not allowed with count (use namePrefix)")
		}
		if !f.has("namePrefix") {
			d.failf(n, path, "missing required key \"namePrefix\" (needed with count)")
		}
		prefix := d.name(f.get("namePrefix"), f.at("namePrefix"))
		count := d.intIn(f.get("count"), f.at("count"), 1, maxExpandCount)
		for i := int64(0); i < count; i++ {
			names = append(names, fmt.Sprintf("%s-%d", prefix, i))
		}
	case f.has("namePrefix"):
		d.failf(n, path, "missing required key \"count\" (needed with namePrefix)")
	default:
		names = []string{d.name(f.need("name"), f.at("name"))}
	}
	tmpl := &sluicev1.Node{
		Allocatable:   d.resources(f.need("allocatable"), f.at("allocatable")),
		Labels:        map[string]string{},
		Unschedulable: f.optBool("unschedulable", false),
	}
	if v := f.get("labels"); v != nil {
		tmpl.Labels = d.strMap(v, f.at("labels"))
	}
	if v := f.get("taints"); v != nil {
		d.list(v, f.at("taints"), func(_ int, e *yaml.Node, p string) {
			t := d.mapping(e, p, taintKeys...)
			tmpl.Taints = append(tmpl.Taints, &sluicev1.Taint{
				Key:    d.name(t.need("key"), t.at("key")),
				Value:  t.optStr("value", ""),
				Effect: taintEffect(d.enum(t.need("effect"), t.at("effect"), effects...)),
			})
		})
	}
	if v := f.get("usage"); v != nil {
		tmpl.Usage = map[string]float64{}
		d.entries(v, f.at("usage"), func(k string, e *yaml.Node, p string) {
			u := d.number(e, p)
			if u < 0 || u > 100 {
				d.failf(e, p, "must be a percentage between 0 and 100, got %g", u)
			}
			tmpl.Usage[k] = u
		})
	}
	if v := f.get("devices"); v != nil {
		ids := map[string]bool{}
		d.list(v, f.at("devices"), func(_ int, e *yaml.Node, p string) {
			df := d.mapping(e, p, deviceKeys...)
			dev := &sluicev1.Device{
				Id:    d.name(df.need("id"), df.at("id")),
				Type:  d.name(df.need("type"), df.at("type")),
				Model: df.optStr("model", ""),
				Cores: int32(df.optInt("cores", 100, 1, math.MaxInt32)),
			}
			if m := df.get("memory"); m != nil {
				dev.Memory = d.quantity(m, df.at("memory"))
			}
			if ids[dev.Id] {
				d.failf(e, df.at("id"), "duplicate device id %q on the node", dev.Id)
			}
			ids[dev.Id] = true
			tmpl.Devices = append(tmpl.Devices, dev)
		})
	}
	if v := f.get("numa"); v != nil {
		tmpl.NumaTopology = d.numa(v, f.at("numa"))
	}
	out := make([]*sluicev1.Node, 0, len(names))
	for _, name := range names {
		node := proto.Clone(tmpl).(*sluicev1.Node)
		node.Name = name
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		if _, ok := node.Labels["kubernetes.io/hostname"]; !ok {
			node.Labels["kubernetes.io/hostname"] = name
		}
		out = append(out, node)
	}
	return out
}

// objectName decodes a job or task name, which must not contain "/".
func (d *decoder) objectName(n *yaml.Node, path string) string {
	s := d.name(n, path)
	if strings.Contains(s, "/") {
		d.failf(n, path, "invalid name %q (must not contain \"/\"; the namespace is separate)", s)
	}
	return s
}

// job decodes job i and its tasks.
func (d *decoder) job(c *Cluster, idx *index, i int, n *yaml.Node, path string) {
	f := d.mapping(n, path, jobKeys...)
	job := &sluicev1.Job{
		Name:         d.objectName(f.need("name"), f.at("name")),
		Namespace:    "default",
		Queue:        "default",
		MinAvailable: proto.Int32(int32(f.optInt("minAvailable", 1, 0, math.MaxInt32))),
		Phase:        sluicev1.JobPhase_JOB_PHASE_INQUEUE,
		CreatedAt:    timestamppb.New(Epoch.Add(seconds(float64(i)))),
	}
	if v := f.get("namespace"); v != nil {
		job.Namespace = d.namespace(v, f.at("namespace"))
	}
	full := job.Namespace + "/" + job.Name
	if idx.jobs[full] {
		d.failf(f.get("name"), f.at("name"), "duplicate job %q", full)
	}
	idx.jobs[full] = true
	if v := f.get("queue"); v != nil {
		job.Queue = d.name(v, f.at("queue"))
		if job.Queue != "default" && !idx.queues[job.Queue] && idx.checkRefs {
			d.failf(v, f.at("queue"), "queue %q is not declared in queues", job.Queue)
		}
	}
	if v := f.get("priorityClass"); v != nil {
		job.PriorityClass = d.name(v, f.at("priorityClass"))
		d.usePriorityClass(c, idx, job.PriorityClass, v, f.at("priorityClass"))
	}
	if v := f.get("priority"); v != nil {
		job.Priority = proto.Int32(int32(d.intIn(v, f.at("priority"), math.MinInt32, math.MaxInt32)))
	}
	if v := f.get("minResources"); v != nil {
		job.MinResources = d.resources(v, f.at("minResources"))
	}
	if v := f.get("phase"); v != nil {
		switch d.enum(v, f.at("phase"), jobPhaseNames...) {
		case "Pending":
			job.Phase = sluicev1.JobPhase_JOB_PHASE_PENDING
		case "Inqueue":
			job.Phase = sluicev1.JobPhase_JOB_PHASE_INQUEUE
		case "Running":
			job.Phase = sluicev1.JobPhase_JOB_PHASE_RUNNING
		}
	}
	if v := f.get("createdAt"); v != nil {
		job.CreatedAt = timestamppb.New(Epoch.Add(seconds(d.number(v, f.at("createdAt")))))
	}
	if v := f.get("labels"); v != nil {
		job.Labels = d.strMap(v, f.at("labels"))
	}
	if v := f.get("annotations"); v != nil {
		job.Annotations = d.strMap(v, f.at("annotations"))
	}
	if v := f.get("networkTopology"); v != nil {
		nt := d.mapping(v, f.at("networkTopology"), topologyKeys...)
		job.NetworkTopology = &sluicev1.NetworkTopology{
			Mode:               networkTopologyMode(d.enum(nt.need("mode"), nt.at("mode"), "hard", "soft")),
			HighestTierAllowed: int32(nt.optInt("highestTierAllowed", 1, 1, math.MaxInt32)),
		}
	}
	roles := map[string]bool{}
	d.list(f.need("tasks"), f.at("tasks"), func(_ int, e *yaml.Node, p string) {
		for _, t := range d.tasks(c, idx, job, e, p) {
			roles[t.Role] = true
			c.Tasks = append(c.Tasks, t)
		}
	})
	if v := f.get("minAvailableByRole"); v != nil {
		job.MinAvailableByRole = map[string]int32{}
		d.entries(v, f.at("minAvailableByRole"), func(role string, e *yaml.Node, p string) {
			if !roles[role] {
				d.failf(e, p, "no task of job %q has role %q", full, role)
			}
			job.MinAvailableByRole[role] = int32(d.intIn(e, p, 0, math.MaxInt32))
		})
	}
	c.Jobs = append(c.Jobs, job)
}

// tasks decodes one tasks entry of job, expanded to its replicas.
func (d *decoder) tasks(c *Cluster, idx *index, job *sluicev1.Job, n *yaml.Node, path string) []*sluicev1.Task {
	f := d.mapping(n, path, taskKeys...)
	name := d.objectName(f.need("name"), f.at("name"))
	replicas := f.optInt("replicas", 1, 1, maxExpandCount)
	t := &sluicev1.Task{
		Namespace:   job.Namespace,
		Job:         job.Name,
		Role:        name,
		Resources:   map[string]string{},
		Status:      sluicev1.TaskStatus_TASK_STATUS_PENDING,
		Preemptable: proto.Bool(f.optBool("preemptable", true)),
	}
	if v := f.get("role"); v != nil {
		t.Role = d.name(v, f.at("role"))
	}
	if v := f.get("resources"); v != nil {
		t.Resources = d.resources(v, f.at("resources"))
	}
	if t.Guaranteed = f.optBool("guaranteed", false); t.Guaranteed {
		d.checkGuaranteed(f.get("guaranteed"), f.at("guaranteed"), t.Resources)
	}
	if v := f.get("priorityClass"); v != nil {
		t.PriorityClass = d.name(v, f.at("priorityClass"))
		d.usePriorityClass(c, idx, t.PriorityClass, v, f.at("priorityClass"))
	}
	if v := f.get("priority"); v != nil {
		t.Priority = proto.Int32(int32(d.intIn(v, f.at("priority"), math.MinInt32, math.MaxInt32)))
	}
	status := f.optEnum("status", "Pending", taskStatuses...)
	t.Status = map[string]sluicev1.TaskStatus{
		"Pending":   sluicev1.TaskStatus_TASK_STATUS_PENDING,
		"Bound":     sluicev1.TaskStatus_TASK_STATUS_BOUND,
		"Running":   sluicev1.TaskStatus_TASK_STATUS_RUNNING,
		"Releasing": sluicev1.TaskStatus_TASK_STATUS_RELEASING,
		"Succeeded": sluicev1.TaskStatus_TASK_STATUS_SUCCEEDED,
		"Failed":    sluicev1.TaskStatus_TASK_STATUS_FAILED,
	}[status]
	if v := f.get("node"); v != nil {
		t.Node = d.name(v, f.at("node"))
		if status == "Pending" {
			d.failf(v, f.at("node"), "a Pending task has no node (set status: Bound, Running or Releasing)")
		}
		if idx.checkRefs && !idx.nodes[t.Node] {
			d.failf(v, f.at("node"), "node %q is not declared in nodes", t.Node)
		}
	} else if status == "Bound" || status == "Running" || status == "Releasing" {
		d.failf(n, path, "missing required key \"node\" (required for status %s)", status)
	}
	if v := f.get("startedAt"); v != nil {
		t.StartedAt = timestamppb.New(Epoch.Add(seconds(d.number(v, f.at("startedAt")))))
	}
	if v := f.get("nodeSelector"); v != nil {
		t.NodeSelector = d.strMap(v, f.at("nodeSelector"))
	}
	if v := f.get("labels"); v != nil {
		t.Labels = d.strMap(v, f.at("labels"))
	}
	if v := f.get("annotations"); v != nil {
		t.Annotations = d.strMap(v, f.at("annotations"))
	}
	if v := f.get("tolerations"); v != nil {
		d.list(v, f.at("tolerations"), func(_ int, e *yaml.Node, p string) {
			t.Tolerations = append(t.Tolerations, d.toleration(e, p))
		})
	}
	if v := f.get("affinity"); v != nil {
		t.Affinity = d.affinity(v, f.at("affinity"))
	}
	if v := f.get("topologySpread"); v != nil {
		d.list(v, f.at("topologySpread"), func(_ int, e *yaml.Node, p string) {
			s := d.mapping(e, p, spreadKeys...)
			tsc := &sluicev1.TopologySpreadConstraint{
				MaxSkew:           int32(s.optInt("maxSkew", 1, 1, math.MaxInt32)),
				TopologyKey:       d.name(s.need("topologyKey"), s.at("topologyKey")),
				WhenUnsatisfiable: whenUnsatisfiable(s.optEnum("whenUnsatisfiable", "DoNotSchedule", "DoNotSchedule", "ScheduleAnyway")),
			}
			if sel := s.get("selector"); sel != nil {
				tsc.Selector = d.strMap(sel, s.at("selector"))
			}
			t.TopologySpread = append(t.TopologySpread, tsc)
		})
	}
	if v := f.get("ports"); v != nil {
		d.list(v, f.at("ports"), func(_ int, e *yaml.Node, p string) {
			t.Ports = append(t.Ports, int32(d.intIn(e, p, 1, 65535)))
		})
	}
	if v := f.get("devices"); v != nil {
		d.list(v, f.at("devices"), func(_ int, e *yaml.Node, p string) {
			r := d.mapping(e, p, devReqKeys...)
			req := &sluicev1.DeviceRequest{
				Type:  d.name(r.need("type"), r.at("type")),
				Count: int32(r.optInt("count", 1, 1, math.MaxInt32)),
				Cores: int32(r.optInt("cores", 0, 0, 100)),
				Model: r.optStr("model", ""),
			}
			if m := r.get("memory"); m != nil {
				req.Memory = d.quantity(m, r.at("memory"))
			}
			t.Devices = append(t.Devices, req)
		})
	}

	names := []string{name}
	if replicas > 1 {
		names = names[:0]
		for i := int64(0); i < replicas; i++ {
			names = append(names, fmt.Sprintf("%s-%d", name, i))
		}
	}
	out := make([]*sluicev1.Task, 0, len(names))
	for _, tn := range names {
		full := t.Namespace + "/" + tn
		if idx.tasks[full] {
			d.failf(f.get("name"), f.at("name"), "duplicate task %q (task names are unique within a namespace)", full)
		}
		idx.tasks[full] = true
		task := proto.Clone(t).(*sluicev1.Task)
		task.Name = tn
		out = append(out, task)
	}
	return out
}

func (d *decoder) toleration(n *yaml.Node, path string) *sluicev1.Toleration {
	f := d.mapping(n, path, tolKeys...)
	t := &sluicev1.Toleration{
		Key:      f.optStr("key", ""),
		Operator: tolerationOperator(f.optEnum("operator", "Equal", "Equal", "Exists")),
		Value:    f.optStr("value", ""),
		Effect:   taintEffect(f.optEnum("effect", "", effects...)),
	}
	if t.Operator == sluicev1.TolerationOperator_TOLERATION_OPERATOR_EXISTS && t.Value != "" {
		d.failf(f.get("value"), f.at("value"), "a toleration with operator Exists has no value")
	}
	if t.Operator == sluicev1.TolerationOperator_TOLERATION_OPERATOR_EQUAL && t.Key == "" {
		d.failf(n, path, "missing required key \"key\" (an empty key needs operator Exists)")
	}
	return t
}

func (d *decoder) affinity(n *yaml.Node, path string) *sluicev1.Affinity {
	f := d.mapping(n, path, affinityKeys...)
	a := &sluicev1.Affinity{}
	if v := f.get("nodeRequired"); v != nil {
		d.list(v, f.at("nodeRequired"), func(_ int, e *yaml.Node, p string) {
			t := d.mapping(e, p, termKeys...)
			a.NodeRequired = append(a.NodeRequired, &sluicev1.NodeSelectorTerm{
				MatchExpressions: d.expressions(t.need("matchExpressions"), t.at("matchExpressions")),
			})
		})
	}
	if v := f.get("nodePreferred"); v != nil {
		d.list(v, f.at("nodePreferred"), func(_ int, e *yaml.Node, p string) {
			t := d.mapping(e, p, prefTermKeys...)
			a.NodePreferred = append(a.NodePreferred, &sluicev1.PreferredSchedulingTerm{
				Weight:           int32(d.intIn(t.need("weight"), t.at("weight"), 1, 100)),
				MatchExpressions: d.expressions(t.need("matchExpressions"), t.at("matchExpressions")),
			})
		})
	}
	if v := f.get("taskAffinity"); v != nil {
		a.TaskAffinity = d.taskTerms(v, f.at("taskAffinity"))
	}
	if v := f.get("taskAntiAffinity"); v != nil {
		a.TaskAntiAffinity = d.taskTerms(v, f.at("taskAntiAffinity"))
	}
	return a
}

func (d *decoder) expressions(n *yaml.Node, path string) []*sluicev1.NodeSelectorRequirement {
	var out []*sluicev1.NodeSelectorRequirement
	d.list(n, path, func(_ int, e *yaml.Node, p string) {
		f := d.mapping(e, p, exprKeys...)
		r := &sluicev1.NodeSelectorRequirement{
			Key:      d.name(f.need("key"), f.at("key")),
			Operator: d.enum(f.need("operator"), f.at("operator"), "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"),
		}
		if v := f.get("values"); v != nil {
			r.Values = d.strList(v, f.at("values"))
		}
		switch r.Operator {
		case "In", "NotIn":
			if len(r.Values) == 0 {
				d.failf(e, p, "operator %s needs at least one value in values", r.Operator)
			}
		case "Exists", "DoesNotExist":
			if len(r.Values) != 0 {
				d.failf(f.get("values"), f.at("values"), "operator %s takes no values", r.Operator)
			}
		case "Gt", "Lt":
			if len(r.Values) != 1 {
				d.failf(e, p, "operator %s needs exactly one integer in values", r.Operator)
			}
			if _, err := strconv.ParseInt(r.Values[0], 10, 64); err != nil {
				d.failf(f.get("values"), elem(f.at("values"), 0), "operator %s needs an integer, got %q", r.Operator, r.Values[0])
			}
		}
		out = append(out, r)
	})
	return out
}

func (d *decoder) taskTerms(n *yaml.Node, path string) []*sluicev1.TaskAffinityTerm {
	var out []*sluicev1.TaskAffinityTerm
	d.list(n, path, func(_ int, e *yaml.Node, p string) {
		f := d.mapping(e, p, taskTermKeys...)
		t := &sluicev1.TaskAffinityTerm{
			Selector:    d.strMap(f.need("selector"), f.at("selector")),
			TopologyKey: d.name(f.need("topologyKey"), f.at("topologyKey")),
			Required:    f.optBool("required", false),
		}
		if v := f.get("weight"); v != nil {
			t.Weight = int32(d.intIn(v, f.at("weight"), 1, 100))
		}
		out = append(out, t)
	})
	return out
}

// expect decodes the expect section, checking names against idx.
func (d *decoder) expect(n *yaml.Node, path string, idx *index) *Expect {
	f := d.mapping(n, path, expectKeys...)
	if len(f.order) == 0 {
		d.failf(n, path, "expected at least one of: %s", strings.Join(expectKeys, ", "))
	}
	e := &Expect{}
	task := func(name string, n *yaml.Node, p string) {
		if !strings.Contains(name, "/") {
			d.failf(n, p, "task %q: expected namespace/name", name)
		}
		if !idx.tasks[name] {
			d.failf(n, p, "task %q is not declared in the cluster", name)
		}
	}
	job := func(name string, n *yaml.Node, p string) {
		if !strings.Contains(name, "/") {
			d.failf(n, p, "job %q: expected namespace/name", name)
		}
		if !idx.jobs[name] {
			d.failf(n, p, "job %q is not declared in the cluster", name)
		}
	}
	nodeOrAny := func(n *yaml.Node, p string) string {
		s := d.name(n, p)
		if s != AnyNode && !idx.nodes[s] {
			d.failf(n, p, "node %q is not declared in nodes (use \"*\" for any node)", s)
		}
		return s
	}
	taskNodes := func(key string) map[string]string {
		m := map[string]string{}
		d.entries(f.get(key), f.at(key), func(k string, v *yaml.Node, p string) {
			task(k, v, p)
			m[k] = nodeOrAny(v, p)
		})
		return m
	}
	jobCounts := func(key string) map[string]int {
		m := map[string]int{}
		d.entries(f.get(key), f.at(key), func(k string, v *yaml.Node, p string) {
			job(k, v, p)
			m[k] = int(d.intIn(v, p, 0, math.MaxInt32))
		})
		return m
	}
	if f.has("binds") {
		e.Binds = taskNodes("binds")
	}
	if f.has("bindCounts") {
		e.BindCounts = jobCounts("bindCounts")
	}
	if f.has("pipelined") {
		e.Pipelined = taskNodes("pipelined")
	}
	if v := f.get("evicted"); v != nil {
		e.Evicted = []string{}
		d.list(v, f.at("evicted"), func(_ int, n *yaml.Node, p string) {
			s := d.name(n, p)
			task(s, n, p)
			e.Evicted = append(e.Evicted, s)
		})
	}
	if f.has("evictCounts") {
		e.EvictCounts = jobCounts("evictCounts")
	}
	if v := f.get("jobPhases"); v != nil {
		e.JobPhases = map[string]string{}
		d.entries(v, f.at("jobPhases"), func(k string, v *yaml.Node, p string) {
			job(k, v, p)
			e.JobPhases[k] = d.enum(v, p, allPhaseNames...)
		})
	}
	if v := f.get("queues"); v != nil {
		e.Queues = map[string]QueueAmounts{}
		d.entries(v, f.at("queues"), func(k string, v *yaml.Node, p string) {
			if k != "default" && !idx.queues[k] {
				d.failf(v, p, "queue %q is not declared in queues", k)
			}
			qf := d.mapping(v, p, queueExpKeys...)
			if len(qf.order) == 0 {
				d.failf(v, p, "expected at least one of: deserved, allocated")
			}
			var qa QueueAmounts
			if r := qf.get("deserved"); r != nil {
				qa.Deserved = d.resources(r, qf.at("deserved"))
			}
			if r := qf.get("allocated"); r != nil {
				qa.Allocated = d.resources(r, qf.at("allocated"))
			}
			e.Queues[k] = qa
		})
	}
	if v := f.get("deviceBinds"); v != nil {
		e.DeviceBinds = map[string][]string{}
		d.entries(v, f.at("deviceBinds"), func(k string, v *yaml.Node, p string) {
			task(k, v, p)
			ids := []string{}
			d.list(v, p, func(_ int, n *yaml.Node, ip string) {
				id := d.name(n, ip)
				if !idx.devices[id] {
					d.failf(n, ip, "device %q is not declared on any node", id)
				}
				ids = append(ids, id)
			})
			e.DeviceBinds[k] = ids
		})
	}
	if v := f.get("unschedulable"); v != nil {
		e.Unschedulable = map[string]string{}
		d.entries(v, f.at("unschedulable"), func(k string, v *yaml.Node, p string) {
			job(k, v, p)
			e.Unschedulable[k] = d.name(v, p)
		})
	}
	return e
}

package usage

import (
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "usage"

// Argument names, as Volcano spells them.
const (
	ArgUsageWeight  = "usage.weight"
	ArgCPUWeight    = "cpu.weight"
	ArgMemoryWeight = "memory.weight"
	// ArgThresholds is a mapping with keys cpu and mem (percent).
	ArgThresholds = "thresholds"
	// ArgEstimator is a mapping with keys request_ratio, burst_ratio, risk_threshold,
	// risk_factor, be_cpu and be_mem.
	ArgEstimator = "estimator"
)

// Fit reasons, Volcano's words.
const (
	ReasonCPU    = "the CPU load of the node exceeds the upper limit"
	ReasonMemory = "the memory load of the node exceeds the upper limit"
)

// Usage keys of api.Node.Usage.
const (
	usageCPU    = "cpu"
	usageMemory = "memory"
)

// maxNodeScore is Kubernetes' framework.MaxNodeScore.
const maxNodeScore = 100

// defaultMetricsInterval is how long a started task stays invisible to the reported load
// unless the configuration's metrics.interval says otherwise.
const defaultMetricsInterval = 30 * time.Second

// settings are the plugin's arguments.
type settings struct {
	usageWeight, cpuWeight, memoryWeight int
	cpuThreshold, memThreshold           float64
	requestRatio, burstRatio             float64
	riskThreshold, riskFactor            float64
	// beCPU (milli-CPU) and beMemory (bytes) estimate a task that requests nothing.
	beCPU, beMemory float64
}

type plugin struct {
	settings
	// Per session.
	metricsInterval time.Duration
	shadow          *shadowCache
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin; a malformed or out-of-range argument is an error naming it (Volcano
// would log it and keep the default).
func New(args conf.Arguments) (framework.Plugin, error) {
	s, err := parseSettings(args)
	if err != nil {
		return nil, err
	}
	return &plugin{settings: s}, nil
}

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.metricsInterval = defaultMetricsInterval
	if v, ok := ssn.Config.MetricsConfiguration["interval"]; ok {
		if d, err := time.ParseDuration(v); err == nil && d > 0 {
			p.metricsInterval = d
		}
	}
	p.shadow = newShadowCache()
	p.warmUp(ssn)
	ssn.AddEventHandler(&framework.EventHandler{
		AllocateFunc: func(e *framework.Event) {
			if n, ok := ssn.Nodes[e.Task.NodeName]; ok {
				p.addShadow(n, e.Task)
			}
		},
		DeallocateFunc: func(e *framework.Event) { p.shadow.remove(e.Task.UID) },
	})
	ssn.AddPredicateFn(Name, p.predicate)
	ssn.AddNodeOrderFn(Name, p.nodeOrder)
	// Reported usage is per node and the estimate counts the node's own tasks.
	ssn.AddClassKeyFn(Name, func(*api.TaskInfo) (string, bool) { return "", true })
}

func (p *plugin) OnSessionClose(*framework.Session) { p.shadow = nil }

// hasUsage reports whether the node's load is known (Volcano: metrics present and fresh).
func hasUsage(n *api.NodeInfo) bool { return len(n.Node.Usage) > 0 }

func (p *plugin) predicate(_ *api.TaskInfo, node *api.NodeInfo) error {
	if !hasUsage(node) {
		return nil
	}
	if node.Node.Usage[usageCPU] > p.cpuThreshold {
		return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, ReasonCPU)
	}
	if node.Node.Usage[usageMemory] > p.memThreshold {
		return api.NewFitError(node.Name, api.UnschedulableAndUnresolvable, ReasonMemory)
	}
	return nil
}

func (p *plugin) nodeOrder(_ *api.TaskInfo, node *api.NodeInfo) (float64, error) {
	if !hasUsage(node) {
		return 0, nil
	}
	cpu, mem := p.composite(node)
	total := p.cpuWeight + p.memoryWeight
	if total == 0 {
		return 0, nil
	}
	s := ((1-cpu)*float64(p.cpuWeight) + (1-mem)*float64(p.memoryWeight)) / float64(total)
	return s * maxNodeScore * float64(p.usageWeight), nil
}

// composite returns the node's cpu and memory utilisation in [0, 1]: reported load plus the
// shadow estimates, over capacity.
func (p *plugin) composite(node *api.NodeInfo) (cpu, mem float64) {
	estCPU, estMem := p.shadow.node(node.Name)
	return compositeOf(node.Node.Usage[usageCPU], estCPU, node.Capacity.MilliCPU),
		compositeOf(node.Node.Usage[usageMemory], estMem, node.Capacity.Memory)
}

func compositeOf(percent, shadow, capacity float64) float64 {
	if capacity <= 0 {
		return 0
	}
	c := (percent/100*capacity + shadow) / capacity
	return min(max(c, 0), 1)
}

// appliedRisk is the estimate multiplier for a node: risk_factor once its composite load
// reaches risk_threshold, else 1.
func (p *plugin) appliedRisk(node *api.NodeInfo) float64 {
	if p.riskFactor < 1 {
		return 1
	}
	total := p.cpuWeight + p.memoryWeight
	if total == 0 {
		return 1
	}
	cpu, mem := p.composite(node)
	load := (cpu*float64(p.cpuWeight) + mem*float64(p.memoryWeight)) / float64(total)
	if load >= p.riskThreshold {
		return p.riskFactor
	}
	return 1
}

// estimate is a task's expected consumption (milli-CPU, bytes) on a node with the given risk
// factor.
func (p *plugin) estimate(t *api.TaskInfo, risk float64) (cpu, mem float64) {
	if t.BestEffort {
		return max(p.beCPU, 0) * risk, max(p.beMemory, 0) * risk
	}
	return p.estimateDim(t.Resreq.MilliCPU, risk), p.estimateDim(t.Resreq.Memory, risk)
}

// estimateDim is Volcano's EstimatePodResource with no limit: the effective limit is the
// request, so the burst share is 0 and the estimate never exceeds the request.
func (p *plugin) estimateDim(request, risk float64) float64 {
	request = max(request, 0)
	return min(max(request*p.requestRatio*risk, 0), request)
}

func (p *plugin) addShadow(n *api.NodeInfo, t *api.TaskInfo) {
	cpu, mem := p.estimate(t, p.appliedRisk(n))
	p.shadow.add(n.Name, t.UID, cpu, mem)
}

// warmUp adds the tasks the reported load cannot see yet, nodes and tasks in name order, and
// registers the wake-up: the first moment one of the running ones among them becomes visible.
func (p *plugin) warmUp(ssn *framework.Session) {
	var wake time.Time
	for _, n := range ssn.NodeList {
		for _, t := range n.SortedTasks() {
			if !p.invisible(ssn, t) {
				continue
			}
			p.addShadow(n, t)
			if t.Status == api.Running && !t.StartedAt.IsZero() {
				if at := t.StartedAt.Add(p.metricsInterval); wake.IsZero() || at.Before(wake) {
					wake = at
				}
			}
		}
	}
	ssn.AddWakeUpFn(Name, func() (time.Time, bool) { return wake, !wake.IsZero() })
}

// invisible reports whether a task on a node is not yet in the reported load: it was placed
// but has not started, or started less than the metrics interval ago.
func (p *plugin) invisible(ssn *framework.Session, t *api.TaskInfo) bool {
	if t.NodeName == "" {
		return false
	}
	switch t.Status {
	case api.Allocated, api.Binding, api.Bound:
		return true
	case api.Running:
		return t.StartedAt.IsZero() || ssn.Now.Sub(t.StartedAt) < p.metricsInterval
	}
	return false
}

// shadowCache sums the estimates per node and remembers each task's, so that deallocation
// subtracts exactly what allocation added.
type shadowCache struct {
	cpu, mem map[string]float64
	tasks    map[string]shadowEntry
}

type shadowEntry struct {
	node     string
	cpu, mem float64
}

func newShadowCache() *shadowCache {
	return &shadowCache{cpu: map[string]float64{}, mem: map[string]float64{}, tasks: map[string]shadowEntry{}}
}

func (c *shadowCache) node(name string) (cpu, mem float64) { return c.cpu[name], c.mem[name] }

func (c *shadowCache) add(node, task string, cpu, mem float64) {
	c.cpu[node] += cpu
	c.mem[node] += mem
	c.tasks[task] = shadowEntry{node: node, cpu: cpu, mem: mem}
}

func (c *shadowCache) remove(task string) {
	e, ok := c.tasks[task]
	if !ok {
		return
	}
	c.cpu[e.node] = max(c.cpu[e.node]-e.cpu, 0)
	c.mem[e.node] = max(c.mem[e.node]-e.mem, 0)
	delete(c.tasks, task)
}

// String describes the settings (for logs and tests).
func (s settings) String() string {
	return fmt.Sprintf("weights usage %d cpu %d memory %d; thresholds cpu %g mem %g; estimator request %g burst %g risk %g x%g be cpu %gm mem %g",
		s.usageWeight, s.cpuWeight, s.memoryWeight, s.cpuThreshold, s.memThreshold,
		s.requestRatio, s.burstRatio, s.riskThreshold, s.riskFactor, s.beCPU, s.beMemory)
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

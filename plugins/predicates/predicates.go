package predicates

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/internal/k8sutil"
)

// Name is the plugin's configuration name.
const Name = "predicates"

// Argument names, as Volcano spells them.
const (
	ArgNodeAffinity      = "predicate.NodeAffinityEnable"
	ArgNodePorts         = "predicate.NodePortsEnable"
	ArgTaintToleration   = "predicate.TaintTolerationEnable"
	ArgPodAffinity       = "predicate.PodAffinityEnable"
	ArgPodTopologySpread = "predicate.PodTopologySpreadEnable"
	ArgCache             = "predicate.CacheEnable"
	ArgProportional      = "predicate.ProportionalEnable"
	ArgResources         = "predicate.resources"
	// ArgNodeUnschedulable is Sluice's: Volcano always checks cordoned nodes.
	ArgNodeUnschedulable = "predicate.NodeUnschedulableEnable"
)

// acceptedOnly are Volcano's switches for checks Sluice has nothing to apply to (volumes,
// dynamic resource allocation) or leaves to another plugin (devices): they are validated as
// booleans and otherwise ignored.
var acceptedOnly = []string{
	"predicate.NodeVolumeLimitsEnable",
	"predicate.VolumeZoneEnable",
	"predicate.VolumeBindingEnable",
	"predicate.DynamicResourceAllocationEnable",
	"predicate.GPUSharingEnable",
	"predicate.GPUNumberEnable",
}

// proportional reserves idle cpu and memory per unit of an idle scarce resource for tasks that
// do not ask for that resource.
type proportional struct {
	name string
	// cpu is milli-CPU and memory is megabytes (10^6 bytes) per milli-unit of the resource,
	// Volcano's units.
	cpu, memory float64
}

type options struct {
	nodeAffinity, nodePorts, taintToleration, podAffinity, podTopologySpread bool
	nodeUnschedulable, cache, proportionalEnable                             bool
	proportional                                                             []proportional
}

// New builds the plugin from its arguments; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	o := options{}
	bools := []struct {
		key  string
		dst  *bool
		dflt bool
	}{
		{ArgNodeAffinity, &o.nodeAffinity, true},
		{ArgNodePorts, &o.nodePorts, true},
		{ArgTaintToleration, &o.taintToleration, true},
		{ArgPodAffinity, &o.podAffinity, true},
		{ArgPodTopologySpread, &o.podTopologySpread, true},
		{ArgNodeUnschedulable, &o.nodeUnschedulable, true},
		{ArgCache, &o.cache, false},
		{ArgProportional, &o.proportionalEnable, false},
	}
	for _, b := range bools {
		v, err := args.Bool(b.key, b.dflt)
		if err != nil {
			return nil, err
		}
		*b.dst = v
	}
	for _, k := range acceptedOnly {
		if _, err := args.Bool(k, false); err != nil {
			return nil, err
		}
	}
	list, err := args.String(ArgResources, "")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, r := range strings.Split(list, ",") {
		r = strings.TrimSpace(r)
		if r == "" || seen[r] {
			continue
		}
		seen[r] = true
		p := proportional{name: r}
		for _, f := range []struct {
			suffix string
			dst    *float64
		}{{".cpu", &p.cpu}, {".memory", &p.memory}} {
			v, err := args.Float64(ArgResources+"."+r+f.suffix, 1)
			if err != nil {
				return nil, err
			}
			if v < 0 {
				v = 1 // Volcano's fallback for a negative rate
			}
			*f.dst = v
		}
		o.proportional = append(o.proportional, p)
	}
	sort.Slice(o.proportional, func(i, j int) bool { return o.proportional[i].name < o.proportional[j].name })
	return &plugin{opts: o}, nil
}

// plugin is one session's predicates.
type plugin struct {
	// specKeys remembers each task spec's class key.
	specKeys k8sutil.SpecKeys
	opts     options
	ssn      *framework.Session
	view     *k8sutil.View
	// statics holds task specs' compiled constraints, each compiled at its first use (under
	// mu, like every use).
	statics map[*api.Task]*taskStatic
	// cur caches the state of the last task checked; mu serialises building a new one.
	cur atomic.Pointer[taskState]
	mu  sync.Mutex
}

var _ framework.Plugin = (*plugin)(nil)

// Name returns "predicates".
func (p *plugin) Name() string { return Name }

// OnSessionOpen registers the predicate and pre-predicate. Tasks' constraints are compiled
// when first needed.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.view = k8sutil.SessionView(ssn)
	p.statics = map[*api.Task]*taskStatic{}
	ssn.AddPrePredicateFn(Name, p.prePredicate)
	ssn.AddPredicateFn(Name, p.predicate)
	ssn.AddClassKeyFn(Name, p.classKey)
}

// classKey declares the task's answers reusable across tasks with the same node constraints,
// unless task affinity or topology spread is involved: those depend on other tasks and nodes,
// so do the anti-affinity terms of tasks already placed.
func (p *plugin) classKey(task *api.TaskInfo) (string, bool) {
	if k8sutil.HasTaskConstraints(task.Spec) || len(p.view.WithAffinity()) > 0 {
		return "", false
	}
	return p.specKeys.Key(task.Spec), true
}

// OnSessionClose does nothing.
func (p *plugin) OnSessionClose(*framework.Session) {}

// prePredicate computes the task's state from the current placement (Kubernetes'
// PreFilter) and rejects a task whose constraints are malformed.
func (p *plugin) prePredicate(task *api.TaskInfo) error {
	s := p.state(task)
	if s.st.invalid != "" {
		return api.NewFitError("", api.UnschedulableAndUnresolvable, s.st.invalid)
	}
	return nil
}

// predicate runs the checks in Volcano's order. Checks whose failure no eviction can cure end
// the run; the others add their reason and let later checks add theirs.
func (p *plugin) predicate(task *api.TaskInfo, node *api.NodeInfo) error {
	s := p.state(task)
	st := s.st
	n := node.Node
	var reasons []string
	fail := func(code api.FitCode, reason string) error {
		return api.NewFitError(node.Name, code, append(reasons, reason)...)
	}

	if limit := node.Allocatable.MaxTaskNum; limit > 0 && limit <= p.view.TaskCount(node) {
		reasons = append(reasons, "too many tasks")
	}
	if p.opts.nodeUnschedulable && n.Unschedulable && !st.toleratesUnschedulable {
		return fail(api.UnschedulableAndUnresolvable, "node unschedulable")
	}
	if p.opts.nodeAffinity && !st.required.Match(n) {
		return fail(api.UnschedulableAndUnresolvable, "node selector/affinity mismatch")
	}
	if p.opts.taintToleration {
		if taint, ok := k8sutil.UntoleratedTaint(n.Taints, st.tolerations); ok {
			return fail(api.UnschedulableAndUnresolvable, "untolerated taint "+k8sutil.TaintString(taint))
		}
	}
	if p.opts.nodePorts && len(st.ports) > 0 {
		if port, used := p.portInUse(st.ports, node); used {
			reasons = append(reasons, fmt.Sprintf("host port %d in use", port))
		}
	}
	if p.opts.podAffinity {
		if r := s.affinityReason(n); r != "" {
			// Volcano makes every task affinity failure unresolvable (volcano#3845).
			return fail(api.UnschedulableAndUnresolvable, r)
		}
	}
	if p.opts.podTopologySpread {
		if code, r := s.spreadReason(n); r != "" {
			if code == api.UnschedulableAndUnresolvable {
				return fail(code, r)
			}
			reasons = append(reasons, r)
		}
	}
	if p.opts.proportionalEnable {
		if r := p.proportionalReason(task, node); r != "" {
			return fail(api.UnschedulableAndUnresolvable, r)
		}
	}
	if len(reasons) > 0 {
		return api.NewFitError(node.Name, api.Unschedulable, reasons...)
	}
	return nil
}

// portInUse returns the first of the task's host ports that a task on the node already uses.
func (p *plugin) portInUse(ports []int32, node *api.NodeInfo) (int32, bool) {
	for _, port := range ports {
		for _, t := range node.Tasks {
			if t.Spec == nil || len(t.Spec.Ports) == 0 || p.view.Gone(t.UID) {
				continue
			}
			for _, used := range t.Spec.Ports {
				if used == port {
					return port, true
				}
			}
		}
	}
	return 0, false
}

// proportionalReason is Volcano's proportional predicate: a task that asks for none of the
// listed resources must leave, for each one the node has idle, cpu and memory in proportion.
func (p *plugin) proportionalReason(task *api.TaskInfo, node *api.NodeInfo) string {
	for _, r := range p.opts.proportional {
		if task.Resreq.Scalars[r.name] > 0 {
			return ""
		}
	}
	idle := node.Idle
	for _, r := range p.opts.proportional {
		v, ok := idle.Scalars[r.name]
		if !ok {
			continue
		}
		if idle.MilliCPU-task.Resreq.MilliCPU < v*r.cpu || idle.Memory-task.Resreq.Memory < v*r.memory*1000*1000 {
			return "idle cpu/memory reserved for " + r.name
		}
	}
	return ""
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

// KeptPlacements says that a classed task's answers depend only on the class key, the
// plugin's arguments and the node's view (its spec, its tasks, the placement view's counts
// for it), so that they may be kept between cycles for unchanged nodes.
func (*plugin) KeptPlacements() {}

var _ framework.KeptPlacements = (*plugin)(nil)

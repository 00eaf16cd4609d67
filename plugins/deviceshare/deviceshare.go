package deviceshare

import (
	"fmt"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "deviceshare"

// Argument names, as Volcano spells them.
const (
	// ArgGPUSharingEnable turns on Volcano's gpushare memory sharing; accepted, no effect.
	ArgGPUSharingEnable = "deviceshare.GPUSharingEnable"
	// ArgGPUNumberEnable turns on Volcano's gpushare whole-GPU numbers; accepted, no effect.
	ArgGPUNumberEnable = "deviceshare.GPUNumberEnable"
	// ArgNodeLockEnable locks a node while a device is bound; accepted, no effect.
	ArgNodeLockEnable = "deviceshare.NodeLockEnable"
	// ArgVGPUEnable turns on Volcano's HAMi vGPU sharing; accepted, no effect.
	ArgVGPUEnable = "deviceshare.VGPUEnable"
	// ArgSchedulePolicy is the node score policy: binpack, spread or empty (no score).
	ArgSchedulePolicy = "deviceshare.SchedulePolicy"
	// ArgScheduleWeight multiplies the node score; 0 (the default) registers no score.
	ArgScheduleWeight = "deviceshare.ScheduleWeight"
	// ArgGPUExclusiveRules is a list of label sets: tasks matching one rule never share a
	// device with each other.
	ArgGPUExclusiveRules = "deviceshare.GPUExclusiveRules"
)

// Schedule policies.
const (
	// PolicyBinpack prefers nodes whose chosen devices end up fullest.
	PolicyBinpack = "binpack"
	// PolicySpread prefers nodes whose chosen devices are idle.
	PolicySpread = "spread"
)

// New builds the plugin for one session; a malformed argument is an error naming it.
func New(args conf.Arguments) (framework.Plugin, error) {
	enabled := map[string]bool{}
	for _, k := range []string{ArgGPUSharingEnable, ArgGPUNumberEnable, ArgNodeLockEnable, ArgVGPUEnable} {
		v, err := args.Bool(k, false)
		if err != nil {
			return nil, err
		}
		enabled[k] = v
	}
	// Volcano refuses these combinations at start-up (klog.Fatal).
	if enabled[ArgGPUSharingEnable] && enabled[ArgGPUNumberEnable] {
		return nil, fmt.Errorf("arguments %q and %q cannot both be true", ArgGPUSharingEnable, ArgGPUNumberEnable)
	}
	if enabled[ArgVGPUEnable] && (enabled[ArgGPUSharingEnable] || enabled[ArgGPUNumberEnable]) {
		return nil, fmt.Errorf("argument %q cannot be true together with %q or %q", ArgVGPUEnable, ArgGPUSharingEnable, ArgGPUNumberEnable)
	}
	policy, err := args.String(ArgSchedulePolicy, "")
	if err != nil {
		return nil, err
	}
	policy = strings.TrimSpace(policy)
	switch policy {
	case "", PolicyBinpack, PolicySpread:
	default:
		return nil, fmt.Errorf("argument %q: want %q, %q or empty, got %q", ArgSchedulePolicy, PolicyBinpack, PolicySpread, policy)
	}
	weight, err := args.Int(ArgScheduleWeight, 0)
	if err != nil {
		return nil, err
	}
	if weight < 0 {
		return nil, fmt.Errorf("argument %q: want a non-negative integer, got %d", ArgScheduleWeight, weight)
	}
	rules, err := exclusiveRules(args[ArgGPUExclusiveRules])
	if err != nil {
		return nil, err
	}
	return &plugin{policy: policy, weight: weight, rules: rules}, nil
}

// exclusiveRules reads the GPU exclusive rules: a list of maps from label to value.
func exclusiveRules(v any) ([]map[string]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("argument %q: want a list of label maps, got %T", ArgGPUExclusiveRules, v)
	}
	var out []map[string]string
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("argument %q[%d]: want a map of labels, got %T", ArgGPUExclusiveRules, i, item)
		}
		rule := map[string]string{}
		for k, val := range m {
			rule[k] = fmt.Sprint(val)
		}
		if len(rule) > 0 {
			out = append(out, rule)
		}
	}
	return out, nil
}

// matchedRules lists the exclusive rules whose labels the task carries.
func (p *plugin) matchedRules(labels map[string]string) []int {
	var out []int
	for i, rule := range p.rules {
		ok := true
		for k, v := range rule {
			if labels[k] != v {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, i)
		}
	}
	return out
}

// exclusion returns the filter of devices the task may not share: those held by a task that
// matches an exclusive rule the task matches too (nil when the task matches none).
func (p *plugin) exclusion(task *api.TaskInfo) func(*api.DeviceInfo) bool {
	if len(p.rules) == 0 {
		return nil
	}
	mine := p.matchedRules(task.Labels())
	if len(mine) == 0 {
		return nil
	}
	return func(d *api.DeviceInfo) bool {
		for uid := range d.Holders {
			if uid == task.UID {
				continue
			}
			theirs := p.matchedRules(p.labels[uid])
			for _, a := range mine {
				for _, b := range theirs {
					if a == b {
						return true
					}
				}
			}
		}
		return false
	}
}

// plugin is one session's deviceshare. Its ledger records what every task holds, so that a
// deallocation releases exactly that and an undone eviction restores exactly that.
type plugin struct {
	policy string
	weight int
	rules  []map[string]string
	// labels maps every task's UID to its labels, for the exclusive rules.
	labels map[string]map[string]string

	ssn *framework.Session
	// held maps a task UID to the devices it holds in this session.
	held map[string]*grant
	// evicted maps the UID of a task evicted in this session to what it held, to restore it
	// if the eviction is discarded.
	evicted map[string]eviction
}

var _ framework.Plugin = (*plugin)(nil)

// Name returns "deviceshare".
func (p *plugin) Name() string { return Name }

// OnSessionOpen accounts the devices held by tasks already on nodes and registers the
// predicate, the node score (with a positive weight) and the allocate/deallocate handlers.
func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	p.ssn = ssn
	p.held = map[string]*grant{}
	p.evicted = map[string]eviction{}
	p.labels = map[string]map[string]string{}
	if len(p.rules) > 0 {
		for _, j := range ssn.Jobs {
			for _, t := range j.Tasks {
				p.labels[t.UID] = t.Labels()
			}
		}
	}
	p.accountSnapshot(ssn)

	ssn.AddPredicateFn(Name, p.predicate)
	if p.weight > 0 {
		ssn.AddNodeOrderFn(Name, p.score)
	}
	ssn.AddEventHandler(&framework.EventHandler{AllocateFunc: p.allocate, DeallocateFunc: p.deallocate})
	// Device usage changes only with the node's tasks, so answers depend on the requests.
	ssn.AddClassKeyFn(Name, func(t *api.TaskInfo) (string, bool) {
		if t.Spec == nil {
			return "", true
		}
		return fmt.Sprintf("%v|%v", t.Spec.Devices, p.matchedRules(t.Labels())), true
	})
}

// OnSessionClose does nothing: usage lives on the session's nodes.
func (p *plugin) OnSessionClose(*framework.Session) {}

// predicate rejects a node that cannot serve every device request of the task now.
func (p *plugin) predicate(task *api.TaskInfo, node *api.NodeInfo) error {
	ws := wantsOf(task)
	if len(ws) == 0 {
		return nil
	}
	if _, f := choose(node, ws, p.exclusion(task)); f != nil {
		return api.NewFitError(node.Name, f.code, f.reason())
	}
	return nil
}

// The plugin does not implement framework.ReusableViews: its OnSessionOpen records the devices
// held by running tasks on their nodes' views, which kept views would then count twice.

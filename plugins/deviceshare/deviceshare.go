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
	return &plugin{policy: policy, weight: weight}, nil
}

// plugin is one session's deviceshare. Its ledger records what every task holds, so that a
// deallocation releases exactly that and an undone eviction restores exactly that.
type plugin struct {
	policy string
	weight int

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
		return fmt.Sprintf("%v", t.Spec.Devices), true
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
	if _, f := choose(node, ws); f != nil {
		return api.NewFitError(node.Name, f.code, f.reason())
	}
	return nil
}

package pdb

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "pdb"

// budget is one disruption budget and the session's tasks it covers.
type budget struct {
	spec *api.DisruptionBudget
	// tasks are the session's own views of the matching tasks, by UID.
	tasks []*api.TaskInfo
}

type plugin struct {
	budgets []*budget
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session. It takes no arguments; like Volcano it ignores any.
func New(conf.Arguments) (framework.Plugin, error) { return &plugin{}, nil }

func (*plugin) Name() string { return Name }

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	specs := append([]*api.DisruptionBudget(nil), ssn.Budgets...)
	sort.Slice(specs, func(i, j int) bool {
		if specs[i].Namespace != specs[j].Namespace {
			return specs[i].Namespace < specs[j].Namespace
		}
		return specs[i].Name < specs[j].Name
	})
	jobs := ssn.SortedJobs()
	for _, s := range specs {
		b := &budget{spec: s}
		for _, j := range jobs {
			for _, t := range j.SortedTasks() {
				if matches(s, t) {
					b.tasks = append(b.tasks, t)
				}
			}
		}
		p.budgets = append(p.budgets, b)
	}

	evictable := func(_ *api.TaskInfo, candidates []*api.TaskInfo) ([]*api.TaskInfo, framework.Vote) {
		return p.filter(candidates), framework.Permit
	}
	ssn.AddPreemptableFn(Name, evictable)
	ssn.AddReclaimableFn(Name, evictable)
	ssn.AddVictimTasksFn(Name, p.filter)
}

func (*plugin) OnSessionClose(*framework.Session) {}

// matches reports whether the budget covers the task: same namespace and every selector label
// present with its value. A budget with an empty selector covers nothing, nor is a task
// without labels covered.
func matches(b *api.DisruptionBudget, t *api.TaskInfo) bool {
	if len(b.Selector) == 0 || b.Namespace != t.Namespace {
		return false
	}
	labels := t.Labels()
	if len(labels) == 0 {
		return false
	}
	for k, v := range b.Selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// allowed is how many of the budget's tasks may be disrupted now, as Kubernetes' disruption
// controller computes it: healthy tasks (Running) less the desired healthy count, never below
// zero. The desired count is minAvailable, or expected - maxUnavailable, where expected counts
// the budget's tasks that have not finished and percentages of it round up. A budget whose
// value does not parse allows nothing.
func (b *budget) allowed() int {
	healthy, expected := 0, 0
	for _, t := range b.tasks {
		if t.Status == api.Running {
			healthy++
		}
		if !api.Terminated(t.Status) {
			expected++
		}
	}
	var desired int
	switch {
	case b.spec.MaxUnavailable != "":
		max, ok := scaled(b.spec.MaxUnavailable, expected)
		if !ok {
			return 0
		}
		desired = expected - max
		if desired < 0 {
			desired = 0
		}
	case b.spec.MinAvailable != "":
		min, ok := scaled(b.spec.MinAvailable, expected)
		if !ok {
			return 0
		}
		desired = min
	}
	if n := healthy - desired; n > 0 {
		return n
	}
	return 0
}

// scaled parses an integer or a percentage of total, rounded up.
func scaled(v string, total int) (int, bool) {
	num, pct := strings.CutSuffix(strings.TrimSpace(v), "%")
	n, err := strconv.Atoi(num)
	if err != nil || n < 0 {
		return 0, false
	}
	if !pct {
		return n, true
	}
	return int(math.Ceil(float64(n) * float64(total) / 100)), true
}

// filter keeps the tasks whose eviction breaks no budget, taking them in order and counting
// each kept or refused task against every budget that covers it (Volcano's rule: a task that
// would overdraw one budget is refused, but still uses up the others it matches). Budgets are
// counted afresh on every call from the tasks' current statuses, so tasks already evicted in
// this session (now Releasing) no longer count as healthy. It never abstains: it returns an
// empty, non-nil list when nothing may go.
func (p *plugin) filter(tasks []*api.TaskInfo) []*api.TaskInfo {
	victims := []*api.TaskInfo{}
	left := make([]int, len(p.budgets))
	for i, b := range p.budgets {
		left[i] = b.allowed()
	}
	for _, t := range tasks {
		violated := false
		for i, b := range p.budgets {
			if !matches(b.spec, t) {
				continue
			}
			left[i]--
			if left[i] < 0 {
				violated = true
			}
		}
		if !violated {
			victims = append(victims, t)
		}
	}
	return victims
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

package rescheduling

import (
	"fmt"
	"time"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Name is the plugin's configuration name.
const Name = "rescheduling"

// Defaults, as in Volcano.
const (
	DefaultInterval    = 5 * time.Minute
	LowNodeUtilization = "lowNodeUtilization"
)

// Argument names.
const (
	argInterval      = "interval"
	argMetricsPeriod = "metricsPeriod"
	argStrategies    = "strategies"
)

// strategy is one configured rescheduling strategy.
type strategy struct {
	name string
	lnu  *lnuConfig
}

type plugin struct {
	interval   time.Duration
	strategies []strategy
}

var _ framework.Plugin = (*plugin)(nil)

// New builds the plugin for one session from its arguments: interval (a Go duration, default
// 5m), metricsPeriod (accepted and ignored: a node's usage is one figure in Sluice) and
// strategies (a list of {name, params}; default lowNodeUtilization with its defaults). Only
// lowNodeUtilization is known; any other strategy name is an error.
func New(args conf.Arguments) (framework.Plugin, error) {
	p := &plugin{}
	var err error
	if p.interval, err = args.Duration(argInterval, DefaultInterval); err != nil {
		return nil, err
	}
	if _, err := args.String(argMetricsPeriod, ""); err != nil {
		return nil, err
	}
	raw, ok := args[argStrategies]
	if !ok || raw == nil {
		p.strategies = []strategy{{name: LowNodeUtilization, lnu: defaultLNU()}}
		return p, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("argument %q: want a list of {name, params}, got %v", argStrategies, raw)
	}
	for i, item := range list {
		s, err := parseStrategy(item)
		if err != nil {
			return nil, fmt.Errorf("argument %q[%d]: %w", argStrategies, i, err)
		}
		p.strategies = append(p.strategies, s)
	}
	if len(p.strategies) == 0 {
		p.strategies = []strategy{{name: LowNodeUtilization, lnu: defaultLNU()}}
	}
	return p, nil
}

func parseStrategy(item any) (strategy, error) {
	m, ok := item.(map[string]any)
	if !ok {
		return strategy{}, fmt.Errorf("want a mapping with name and params, got %v", item)
	}
	args := conf.Arguments(m)
	name, err := args.String("name", "")
	if err != nil {
		return strategy{}, err
	}
	var params map[string]any
	if v, ok := m["params"]; ok && v != nil {
		if params, ok = v.(map[string]any); !ok {
			return strategy{}, fmt.Errorf("argument \"params\": want a mapping, got %v", v)
		}
	}
	switch name {
	case LowNodeUtilization:
		lnu, err := parseLNU(params)
		if err != nil {
			return strategy{}, err
		}
		return strategy{name: name, lnu: lnu}, nil
	case "":
		return strategy{}, fmt.Errorf("argument \"name\": missing")
	}
	return strategy{}, fmt.Errorf("argument \"name\": unknown strategy %q (known: %s)", name, LowNodeUtilization)
}

func (*plugin) Name() string { return Name }

// runLog is what a session may offer to remember, across cycles, when a plugin last ran. The
// framework's Session does not offer it yet; until it does the plugin runs in every session.
type runLog interface {
	LastRun(key string) (time.Time, bool)
	SetLastRun(key string, at time.Time)
}

// due reports whether the strategies run in this session, and records the run: as Volcano's
// timeToRun, when more than the interval has passed since the last run. Without a record
// (or without a session that keeps one) it is due.
func (p *plugin) due(ssn *framework.Session) bool {
	log, ok := any(ssn).(runLog)
	if !ok {
		return true
	}
	return dueAt(log, p.interval, ssn.Now)
}

// wakeUp is when the strategies are due again: just after the interval since the last run
// (dueAt wants more than the interval to have passed).
func (p *plugin) wakeUp(ssn *framework.Session) (time.Time, bool) {
	log, ok := any(ssn).(runLog)
	if !ok {
		return time.Time{}, false
	}
	last, ok := log.LastRun(Name)
	if !ok {
		return time.Time{}, false
	}
	return last.Add(p.interval).Add(time.Nanosecond), true
}

func dueAt(log runLog, interval time.Duration, now time.Time) bool {
	if last, ok := log.LastRun(Name); ok && !last.Add(interval).Before(now) {
		return false
	}
	log.SetLastRun(Name, now)
	return true
}

func (p *plugin) OnSessionOpen(ssn *framework.Session) {
	due := p.due(ssn)
	ssn.AddWakeUpFn(Name, func() (time.Time, bool) { return p.wakeUp(ssn) })
	if !due {
		return
	}
	ssn.AddVictimTasksFn(Name, func(tasks []*api.TaskInfo) []*api.TaskInfo { return p.victims(ssn, tasks) })
}

func (*plugin) OnSessionClose(*framework.Session) {}

// victims runs every strategy over the offered tasks and returns what any of them chose, each
// task once, in the order chosen. It never abstains once due: an empty, non-nil list means no
// strategy found a victim.
func (p *plugin) victims(ssn *framework.Session, tasks []*api.TaskInfo) []*api.TaskInfo {
	out := []*api.TaskInfo{}
	seen := map[string]bool{}
	for _, s := range p.strategies {
		var chosen []*api.TaskInfo
		if s.lnu != nil {
			chosen = s.lnu.victims(ssn, tasks)
		}
		for _, t := range chosen {
			if !seen[t.UID] {
				seen[t.UID] = true
				out = append(out, t)
			}
		}
	}
	return out
}

// ReusableViews says that the plugin changes the session's views only through statements, so
// that its sessions may open on views kept between cycles.
func (*plugin) ReusableViews() {}

var _ framework.ReusableViews = (*plugin)(nil)

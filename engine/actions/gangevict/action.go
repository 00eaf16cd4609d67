package gangevict

import (
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Argument names, as Volcano spells them in the `configurations` section.
const (
	// ArgMaxDomains caps the hypernode domains tried per starving job.
	ArgMaxDomains = "maxDomains"
	// ArgAllowWholeBundle lets a whole-bundle (gang-breaking) victim set be chosen.
	ArgAllowWholeBundle = "allowWholeBundle"
)

// DefaultMaxDomains is maxDomains when it is unset, zero or negative (Volcano's default).
const DefaultMaxDomains = 8

// Options are an action's arguments.
type Options struct {
	// MaxDomains caps the hypernode domains tried per starving job.
	MaxDomains int
	// AllowWholeBundle lets bundles that break their gang be chosen.
	AllowWholeBundle bool
}

// ParseOptions reads maxDomains (default 8; zero or negative means the default, as in
// Volcano) and allowWholeBundle (default true). A value of the wrong type is an error naming
// the argument.
func ParseOptions(args conf.Arguments) (Options, error) {
	max, err := args.Int(ArgMaxDomains, DefaultMaxDomains)
	if err != nil {
		return Options{}, err
	}
	if max <= 0 {
		max = DefaultMaxDomains
	}
	whole, err := args.Bool(ArgAllowWholeBundle, true)
	if err != nil {
		return Options{}, err
	}
	return Options{MaxDomains: max, AllowWholeBundle: whole}, nil
}

// Action is a gang-aware eviction action: a policy and its arguments.
type Action struct {
	policy Policy
	opts   Options
}

// New builds the action of the policy from its `configurations` arguments.
func New(p Policy, args conf.Arguments) (*Action, error) {
	o, err := ParseOptions(args)
	if err != nil {
		return nil, err
	}
	return &Action{policy: p, opts: o}, nil
}

// Builder returns the builder of the policy's action, for the action registry.
func Builder(p Policy) framework.ActionBuilder {
	return func(args conf.Arguments) (framework.Action, error) {
		a, err := New(p, args)
		if err != nil {
			return nil, err
		}
		return a, nil
	}
}

// Name returns the policy's action name.
func (a *Action) Name() string { return a.policy.Action }

// Options returns the action's arguments.
func (a *Action) Options() Options { return a.opts }

// Execute runs the action on the session.
func (a *Action) Execute(ssn *framework.Session) { Execute(ssn, a.policy, a.opts) }

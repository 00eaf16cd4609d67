package framework

import (
	"fmt"
	"maps"
	"slices"

	"github.com/sluice-sched/sluice/engine/conf"
)

// Plugin registers callbacks on a session when it opens and may clean up when it closes.
// Per-cycle state belongs in the value the builder returns, which lives for one session.
type Plugin interface {
	// Name is the plugin's configuration name (e.g. "gang").
	Name() string
	// OnSessionOpen registers the plugin's callbacks.
	OnSessionOpen(ssn *Session)
	// OnSessionClose runs when the cycle ends.
	OnSessionClose(ssn *Session)
}

// PluginBuilder makes a plugin for one session from its configuration arguments. It returns
// an error naming the argument when one is malformed.
type PluginBuilder func(args conf.Arguments) (Plugin, error)

// Action is one step of a scheduling cycle (enqueue, allocate, ...).
type Action interface {
	// Name is the action's configuration name.
	Name() string
	// Execute runs the action on the session.
	Execute(ssn *Session)
}

// ActionBuilder makes an action for one session from its `configurations` arguments.
type ActionBuilder func(args conf.Arguments) (Action, error)

// Registry maps names to plugin and action builders. It is filled explicitly by the caller;
// there is no global registry.
type Registry struct {
	plugins map[string]PluginBuilder
	actions map[string]ActionBuilder
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{plugins: map[string]PluginBuilder{}, actions: map[string]ActionBuilder{}}
}

// RegisterPlugin adds a plugin builder; registering a name twice panics (a wiring bug).
func (r *Registry) RegisterPlugin(name string, b PluginBuilder) {
	if _, dup := r.plugins[name]; dup {
		panic(fmt.Sprintf("framework: plugin %q registered twice", name))
	}
	r.plugins[name] = b
}

// RegisterAction adds an action builder; registering a name twice panics (a wiring bug).
func (r *Registry) RegisterAction(name string, b ActionBuilder) {
	if _, dup := r.actions[name]; dup {
		panic(fmt.Sprintf("framework: action %q registered twice", name))
	}
	r.actions[name] = b
}

// HasPlugin reports whether a plugin of that name is registered.
func (r *Registry) HasPlugin(name string) bool { _, ok := r.plugins[name]; return ok }

// HasAction reports whether an action of that name is registered.
func (r *Registry) HasAction(name string) bool { _, ok := r.actions[name]; return ok }

// PluginNames returns the registered plugin names, sorted.
func (r *Registry) PluginNames() []string { return slices.Sorted(maps.Keys(r.plugins)) }

// ActionNames returns the registered action names, sorted.
func (r *Registry) ActionNames() []string { return slices.Sorted(maps.Keys(r.actions)) }

// Validate checks a configuration against the registry: every action and plugin must exist
// and every plugin's and action's arguments must build.
func (r *Registry) Validate(cfg *conf.Config) error {
	if err := conf.Validate(cfg, r.HasAction, r.HasPlugin); err != nil {
		return err
	}
	for ti, tier := range cfg.Tiers {
		for pi, p := range tier.Plugins {
			if _, err := r.plugins[p.Name](p.Arguments); err != nil {
				return &conf.Error{Path: fmt.Sprintf("tiers[%d].plugins[%d]", ti, pi), Msg: fmt.Sprintf("plugin %s: %v", p.Name, err)}
			}
		}
	}
	for _, a := range cfg.Actions {
		if _, err := r.actions[a](cfg.ActionArguments(a)); err != nil {
			return &conf.Error{Path: "configurations", Msg: fmt.Sprintf("action %s: %v", a, err)}
		}
	}
	return nil
}

// buildActions returns the configured actions in order.
func (r *Registry) buildActions(cfg *conf.Config) ([]Action, error) {
	out := make([]Action, 0, len(cfg.Actions))
	for _, name := range cfg.Actions {
		b, ok := r.actions[name]
		if !ok {
			return nil, fmt.Errorf("unknown action %q", name)
		}
		a, err := b(cfg.ActionArguments(name))
		if err != nil {
			return nil, fmt.Errorf("action %s: %w", name, err)
		}
		out = append(out, a)
	}
	return out, nil
}

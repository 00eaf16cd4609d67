package conf

import (
	"errors"
	"fmt"
)

// Validate checks a configuration against the actions and plugins that exist.
// knownActions and knownPlugins report whether a name is registered; a nil
// function accepts every name. Validate reports, all together (joined with
// errors.Join, each an *Error):
//
//   - an empty action list, an unknown action (`actions[2]: unknown action
//     "alocate"`) or an action listed twice;
//   - a plugin without a name, an unknown plugin (`tiers[0].plugins[1]:
//     unknown plugin "gnag"`) or a plugin listed twice, in any tiers;
//   - proportion and drf with enableHierarchy: true in the same tier, which
//     Volcano rejects as conflicting;
//   - an action configuration without a name, for an unknown action, or given
//     twice.
//
// It returns nil if the configuration is valid.
func Validate(cfg *Config, knownActions, knownPlugins func(string) bool) error {
	if cfg == nil {
		return &Error{Msg: "nil configuration"}
	}
	var errs []error
	bad := func(path, format string, args ...any) {
		errs = append(errs, &Error{Path: path, Msg: fmt.Sprintf(format, args...)})
	}

	if len(cfg.Actions) == 0 {
		bad("actions", "no actions given")
	}
	seenAction := make(map[string]int, len(cfg.Actions))
	for i, a := range cfg.Actions {
		path := fmt.Sprintf("actions[%d]", i)
		switch {
		case a == "":
			bad(path, "empty action name")
			continue
		case knownActions != nil && !knownActions(a):
			bad(path, "unknown action %q", a)
		}
		if j, dup := seenAction[a]; dup {
			bad(path, "duplicate action %q (also actions[%d])", a, j)
		} else {
			seenAction[a] = i
		}
	}

	seenPlugin := make(map[string]string)
	for i, t := range cfg.Tiers {
		hierarchicalDRF, proportion := false, false
		for j, po := range t.Plugins {
			path := fmt.Sprintf("tiers[%d].plugins[%d]", i, j)
			switch {
			case po.Name == "":
				bad(path, "plugin has no name")
				continue
			case knownPlugins != nil && !knownPlugins(po.Name):
				bad(path, "unknown plugin %q", po.Name)
			}
			if prev, dup := seenPlugin[po.Name]; dup {
				bad(path, "duplicate plugin %q (also %s)", po.Name, prev)
			} else {
				seenPlugin[po.Name] = path
			}
			// Volcano checks the explicit setting, before defaults apply.
			if po.Name == "drf" && po.EnabledHierarchy != nil && *po.EnabledHierarchy {
				hierarchicalDRF = true
			}
			if po.Name == "proportion" {
				proportion = true
			}
		}
		if hierarchicalDRF && proportion {
			bad(fmt.Sprintf("tiers[%d]", i), "proportion and drf with hierarchy enabled conflict")
		}
	}

	seenConf := make(map[string]int, len(cfg.Configurations))
	for i, ac := range cfg.Configurations {
		path := fmt.Sprintf("configurations[%d]", i)
		switch {
		case ac.Name == "":
			bad(path, "action configuration has no name")
			continue
		case knownActions != nil && !knownActions(ac.Name):
			bad(path, "unknown action %q", ac.Name)
		}
		if j, dup := seenConf[ac.Name]; dup {
			bad(path, "duplicate configuration for action %q (also configurations[%d])", ac.Name, j)
		} else {
			seenConf[ac.Name] = i
		}
	}
	return errors.Join(errs...)
}

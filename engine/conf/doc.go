// Package conf reads Volcano's scheduler configuration ("volcano-scheduler.conf")
// unchanged, so that a configuration written for Volcano on Kubernetes can be
// handed to Sluice as is.
//
// A configuration names the actions a scheduling session runs, in order, and
// the plugins that take part, grouped in tiers:
//
//	actions: "enqueue, allocate, backfill"
//	tiers:
//	- plugins:
//	  - name: priority
//	  - name: gang
//	    enablePreemptable: false
//	- plugins:
//	  - name: nodeorder
//	    arguments:
//	      leastrequested.weight: 1
//	configurations:
//	- name: allocate
//	  arguments:
//	    predicateErrorCacheEnable: false
//
// Parse is stricter than Volcano, which silently ignores what it does not
// understand: unknown fields, plugins without names and empty action lists are
// errors that name the offending path, such as
// `tiers[1].plugins[2]: unknown field "enableFoo"`. Volcano spells its
// plugin switches inconsistently (enableJobOrder but enabledVictim), so both the
// "enable" and the "enabled" spelling of every switch are accepted.
//
// Parse knows nothing about which actions and plugins exist; Validate checks a
// parsed configuration against the registries the caller supplies.
//
// Plugin switches are kept as *bool, nil meaning "not set". PluginOption.Enabled
// answers with Volcano's default for unset switches, and ApplyDefaults fills them
// in the way Volcano's ApplyPluginConfDefaults does. Most switches default to
// enabled, but, as in Volcano, a few are opt-in: see Flag.DefaultEnabled.
//
// Plugin and action arguments are kept as decoded from YAML. The typed
// accessors on Arguments (Int, Float64, Bool, String, Duration) convert them the
// way Volcano's framework.Arguments does, but report malformed values as errors
// instead of logging and ignoring them.
package conf

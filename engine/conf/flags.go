package conf

import "strings"

// Flag identifies one of the per-plugin switches of a PluginOption, so that
// the framework can ask PluginOption.Enabled about any of them generically.
type Flag int

// The plugin switches, in the order Volcano declares them. Each gates one kind
// of plugin callback (job order, predicate, ...) for the plugin it is set on.
const (
	// FlagJobOrder gates the plugin's job order function.
	FlagJobOrder Flag = iota
	// FlagNamespaceOrder gates the plugin's namespace order function (older
	// Volcano releases only).
	FlagNamespaceOrder
	// FlagHierarchy turns on hierarchical sharing (drf). Opt-in.
	FlagHierarchy
	// FlagJobReady gates the plugin's job ready function.
	FlagJobReady
	// FlagJobPipelined gates the plugin's job pipelined function.
	FlagJobPipelined
	// FlagTaskOrder gates the plugin's task order function.
	FlagTaskOrder
	// FlagPreemptable gates the plugin's preemptable function.
	FlagPreemptable
	// FlagReclaimable gates the plugin's reclaimable function.
	FlagReclaimable
	// FlagPreemptive gates the plugin's preemptive function.
	FlagPreemptive
	// FlagQueueOrder gates the plugin's queue order function.
	FlagQueueOrder
	// FlagClusterOrder gates the plugin's cluster order function. Opt-in.
	FlagClusterOrder
	// FlagPredicate gates the plugin's predicate (and pre-predicate) functions.
	FlagPredicate
	// FlagBestNode gates the plugin's best node function.
	FlagBestNode
	// FlagNodeOrder gates the plugin's node order, batch node order and node
	// map/reduce functions.
	FlagNodeOrder
	// FlagTargetJob gates the plugin's target job function.
	FlagTargetJob
	// FlagReservedNodes gates the plugin's reserved nodes function.
	FlagReservedNodes
	// FlagJobEnqueued gates the plugin's job enqueueable and job enqueued
	// functions.
	FlagJobEnqueued
	// FlagVictim gates the plugin's victim tasks functions.
	FlagVictim
	// FlagJobStarving gates the plugin's job starving function.
	FlagJobStarving
	// FlagOverused gates the plugin's overused function.
	FlagOverused
	// FlagAllocatable gates the plugin's allocatable function.
	FlagAllocatable
	// FlagHyperNodeOrder gates the plugin's hypernode order function. Opt-in.
	FlagHyperNodeOrder
	// FlagSubJobReady gates the plugin's sub-job ready function. Opt-in.
	FlagSubJobReady
	// FlagSubJobPipelined gates the plugin's sub-job pipelined function. Opt-in.
	FlagSubJobPipelined
	// FlagSubJobOrder gates the plugin's sub-job order function. Opt-in.
	FlagSubJobOrder
	// FlagHyperNodeGradient gates the plugin's hypernode gradient function.
	// Opt-in.
	FlagHyperNodeGradient

	numFlags
)

// flagInfo describes one Flag: its name (the part after "enable"/"enabled"),
// the YAML key Volcano writes, and Volcano's value when it is left unset.
type flagInfo struct {
	name string
	key  string
	def  bool
}

var flagInfos = [numFlags]flagInfo{
	FlagJobOrder:          {"JobOrder", "enableJobOrder", true},
	FlagNamespaceOrder:    {"NamespaceOrder", "enableNamespaceOrder", true},
	FlagHierarchy:         {"Hierarchy", "enableHierarchy", false},
	FlagJobReady:          {"JobReady", "enableJobReady", true},
	FlagJobPipelined:      {"JobPipelined", "enableJobPipelined", true},
	FlagTaskOrder:         {"TaskOrder", "enableTaskOrder", true},
	FlagPreemptable:       {"Preemptable", "enablePreemptable", true},
	FlagReclaimable:       {"Reclaimable", "enableReclaimable", true},
	FlagPreemptive:        {"Preemptive", "enablePreemptive", true},
	FlagQueueOrder:        {"QueueOrder", "enableQueueOrder", true},
	FlagClusterOrder:      {"ClusterOrder", "enabledClusterOrder", false},
	FlagPredicate:         {"Predicate", "enablePredicate", true},
	FlagBestNode:          {"BestNode", "enableBestNode", true},
	FlagNodeOrder:         {"NodeOrder", "enableNodeOrder", true},
	FlagTargetJob:         {"TargetJob", "enableTargetJob", true},
	FlagReservedNodes:     {"ReservedNodes", "enableReservedNodes", true},
	FlagJobEnqueued:       {"JobEnqueued", "enableJobEnqueued", true},
	FlagVictim:            {"Victim", "enabledVictim", true},
	FlagJobStarving:       {"JobStarving", "enableJobStarving", true},
	FlagOverused:          {"Overused", "enabledOverused", true},
	FlagAllocatable:       {"Allocatable", "enabledAllocatable", true},
	FlagHyperNodeOrder:    {"HyperNodeOrder", "enabledHyperNodeOrder", false},
	FlagSubJobReady:       {"SubJobReady", "enabledSubJobReady", false},
	FlagSubJobPipelined:   {"SubJobPipelined", "enabledSubJobPipelined", false},
	FlagSubJobOrder:       {"SubJobOrder", "enabledSubJobOrder", false},
	FlagHyperNodeGradient: {"HyperNodeGradient", "enabledHyperNodeGradient", false},
}

// flagKeys maps every accepted YAML spelling of a switch to its Flag.
var flagKeys = func() map[string]Flag {
	m := make(map[string]Flag, 2*int(numFlags)+1)
	for f := range numFlags {
		m["enable"+flagInfos[f].name] = f
		m["enabled"+flagInfos[f].name] = f
	}
	// Some Volcano releases tagged this field "EnabledClusterOrder".
	m["EnabledClusterOrder"] = FlagClusterOrder
	return m
}()

// Flags returns every Flag, in declaration order.
func Flags() []Flag {
	fs := make([]Flag, numFlags)
	for i := range fs {
		fs[i] = Flag(i)
	}
	return fs
}

// Valid reports whether f is one of the declared flags.
func (f Flag) Valid() bool { return f >= 0 && f < numFlags }

// String returns the flag's name without the enable prefix, e.g. "JobOrder".
func (f Flag) String() string {
	if !f.Valid() {
		return "Flag(invalid)"
	}
	return flagInfos[f].name
}

// Key returns the YAML key Volcano uses for the flag, e.g. "enableJobOrder" or
// "enabledVictim". Parse accepts it with either the "enable" or the "enabled"
// prefix.
func (f Flag) Key() string {
	if !f.Valid() {
		return ""
	}
	return flagInfos[f].key
}

// DefaultEnabled reports the value Volcano gives the flag when a configuration
// leaves it unset. It is true for all flags except the opt-in ones Volcano's
// ApplyPluginConfDefaults leaves alone: FlagHierarchy, FlagClusterOrder,
// FlagHyperNodeOrder, FlagSubJobReady, FlagSubJobPipelined, FlagSubJobOrder and
// FlagHyperNodeGradient.
func (f Flag) DefaultEnabled() bool {
	return f.Valid() && flagInfos[f].def
}

// lookupFlagKey returns the Flag a YAML key spells, if any.
func lookupFlagKey(key string) (Flag, bool) {
	f, ok := flagKeys[key]
	return f, ok
}

// suggestKey returns the entry of known closest to key (differing only in
// case, or by at most two edits), or "" if none is that close.
func suggestKey(key string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return k
		}
		if d := editDistance(strings.ToLower(k), strings.ToLower(key), bestDist); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance returns the Levenshtein distance between a and b, or limit if it
// is at least limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// pluginOptionKeys lists the keys a plugin option may have, for suggestions:
// name, arguments and Volcano's spelling of every flag.
var pluginOptionKeys = func() []string {
	keys := []string{"name", "arguments"}
	for f := range numFlags {
		keys = append(keys, flagInfos[f].key)
	}
	return keys
}()

// field returns the address of the PluginOption field that holds flag f, or
// nil if f is not a valid flag.
func (p *PluginOption) field(f Flag) **bool {
	switch f {
	case FlagJobOrder:
		return &p.EnabledJobOrder
	case FlagNamespaceOrder:
		return &p.EnabledNamespaceOrder
	case FlagHierarchy:
		return &p.EnabledHierarchy
	case FlagJobReady:
		return &p.EnabledJobReady
	case FlagJobPipelined:
		return &p.EnabledJobPipelined
	case FlagTaskOrder:
		return &p.EnabledTaskOrder
	case FlagPreemptable:
		return &p.EnabledPreemptable
	case FlagReclaimable:
		return &p.EnabledReclaimable
	case FlagPreemptive:
		return &p.EnablePreemptive
	case FlagQueueOrder:
		return &p.EnabledQueueOrder
	case FlagClusterOrder:
		return &p.EnabledClusterOrder
	case FlagPredicate:
		return &p.EnabledPredicate
	case FlagBestNode:
		return &p.EnabledBestNode
	case FlagNodeOrder:
		return &p.EnabledNodeOrder
	case FlagTargetJob:
		return &p.EnabledTargetJob
	case FlagReservedNodes:
		return &p.EnabledReservedNodes
	case FlagJobEnqueued:
		return &p.EnabledJobEnqueued
	case FlagVictim:
		return &p.EnabledVictim
	case FlagJobStarving:
		return &p.EnabledJobStarving
	case FlagOverused:
		return &p.EnabledOverused
	case FlagAllocatable:
		return &p.EnabledAllocatable
	case FlagHyperNodeOrder:
		return &p.EnabledHyperNodeOrder
	case FlagSubJobReady:
		return &p.EnabledSubJobReady
	case FlagSubJobPipelined:
		return &p.EnabledSubJobPipelined
	case FlagSubJobOrder:
		return &p.EnabledSubJobOrder
	case FlagHyperNodeGradient:
		return &p.EnabledHyperNodeGradient
	}
	return nil
}

// FlagValue returns the flag as configured: nil if it is unset (or f is not a
// valid flag).
func (p PluginOption) FlagValue(f Flag) *bool {
	if fp := p.field(f); fp != nil {
		return *fp
	}
	return nil
}

// SetFlag sets flag f to v. It does nothing if f is not a valid flag.
func (p *PluginOption) SetFlag(f Flag, v bool) {
	if fp := p.field(f); fp != nil {
		*fp = &v
	}
}

// Enabled reports whether flag f is on for this plugin: the configured value
// if set, otherwise Volcano's default (f.DefaultEnabled()), which is true for
// all but the opt-in flags. An invalid flag is never enabled.
func (p PluginOption) Enabled(f Flag) bool {
	if v := p.FlagValue(f); v != nil {
		return *v
	}
	return f.DefaultEnabled()
}

// ApplyDefaults sets every unset flag that Volcano defaults (see
// Flag.DefaultEnabled) to true, like Volcano's ApplyPluginConfDefaults. The
// opt-in flags stay unset, so Enabled answers the same before and after.
func (p *PluginOption) ApplyDefaults() {
	for f := range numFlags {
		if fp := p.field(f); *fp == nil && flagInfos[f].def {
			t := true
			*fp = &t
		}
	}
}

// ApplyDefaults applies PluginOption.ApplyDefaults to every plugin of every
// tier.
func (c *Config) ApplyDefaults() {
	for i := range c.Tiers {
		for j := range c.Tiers[i].Plugins {
			c.Tiers[i].Plugins[j].ApplyDefaults()
		}
	}
}

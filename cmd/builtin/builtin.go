// Package builtin assembles Sluice's built-in scheduling actions and plugins into one registry,
// for the binaries and tools that run the engine. The engine and the service take a registry
// and never list actions or plugins themselves.
package builtin

import (
	"github.com/sluice-sched/sluice/engine/actions"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins"
)

// Registry returns a registry with every built-in action and plugin.
func Registry() *framework.Registry {
	reg := framework.NewRegistry()
	actions.Register(reg)
	plugins.Register(reg)
	return reg
}

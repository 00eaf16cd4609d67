// Package plugins registers Sluice's built-in scheduler plugins, one package each under
// plugins/.
package plugins

import (
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/binpack"
	"github.com/sluice-sched/sluice/plugins/conformance"
	"github.com/sluice-sched/sluice/plugins/drf"
	"github.com/sluice-sched/sluice/plugins/gang"
	"github.com/sluice-sched/sluice/plugins/nodeorder"
	"github.com/sluice-sched/sluice/plugins/overcommit"
	"github.com/sluice-sched/sluice/plugins/predicates"
	"github.com/sluice-sched/sluice/plugins/priority"
	"github.com/sluice-sched/sluice/plugins/proportion"
)

// Register adds every built-in plugin to the registry.
func Register(reg *framework.Registry) {
	reg.RegisterPlugin(priority.Name, priority.New)
	reg.RegisterPlugin(gang.Name, gang.New)
	reg.RegisterPlugin(conformance.Name, conformance.New)
	reg.RegisterPlugin(drf.Name, drf.New)
	reg.RegisterPlugin(proportion.Name, proportion.New)
	reg.RegisterPlugin(overcommit.Name, overcommit.New)
	reg.RegisterPlugin(predicates.Name, predicates.New)
	reg.RegisterPlugin(nodeorder.Name, nodeorder.New)
	reg.RegisterPlugin(binpack.Name, binpack.New)
}

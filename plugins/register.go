// Package plugins registers Sluice's built-in scheduler plugins, one package each under
// plugins/.
package plugins

import (
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/plugins/binpack"
	"github.com/sluice-sched/sluice/plugins/capacity"
	"github.com/sluice-sched/sluice/plugins/cdp"
	"github.com/sluice-sched/sluice/plugins/conformance"
	"github.com/sluice-sched/sluice/plugins/deviceshare"
	"github.com/sluice-sched/sluice/plugins/drf"
	"github.com/sluice-sched/sluice/plugins/extender"
	"github.com/sluice-sched/sluice/plugins/gang"
	"github.com/sluice-sched/sluice/plugins/networktopologyaware"
	"github.com/sluice-sched/sluice/plugins/nodegroup"
	"github.com/sluice-sched/sluice/plugins/nodeorder"
	"github.com/sluice-sched/sluice/plugins/numaaware"
	"github.com/sluice-sched/sluice/plugins/overcommit"
	"github.com/sluice-sched/sluice/plugins/pdb"
	"github.com/sluice-sched/sluice/plugins/predicates"
	"github.com/sluice-sched/sluice/plugins/priority"
	"github.com/sluice-sched/sluice/plugins/proportion"
	"github.com/sluice-sched/sluice/plugins/rescheduling"
	"github.com/sluice-sched/sluice/plugins/resourcequota"
	"github.com/sluice-sched/sluice/plugins/resourcestrategyfit"
	"github.com/sluice-sched/sluice/plugins/sla"
	"github.com/sluice-sched/sluice/plugins/tasktopology"
	"github.com/sluice-sched/sluice/plugins/tdm"
	"github.com/sluice-sched/sluice/plugins/usage"
)

// Register adds every built-in plugin to the registry.
func Register(reg *framework.Registry) {
	for _, p := range []struct {
		name string
		new  framework.PluginBuilder
	}{
		{priority.Name, priority.New},
		{gang.Name, gang.New},
		{conformance.Name, conformance.New},
		{drf.Name, drf.New},
		{proportion.Name, proportion.New},
		{capacity.Name, capacity.New},
		{overcommit.Name, overcommit.New},
		{predicates.Name, predicates.New},
		{nodeorder.Name, nodeorder.New},
		{binpack.Name, binpack.New},
		{pdb.Name, pdb.New},
		{cdp.Name, cdp.New},
		{sla.Name, sla.New},
		{rescheduling.Name, rescheduling.New},
		{nodegroup.Name, nodegroup.New},
		{usage.Name, usage.New},
		{resourcestrategyfit.Name, resourcestrategyfit.New},
		{resourcequota.Name, resourcequota.New},
		{tasktopology.Name, tasktopology.New},
		{deviceshare.Name, deviceshare.New},
		{extender.Name, extender.New},
		{networktopologyaware.Name, networktopologyaware.New},
		{tdm.Name, tdm.New},
		{numaaware.Name, numaaware.New},
	} {
		reg.RegisterPlugin(p.name, p.new)
	}
}

// Package actions registers Sluice's scheduling actions, each in its own package.
package actions

import (
	"github.com/sluice-sched/sluice/engine/actions/allocate"
	"github.com/sluice-sched/sluice/engine/actions/backfill"
	"github.com/sluice-sched/sluice/engine/actions/enqueue"
	"github.com/sluice-sched/sluice/engine/actions/gangpreempt"
	"github.com/sluice-sched/sluice/engine/actions/gangreclaim"
	"github.com/sluice-sched/sluice/engine/actions/preempt"
	"github.com/sluice-sched/sluice/engine/actions/reclaim"
	"github.com/sluice-sched/sluice/engine/actions/shuffle"
	"github.com/sluice-sched/sluice/engine/framework"
)

// Register adds every built-in action to the registry.
func Register(reg *framework.Registry) {
	reg.RegisterAction(enqueue.Name, enqueue.New)
	reg.RegisterAction(allocate.Name, allocate.New)
	reg.RegisterAction(backfill.Name, backfill.New)
	reg.RegisterAction(preempt.Name, preempt.New)
	reg.RegisterAction(reclaim.Name, reclaim.New)
	reg.RegisterAction(shuffle.Name, shuffle.New)
	reg.RegisterAction(gangpreempt.Name, gangpreempt.New)
	reg.RegisterAction(gangreclaim.Name, gangreclaim.New)
}

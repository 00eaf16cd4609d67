package deviceshare

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// grant is what one task holds: devices of one node.
type grant struct {
	node  string
	parts []part
}

// eviction remembers what an evicted task held and the device ids it carried.
type eviction struct {
	grant     *grant
	deviceIDs []string
}

// accountSnapshot records the devices held by the tasks the snapshot places on nodes. A task
// carrying device ids (from a committed bind) holds those: each id serves the first of its
// requests that matches the device and still wants one (whole or as that request's share);
// an id no request matches is held whole. Tasks with device requests but no ids (the resource
// manager did not say) then get devices chosen as for a new placement, so that their room is
// not given away. Nodes go in name order and tasks in UID order.
func (p *plugin) accountSnapshot(ssn *framework.Session) {
	type unknown struct {
		node *api.NodeInfo
		task *api.TaskInfo
	}
	var later []unknown
	for _, node := range ssn.NodeList {
		if len(node.Devices) == 0 {
			continue
		}
		for _, t := range node.SortedTasks() {
			if !api.OccupiesNode(t.Status) {
				continue
			}
			if len(t.DeviceIDs) > 0 {
				p.hold(node, t.UID, p.known(node, t))
				continue
			}
			if len(wantsOf(t)) > 0 {
				later = append(later, unknown{node, t})
			}
		}
	}
	for _, u := range later {
		parts, f := choose(u.node, wantsOf(u.task), p.exclusion(u.task))
		if f != nil {
			ssn.Log.Warn("deviceshare: cannot account devices of a placed task", "task", u.task.UID, "node", u.node.Name, "reason", f.reason())
			continue
		}
		p.hold(u.node, u.task.UID, parts)
	}
}

// known maps a placed task's device ids to its requests.
func (p *plugin) known(node *api.NodeInfo, t *api.TaskInfo) []part {
	ws := wantsOf(t)
	left := make([]int, len(ws))
	for i, w := range ws {
		left[i] = w.count
	}
	parts := make([]part, 0, len(t.DeviceIDs))
	for _, id := range t.DeviceIDs {
		d := device(node, id)
		if d == nil {
			p.ssn.Log.Warn("deviceshare: task holds a device its node lacks", "task", t.UID, "node", node.Name, "device", id)
			continue
		}
		pt := part{device: id, whole: true}
		for i, w := range ws {
			if left[i] > 0 && w.matches(d) {
				left[i]--
				if !w.whole {
					pt = part{device: id, memory: w.Memory, cores: w.Cores}
				}
				break
			}
		}
		parts = append(parts, pt)
	}
	return parts
}

// hold records parts as held by the task and adds them to the node's device usage.
func (p *plugin) hold(node *api.NodeInfo, uid string, parts []part) {
	for _, pt := range parts {
		d := device(node, pt.device)
		if d == nil {
			continue
		}
		d.Holders[uid] = struct{}{}
		if pt.whole {
			d.Whole = true
		} else {
			d.UsedMemory += pt.memory
			d.UsedCores += pt.cores
		}
	}
	p.held[uid] = &grant{node: node.Name, parts: parts}
}

// release gives back exactly what the task holds and forgets it; it returns the grant, or nil
// if the task held nothing.
func (p *plugin) release(uid string) *grant {
	g, ok := p.held[uid]
	if !ok {
		return nil
	}
	delete(p.held, uid)
	node := p.ssn.Nodes[g.node]
	if node == nil {
		return g
	}
	for _, pt := range g.parts {
		d := device(node, pt.device)
		if d == nil {
			continue
		}
		delete(d.Holders, uid)
		if pt.whole {
			d.Whole = p.heldWhole(d)
		} else {
			d.UsedMemory -= pt.memory
			d.UsedCores -= pt.cores
		}
	}
	return g
}

// heldWhole reports whether a remaining holder of the device holds it whole (only possible
// when the snapshot shows a device held twice).
func (p *plugin) heldWhole(d *api.DeviceInfo) bool {
	for uid := range d.Holders {
		if g := p.held[uid]; g != nil {
			for _, pt := range g.parts {
				if pt.whole && pt.device == d.ID {
					return true
				}
			}
		}
	}
	return false
}

// allocate assigns devices to a task just allocated or pipelined, or restores what an evicted
// task held when its eviction is discarded.
func (p *plugin) allocate(ev *framework.Event) {
	t := ev.Task
	if _, ok := p.held[t.UID]; ok {
		return
	}
	node := p.ssn.Nodes[t.NodeName]
	if node == nil {
		return
	}
	if t.Status != api.Allocated && t.Status != api.Pipelined {
		// Back on its node after a discarded eviction.
		if e, ok := p.evicted[t.UID]; ok {
			delete(p.evicted, t.UID)
			p.hold(node, t.UID, e.grant.parts)
			p.setDeviceIDs(node, t, e.deviceIDs)
		}
		return
	}
	ws := wantsOf(t)
	if len(ws) == 0 {
		p.setDeviceIDs(node, t, nil)
		return
	}
	parts, f := choose(node, ws, p.exclusion(t))
	if f != nil {
		// An action placed the task without asking the predicate after its evictions.
		p.ssn.Log.Warn("deviceshare: no devices for a placed task", "task", t.UID, "node", node.Name, "reason", f.reason())
		p.setDeviceIDs(node, t, nil)
		return
	}
	p.hold(node, t.UID, parts)
	p.setDeviceIDs(node, t, ids(parts))
}

// deallocate releases what the task holds and clears its device ids; for an evicted task it
// remembers them in case the eviction is discarded.
func (p *plugin) deallocate(ev *framework.Event) {
	t := ev.Task
	g := p.release(t.UID)
	if g == nil {
		return
	}
	if t.Status == api.Releasing {
		p.evicted[t.UID] = eviction{grant: g, deviceIDs: append([]string(nil), t.DeviceIDs...)}
	}
	p.setDeviceIDs(p.ssn.Nodes[g.node], t, nil)
}

// setDeviceIDs sets the task's device ids, and those of the node's copy of it.
func (p *plugin) setDeviceIDs(node *api.NodeInfo, t *api.TaskInfo, deviceIDs []string) {
	t.DeviceIDs = append([]string(nil), deviceIDs...)
	if len(deviceIDs) == 0 {
		t.DeviceIDs = nil
	}
	if node == nil {
		return
	}
	if c, ok := node.Tasks[t.UID]; ok && c != t {
		c.DeviceIDs = append([]string(nil), t.DeviceIDs...)
	}
}

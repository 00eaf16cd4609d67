package deviceshare

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// want is one device request of a task, normalised: count devices, each taken whole (no
// memory and no cores asked) or shared (the memory and cores asked, on each of them).
type want struct {
	api.DeviceRequest
	count int
	whole bool
}

// wantsOf returns the task's device requests in order.
func wantsOf(t *api.TaskInfo) []want {
	if t.Spec == nil || len(t.Spec.Devices) == 0 {
		return nil
	}
	out := make([]want, 0, len(t.Spec.Devices))
	for _, r := range t.Spec.Devices {
		n := int(r.Count)
		if n < 1 {
			n = 1
		}
		out = append(out, want{DeviceRequest: r, count: n, whole: r.Memory <= 0 && r.Cores <= 0})
	}
	return out
}

// matches reports whether the device is of the requested type (and model, when given; model
// names compare without case).
func (w want) matches(d *api.DeviceInfo) bool {
	return d.Type == w.Type && (w.Model == "" || strings.EqualFold(d.Model, w.Model))
}

// fitsNow reports whether a matching device can serve one unit of the request with what is
// allocated on it now. A whole request needs an untouched device. A share needs the memory
// and cores free on a device nobody holds whole, and, as HAMi vGPU (Volcano's vgpu device)
// rules: asking for all of the device's cores needs a device with no holder, and asking for
// no cores needs a device whose cores are not all taken.
func (w want) fitsNow(d *api.DeviceInfo) bool {
	if w.whole {
		return !d.Whole && len(d.Holders) == 0 && d.UsedMemory <= 0 && d.UsedCores <= 0
	}
	switch {
	case d.Whole,
		d.Memory-d.UsedMemory < w.Memory,
		d.Cores-d.UsedCores < w.Cores,
		w.Cores >= d.Cores && len(d.Holders) > 0,
		w.Cores == 0 && d.UsedCores >= d.Cores:
		return false
	}
	return true
}

// fitsEmpty reports whether a matching device could serve one unit of the request if nothing
// were allocated on it: when too few devices can, no eviction helps.
func (w want) fitsEmpty(d *api.DeviceInfo) bool {
	return w.whole || (d.Memory >= w.Memory && d.Cores >= w.Cores)
}

// label names the requested device in reasons: its model when given, else its type.
func (w want) label() string {
	if w.Model != "" {
		return w.Model
	}
	return w.Type
}

// part is one device a task holds, and how: whole, or a share of memory and cores.
type part struct {
	device string
	memory float64
	cores  int32
	whole  bool
}

// failure says which request a node cannot serve and whether evictions could change that.
type failure struct {
	want want
	code api.FitCode
}

// reason is the short fit-error phrase, e.g. "insufficient nvidia.com/gpu devices" or
// "no H100 device with 40Gi free".
func (f *failure) reason() string {
	w := f.want
	if w.whole {
		return fmt.Sprintf("insufficient %s devices", w.label())
	}
	var what []string
	if w.Memory > 0 {
		what = append(what, api.FormatBytes(w.Memory))
	}
	if w.Cores > 0 {
		what = append(what, fmt.Sprintf("%d%% cores", w.Cores))
	}
	free := strings.Join(what, " and ")
	if w.count == 1 {
		return fmt.Sprintf("no %s device with %s free", w.label(), free)
	}
	return fmt.Sprintf("fewer than %d %s devices with %s free", w.count, w.label(), free)
}

// choose picks devices of the node for every request, in request order, without changing
// the node. A task never takes one device for two requests. Whole requests take the free
// devices with the lowest ids; shares take the fullest fitting devices first (most used
// memory, then most used cores), ties by id. The node's devices are sorted by id.
func choose(node *api.NodeInfo, ws []want, exclude func(*api.DeviceInfo) bool) ([]part, *failure) {
	taken := make([]bool, len(node.Devices))
	var parts []part
	var cands []int
	for _, w := range ws {
		cands = cands[:0]
		for i, d := range node.Devices {
			if !taken[i] && w.matches(d) && w.fitsNow(d) && (exclude == nil || !exclude(d)) {
				cands = append(cands, i)
			}
		}
		if len(cands) < w.count {
			return nil, &failure{want: w, code: unresolvable(node, w)}
		}
		if !w.whole {
			sort.SliceStable(cands, func(a, b int) bool {
				da, db := node.Devices[cands[a]], node.Devices[cands[b]]
				if da.UsedMemory != db.UsedMemory {
					return da.UsedMemory > db.UsedMemory
				}
				if da.UsedCores != db.UsedCores {
					return da.UsedCores > db.UsedCores
				}
				return da.ID < db.ID
			})
		}
		for _, i := range cands[:w.count] {
			taken[i] = true
			pt := part{device: node.Devices[i].ID, whole: w.whole}
			if !w.whole {
				pt.memory, pt.cores = w.Memory, w.Cores
			}
			parts = append(parts, pt)
		}
	}
	return parts, nil
}

// unresolvable classifies a request the node cannot serve now: UnschedulableAndUnresolvable
// when fewer than count of its devices could serve it even if empty, else Unschedulable.
func unresolvable(node *api.NodeInfo, w want) api.FitCode {
	n := 0
	for _, d := range node.Devices {
		if w.matches(d) && w.fitsEmpty(d) {
			n++
		}
	}
	if n < w.count {
		return api.UnschedulableAndUnresolvable
	}
	return api.Unschedulable
}

// ids returns the device ids of parts, in order.
func ids(parts []part) []string {
	if len(parts) == 0 {
		return nil
	}
	out := make([]string, len(parts))
	for i, pt := range parts {
		out[i] = pt.device
	}
	return out
}

// device returns the node's device with the given id, or nil.
func device(node *api.NodeInfo, id string) *api.DeviceInfo {
	i := sort.Search(len(node.Devices), func(i int) bool { return node.Devices[i].ID >= id })
	if i < len(node.Devices) && node.Devices[i].ID == id {
		return node.Devices[i]
	}
	// The inventory should be sorted by id; fall back to a scan if it is not.
	for _, d := range node.Devices {
		if d.ID == id {
			return d
		}
	}
	return nil
}

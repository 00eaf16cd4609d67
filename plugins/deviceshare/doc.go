// Package deviceshare is Volcano's deviceshare plugin for Sluice's explicit device inventories:
// nodes list their devices ({id, type, model, memory, cores}) and tasks ask for devices
// ({type, count, memory, cores, model}). A request with neither memory nor cores asks for
// count whole devices; one with memory and/or cores (cores in percent of a device) asks for
// that share on each of count distinct devices, as HAMi vGPU's vgpu-number with
// vgpu-memory/vgpu-cores does. A model, when given, must equal the device's model (case
// ignored). A task never uses one device for two of its requests.
//
// Registered callbacks:
//   - Predicate: the node must serve every request with what is allocated on its devices now.
//     A whole device must have no holder; a share needs the memory and cores free on a device
//     nobody holds whole, and, as HAMi vGPU: asking for all of a device's cores needs a device
//     with no holder, asking for no cores needs a device whose cores are not all taken. The
//     reason names the device, e.g. "insufficient nvidia.com/gpu devices" or "no H100 device
//     with 40Gi free"; the code is UnschedulableAndUnresolvable when too few of the node's
//     devices could serve the request even if empty, Unschedulable otherwise (preemption may
//     free devices).
//   - NodeOrder, only when deviceshare.ScheduleWeight > 0 (as Volcano): over the devices the
//     task would take, binpack adds 100 * (used + requested memory) / memory per device (a
//     whole device counts 100), spread adds 100 per device that nobody holds yet; the sum is
//     rounded and multiplied by the weight. Tasks without device requests score 0.
//   - Event handlers. AllocateFunc (fired for allocations and pipelines) chooses the task's
//     devices, records them on the node's DeviceInfo (UsedMemory, UsedCores, Holders, Whole)
//     and sets TaskInfo.DeviceIDs, which a committed bind carries to the resource manager.
//     DeallocateFunc (discarded allocations and pipelines, evictions) releases exactly what
//     the task held and clears its DeviceIDs; a discarded eviction gives the task back the
//     very devices and ids it had.
//
// Devices are chosen deterministically (ARCHITECTURE.md, "Where Sluice differs"): for a
// share, among the node's fitting devices the fullest first (most used memory, then most
// used cores), ties by device id; whole requests take the free devices with the lowest ids.
//
// When the session opens, every task the snapshot places on a node (any status that occupies
// it, Releasing included) is accounted: its DeviceIDs (set by a committed bind) name what it
// holds, each id serving the first matching request of the task that still wants a device;
// a task with device requests but no ids gets devices chosen as for a new placement, after
// every task with ids.
//
// Arguments: deviceshare.SchedulePolicy (binpack, spread or empty) and
// deviceshare.ScheduleWeight (non-negative integer, default 0) drive the score.
// deviceshare.GPUSharingEnable, deviceshare.GPUNumberEnable, deviceshare.VGPUEnable and
// deviceshare.NodeLockEnable are accepted, validated as booleans and for Volcano's conflicts
// (sharing with number, vGPU with either), and otherwise ignored: in Sluice requests say
// whether they want whole devices or shares, and the resource manager does the binding.
//
// deviceshare.GPUExclusiveRules is a list of label sets; tasks that match the same rule never
// share a device, while tasks matching no rule share freely.
package deviceshare

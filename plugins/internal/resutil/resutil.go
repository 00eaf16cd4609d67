// Package resutil holds the Volcano queue and job resource helpers that the capacity,
// proportion, drf and overcommit plugins share: whether a queue's resource field is set, a
// job's minResources, what an admitted job still reserves (util.GetInqueueResource),
// helpers.Share and the dominant share built on it. Their quirks decide admission and order,
// so they are kept in behaviour.
package resutil

import (
	"math"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
)

// IsSet reports whether a queue's or job's resource field was given (Volcano: a non-empty
// ResourceList): some dimension, or MaxTaskNum, is non-zero or a scalar is named at all.
func IsSet(r api.Resource) bool {
	return r.MilliCPU != 0 || r.Memory != 0 || len(r.Scalars) != 0 || r.MaxTaskNum != 0
}

// JobMinResources is the job's minResources, nil when the job sets none.
func JobMinResources(j *api.JobInfo) *api.Resource {
	if j.MinResources == nil || !IsSet(*j.MinResources) {
		return nil
	}
	return j.MinResources
}

// InqueueResource is Volcano's util.GetInqueueResource: what a job's minResources still
// reserve beyond what its tasks hold. As in Volcano, a scalar's minimum is taken in whole
// units (Quantity.Value) while allocated scalars are in milli-units; "count/" quotas are
// skipped.
func InqueueResource(min, allocated *api.Resource) *api.Resource {
	out := api.EmptyResource()
	if v := min.MilliCPU - allocated.MilliCPU; v > 0 {
		out.MilliCPU = v
	}
	if v := min.Memory - allocated.Memory; v > 0 {
		out.Memory = v
	}
	for _, k := range min.ScalarNames() {
		if strings.HasPrefix(k, "count/") {
			continue
		}
		units := math.Ceil(min.Scalars[k] / 1000)
		a, ok := allocated.Scalars[k]
		if !ok {
			out.SetScalar(k, units)
			continue
		}
		if v := units - a; v > 0 {
			out.SetScalar(k, v)
		}
	}
	return out
}

// AllocatedTaskNum counts the job's tasks in an allocated status.
func AllocatedTaskNum(j *api.JobInfo) int32 {
	n := int32(0)
	for s, idx := range j.TaskStatusIndex {
		if api.AllocatedStatus(s) {
			n += int32(len(idx))
		}
	}
	return n
}

// Share is Volcano's helpers.Share: l/r, with 0/0 = 0 and x/0 = 1.
func Share(l, r float64) float64 {
	if r == 0 {
		if l == 0 {
			return 0
		}
		return 1
	}
	return l / r
}

// DominantShare is the largest Share(allocated, base) over base's dimensions (base.Names():
// cpu, memory, then scalars by name) and the dimension where it is found, the first on a tie;
// it is 0 and "" when allocated holds none of base. drf measures a job or a queue against the
// cluster's total with it (Volcano's drf calculateShare), proportion and capacity measure a
// queue against its deserved amount (their updateShare).
func DominantShare(allocated, base *api.Resource) (string, float64) {
	// base.Names() in its order (cpu, memory, scalars by name), without building the list
	// when there are no scalars: drf and proportion ask this for every placed task.
	share, dominant := 0.0, ""
	consider := func(n string, amount float64) {
		if amount < api.MinResource {
			return
		}
		if s := Share(allocated.Get(n), base.Get(n)); s > share {
			share, dominant = s, n
		}
	}
	consider(api.ResourceCPU, base.MilliCPU)
	consider(api.ResourceMemory, base.Memory)
	if len(base.Scalars) > 0 {
		for _, n := range base.ScalarNames() {
			consider(n, base.Scalars[n])
		}
	}
	return dominant, share
}

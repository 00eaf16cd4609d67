package nodeorder

import (
	"math"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins/internal/k8sutil"
)

// taskStatic is what scoring needs of a task, compiled once per session.
type taskStatic struct {
	spec *api.Task
	// cpu (milli) and memory (bytes) as requested, and as least/most allocated count them
	// (Kubernetes' non-zero defaults for a request that is missing); gpu in milli-units.
	cpu, memory, gpu     int64
	nzCPU, nzMemory      int64
	preferred            k8sutil.PreferredNodeAffinity
	required             k8sutil.RequiredNodeAffinity
	affinity             k8sutil.TaskAffinity
	preferNoScheduleTols []api.Toleration
	softSpread           []spreadConstraint // ScheduleAnyway constraints
	hasSpread            bool               // any topology spread constraint
}

func newTaskStatic(t *api.TaskInfo) *taskStatic {
	st := &taskStatic{
		spec:   t.Spec,
		cpu:    toInt(t.Resreq.MilliCPU),
		memory: toInt(t.Resreq.Memory),
		gpu:    toInt(t.Resreq.Scalars[api.ResourceGPU]),
	}
	st.nzCPU, st.nzMemory = st.cpu, st.memory
	if st.nzCPU <= 0 {
		st.nzCPU = k8sutil.DefaultMilliCPURequest
	}
	if st.nzMemory <= 0 {
		st.nzMemory = k8sutil.DefaultMemoryRequest
	}
	spec := t.Spec
	if spec == nil {
		return st
	}
	st.preferred = k8sutil.NewPreferredNodeAffinity(spec)
	st.required = k8sutil.NewRequiredNodeAffinity(spec)
	st.affinity = k8sutil.NewTaskAffinity(spec)
	for _, tol := range spec.Tolerations {
		if tol.Effect == "" || tol.Effect == k8sutil.EffectPreferNoSchedule {
			st.preferNoScheduleTols = append(st.preferNoScheduleTols, tol)
		}
	}
	st.hasSpread = len(spec.TopologySpread) > 0
	for _, c := range spec.TopologySpread {
		if c.WhenUnsatisfiable == "ScheduleAnyway" {
			st.softSpread = append(st.softSpread, spreadConstraint{
				maxSkew: int64(c.MaxSkew), key: c.TopologyKey, selector: k8sutil.NewSelector(c.Selector),
			})
		}
	}
	return st
}

func toInt(v float64) int64 { return int64(math.Round(v)) }

// requested is what the tasks in the node's view request: exactly, and with Kubernetes'
// non-zero defaults for cpu and memory.
type requested struct {
	cpu, memory, gpu int64
	nzCPU, nzMemory  int64
}

// requested sums the node's view; the gpu sum only when withGPU (the task asks for gpus).
func (p *plugin) requested(n *api.NodeInfo, withGPU bool) requested {
	cpu := n.Used.MilliCPU + n.Pipelined.MilliCPU
	mem := n.Used.Memory + n.Pipelined.Memory
	var gpu float64
	if withGPU {
		gpu = n.Used.Scalars[api.ResourceGPU] + n.Pipelined.Scalars[api.ResourceGPU]
	}
	var zc, zm int64
	if d := p.view.Delta(n.Name); d != nil {
		cpu -= d.EvictedReq.MilliCPU
		mem -= d.EvictedReq.Memory
		if withGPU {
			gpu -= d.EvictedReq.Scalars[api.ResourceGPU]
		}
		zc, zm = int64(d.ZeroCPU), int64(d.ZeroMemory)
	}
	r := requested{cpu: toInt(cpu), memory: toInt(mem), gpu: toInt(gpu)}
	r.nzCPU = r.cpu + zc*k8sutil.DefaultMilliCPURequest
	r.nzMemory = r.memory + zm*k8sutil.DefaultMemoryRequest
	return r
}

// leastRequestedScore is Kubernetes' per-resource least allocated score.
func leastRequestedScore(req, capacity int64) int64 {
	if capacity == 0 || req > capacity {
		return 0
	}
	return (capacity - req) * maxNodeScore / capacity
}

// mostRequestedScore is Kubernetes' per-resource most allocated score.
func mostRequestedScore(req, capacity int64) int64 {
	if capacity == 0 {
		return 0
	}
	if req > capacity {
		req = capacity
	}
	return req * maxNodeScore / capacity
}

// weighted averages per-resource scores of cpu and memory with the given weights, skipping a
// resource the node does not offer (Kubernetes' resourceAllocationScorer).
func weighted(score func(req, capacity int64) int64, reqCPU, capCPU, wCPU, reqMem, capMem, wMem int64) int64 {
	var sum, wsum int64
	if capCPU != 0 {
		sum += score(reqCPU, capCPU) * wCPU
		wsum += wCPU
	}
	if capMem != 0 {
		sum += score(reqMem, capMem) * wMem
		wsum += wMem
	}
	if wsum == 0 {
		return 0
	}
	return sum / wsum
}

// leastAllocated is Volcano's NodeResourcesLeastAllocated: cpu and memory weighted 50/50.
func leastAllocated(st *taskStatic, n *api.NodeInfo, r *requested) int64 {
	return weighted(leastRequestedScore,
		r.nzCPU+st.nzCPU, toInt(n.Allocatable.MilliCPU), 50,
		r.nzMemory+st.nzMemory, toInt(n.Allocatable.Memory), 50)
}

// mostAllocated is Volcano's NodeResourcesMostAllocated: cpu and memory weighted 1/1.
func mostAllocated(st *taskStatic, n *api.NodeInfo, r *requested) int64 {
	return weighted(mostRequestedScore,
		r.nzCPU+st.nzCPU, toInt(n.Allocatable.MilliCPU), 1,
		r.nzMemory+st.nzMemory, toInt(n.Allocatable.Memory), 1)
}

// balancedAllocation is Kubernetes' NodeResourcesBalancedAllocation over cpu, memory and
// nvidia.com/gpu (Volcano's resources): 100 * (1 - the standard deviation of the requested
// fractions). A task that requests none of them scores 0; gpu counts only for a task that
// requests it on a node that offers it.
func balancedAllocation(st *taskStatic, n *api.NodeInfo, r *requested) int64 {
	if st.cpu == 0 && st.memory == 0 && st.gpu == 0 {
		return 0
	}
	var fr [3]float64
	k := 0
	add := func(req, capacity int64) {
		if capacity == 0 {
			return
		}
		f := float64(req) / float64(capacity)
		if f > 1 {
			f = 1
		}
		fr[k] = f
		k++
	}
	add(r.cpu+st.cpu, toInt(n.Allocatable.MilliCPU))
	add(r.memory+st.memory, toInt(n.Allocatable.Memory))
	if st.gpu != 0 {
		if alloc, ok := n.Allocatable.Scalars[api.ResourceGPU]; ok {
			add(r.gpu+st.gpu, toInt(alloc))
		}
	}
	std := 0.0
	switch {
	case k == 2:
		std = math.Abs((fr[0] - fr[1]) / 2)
	case k > 2:
		mean := (fr[0] + fr[1] + fr[2]) / 3
		var sum float64
		for i := 0; i < k; i++ {
			sum += (fr[i] - mean) * (fr[i] - mean)
		}
		std = math.Sqrt(sum / float64(k))
	}
	return int64((1 - std) * maxNodeScore)
}

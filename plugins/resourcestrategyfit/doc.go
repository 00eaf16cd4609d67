// Package resourcestrategyfit is Volcano's resource-strategy-fit plugin: per-resource
// MostAllocated (binpack) or LeastAllocated (spread) node scores, a scarce-resource-avoidance
// (SRA) score that keeps tasks which do not need a scarce resource off the nodes that have it,
// and a proportional predicate that keeps cpu and memory in reserve for a scarce resource.
//
// Arguments (Volcano's schema):
//
//	resourceStrategyFitWeight: 10      # default 10; 0 turns the strategy score off
//	resources:                         # default {cpu: LeastAllocated 1, memory: LeastAllocated 1}
//	  nvidia.com/gpu: {type: MostAllocated, weight: 2}
//	  cpu:            {type: LeastAllocated, weight: 1}
//	  example.com/*:  {type: MostAllocated}   # wildcard: one trailing '*'
//	sra:
//	  enable: true
//	  resources: nvidia.com/gpu,example.com/fpga   # comma-separated
//	  weight: 10                                  # default 0: no SRA score
//	  resourceWeight: {nvidia.com/gpu: 1}         # default 1 per resource
//	proportional:
//	  enable: true
//	  resources: nvidia.com/gpu
//	  resourceProportion: {nvidia.com/gpu.cpu: 4, nvidia.com/gpu.memory: 8}
//
// Registered callbacks:
//   - NodeOrder (when the strategy weight or the SRA weight is positive), the sum of:
//     strategy: for each resource the task requests that has a configuration (an exact name
//     first, else the wildcard with the longest prefix), MostAllocated scores
//     (used+request)/allocatable and LeastAllocated (allocatable-used-request)/allocatable,
//     times the resource's weight; the sum over the weights' total, times 100 and the
//     strategy weight. A node where any such resource would overflow scores 0; a resource
//     the node lacks adds its weight with a 0 score.
//     SRA: 0 when the node lacks a resource the task requests; otherwise
//     (1 - w(node)/W)·100·sra.weight, where w(node) sums the weights of the SRA resources the
//     node offers and W all SRA weights: nodes without scarce resources score highest.
//   - Predicate (proportional enabled): a task that requests none of the proportional
//     resources fits a node only if, after it, the node's idle cpu and memory still cover
//     idle(resource)·cpu-ratio cores and idle(resource)·memory-ratio GB (10^9 bytes) for each
//     proportional resource the node has (ratios default to 1). Failures are
//     UnschedulableAndUnresolvable.
//
// Unlike Volcano, a malformed argument is an error naming it: a non-mapping section, an
// invalid wildcard ('*' alone, or not only at the end) or a non-numeric weight. An unknown
// scoring type is LeastAllocated and weights below 1 become 1, as in Volcano.
package resourcestrategyfit

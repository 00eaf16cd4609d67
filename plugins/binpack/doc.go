// Package binpack is Volcano's binpack plugin: it scores a node by how full it would be with
// the task, so that tasks fill busy nodes first and leave whole nodes free.
//
// For each resource the task requests and binpack weighs (cpu, memory, and the resources
// named in binpack.resources), the score is (used + request) * weight / allocatable, or 0
// when the node does not offer the resource or the task would overflow it; the sum is divided
// by the sum of the weights of the requested resources and multiplied by 100 * binpack.weight.
// Used is what the node's tasks hold (pipelined ones excluded), as Volcano's NodeInfo.Used.
package binpack

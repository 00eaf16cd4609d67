// Package gangevict is what Volcano's gang-aware eviction actions, gangpreempt and gangreclaim,
// share: a starving job asks for room for all its pending tasks at once, in one hypernode
// domain after another; the victims come in bundles per victim job, "safe" tasks whose
// eviction leaves their gang at or above its minimum first and "whole" bundles that break a
// gang after them. The gang-aware victim callbacks (Session.UnifiedEvictable, told the job,
// the domain and whether it preempts or reclaims) vet the candidates in bundle order; a whole
// bundle survives only if all of it is allowed. Bundles are added until the domain's idle
// room plus the victims' requests cover the job, and then a dry run evicts them and pipelines
// every pending task. The first dry run that leaves the job pipelined is kept.
//
// The two actions differ only in their Policy: which running tasks may be victims, how bundles
// are ordered, which kind of eviction the victim callbacks are told of, and whether the queue
// must first be allowed to reclaim.
package gangevict

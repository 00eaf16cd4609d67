// Package extender is Volcano's extender plugin: it delegates scheduling callbacks to an
// external HTTP service (a webhook). Each configured verb registers one callback; a call is a
// POST of a JSON body to <extender.urlPrefix>/<verb> with Content-Type application/json,
// answered with HTTP 200 and a JSON body (at most 10 MiB).
//
// # Arguments
//
//	extender.urlPrefix           base URL, http:// or https://; required when any verb is set
//	extender.httpTimeout         timeout of each call, a Go duration ("100ms"); default 1s
//	extender.ignorable           whether a failing call counts as "no opinion"; default false
//	extender.managedResources    resource names (YAML list or comma-separated string); when set,
//	                             only tasks requesting one of them (a resource amount or a
//	                             device request of that type) go to predicate and prioritize
//	extender.onSessionOpenVerb   called when the session opens
//	extender.onSessionCloseVerb  called when the session closes
//	extender.predicateVerb       Predicate
//	extender.prioritizeVerb      BatchNodeOrder
//	extender.preemptableVerb     Preemptable
//	extender.reclaimableVerb     Reclaimable
//	extender.queueOverusedVerb   Overused
//	extender.jobEnqueueableVerb  JobEnqueueable
//	extender.jobReadyVerb        JobReady
//	extender.allocateFunc        EventHandler.AllocateFunc (alias extender.allocateFuncVerb)
//	extender.deallocateFunc      EventHandler.DeallocateFunc (alias extender.deallocateFuncVerb)
//
// An unknown extender.* argument is an error, so that a misspelt verb does not silently turn a
// callback off.
//
// # Failures
//
// A call fails on a transport error, a timeout, a status other than 200 or an undecodable
// body. Without extender.ignorable a failure is an error: predicate rejects the node
// (InternalError, reason "extender predicate failed: ..."), prioritize returns an error (the
// cycle's batch scores for that task are dropped, as in Volcano), preemptable, reclaimable
// and jobEnqueueable reject, queueOverused says overused, jobReady says not ready. With
// extender.ignorable it is "no opinion": predicate passes, prioritize gives no scores,
// preemptable, reclaimable and jobEnqueueable abstain, queueOverused says not overused,
// jobReady says ready. Failures of onSessionClose and of the event verbs are only logged.
// When onSessionOpen fails and the extender is not ignorable, no callback is registered for
// the cycle, as in Volcano (a plugin cannot fail a session).
//
// # Request and response bodies
//
// Objects are summaries of the session's views, with Sluice's field names. Quantities are
// maps of resource name to amount: cpu in cores, memory in bytes, anything else in units.
// Lists are sorted (jobs, nodes, queues by name; tasks by uid), so equal sessions send equal
// bodies.
//
//	Task  {uid ("ns/name"), name, namespace, job ("ns/job"), role, status ("Pending",
//	       "Running", ...), node, priority, preemptable, bestEffort, resources, devices
//	       [{type, count, memory, cores, model}], deviceIds, startedAt (RFC 3339), labels,
//	       annotations}
//	Node  {name, labels, taints [{key, value, effect}], unschedulable, allocatable, idle, used,
//	       releasing, pipelined, maxTasks, usage, tasks [uid], devices [{id, type, model,
//	       memory, cores, usedMemory, usedCores, whole, holders [uid]}]}
//	Job   {uid, name, namespace, queue, priority, minAvailable, minAvailableByRole, phase,
//	       createdAt, minResources, allocated, totalRequest, ready, pipelined, pending,
//	       tasks [Task], labels, annotations}
//	Queue {name, parent, weight, priority, state, reclaimable, capability, deserved,
//	       guarantee, labels, annotations}
//
// Per verb, request -> response:
//
//	onSessionOpen   {cluster, revision, session, now, jobs [Job], nodes [Node], queues [Queue]}
//	                -> ignored
//	onSessionClose  {cluster, revision, session, now} -> ignored
//	predicate       {task, node} -> {errorMessage, code}: an empty errorMessage accepts the
//	                node; otherwise it is the reason, with Volcano's status code: 2
//	                Unschedulable, 3 UnschedulableAndUnresolvable, 0 or 1 an internal error
//	prioritize      {task, nodes [Node]} -> {nodeScore {node name: score}, errorMessage}: the
//	                scores are added to the nodes' scores; an errorMessage is an error
//	preemptable,    {evictor: Task, evictees [Task]} -> {status, victims [{uid} or
//	reclaimable     {namespace, name}]}: status 1 permit, 0 abstain, -1 reject; victims not
//	                among the evictees are ignored
//	queueOverused   {queue} -> {overused}
//	jobEnqueueable  {job} -> {status}: 1 permit, 0 abstain, -1 reject
//	jobReady        {job} -> {status}: true when ready
//	allocateFunc,   {task} after the change: an allocated task has its status and node (and
//	deallocateFunc  its deviceIds when deviceshare comes before the extender in the
//	                configuration) -> ignored
package extender

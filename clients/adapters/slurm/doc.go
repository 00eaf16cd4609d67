// Package slurm connects a Slurm controller to Sluice: it reads partitions, nodes and jobs
// with Slurm's own commands (sinfo --json, squeue --json, scontrol show partition), streams
// them into a Sluice cluster, asks Sluice for a plan, and carries the plan out with scontrol
// and scancel.
//
// # Mapping
//
//   - A Slurm node is a Sluice node: cpu = CPUs, memory = RealMemory, each GRES a scalar
//     resource (gpu as Options.GPUResource, others as "gres/NAME"), a label
//     "slurm.partition/P" for each partition it is in and "slurm.feature/F" for each active
//     feature; a node that is down, drained, draining, failing or not responding is
//     unschedulable.
//   - A partition (or, with QueueByAccount, an account) is a Sluice queue.
//   - A Slurm job is a Sluice job "job-ID" in Options.Namespace: a gang with one task per node
//     (minAvailable = number of tasks), each task asking for the job's per-node share of CPUs,
//     memory and GRES, tasks of one job kept on different nodes by a required anti-affinity,
//     and confined to the nodes of the job's partitions.
//   - Priority comes from the job's nice value (priority = -nice, the default, since Slurm
//     reports priority 0 for every held job) or from Slurm's priority (clamped to int32).
//
// # Which jobs Sluice schedules
//
// Sluice places the jobs that wait held in Slurm (sbatch -H, or requeued held by this
// adapter). A bind of all of a job's tasks starts it: scontrol update JobId=N NodeList=...,
// then scontrol release N. An eviction requeues the job held (scontrol requeuehold N) or
// cancels it (scancel N), per EvictMode. Jobs that Slurm runs on its own (submitted without
// -H) are reported while they run or are about to, so that Sluice counts their resources,
// and are never touched.
//
// # Loop and failures
//
// [Adapter.Run] runs a cycle every period: read Slurm, send what changed since the last
// acknowledged state over ClusterStateService.Sync, run one Schedule, commit the plan, carry
// out what the commit applied. A failing cycle (Slurm or Sluice unreachable) changes nothing
// and is retried with exponential backoff. [GRPCSluice] watches its Sync stream, so a stream
// that breaks is noticed at once, however quiet Slurm is; the next cycle opens a new one.
// When Sluice answers its hello with ResyncRequired (it restarted without state: another
// store id), the adapter sends its whole view as a resync (one replace_all batch, or a
// chunked resync when it is large) and re-applies its scheduler configuration.
//
// The Sluice calls sit behind the small [Sluice] interface; [GRPCSluice] implements it on
// the generated gRPC stubs.
package slurm

// Package scenario reads Sluice scenario files and plays them through the
// gRPC API of a Sluice server.
//
// A scenario file (see shared/scenarios/FORMAT.md) describes a cluster as a
// resource manager would stream it in, a Volcano scheduler configuration, a
// number of scheduling cycles and the decisions that must come out of them.
//
// Beyond FORMAT.md, a node may carry a NUMA topology (key numa) and a task may be
// guaranteed (key guaranteed), for the numa-aware plugin; docs/scenario-numa.md in the
// repository describes them.
//
// [Parse] decodes a scenario strictly: an unknown key, a missing required
// key, a bad quantity or enumeration value, or a reference to an object that
// is not declared is a [*ParseError] naming the file, the key path and what
// was expected. Parsing also expands node counts and task replicas and fills
// in the documented defaults, so the resulting [Cluster] holds ready-to-send
// API messages; [Cluster.Batch] wraps them in a replace-all DeltaBatch.
// [ParseClusterFile] reads the files a client such as "sluicectl apply" takes: a plain
// cluster file (the cluster's keys at the top, or under cluster: alone) or a scenario,
// whose config it returns; its cluster's problems are reported before anything a scenario
// would miss. [ParseCluster] and [ParseClusterPartial] return just the cluster.
//
// [Run] plays one scenario against a server, acting as the resource manager
// between cycles, and [Compare] checks what happened ([Outcome]) against the
// scenario's expectations ([Expect]). [RunFiles] runs files and directories
// and prints one PASS or FAIL line per scenario and a summary line.
package scenario

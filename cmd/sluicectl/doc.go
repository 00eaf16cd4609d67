// Command sluicectl is the command-line client of a Sluice server.
//
// Usage:
//
//	sluicectl [--server ADDR] [--cluster NAME] COMMAND [ARGS]
//
// Commands:
//
//	apply -f FILE [--replace]        send a cluster file (a scenario or its cluster section)
//	get nodes|queues|jobs|tasks [NAME] [-o table|json]
//	schedule [--dry-run|--commit] [-o table|json]
//	commit PLAN_ID [-o table|json]   commit a proposed plan
//	discard PLAN_ID                  discard a proposed plan
//	explain JOB [-o table|json]      why a job (namespace/name) is where it is
//	config get                       print the scheduler configuration
//	config set -f FILE               replace the scheduler configuration
//	scenario run PATH...             play scenario files through the API
//
// --server defaults to 127.0.0.1:50051 and --cluster to "default"; both may
// also follow the command. The connection is plaintext gRPC. "scenario run"
// starts an in-process server on a loopback port unless --server is given.
// Errors are printed as "sluicectl: ..." on standard error with exit
// status 1; gRPC errors include their code, message and field violations.
package main

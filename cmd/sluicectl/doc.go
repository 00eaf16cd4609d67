// Command sluicectl is the command-line client of a Sluice server.
//
// Usage:
//
//	sluicectl [GLOBAL FLAGS] COMMAND [ARGS]
//
// Commands:
//
//	apply -f FILE [--replace]        send a cluster file (a scenario or its cluster section)
//	get nodes|queues|jobs|tasks [NAME]
//	get clusters [NAME]              the clusters the token covers, with object counts
//	describe queue NAME              a queue with allocated, deserved, share and overused
//	describe cluster NAME            a cluster: revision, configuration and etag, objects
//	delete KIND NAME                 delete a node, queue, job, task, priorityclass, quota,
//	                                 pdb or hypernode (--ignore-not-found)
//	delete cluster NAME              delete a cluster and everything of it (admin token)
//	schedule [--dry-run|--commit]    run one cycle and print its plan
//	commit PLAN_ID                   commit a proposed plan
//	discard PLAN_ID                  discard a proposed plan
//	explain JOB                      why a job (namespace/name) is where it is
//	watch [--commit] [--period D] [--takeover] [--count N]
//	                                 stream plans (WatchPlans); --commit commits each
//	config get                       print the scheduler configuration, after an etag line
//	config set -f FILE               replace the scheduler configuration, only if its etag is
//	                                 the file's "# etag:" line or --etag (--force: whatever)
//	scenario run PATH...             play scenario files through the API
//	bench [--nodes N] [--jobs N] [--tasks-per-job N] [--queues N] [--shapes uniform|mixed]
//	      [--config FILE] [--seed N] [--cycles N] [--grpc] [--cpuprofile FILE]
//	                                 time scheduling cycles on a generated cluster, in this
//	                                 process and with --grpc through a loopback server
//	completion bash|zsh              print a shell completion script
//
// Every command that prints takes -o table|json|yaml. Global flags, also accepted after the
// command: --server (default 127.0.0.1:50051), --cluster (default "default"), --token or
// --token-file (default $SLUICE_TOKEN) for a bearer token, and --tls, --tls-ca, --tls-cert,
// --tls-key, --tls-server-name for TLS and mTLS. "scenario run" starts an in-process server
// on a loopback port unless --server is given. "bench" talks to no server but its own, takes
// only its own flags, and prints key=value lines, the last one a summary. Errors are printed as "sluicectl: ..." on
// standard error with exit status 1; gRPC errors include their code, message and field
// violations, and a "hint:" line saying what to do when the caller can fix the cause.
package main

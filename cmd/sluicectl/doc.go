// Command sluicectl is the command-line client of a Sluice server.
//
// Usage:
//
//	sluicectl [GLOBAL FLAGS] COMMAND [ARGS]
//
// Commands:
//
//	apply -f FILE [--replace] [--with-config]
//	                                 send a cluster file (plain, or a scenario's cluster; a
//	                                 scenario's config too with --with-config)
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
//	bench-reads [--clients N] [--duration D] [--consistency linearizable|stale]
//	            [--max-staleness D]
//	                                 read from the server for a while: throughput and latency
//	                                 percentiles (key=value)
//	simulate --trace FILE --out DIR [--config FILE]... [--cluster FILE | --from-server]
//	                                 replay a workload trace (SWF 2.2, or Sluice's JSON lines
//	                                 or YAML) in virtual time through the engine, in this
//	                                 process, once per configuration; writes jobs.csv,
//	                                 timeline.csv, summary.json and report.html
//	whatif -f FILE                   where hypothetical jobs and tasks would go, whom they
//	                                 would evict or why they would wait, and what removing or
//	                                 draining nodes would do (a dry run: nothing is stored)
//	gentrace [--jobs N] [--nodes N] [--cores-per-node N] [--queues N] [--load F] [--seed N]
//	                                 write a synthetic SWF trace (the same flags, the same bytes)
//	completion bash|zsh              print a shell completion script
//
// Every command that prints takes -o table|json|yaml. Global flags, also accepted after the
// command: --server (default 127.0.0.1:50051), --cluster (default "default"), --token or
// --token-file (default $SLUICE_TOKEN) for a bearer token, --tls, --tls-ca, --tls-cert,
// --tls-key, --tls-server-name for TLS and mTLS, and --wait (default 10s): how long to wait
// for a server that is starting (nothing listens yet) or whose raft member has no leader
// yet (UNAVAILABLE with reason STORE_UNAVAILABLE), retrying with a backoff. "scenario run"
// starts an in-process server on a loopback port unless --server is given. "bench" talks to
// no server but its own, takes only its own flags, and prints key=value lines, the last one
// a summary; "bench-reads" also takes only its own flags (the global ones go before it).
// In "simulate", --cluster names the cluster file; the server's cluster (--from-server) is
// --server-cluster, or the global --cluster given before the command.
//
// Help that is asked for (-h, --help, help) goes to standard output, with exit status 0.
// Errors are printed as "sluicectl: ..." on standard error; gRPC errors include their code,
// message and field violations, and a "hint:" line saying what to do when the caller can
// fix the cause. Exit statuses: 0 done; 1 failed (a call, a file, a scenario); 2 a mistake
// on the command line; 3 a commit (commit, schedule --commit) rejected some decisions.
package main

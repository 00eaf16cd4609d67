// Package service is Sluice's gRPC layer: it implements sluice.v1.ClusterStateService and
// sluice.v1.SchedulerService over the state store and the engine.
//
// Handlers are thin and share one shape: check the request, convert it, call the store or the
// engine, map the error, convert the result back.
//
//   - validate.go holds the one validation step: every field of every request is checked
//     with its helpers, at the top of the RPC's handler and nowhere else (the store and the
//     engine refuse only what depends on state, with typed errors), and a bad request fails with INVALID_ARGUMENT carrying a google.rpc.BadRequest
//     with field paths such as `batch.deltas[3].upsert_task.resources["cpu"]` and a
//     google.rpc.ErrorInfo with a reason (the Reason* constants).
//   - convert.go converts between the API's messages and the engine's model. Quantities are
//     parsed once, on the way in; the defaults the proto comments document are applied there.
//   - errors.go holds toStatus, the one function that gives errors their gRPC codes.
//   - apply.go applies delta batches (for ApplyDeltas and Sync) atomically, mapping the
//     store's referential errors back to the delta that caused them; resync.go the chunked
//     resyncs of a Sync stream (staged in the store, swapped in at the last chunk, held to
//     the same limits as a replace_all batch).
//   - reads.go holds the read modes (linearizable by default, stale when asked, min_revision)
//     and forward.go the forwarding of default reads and dry runs from a member that does not
//     lead to the leader, after this member admitted the call.
//   - clusters.go holds ListClusters, GetCluster and DeleteCluster (which ends the cluster's
//     watch, waits for its cycle, and moves its generation on so that open Sync streams
//     resync); pagination.go the opaque page tokens, bound to cluster, list and filters.
//   - cluster_state.go and scheduler.go are the two services; watch.go is WatchPlans
//     (continuous scheduling, one subscriber that proposes per cluster and takeover by a
//     writer, dry-run subscribers apart); server.go wires them into a grpc.Server with the
//     otelgrpc stats handler, logging, panic recovery, admission, message size limits, health
//     and reflection. A cluster no batch created answers NOT_FOUND everywhere (Server.existing)
//     and keeps nothing: per-cluster locks and generations live only while in use.
//   - admit.go is admission: authentication and the rate limit, which every call passes
//     (failed logins charged to their address); auth.go holds the tokens file, the
//     authenticator (bearer tokens compared in constant time, mTLS client certificates) and
//     the per-method, per-cluster authorization (scopes by effect: a read-only token never
//     changes what a writer sees or does); ratelimit.go the per-client token buckets; tls.go
//     the server's TLS configuration (internal/certs reloads certificates).
//   - limits.go holds the limits on requests and clusters (Limits) and the
//     RESOURCE_EXHAUSTED errors of those a cluster's size hits; logs.go bounds log lines (every
//     value cut, refused calls' lines rate-limited).
//   - telemetry.go holds the metrics (exported by NewPrometheusMetrics with the "sluice_"
//     prefix; queue figures and plan expiries are read from the engine when scraped, the
//     per-cluster counters from counts the service keeps, so that a deleted cluster's series
//     go) and the
//     engine observer that turns a cycle's plugin opens and actions into spans; config.go
//     the reload of the server's default configuration and the change notifications that
//     wake watches.
//
// The service owns no scheduling state: plans and per-cluster configurations are the engine's,
// kept in the store (and so in the raft log); the service converts and maps errors.
//
// A Server's Shutdown ends the long-lived streams (Sync, WatchPlans) so that a graceful stop
// of the grpc.Server completes; StartInProcess runs a complete server for tools and tests.
package service

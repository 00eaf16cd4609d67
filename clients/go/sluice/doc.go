// Package sluice is the Go client of the Sluice scheduling-decision service.
//
// A resource manager (RM) uses it in three parts:
//
//   - [Dial] opens a connection: TLS (the default, with the system's roots, or a
//     [tls.Config] of your own, mTLS included), plaintext ([WithInsecure]), and
//     optionally a bearer token sent with every call ([WithBearerToken]).
//   - A [Syncer] streams the RM's view of its cluster into Sluice over
//     ClusterStateService.Sync: it batches the deltas given to [Syncer.Send],
//     reconnects with backoff, resumes from the last acknowledged revision and
//     the store id it belongs to, and resends the whole state (built by a snapshot
//     callback; a replace_all batch, or a chunked resync when it is large) when the
//     server asks for it, for example after it restarted without state.
//   - [Client.RunSchedulingLoop] runs cycles (periodic Schedule calls, or
//     WatchPlans), commits each plan and hands the decisions that took effect to a
//     callback that carries them out.
//
// The generated API (messages and raw stubs) is in
// github.com/sluice-sched/sluice/gen/go/sluice/v1; [Client.State] and
// [Client.Scheduler] expose the raw stubs for everything this package does not wrap.
package sluice

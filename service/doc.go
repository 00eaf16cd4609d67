// Package service is Sluice's gRPC layer: it implements sluice.v1.ClusterStateService and
// sluice.v1.SchedulerService over the state store and the engine.
//
// Handlers are thin and share one shape: check the request, convert it, call the store or the
// engine, map the error, convert the result back.
//
//   - validate.go holds the one validation step: every field of every request is checked
//     there, and a bad request fails with INVALID_ARGUMENT carrying a google.rpc.BadRequest
//     with field paths such as `batch.deltas[3].upsert_task.resources["cpu"]` and a
//     google.rpc.ErrorInfo with a reason (the Reason* constants).
//   - convert.go converts between the API's messages and the engine's model. Quantities are
//     parsed once, on the way in; the defaults the proto comments document are applied there.
//   - errors.go holds toStatus, the one function that gives errors their gRPC codes.
//   - apply.go applies delta batches (for ApplyDeltas and Sync) atomically, mapping the
//     store's referential errors back to the delta that caused them.
//   - cluster_state.go and scheduler.go are the two services; server.go wires them into a
//     grpc.Server with logging, panic recovery, health and reflection.
//
// A Server's Shutdown ends the long-lived streams (Sync, WatchPlans) so that a graceful stop
// of the grpc.Server completes; StartInProcess runs a complete server for tools and tests.
package service

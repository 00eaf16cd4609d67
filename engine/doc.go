// Package engine runs scheduling cycles: it takes a consistent snapshot of a cluster from the
// state store, opens a framework session on it with the cluster's scheduler configuration,
// runs the configured actions, and keeps the resulting plan until the resource manager
// commits or discards it (or it expires). Committing writes the plan's decisions into the
// store, rejecting by name those that conflict with changes made since the plan's revision.
//
// The engine imports no plugin and no gRPC code: plugins and actions reach it through a
// framework.Registry.
package engine

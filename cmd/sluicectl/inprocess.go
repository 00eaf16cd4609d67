package main

import (
	"context"

	"github.com/sluice-sched/sluice/cmd/builtin"
	"github.com/sluice-sched/sluice/service"
)

// startInProcess starts a complete Sluice server (fresh store, every built-in action and
// plugin, the embedded default configuration) on a loopback port for "scenario run" without
// --server, returning its address and a function that stops it.
var startInProcess = func() (addr string, stop func(), err error) {
	return service.StartInProcess(context.Background(), builtin.Registry())
}

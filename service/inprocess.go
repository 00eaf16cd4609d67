package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/sluice-sched/sluice/engine"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/state"
)

// GracefulStopTimeout is how long a stop waits for calls in progress before it cuts them off.
const GracefulStopTimeout = 10 * time.Second

// StartInProcess starts a complete server on 127.0.0.1 with a fresh in-memory store and an
// engine with the registry's actions and plugins (cmd/builtin.Registry has every built-in
// one) and the embedded default configuration. It
// returns the server's address and a function that stops it (draining streams, then a
// graceful stop bounded by GracefulStopTimeout); cancelling ctx stops it too. The server
// logs nothing. Each tweak may change the server's Options (message size bounds, say)
// before it starts; Store and Engine are set already.
func StartInProcess(ctx context.Context, reg *framework.Registry, tweaks ...func(*Options)) (addr string, stop func(), err error) {
	store := state.New()
	eng, err := engine.New(store, engine.Options{Registry: reg})
	if err != nil {
		return "", nil, fmt.Errorf("service: %w", err)
	}
	opts := Options{Store: store, Engine: eng, Logger: slog.New(slog.DiscardHandler)}
	for _, tweak := range tweaks {
		tweak(&opts)
	}
	srv := New(opts)
	var lc net.ListenConfig
	lis, err := lc.Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("service: listen: %w", err)
	}
	gs := NewGRPCServer(srv)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = gs.Serve(lis)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			srv.Shutdown()
			GracefulStop(gs, GracefulStopTimeout)
			<-served
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			stop()
		case <-served:
		}
	}()
	return lis.Addr().String(), stop, nil
}

// GracefulStop stops gs gracefully, waiting at most timeout for calls in progress, then
// stops it hard. Call Server.Shutdown first so that streams do not hold it up.
func GracefulStop(gs interface {
	GracefulStop()
	Stop()
}, timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		gs.GracefulStop()
		close(done)
	}()
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		gs.Stop()
		<-done
	}
}

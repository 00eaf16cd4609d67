package service

import (
	"context"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/sluice-sched/sluice/engine"
)

// ReloadConfig validates text (Volcano scheduler-conf YAML) as the server's configuration and,
// when it is valid, makes it the engine's default: the configuration of every cluster that has
// none of its own (set through UpdateSchedulerConfig, which the store keeps), from the next
// cycle on; cycles that already started keep the configuration they started with. On error (a
// *engine.ConfigError) nothing changes. Reloading the text in force is a no-op.
func (s *Server) ReloadConfig(text []byte) error {
	if max := s.limits.MaxConfigBytes; len(text) > max {
		s.metrics.reloads.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", "refused")))
		return &engine.ConfigError{Msg: fmt.Sprintf("the configuration is %d bytes, more than the limit of %d (%s)", len(text), max, LimitConfigBytes)}
	}
	cfg, err := s.engine.ParseConfig(text)
	if err != nil {
		s.metrics.reloads.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", "refused")))
		return err
	}
	s.metrics.reloads.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", "applied")))
	if s.engine.SetDefaultConfig(cfg) {
		// A new configuration is a reason for a new cycle.
		s.changes.notifyAll()
	}
	return nil
}

// changeHub tells the watches of a cluster that its state or configuration changed.
type changeHub struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

func newChangeHub() *changeHub { return &changeHub{subs: map[string]map[chan struct{}]struct{}{}} }

// subscribe returns a channel that receives (coalesced) change signals for a cluster, and
// the function that ends the subscription.
func (h *changeHub) subscribe(cluster string) (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	h.mu.Lock()
	if h.subs[cluster] == nil {
		h.subs[cluster] = map[chan struct{}]struct{}{}
	}
	h.subs[cluster][ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs[cluster], ch)
		if len(h.subs[cluster]) == 0 {
			delete(h.subs, cluster)
		}
		h.mu.Unlock()
	}
}

// notify signals a cluster's subscribers without blocking.
func (h *changeHub) notify(cluster string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs[cluster] {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// notifyAll signals every subscriber.
func (h *changeHub) notifyAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, subs := range h.subs {
		for ch := range subs {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	}
}

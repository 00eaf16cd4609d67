package service

import (
	"bytes"
	"context"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// configOverlay is the server's scheduler configuration as reloaded from its file (sluiced
// --config), laid over the engine's default: a reload becomes the configuration of every
// cluster that has none of its own, as each cluster is next used. A configuration set through
// UpdateSchedulerConfig pins the cluster: reloads no longer touch it.
type configOverlay struct {
	mu sync.Mutex
	// gen counts reloads; 0 means none, and the engine's default applies.
	gen     uint64
	text    []byte
	applied map[string]uint64
	pinned  map[string]bool
	// updates counts UpdateSchedulerConfig calls per cluster.
	updates map[string]uint64
}

func newConfigOverlay() *configOverlay {
	return &configOverlay{applied: map[string]uint64{}, pinned: map[string]bool{}, updates: map[string]uint64{}}
}

// ReloadConfig validates text (Volcano scheduler-conf YAML) as the server's configuration and,
// when it is valid, makes it the configuration of every cluster that has none of its own
// (set through UpdateSchedulerConfig); cycles that already started keep the configuration
// they started with. On error (wrapping engine.ErrInvalidConfig, with the reason) nothing
// changes. Reloading the text in force is a no-op.
func (s *Server) ReloadConfig(text []byte) error {
	if _, err := s.engine.ParseConfig(text); err != nil {
		s.metrics.reloads.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", "refused")))
		return err
	}
	s.cfg.mu.Lock()
	same := s.cfg.gen > 0 && bytes.Equal(s.cfg.text, text)
	if !same {
		s.cfg.gen++
		s.cfg.text = bytes.Clone(text)
	}
	s.cfg.mu.Unlock()
	s.metrics.reloads.Add(context.Background(), 1, metric.WithAttributes(attribute.String("result", "applied")))
	if !same {
		// A new configuration is a reason for a new cycle.
		s.changes.notifyAll()
	}
	return nil
}

// syncConfig brings a cluster's configuration up to date with the last reload.
func (s *Server) syncConfig(cluster string) error {
	c := s.cfg
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen == 0 || c.pinned[cluster] || c.applied[cluster] == c.gen {
		return nil
	}
	if _, err := s.engine.SetConfig(cluster, c.text); err != nil {
		return err
	}
	c.applied[cluster] = c.gen
	return nil
}

// setClusterConfig installs a cluster's own configuration and pins it.
func (s *Server) setClusterConfig(cluster string, text []byte) error {
	c := s.cfg
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := s.engine.SetConfig(cluster, text); err != nil {
		return err
	}
	c.pinned[cluster] = true
	c.updates[cluster]++
	return nil
}

// configVersion changes whenever the configuration a cluster's cycles use may have changed.
func (s *Server) configVersion(cluster string) uint64 {
	c := s.cfg
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen + c.updates[cluster]
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

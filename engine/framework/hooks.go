package framework

import (
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// hook holds one kind of callback: what each plugin registered, and, once every plugin has
// opened, the enabled callbacks grouped by tier in configuration order.
type hook[F any] struct {
	flag   conf.Flag
	gated  bool // false: the callback has no enable flag and is always on
	byName map[string]F
	tiers  [][]F
	// enabled names the plugins whose callbacks are in tiers, in order.
	enabled []string
}

func newHook[F any](flag conf.Flag) *hook[F] {
	return &hook[F]{flag: flag, gated: true, byName: map[string]F{}}
}

func newUngatedHook[F any]() *hook[F] {
	return &hook[F]{byName: map[string]F{}}
}

func (h *hook[F]) add(plugin string, fn F) { h.byName[plugin] = fn }

// build groups the registered callbacks by tier, keeping only enabled ones.
func (h *hook[F]) build(tiers []conf.Tier) {
	h.tiers = h.tiers[:0]
	h.enabled = h.enabled[:0]
	for _, t := range tiers {
		var fns []F
		for _, p := range t.Plugins {
			fn, ok := h.byName[p.Name]
			if !ok || (h.gated && !p.Enabled(h.flag)) {
				continue
			}
			fns = append(fns, fn)
			h.enabled = append(h.enabled, p.Name)
		}
		h.tiers = append(h.tiers, fns)
	}
}

func (h *hook[F]) empty() bool {
	for _, t := range h.tiers {
		if len(t) > 0 {
			return false
		}
	}
	return true
}

// Generic dispatchers, one per way of combining callbacks across tiers.

// firstNonZero returns the first non-zero comparison over all tiers (order functions).
func firstNonZero[F any](h *hook[F], call func(F) int) int {
	for _, t := range h.tiers {
		for _, fn := range t {
			if c := call(fn); c != 0 {
				return c
			}
		}
	}
	return 0
}

// firstError returns the first error over all tiers (predicates: first reject wins).
func firstError[F any](h *hook[F], call func(F) error) error {
	for _, t := range h.tiers {
		for _, fn := range t {
			if err := call(fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// allTrue is false as soon as one callback says false (ready, allocatable, preemptive).
func allTrue[F any](h *hook[F], call func(F) bool) bool {
	for _, t := range h.tiers {
		for _, fn := range t {
			if !call(fn) {
				return false
			}
		}
	}
	return true
}

// anyTrue is true as soon as one callback says true (overused).
func anyTrue[F any](h *hook[F], call func(F) bool) bool {
	for _, t := range h.tiers {
		for _, fn := range t {
			if call(fn) {
				return true
			}
		}
	}
	return false
}

// firstTierDecides lets the first tier with any callback decide by AND; with no callback at
// all the answer is dflt (starving).
func firstTierDecides[F any](h *hook[F], dflt bool, call func(F) bool) bool {
	for _, t := range h.tiers {
		if len(t) == 0 {
			continue
		}
		for _, fn := range t {
			if !call(fn) {
				return false
			}
		}
		return true
	}
	return dflt
}

// Vote is a plugin's answer to a yes/no question that it may abstain from.
type Vote int

// Votes.
const (
	Reject  Vote = -1
	Abstain Vote = 0
	Permit  Vote = 1
)

// vote combines votes: any Reject rejects; a tier with a Permit (and no Reject) permits
// without asking later tiers; if every callback abstains the answer is permit.
func vote[F any](h *hook[F], call func(F) Vote) bool {
	for _, t := range h.tiers {
		permit := false
		for _, fn := range t {
			switch call(fn) {
			case Reject:
				return false
			case Permit:
				permit = true
			}
		}
		if permit {
			return true
		}
	}
	return true
}

// victimsIntersect intersects the victims that each callback of a tier chooses. A callback
// that abstains is skipped; one that chooses nobody empties the tier's result; the first tier
// with a non-nil result decides.
func victimsIntersect[F any](h *hook[F], call func(F) ([]*api.TaskInfo, Vote)) []*api.TaskInfo {
	for _, t := range h.tiers {
		var victims []*api.TaskInfo
		init := false
		for _, fn := range t {
			cands, v := call(fn)
			if v == Abstain {
				continue
			}
			if len(cands) == 0 {
				victims = nil
				init = true
				break
			}
			if !init {
				victims = cands
				init = true
				continue
			}
			keep := make(map[string]struct{}, len(cands))
			for _, c := range cands {
				keep[c.UID] = struct{}{}
			}
			var inter []*api.TaskInfo
			for _, v := range victims {
				if _, ok := keep[v.UID]; ok {
					inter = append(inter, v)
				}
			}
			victims = inter
		}
		if victims != nil {
			return victims
		}
	}
	return nil
}

// sumScores adds up scores over all tiers (node order).
func sumScores[F any](h *hook[F], call func(F) (float64, error)) (float64, error) {
	total := 0.0
	for _, t := range h.tiers {
		for _, fn := range t {
			s, err := call(fn)
			if err != nil {
				return 0, err
			}
			total += s
		}
	}
	return total, nil
}

// each calls every enabled callback in order.
func each[F any](h *hook[F], call func(F)) {
	for _, t := range h.tiers {
		for _, fn := range t {
			call(fn)
		}
	}
}

// firstNonNil returns the first non-nil result over all tiers.
func firstNonNil[F any, R any](h *hook[F], call func(F) *R) *R {
	for _, t := range h.tiers {
		for _, fn := range t {
			if r := call(fn); r != nil {
				return r
			}
		}
	}
	return nil
}

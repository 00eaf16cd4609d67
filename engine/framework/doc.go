// Package framework is the scheduling session: one cycle's mutable view of a cluster snapshot,
// the typed callbacks that plugins register on it, the generic dispatchers that combine those
// callbacks across configuration tiers with Volcano's rules, and the Statement through which
// actions make tentative decisions that commit or discard as a unit.
//
// The framework knows no plugin and no action: both reach it through a Registry that the
// caller fills.
package framework

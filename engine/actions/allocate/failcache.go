package allocate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/framework"
)

// failureCache remembers, within one job's allocation, the fit errors of tasks that fitted
// on no node, keyed by everything that decides fitting. Volcano skips every later task of the
// same role; Sluice skips only a task identical in request and constraints, and never one
// whose fit could change as other tasks are placed (task affinity, topology spread, devices,
// ports), because placements within a job only take room away for everything else.
type failureCache struct {
	byKey map[string]*api.FitErrors
}

func newFailureCache() *failureCache { return &failureCache{byKey: map[string]*api.FitErrors{}} }

// lookup returns the fit errors of an identical task that fitted nowhere. Tasks of a placement
// class skip this cache: the node cache answers for them, soundly and as fast.
func (c *failureCache) lookup(ssn *framework.Session, t *api.TaskInfo) *api.FitErrors {
	if len(c.byKey) == 0 {
		return nil
	}
	if _, ok := ssn.TaskClass(t); ok {
		return nil
	}
	k, ok := equivalenceKey(t)
	if !ok {
		return nil
	}
	return c.byKey[k]
}

func (c *failureCache) record(ssn *framework.Session, t *api.TaskInfo, fe *api.FitErrors) {
	if _, ok := ssn.TaskClass(t); ok {
		return
	}
	if k, ok := equivalenceKey(t); ok {
		c.byKey[k] = fe
	}
}

// equivalenceKey describes what decides whether a task fits; ok is false for tasks whose fit
// may improve as other tasks are placed.
func equivalenceKey(t *api.TaskInfo) (string, bool) {
	s := t.Spec
	if s == nil {
		return "", false
	}
	if (s.Affinity != nil && (len(s.Affinity.TaskAffinity) > 0 || len(s.Affinity.TaskAntiAffinity) > 0)) ||
		len(s.TopologySpread) > 0 || len(s.Devices) > 0 || len(s.Ports) > 0 {
		return "", false
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s|%d|%s|", t.Role, t.Priority, t.Resreq)
	writeMap(&b, s.NodeSelector)
	for _, tol := range s.Tolerations {
		fmt.Fprintf(&b, "t:%s/%s/%s/%s;", tol.Key, tol.Operator, tol.Value, tol.Effect)
	}
	if s.Affinity != nil {
		fmt.Fprintf(&b, "a:%v;%v", s.Affinity.NodeRequired, s.Affinity.NodePreferred)
	}
	b.WriteString("|l:")
	writeMap(&b, s.Labels)
	b.WriteString("|n:")
	writeMap(&b, s.Annotations)
	return b.String(), true
}

func writeMap(b *strings.Builder, m map[string]string) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "%s=%s,", k, m[k])
	}
}

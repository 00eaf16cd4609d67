package nodegroup

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/plugins/internal/quantity"
)

// AnnotationResourceLimits is the queue annotation that caps the queue per node group.
const AnnotationResourceLimits = "volcano.sh/nodegroup-resource-limits"

// groupLimit caps the resources named in names (cpu and memory first, then sorted).
type groupLimit struct {
	amount *api.Resource
	names  []string
}

// parseLimits reads the annotation: a JSON object from group to a resource list whose
// quantities are strings or numbers. An empty annotation is no limit.
func parseLimits(raw string) (map[string]groupLimit, error) {
	if raw == "" {
		return nil, nil
	}
	var lists map[string]map[string]any
	dec := json.NewDecoder(bytes.NewReader([]byte(raw)))
	dec.UseNumber()
	if err := dec.Decode(&lists); err != nil {
		return nil, fmt.Errorf("annotation %s: %w", AnnotationResourceLimits, err)
	}
	out := make(map[string]groupLimit, len(lists))
	for group, list := range lists {
		l := groupLimit{amount: api.EmptyResource()}
		for name, q := range list {
			v, err := quantityValue(q)
			if err != nil {
				return nil, fmt.Errorf("annotation %s: group %s: %s: %w", AnnotationResourceLimits, group, name, err)
			}
			switch name {
			case api.ResourceCPU:
				l.amount.MilliCPU = math.Ceil(v * 1000)
			case api.ResourceMemory:
				l.amount.Memory = math.Ceil(v)
			case api.ResourcePods:
				l.amount.MaxTaskNum = int(v)
			default:
				l.amount.SetScalar(name, math.Ceil(v*1000))
			}
			l.names = append(l.names, name)
		}
		sortNames(l.names)
		out[group] = l
	}
	return out, nil
}

// sortNames orders resource names cpu, memory, then the others by name.
func sortNames(names []string) {
	rank := func(n string) int {
		switch n {
		case api.ResourceCPU:
			return 0
		case api.ResourceMemory:
			return 1
		}
		return 2
	}
	sort.Slice(names, func(i, j int) bool {
		if ri, rj := rank(names[i]), rank(names[j]); ri != rj {
			return ri < rj
		}
		return names[i] < names[j]
	})
}

// exceeded returns the capped resources of the group that the queue's allocation plus req
// would exceed, comma-separated, or "" when the task fits (or the group is not capped). It
// allocates only when something is exceeded.
func (attr *queueAttr) exceeded(group string, req *api.Resource) string {
	l, ok := attr.limits[group]
	if !ok {
		return ""
	}
	held := attr.allocated[group]
	var out []string
	for _, name := range l.names {
		used := req.Get(name)
		if held != nil {
			used += held.Get(name)
		}
		if limit := l.amount.Get(name); used > limit && used-limit >= api.MinResource {
			out = append(out, name)
		}
	}
	return strings.Join(out, ", ")
}

// quantityValue reads a JSON quantity: a string or a number, as Kubernetes' Quantity accepts.
func quantityValue(q any) (float64, error) {
	switch x := q.(type) {
	case string:
		return quantity.Parse(x)
	case json.Number:
		return quantity.Parse(x.String())
	}
	return 0, fmt.Errorf("want a quantity, got %v", q)
}

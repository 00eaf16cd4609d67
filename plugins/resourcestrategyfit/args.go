package resourcestrategyfit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
)

// Argument names, as Volcano spells them.
const (
	ArgWeight       = "resourceStrategyFitWeight"
	ArgResources    = "resources"
	ArgSRA          = "sra"
	ArgProportional = "proportional"
)

// Scoring types.
const (
	MostAllocated  = "MostAllocated"
	LeastAllocated = "LeastAllocated"
)

// defaultWeight is the strategy weight when none (or a negative one) is given.
const defaultWeight = 10

// strategy is one resource's (or wildcard's) scoring configuration.
type strategy struct {
	most   bool
	weight int
}

// strategies holds the per-resource configurations: exact names, and wildcard prefixes
// longest first so that the first match is the most specific.
type strategies struct {
	exact    map[string]strategy
	prefixes []prefixStrategy
}

type prefixStrategy struct {
	prefix string
	strategy
}

// lookup returns a resource's configuration: its exact name first, else the wildcard with
// the longest matching prefix.
func (s *strategies) lookup(name string) (strategy, bool) {
	if st, ok := s.exact[name]; ok {
		return st, true
	}
	for _, p := range s.prefixes {
		if strings.HasPrefix(name, p.prefix) {
			return p.strategy, true
		}
	}
	return strategy{}, false
}

// sraConfig is the scarce-resource-avoidance policy.
type sraConfig struct {
	weight int
	// resources are the scarce resources in name order, with their weights.
	resources []string
	weights   []int
	weightSum int
}

// ratio is what a proportional resource keeps in reserve per unit: cores and GB.
type ratio struct{ cpu, memory float64 }

// proportionalConfig maps each proportional resource, in name order, to its ratio.
type proportionalConfig struct {
	resources []string
	ratios    []ratio
}

// settings are the plugin's parsed arguments.
type settings struct {
	weight       int
	strategies   strategies
	sra          sraConfig
	proportional *proportionalConfig // nil when disabled
}

func parseSettings(args conf.Arguments) (settings, error) {
	var s settings
	w, err := args.Int(ArgWeight, defaultWeight)
	if err != nil {
		return s, err
	}
	if w < 0 {
		w = defaultWeight
	}
	s.weight = w
	if s.strategies, err = parseStrategies(args); err != nil {
		return s, err
	}
	if s.sra, err = parseSRA(args); err != nil {
		return s, err
	}
	if s.proportional, err = parseProportional(args); err != nil {
		return s, err
	}
	return s, nil
}

// section returns a nested mapping argument, nil when it is missing.
func section(args conf.Arguments, key string) (conf.Arguments, error) {
	v, ok := args[key]
	if !ok || v == nil {
		return nil, nil
	}
	switch m := v.(type) {
	case map[string]any:
		return conf.Arguments(m), nil
	case conf.Arguments:
		return m, nil
	}
	return nil, fmt.Errorf("argument %q: want a mapping, got %v", key, v)
}

func parseStrategies(args conf.Arguments) (strategies, error) {
	s := strategies{exact: map[string]strategy{}}
	res, err := section(args, ArgResources)
	if err != nil {
		return s, err
	}
	if len(res) == 0 {
		s.exact[api.ResourceCPU] = strategy{weight: 1}
		s.exact[api.ResourceMemory] = strategy{weight: 1}
		return s, nil
	}
	for _, name := range res.Keys() {
		path := ArgResources + "." + name
		entry, err := section(res, name)
		if err != nil {
			return s, fmt.Errorf("%s: %w", ArgResources, err)
		}
		typ, err := entry.String("type", LeastAllocated)
		if err != nil {
			return s, fmt.Errorf("%s: %w", path, err)
		}
		w, err := entry.Int("weight", 1)
		if err != nil {
			return s, fmt.Errorf("%s: %w", path, err)
		}
		st := strategy{most: typ == MostAllocated, weight: max(w, 1)}
		if !strings.Contains(name, "*") {
			s.exact[name] = st
			continue
		}
		if name == "*" || !strings.HasSuffix(name, "*") || strings.Count(name, "*") != 1 {
			return s, fmt.Errorf("argument %q: invalid wildcard %q: only one trailing '*' after a prefix is supported, e.g. nvidia.com/*", ArgResources, name)
		}
		s.prefixes = append(s.prefixes, prefixStrategy{prefix: strings.TrimSuffix(name, "*"), strategy: st})
	}
	sort.SliceStable(s.prefixes, func(i, j int) bool { return len(s.prefixes[i].prefix) > len(s.prefixes[j].prefix) })
	return s, nil
}

// splitResources splits a comma-separated list, trimming blanks and dropping empty names,
// in the order given (duplicates kept).
func splitResources(list string) []string {
	var out []string
	for _, r := range strings.Split(list, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, r)
		}
	}
	return out
}

func parseSRA(args conf.Arguments) (sraConfig, error) {
	var c sraConfig
	sec, err := section(args, ArgSRA)
	if err != nil || sec == nil {
		return c, err
	}
	enable, err := sec.Bool("enable", false)
	if err != nil {
		return c, fmt.Errorf("%s: %w", ArgSRA, err)
	}
	list, err := sec.String("resources", "")
	if err != nil {
		return c, fmt.Errorf("%s: %w", ArgSRA, err)
	}
	weight, err := sec.Int("weight", 0)
	if err != nil {
		return c, fmt.Errorf("%s: %w", ArgSRA, err)
	}
	rw, err := section(sec, "resourceWeight")
	if err != nil {
		return c, fmt.Errorf("%s: %w", ArgSRA, err)
	}
	if !enable {
		return c, nil
	}
	c.weight = weight
	seen := map[string]bool{}
	for _, r := range splitResources(list) {
		w, err := rw.Int(r, 1)
		if err != nil {
			return c, fmt.Errorf("%s.resourceWeight: %w", ArgSRA, err)
		}
		if w < 0 {
			w = 1
		}
		// As in Volcano, a resource listed twice counts twice in the total.
		c.weightSum += w
		if !seen[r] {
			seen[r] = true
			c.resources = append(c.resources, r)
			c.weights = append(c.weights, w)
		}
	}
	return c, nil
}

func parseProportional(args conf.Arguments) (*proportionalConfig, error) {
	sec, err := section(args, ArgProportional)
	if err != nil || sec == nil {
		return nil, err
	}
	enable, err := sec.Bool("enable", false)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ArgProportional, err)
	}
	list, err := sec.String("resources", "")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ArgProportional, err)
	}
	props, err := section(sec, "resourceProportion")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ArgProportional, err)
	}
	if !enable {
		return nil, nil
	}
	c := &proportionalConfig{}
	seen := map[string]bool{}
	for _, r := range splitResources(list) {
		if seen[r] {
			continue
		}
		seen[r] = true
		var rt ratio
		for _, d := range []struct {
			suffix string
			dst    *float64
		}{{".cpu", &rt.cpu}, {".memory", &rt.memory}} {
			v, err := props.Float64(r+d.suffix, 1)
			if err != nil {
				return nil, fmt.Errorf("%s.resourceProportion: %w", ArgProportional, err)
			}
			if v < 0 {
				v = 1
			}
			*d.dst = v
		}
		c.resources = append(c.resources, r)
		c.ratios = append(c.ratios, rt)
	}
	sort.Sort(byResource{c})
	return c, nil
}

// byResource sorts a proportional configuration by resource name.
type byResource struct{ c *proportionalConfig }

func (b byResource) Len() int           { return len(b.c.resources) }
func (b byResource) Less(i, j int) bool { return b.c.resources[i] < b.c.resources[j] }
func (b byResource) Swap(i, j int) {
	b.c.resources[i], b.c.resources[j] = b.c.resources[j], b.c.resources[i]
	b.c.ratios[i], b.c.ratios[j] = b.c.ratios[j], b.c.ratios[i]
}

package usage

import (
	"fmt"
	"math"

	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/plugins/internal/quantity"
)

// Keys of the thresholds and estimator sections.
const (
	keyCPU           = "cpu"
	keyMem           = "mem"
	keyMemory        = "memory"
	keyRequestRatio  = "request_ratio"
	keyBurstRatio    = "burst_ratio"
	keyRiskThreshold = "risk_threshold"
	keyRiskFactor    = "risk_factor"
	keyBECPU         = "be_cpu"
	keyBEMem         = "be_mem"
	keyBEMemory      = "be_memory"
)

func defaults() settings {
	return settings{
		usageWeight: 5, cpuWeight: 1, memoryWeight: 1,
		cpuThreshold: 80, memThreshold: 80,
		requestRatio: 0.7, burstRatio: 0, riskThreshold: 0.6, riskFactor: 1.2,
		beCPU: 250, beMemory: 200 << 20,
	}
}

func parseSettings(args conf.Arguments) (settings, error) {
	s := defaults()
	var err error
	for _, a := range []struct {
		key string
		dst *int
	}{{ArgUsageWeight, &s.usageWeight}, {ArgCPUWeight, &s.cpuWeight}, {ArgMemoryWeight, &s.memoryWeight}} {
		if *a.dst, err = args.Int(a.key, *a.dst); err != nil {
			return s, err
		}
	}

	th, err := section(args, ArgThresholds)
	if err != nil {
		return s, err
	}
	if s.cpuThreshold, err = bounded(th, ArgThresholds, keyCPU, s.cpuThreshold, 0, 100); err != nil {
		return s, err
	}
	// Volcano reads only "mem"; "memory", the name api.Node.Usage uses, is accepted too and
	// "mem" wins when both are given.
	memKey := keyMem
	if _, ok := th[keyMem]; !ok {
		memKey = keyMemory
	}
	if s.memThreshold, err = bounded(th, ArgThresholds, memKey, s.memThreshold, 0, 100); err != nil {
		return s, err
	}

	est, err := section(args, ArgEstimator)
	if err != nil {
		return s, err
	}
	for _, b := range []struct {
		key      string
		dst      *float64
		min, max float64
	}{
		{keyRequestRatio, &s.requestRatio, 0, 1},
		{keyBurstRatio, &s.burstRatio, 0, 1},
		{keyRiskThreshold, &s.riskThreshold, 0, 1},
		{keyRiskFactor, &s.riskFactor, 1, math.Inf(1)},
	} {
		if *b.dst, err = bounded(est, ArgEstimator, b.key, *b.dst, b.min, b.max); err != nil {
			return s, err
		}
	}
	if s.beCPU, err = quantityArg(est, keyBECPU, s.beCPU, 1000); err != nil {
		return s, err
	}
	beMemKey := keyBEMem
	if _, ok := est[keyBEMem]; !ok {
		beMemKey = keyBEMemory
	}
	if s.beMemory, err = quantityArg(est, beMemKey, s.beMemory, 1); err != nil {
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

// bounded reads a number of a section that must lie in [lo, hi].
func bounded(sec conf.Arguments, section, key string, def, lo, hi float64) (float64, error) {
	v, err := sec.Float64(key, def)
	if err != nil {
		return def, fmt.Errorf("%s: %w", section, err)
	}
	if v < lo || v > hi {
		return def, fmt.Errorf("%s: argument %q: %g is outside [%g, %g]", section, key, v, lo, hi)
	}
	return v, nil
}

// quantityArg reads a non-negative Kubernetes quantity of the estimator section, as a number of
// base units times scale (1000 for milli-CPU, 1 for bytes). A bare number is a quantity too
// (1 is one core, or one byte).
func quantityArg(sec conf.Arguments, key string, def, scale float64) (float64, error) {
	v, ok := sec[key]
	if !ok || v == nil {
		return def, nil
	}
	var q float64
	var err error
	switch x := v.(type) {
	case int:
		q = float64(x)
	case float64:
		q = x
	case string:
		q, err = quantity.Parse(x)
	default:
		err = fmt.Errorf("want a quantity, got %v", v)
	}
	if err == nil && q < 0 {
		err = fmt.Errorf("want a non-negative quantity, got %v", v)
	}
	if err != nil {
		return def, fmt.Errorf("%s: argument %q: %w", ArgEstimator, key, err)
	}
	return math.Ceil(q * scale), nil
}

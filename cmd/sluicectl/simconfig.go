package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/sluice-sched/sluice/clients/go/scenario"
	"github.com/sluice-sched/sluice/engine/api"
	"github.com/sluice-sched/sluice/engine/conf"
	"github.com/sluice-sched/sluice/engine/framework"
	"github.com/sluice-sched/sluice/engine/sim"
	sluicev1 "github.com/sluice-sched/sluice/gen/go/sluice/v1"
	"github.com/sluice-sched/sluice/service"
)

// simConfigs reads every --config, or gives the embedded default (or, with --from-server,
// the server's configuration when the token may read it).
func (a *app) simConfigs(o *simOptions, reg *framework.Registry) ([]sim.Config, error) {
	if len(o.configs) == 0 {
		if o.fromServer {
			if cfg, err := a.serverConfig(reg); err == nil {
				return []sim.Config{{Name: "server", Scheduler: cfg}}, nil
			} else {
				fmt.Fprintf(a.stderr, "simulate: the server's configuration could not be read (%v); using the embedded default\n", err)
			}
		}
		return []sim.Config{{Name: "default", Scheduler: conf.Default()}}, nil
	}
	var out []sim.Config
	names := map[string]string{}
	for _, file := range o.configs {
		c, err := readSimConfig(file, reg)
		if err != nil {
			return nil, fmt.Errorf("simulate: --config %s: %w", file, err)
		}
		if prev, ok := names[c.Name]; ok {
			return nil, fmt.Errorf("simulate: --config %s: configuration name %q is also %s's: give each a name of its own", file, c.Name, prev)
		}
		names[c.Name] = file
		out = append(out, c)
	}
	return out, nil
}

func (a *app) serverConfig(reg *framework.Registry) (*conf.Config, error) {
	conn, err := a.dial()
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	r, err := sluicev1.NewSchedulerServiceClient(conn).GetSchedulerConfig(a.ctx, &sluicev1.GetSchedulerConfigRequest{Cluster: a.cluster})
	if err != nil {
		return nil, err
	}
	cfg, err := conf.Parse([]byte(r.GetConfig()))
	if err == nil {
		err = reg.Validate(cfg)
	}
	return cfg, err
}

// simConfigKeys are the keys of a simulation config (any other top-level key makes the
// file a plain scheduler-conf).
var simConfigKeys = []string{"name", "scheduler", "queues"}

// readSimConfig reads a configuration file: Volcano scheduler-conf YAML, named after the
// file, or a simulation config: a mapping with "scheduler" (the scheduler-conf, as a mapping
// or as text), and optionally "name" and "queues" (queues in the cluster-file form that
// replace the cluster's queues of the same names, to compare queue weights or capacities).
func readSimConfig(file string, reg *framework.Registry) (sim.Config, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return sim.Config{}, err
	}
	name := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	var top map[string]yaml.Node
	if yaml.Unmarshal(data, &top) == nil && top["scheduler"].Kind != 0 {
		for k := range top {
			if !slices.Contains(simConfigKeys, k) {
				return sim.Config{}, fmt.Errorf("unknown key %q in a simulation config (allowed: %s)", k, strings.Join(simConfigKeys, ", "))
			}
		}
		return readWrappedConfig(file, name, top, reg)
	}
	cfg, err := parseSchedulerConf(data, reg)
	return sim.Config{Name: name, Scheduler: cfg}, err
}

func readWrappedConfig(file, name string, top map[string]yaml.Node, reg *framework.Registry) (sim.Config, error) {
	if n, ok := top["name"]; ok {
		if n.Kind != yaml.ScalarNode || n.Value == "" || strings.ContainsAny(n.Value, ",\n\"") {
			return sim.Config{}, fmt.Errorf("line %d: name must be a plain string", n.Line)
		}
		name = n.Value
	}
	sched := top["scheduler"]
	var text []byte
	if sched.Kind == yaml.ScalarNode {
		text = []byte(sched.Value)
	} else {
		var err error
		if text, err = yaml.Marshal(&sched); err != nil {
			return sim.Config{}, err
		}
	}
	cfg, err := parseSchedulerConf(text, reg)
	if err != nil {
		return sim.Config{}, fmt.Errorf("scheduler (from line %d): %w", sched.Line, err)
	}
	c := sim.Config{Name: name, Scheduler: cfg}
	if qn, ok := top["queues"]; ok {
		text, err := yaml.Marshal(map[string]*yaml.Node{"queues": &qn})
		if err != nil {
			return sim.Config{}, err
		}
		cl, err := scenario.ParseClusterPartial(file+" queues", text)
		if err != nil {
			return sim.Config{}, withLine(err)
		}
		b, err := service.DecodeBatch(cl.Batch(), api.Epoch)
		if err != nil {
			return sim.Config{}, fmt.Errorf("queues: %w", err)
		}
		for _, ch := range b.Changes {
			if ch.Queue != nil {
				c.Queues = append(c.Queues, ch.Queue)
			}
		}
	}
	return c, nil
}

func parseSchedulerConf(text []byte, reg *framework.Registry) (*conf.Config, error) {
	cfg, err := conf.Parse(text)
	if err != nil {
		return nil, err
	}
	if err := reg.Validate(cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

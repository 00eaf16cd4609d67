package scenario

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// ClusterFile is what a client such as "sluicectl apply" reads: a cluster, and when the
// file is a whole scenario, its name and scheduler configuration.
type ClusterFile struct {
	// Cluster holds the objects, ready to send.
	Cluster *Cluster
	// Scenario is the scenario's name; empty for a plain cluster file (or a scenario
	// without one).
	Scenario string
	// Config is a scenario's scheduler configuration (Volcano YAML); empty for a plain
	// cluster file.
	Config string
	// IsScenario is true when the file has any key of a scenario besides cluster (name,
	// config, expect, ...).
	IsScenario bool
}

// scenarioOnlyKeys are the top-level keys that make a file with a cluster key a scenario.
var scenarioOnlyKeys = []string{"name", "description", "config", "now", "cycleSeconds", "cycles", "expect"}

// ParseCluster decodes the cluster of a file (see [ParseClusterFile]). Every reference
// must name an object declared in the file.
func ParseCluster(path string, data []byte) (*Cluster, error) {
	f, err := parseClusterFile(path, data, true)
	if err != nil {
		return nil, err
	}
	return f.Cluster, nil
}

// ParseClusterPartial is ParseCluster for a file that adds to a cluster already on a
// server: references to nodes, queues, priority classes and hypernodes that the file does
// not declare are left for the server to check. Everything else is checked as strictly as
// by ParseCluster.
func ParseClusterPartial(path string, data []byte) (*Cluster, error) {
	f, err := parseClusterFile(path, data, false)
	if err != nil {
		return nil, err
	}
	return f.Cluster, nil
}

// ParseClusterFile decodes a file that holds a cluster in one of three shapes:
//
//   - a plain cluster file: a mapping of a scenario's cluster keys (priorityClasses,
//     queues, hypernodes, quotas, disruptionBudgets, nodes, jobs);
//   - the same under a top-level cluster key, with no other key;
//   - a scenario: a top-level cluster key beside any of name, description, config, now,
//     cycleSeconds, cycles and expect. Its cluster is decoded first, so that a problem
//     there is reported before a missing key elsewhere; name, config and expect are
//     optional here (Parse requires them), and checked when present.
//
// Unknown keys are errors, with their path. checkRefs says whether every reference must
// name an object the file declares (false for a file that adds to a cluster on a server).
func ParseClusterFile(path string, data []byte, checkRefs bool) (*ClusterFile, error) {
	return parseClusterFile(path, data, checkRefs)
}

func parseClusterFile(path string, data []byte, checkRefs bool) (cf *ClusterFile, err error) {
	d := &decoder{file: path}
	defer catch(&err)
	root := d.document(data)
	n := deref(root)
	if n.Kind != yaml.MappingNode || !hasKey(n, "cluster") {
		c, _ := d.cluster(root, "", checkRefs)
		return &ClusterFile{Cluster: c}, nil
	}
	f := d.mapping(root, "", topKeys...)
	cf = &ClusterFile{}
	var idx *index
	cf.Cluster, idx = d.cluster(f.get("cluster"), "cluster", checkRefs)
	for _, k := range f.order {
		if slices.Contains(scenarioOnlyKeys, k) {
			cf.IsScenario = true
		}
	}
	if !cf.IsScenario {
		return cf, nil
	}
	if f.has("name") {
		cf.Scenario = d.name(f.get("name"), "name")
		if !scenarioName.MatchString(cf.Scenario) {
			d.failf(f.get("name"), "name", "invalid name %q (expected kebab-case: lower-case letters, digits and dashes)", cf.Scenario)
		}
	}
	f.optStr("description", "")
	if f.has("config") {
		cf.Config = f.str("config")
		if strings.TrimSpace(cf.Config) == "" {
			d.failf(f.get("config"), "config", "must not be empty (expected the scheduler configuration as text)")
		}
	}
	f.optFloat("now", 0, 0)
	f.optFloat("cycleSeconds", 1, 0)
	f.optInt("cycles", 1, 1, 10000)
	if f.has("expect") {
		d.expect(f.get("expect"), "expect", idx)
	}
	return cf, nil
}

// hasKey reports whether mapping n has key.
func hasKey(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if deref(n.Content[i]).Value == key {
			return true
		}
	}
	return false
}

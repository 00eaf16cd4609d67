package scenario

import (
	"errors"
	"testing"
)

func TestParseClusterFileShapes(t *testing.T) {
	const nodes = "nodes: [{name: n1, allocatable: {cpu: 4}}]\n"
	tests := []struct {
		name, src  string
		isScenario bool
		scenario   string
		config     string
		nodes      int
	}{
		{name: "plain", src: nodes, nodes: 1},
		{name: "under cluster", src: "cluster:\n  " + nodes, nodes: 1},
		{name: "empty cluster", src: "cluster: {}\n"},
		{name: "whole scenario", src: minimalHead + "cluster:\n  " + nodes + "expect: {binds: {}}\n",
			isScenario: true, scenario: "t", config: "actions: \"allocate\"\n", nodes: 1},
		{name: "scenario without name or expect", src: "config: |\n  actions: allocate\ncluster:\n  " + nodes,
			isScenario: true, config: "actions: allocate\n", nodes: 1},
		{name: "scenario without config", src: "name: s\ncluster:\n  " + nodes, isScenario: true, scenario: "s", nodes: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := ParseClusterFile("f.yaml", []byte(tc.src), true)
			if err != nil {
				t.Fatal(err)
			}
			if f.IsScenario != tc.isScenario || f.Scenario != tc.scenario || f.Config != tc.config || len(f.Cluster.Nodes) != tc.nodes {
				t.Errorf("got scenario %v %q, config %q, %d nodes", f.IsScenario, f.Scenario, f.Config, len(f.Cluster.Nodes))
			}
		})
	}
}

// The first problem reported is the real one, with its path: a typo in the cluster comes
// before anything a scenario would miss.
func TestParseClusterFileErrors(t *testing.T) {
	tests := []struct {
		name, src, path, msg string
	}{
		{"typo in a plain file", "nodes: [{name: n1, alocatable: {cpu: 4}}]\n", "nodes[0].alocatable", "unknown key (expected one of: name, count, namePrefix, allocatable, labels, taints, unschedulable, usage, devices, numa)"},
		{"typo under cluster", "cluster:\n  nodes: [{name: n1, alocatable: {cpu: 4}}]\n", "cluster.nodes[0].alocatable", ""},
		{"typo in a scenario's cluster", "name: s\ncluster:\n  nodse: []\n", "cluster.nodse", ""},
		{"unknown top-level key beside cluster", "cluster: {}\nconfgi: x\n", "confgi", ""},
		{"unknown top-level key of a plain file", "nodes: []\nconfgi: x\n", "confgi", ""},
		{"bad quantity", "cluster:\n  nodes: [{name: n1, allocatable: {cpu: lots}}]\n", "cluster.nodes[0].allocatable.cpu", ""},
		{"empty config", "config: \"\"\ncluster: {}\n", "config", "must not be empty (expected the scheduler configuration as text)"},
		{"bad name", "name: Not_Kebab\ncluster: {}\n", "name", ""},
		{"bad expect", "expect: {bindz: {}}\ncluster: {}\n", "expect.bindz", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseClusterFile("f.yaml", []byte(tc.src), true)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("err = %v, want a *ParseError", err)
			}
			if pe.File != "f.yaml" || pe.Path != tc.path || (tc.msg != "" && pe.Msg != tc.msg) {
				t.Errorf("got %q at %q (%q), want path %q", pe.Msg, pe.Path, pe.Error(), tc.path)
			}
		})
	}
}

// Parse itself stays strict: a scenario needs its name, config and expect.
func TestParseStillRequiresAWholeScenario(t *testing.T) {
	_, err := Parse("s.yaml", []byte("cluster: {}\n"))
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Msg != `missing required key "name"` {
		t.Errorf("err = %v", err)
	}
}

package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the scenario parsers: they never panic, fail only with
// a *ParseError naming the file, and a scenario they accept turns into a delta batch.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "..", "testdata", "scenarios", "*.yaml"))
	for i, p := range files {
		if i >= 40 {
			break
		}
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("name: x\ncluster:\n  nodes:\n  - {name: n, allocatable: {cpu: lots}}\n"))
	f.Add([]byte("cluster: {jobs: [{name: j, count: 3, tasks: [{name: t}]}]}"))
	f.Add([]byte("&a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("fuzz.yaml", data)
		check := func(what string, err error) {
			var pe *ParseError
			if err != nil && (!errors.As(err, &pe) || pe.File != "fuzz.yaml") {
				t.Fatalf("%s: %v (%T) is not a *ParseError naming the file", what, err, err)
			}
		}
		check("Parse", err)
		if err == nil && sc.Cluster != nil {
			if b := sc.Cluster.Batch(); b == nil {
				t.Fatal("an accepted scenario gave no batch")
			}
		}
		c, err := ParseCluster("fuzz.yaml", data)
		check("ParseCluster", err)
		if err == nil && c != nil {
			_ = c.Batch()
		}
		_, err = ParseClusterPartial("fuzz.yaml", data)
		check("ParseClusterPartial", err)
	})
}

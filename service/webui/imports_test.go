package webui_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestReadsOnlyThroughTheService: the UI's code imports neither the engine nor the store
// (its reads go through service.UIReads, with the API's checks), and nothing that writes.
func TestReadsOnlyThroughTheService(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(path, "github.com/sluice-sched/sluice/engine") || strings.HasPrefix(path, "github.com/hashicorp/") {
				t.Errorf("%s imports %s: the UI reads through the service only", f, path)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source files checked")
	}
}

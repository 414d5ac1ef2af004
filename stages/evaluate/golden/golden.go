// Package golden holds the evaluate stage's tests to golden files: a test
// compares what it rendered with a file in its package's testdata/, and
// rewrites the file instead when run with -update (go test
// ./stages/evaluate/... -update), so that a change to the report shows as
// a diff to read before it is committed. Only tests import it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/report"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Check compares got, what (for the message), with testdata/name, and
// writes it there instead under -update.
func Check(t testing.TB, name string, got []byte, what string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from %s; if the change is intended, rerun with -update and read the diff", what, path)
	}
}

// Charts checks that every chart of a rendered section is an SVG that the
// section's Markdown links, and returns their names in order.
func Charts(t testing.TB, sec report.Section) []string {
	t.Helper()
	var names []string
	for _, c := range sec.Charts {
		names = append(names, c.Name)
		if !bytes.HasPrefix(c.SVG, []byte("<?xml")) || !strings.Contains(sec.Markdown, "](charts/"+c.Name+")") {
			t.Errorf("chart %s is not an SVG the section links", c.Name)
		}
	}
	return names
}

package onnxgraph

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDocumentedOperators checks docs/models.md's list of the operators
// the analysis knows, which refusals point users to, against the table.
func TestDocumentedOperators(t *testing.T) {
	b, err := os.ReadFile("../../../docs/models.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "<!-- operators -->")
	list, _, ok2 := strings.Cut(rest, "<!-- /operators -->")
	if !ok || !ok2 {
		t.Fatal("docs/models.md has no <!-- operators --> list")
	}
	var documented []string
	for _, f := range strings.Split(list, ",") {
		documented = append(documented, strings.Trim(strings.TrimSpace(f), "`"))
	}
	if !slices.Equal(documented, Operators()) {
		t.Errorf("docs/models.md lists %v;\nthe analysis knows %v", documented, Operators())
	}
}

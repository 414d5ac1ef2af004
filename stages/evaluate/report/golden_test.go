package report_test

import (
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/golden"
	"github.com/mlsched/mlsched/stages/evaluate/report"
)

// TestMarkdownGolden keeps the Markdown of a fixed document; refresh with
// go test ./stages/evaluate/report -update.
func TestMarkdownGolden(t *testing.T) {
	golden.Check(t, "report.md", report.TestDoc().Markdown(), "Markdown")
}

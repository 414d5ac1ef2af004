package section

import (
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
)

// TestDiffText checks how a difference reads, with and without an
// interval that excludes zero.
func TestDiffText(t *testing.T) {
	tests := []struct {
		got, want string
	}{
		{DiffText(metrics.Difference{Value: -1, Lo: -2, Hi: 0.5}, report.Secs), "no difference (-2 s … +500 ms)"},
		{DiffText(metrics.Difference{Value: -1, Lo: -2, Hi: -0.5, Significant: true}, report.Secs), "-1 s (-2 s … -500 ms)"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

// TestObjectiveOf finds every objective by its metric, and none by another.
func TestObjectiveOf(t *testing.T) {
	for _, o := range Objectives() {
		if got, ok := ObjectiveOf(o.Diff); !ok || got.Name != o.Name {
			t.Errorf("ObjectiveOf(%q) = %q, %v; want %q", o.Diff, got.Name, ok, o.Name)
		}
	}
	if o, ok := ObjectiveOf("no such metric"); ok {
		t.Errorf("ObjectiveOf(no such metric) = %q, want none", o.Name)
	}
}

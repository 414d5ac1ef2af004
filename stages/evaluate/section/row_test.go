package section

import (
	"fmt"
	"slices"
	"testing"
)

// TestOrderRows lays out rows given in the report's order of sections:
// the blocks come in rowOrder's order, a block's scopes stay interleaved
// as their section wrote them, and a scope rowOrder does not list comes
// last.
func TestOrderRows(t *testing.T) {
	row := func(scope, policy string) MetricRow { return MetricRow{Scope: scope, Policy: policy} }
	rows := []MetricRow{
		row(ScopeBound, ""), row(ScopePolicy, "a"), row(ScopeClass, "a"), row(ScopePolicy, "b"), row(ScopeDifference, "b"),
		row("queue", "a"),
		row(ScopeSweep, "a"), row(ScopeSustained, "a"),
		row(ScopeFidelity, "a"),
		row(ScopeProfile, ""),
		row(ScopePredictor, ""), row(ScopePlacement, ""),
		row(ScopeLearned, "a"),
	}
	OrderRows(rows)
	var got []string
	for _, r := range rows {
		got = append(got, fmt.Sprintf("%s/%s", r.Scope, r.Policy))
	}
	want := []string{
		"bound/", "policy/a", "class/a", "policy/b", "difference/b",
		"sweep/a", "sustained/a",
		"profile/", "predictor/", "placement/", "learned/a", "fidelity/a",
		"queue/a",
	}
	if !slices.Equal(got, want) {
		t.Errorf("OrderRows =\n%v\nwant\n%v", got, want)
	}
}

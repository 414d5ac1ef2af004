package evaluate

import (
	"fmt"
	"math"
	"strings"

	"github.com/mlsched/mlsched/stages/evaluate/report"
)

// change is this run against the one evaluate.compare_to names.
type change struct {
	version string
	// rows are this run's rows; those the earlier run had carry Previous.
	rows []MetricRow
	// gone are the earlier run's rows this run does not have.
	gone []MetricRow
}

// compareRuns sets Previous on each of rows that old has, and returns the
// comparison for the report.
func compareRuns(rows, old []MetricRow, version string) *change {
	before := make(map[rowKey]float64, len(old))
	for _, r := range old {
		before[r.key()] = r.Value
	}
	seen := make(map[rowKey]bool, len(rows))
	for i := range rows {
		k := rows[i].key()
		seen[k] = true
		if v, ok := before[k]; ok {
			rows[i].Previous = ptr(v)
		}
	}
	c := &change{version: version, rows: rows}
	for _, r := range old {
		if !seen[r.key()] {
			c.gone = append(c.gone, r)
		}
	}
	return c
}

// scopeTitles orders and names the change section's tables.
var scopeTitles = []struct{ scope, title string }{
	{ScopePolicy, "Policies"},
	{ScopeClass, "Classes"},
	{ScopeDevice, "Devices"},
	{ScopeDifference, "Against the baselines"},
	{ScopeReplications, "Across replications"},
	{ScopeReplicationDiff, "Against the baselines, across replications"},
	{ScopeSweep, "Load sweep"},
	{ScopeSustained, "Sustained load"},
	{ScopeBound, "Lower bounds"},
	{ScopeProfile, "Profile"},
	{ScopePredictor, "Predictor"},
	{ScopePlacement, "Placement network"},
	{ScopeLearned, "Learned decisions"},
	{ScopeFidelity, "Fidelity"},
}

// where names the number a row holds, without its metric.
func where(r MetricRow) string {
	var parts []string
	for _, p := range []string{r.Policy, r.Baseline, r.Class, r.Device, r.Model, r.Precision} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	if r.Baseline != "" {
		parts[1] = "vs " + r.Baseline
	}
	if r.Scope == ScopeProfile {
		parts = append(parts, fmt.Sprintf("%d thr batch %d", r.Threads, r.Batch))
	}
	if r.Scope == ScopeSweep || r.Scope == ScopeFidelity && r.Load > 0 {
		parts = append(parts, "at "+report.Pct(r.Load))
	}
	switch r.Scope {
	case ScopePredictor:
		parts = append(parts, "kept predictor")
	case ScopePlacement:
		parts = append(parts, "network, test points")
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

// changeSection lists every metric's change since the earlier run: for
// each scope, the numbers that changed (before, after, change), then how
// many did not, and what appeared or disappeared.
func changeSection(d *reportData) (report.Section, error) {
	c := d.since
	if c == nil {
		return report.Section{}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Every number of this report against the same number in evaluate@%s (evaluate.compare_to). "+
		"metrics.parquet carries the earlier value of each row in its previous column.\n", report.Escape(c.version))
	var added int
	for _, sc := range scopeTitles {
		t := report.NewTable("number", "metric", ">before", ">after", ">change")
		same := 0
		for _, r := range c.rows {
			if r.Scope != sc.scope {
				continue
			}
			if r.Previous == nil {
				added++
				continue
			}
			before := *r.Previous
			if before == r.Value || math.IsNaN(before) && math.IsNaN(r.Value) {
				same++
				continue
			}
			rel := "–"
			if before != 0 && !math.IsNaN(before) && !math.IsNaN(r.Value) {
				rel = fmt.Sprintf("%+.1f%%", 100*(r.Value-before)/math.Abs(before))
			}
			t.Add(report.Escape(where(r)), report.Escape(r.Metric), report.Num(before), report.Num(r.Value), rel)
		}
		if t.Len() == 0 && same == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", sc.title)
		if t.Len() > 0 {
			b.WriteString(t.String() + "\n")
		}
		fmt.Fprintf(&b, "%d unchanged.\n", same)
	}
	if added > 0 || len(c.gone) > 0 {
		fmt.Fprintf(&b, "\n%d numbers are new in this run and %d of the earlier run's are gone (a policy, load or baseline added or removed).\n", added, len(c.gone))
	}
	return report.Section{Title: "Since evaluate@" + report.Escape(c.version), Markdown: b.String()}, nil
}

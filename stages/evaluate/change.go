package evaluate

import (
	"fmt"
	"math"
	"strings"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
)

// changeSection gives every number's change since the run
// evaluate.compare_to names, from that run's metrics.parquet, and fills in
// each row's previous value; left out without one.
type changeSection struct {
	// earlier says that evaluate.compare_to names a run, version is its
	// version and old its rows, read by Read.
	earlier bool
	version string
	old     []MetricRow
	// since is the comparison Annotate makes; nil without an earlier run.
	since *change
}

var (
	_ section.Section   = (*changeSection)(nil)
	_ section.Annotator = (*changeSection)(nil)
)

func (*changeSection) Name() string { return "change" }

// Read reads the earlier run's metrics.parquet, if there is one.
func (s *changeSection) Read(ev *section.Evaluation) (err error) {
	if ev.Previous == "" {
		return nil
	}
	if s.old, err = parquetio.ReadAll[MetricRow](ev.Previous); err != nil {
		return fmt.Errorf("compare_to %s: %w", ev.PreviousVersion, err)
	}
	s.earlier, s.version = true, ev.PreviousVersion
	return nil
}

// Rows are none: the change is carried by every row's Previous.
func (*changeSection) Rows(*section.Evaluation) []MetricRow { return nil }

// Annotate sets Previous on each of rows the earlier run has.
func (s *changeSection) Annotate(rows []MetricRow) {
	if s.earlier {
		s.since = compareRuns(rows, s.old, s.version)
	}
}

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
		before[rowKeyOf(r)] = r.Value
	}
	seen := make(map[rowKey]bool, len(rows))
	for i := range rows {
		k := rowKeyOf(rows[i])
		seen[k] = true
		if v, ok := before[k]; ok {
			rows[i].Previous = new(v)
		}
	}
	c := &change{version: version, rows: rows}
	for _, r := range old {
		if !seen[rowKeyOf(r)] {
			c.gone = append(c.gone, r)
		}
	}
	return c
}

// scopeTitles orders and names the change section's tables.
var scopeTitles = []struct{ scope, title string }{
	{section.ScopePolicy, "Policies"},
	{section.ScopeClass, "Classes"},
	{section.ScopeDevice, "Devices"},
	{section.ScopeDifference, "Against the baselines"},
	{section.ScopeSweep, "Load sweep"},
	{section.ScopeSustained, "Sustained load"},
	{section.ScopeBound, "Lower bounds"},
	{section.ScopeProfile, "Profile"},
	{section.ScopeMachine, "Machine while profiled"},
	{section.ScopePredictor, "Predictor"},
	{section.ScopePlacement, "Placement network"},
	{section.ScopeLearned, "Learned decisions"},
	{section.ScopeFidelity, "Fidelity"},
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
	if r.Scope == section.ScopeProfile {
		parts = append(parts, fmt.Sprintf("%d thr batch %d", r.Threads, r.Batch))
	}
	if r.Scope == section.ScopeSweep || r.Scope == section.ScopeFidelity && r.Load > 0 {
		parts = append(parts, "at "+report.Pct(r.Load))
	}
	switch r.Scope {
	case section.ScopePredictor:
		parts = append(parts, "kept predictor")
	case section.ScopePlacement:
		parts = append(parts, "network, test points")
	}
	if len(parts) == 0 {
		return "–"
	}
	return strings.Join(parts, " ")
}

// Render lists every metric's change since the earlier run: for
// each scope, the numbers that changed (before, after, change), then how
// many did not, and what appeared or disappeared.
func (s *changeSection) Render(*section.Evaluation) (report.Section, error) {
	c := s.since
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

// rowKey names a row's number across runs: everything but its values.
type rowKey struct {
	scope, policy, baseline, class, device, model, precision, metric string
	threads, batch                                                   int32
	load                                                             float64
}

// rowKeyOf is r's key.
func rowKeyOf(r MetricRow) rowKey {
	return rowKey{r.Scope, r.Policy, r.Baseline, r.Class, r.Device, r.Model, r.Precision, r.Metric, r.Threads, r.Batch, r.Load}
}

package evaluate

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/schedule"
)

// TestLearnedRun simulates learned beside edf and edf+migrate with the
// placement network through onnxruntime (schedule's testdata), evaluates
// the artifact and checks the section against its sources: each paired
// difference is the run's analysis's (section.Analysis), metrics.parquet's
// learned rows are serving.parquet's and those differences, and the
// wall-clock table is the notes'.
func TestLearnedRun(t *testing.T) {
	lib, src := orttest.Library(t)
	f := newFixtureWith(t, 1, func(c *schedule.Config, in *schedule.Inputs) {
		c.Policies = []string{"fifo", "round_robin", "edf", "edf+migrate", "learned"}
		c.Studies = schedule.Studies{Jobs: 1000, Replications: 2, PredictionErrors: []float64{0.5}, DecisionCosts: []string{"5ms"}}
		in.Placement, in.ORTLib, in.ORTSource = filepath.Join("..", "schedule", "testdata", "placement.onnx"), lib, src
	})
	cfg := testConfig()
	out := run(t, f, cfg)
	b, err := os.ReadFile(filepath.Join(out, ReportMD))
	if err != nil {
		t.Fatal(err)
	}
	md := string(b)
	rows, err := parquetio.ReadAll[MetricRow](filepath.Join(out, MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	find := func(baseline, metric string) *MetricRow {
		i := slices.IndexFunc(rows, func(r MetricRow) bool {
			return r.Scope == section.ScopeLearned && r.Policy == "learned" && r.Baseline == baseline && r.Metric == metric
		})
		if i < 0 {
			t.Errorf("metrics.parquet has no learned %s row against %q", metric, baseline)
			return nil
		}
		return &rows[i]
	}

	// The run's own analysis, as the stage computes it: the section must
	// show its paired differences (package section's tests check the
	// analysis itself).
	ev, err := summarize(context.Background(), cfg, f.in, Output{})
	if err != nil {
		t.Fatal(err)
	}
	// The controlled comparisons lead, each ablation changing one thing,
	// then the plain rules.
	last := -1
	for _, base := range []string{"learned~threshold", "learned~free", "edf+migrate", "edf"} {
		if at := strings.Index(md, "**learned against "+report.Escape(base)+"**"); at <= last {
			t.Errorf("report.md: learned against %s at %d, not after the comparison before it (at %d)", base, at, last)
		} else {
			last = at
		}
	}
	for _, base := range []string{"learned~threshold", "learned~free", "edf+migrate", "edf"} {
		i, j := ev.Index("learned"), ev.Index(base)
		var diffs []metrics.Difference
		for _, o := range section.Objectives() {
			diffs = append(diffs, ev.Analysis.Paired(i, j, o.Diff, "learned", base))
		}
		if !strings.Contains(md, "**learned against "+report.Escape(base)+"**") {
			t.Errorf("report.md has no comparison of learned with %s", base)
		}
		for _, o := range section.Headline() {
			x := diffs[slices.IndexFunc(diffs, func(x metrics.Difference) bool { return x.Metric == o.Diff })]
			v := cmp.Or(o.Verdict(x), "–")
			// The two tables share their metric rows; the values differ.
			row := fmt.Sprintf("| %s | %s | %s | %s | %s |", o.Name, o.Format(x.PolicyValue), o.Format(x.BaselineValue), section.DiffText(x, o.Delta), v)
			if !strings.Contains(md, row) {
				t.Errorf("against %s: report.md lacks %q", base, row)
			}
			if r := find(base, o.Diff); r != nil && (!sameFloat(r.Value, x.Value) || !sameFloat(*r.Lo, x.Lo) || !sameFloat(*r.Hi, x.Hi) || r.Significant != x.Significant) {
				t.Errorf("against %s, %s: metrics.parquet %v (%v … %v), the analysis %v (%v … %v)", base, o.Diff, r.Value, *r.Lo, *r.Hi, x.Value, x.Lo, x.Hi)
			}
		}
	}

	serving, err := parquetio.ReadAll[schedule.ServingRow](filepath.Join(f.in.Schedule, "learned", schedule.ServingFile))
	if err != nil {
		t.Fatal(err)
	}
	s := serving[0]
	if s.Decisions == 0 {
		t.Fatal("learned made no decision: the test shows nothing")
	}
	if r := find("", "decisions"); r != nil && r.Value != float64(s.Decisions) {
		t.Errorf("metrics.parquet: %v decisions, serving.parquet %d", r.Value, s.Decisions)
	}
	if want := fmt.Sprintf("| learned | %d | %d | %.2f | %d | %s |", s.Decisions, s.Migrations, s.MeanBatch, s.Calls, report.Pct(s.HitRate)); !strings.Contains(md, want) {
		t.Errorf("report.md lacks serving row %q", want)
	}
	n := f.in.ScheduleNotes["serving:learned:uncached_n"]
	if n == "" {
		t.Fatalf("schedule noted no uncached decisions: %v", f.in.ScheduleNotes)
	}
	evaluator := "go (" + f.in.ScheduleNotes["serving:learned:referred"] + " referred)"
	if want := "| learned | " + evaluator + " | uncached: one decision | " + n + " | "; !strings.Contains(md, want) {
		t.Errorf("report.md lacks the noted uncached figures %q", want)
	}
	for _, want := range []string{"### Sensitivity to prediction error", "### The cost of a decision", "| learned | 5ms | 5 ms |",
		"**learned at 5 ms a decision** (5ms, the dearest)"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, name := range []string{"prediction-error-slo.svg", "prediction-error-mean-e2e.svg"} {
		if _, err := os.Stat(filepath.Join(out, ChartsDir, name)); err != nil {
			t.Error(err)
		}
	}
	t.Run("html", func(t *testing.T) { checkHTML(t, out) })
}

// sameFloat is equality that takes two NaNs (no interval) as the same.
func sameFloat(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }

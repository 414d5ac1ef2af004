package evaluate

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestLatencyChartsWideIntervals renders the latency section of two
// policies whose P99 varies so much over two replications that its
// interval reaches below zero: the log-axis chart leaves that bar out
// rather than failing the stage (a real run did).
func TestLatencyChartsWideIntervals(t *testing.T) {
	ev := &section.Evaluation{Config: DefaultConfig(), Policies: []string{"fifo", "edf"}, Replications: 2}
	var reps [][]metrics.Summary
	var series [][]section.Series
	for _, p99 := range [][2]float64{{0.01, 1}, {0.02, 0.03}} {
		var r []metrics.Summary
		var s []section.Series
		for _, v := range p99 {
			r = append(r, metrics.Summary{E2E: metrics.Latency{Mean: v / 2, P50: v / 4, P95: v / 1.5, P99: v}})
			s = append(s, section.Series{E2E: []float64{v / 2, v / 2}, Missed: []float64{0, 0}})
		}
		reps, series = append(reps, r), append(series, s)
		ev.Results = append(ev.Results, section.Result{Summary: metrics.MeanSummary(r), Reps: r,
			E2ESketch: []float64{p99[0] / 4, p99[0]}, InteractiveSketch: []float64{p99[0] / 4, p99[0]}, WaitSketch: []float64{p99[0] / 8, p99[0] / 2}})
	}
	var err error
	if ev.Analysis, err = section.NewAnalysis(reps, series, 0.95); err != nil {
		t.Fatal(err)
	}
	if iv := ev.Analysis.Estimate(0, metrics.MetricP99E2E); !(iv.Lo < 0) {
		t.Fatalf("fifo's P99 interval %+v does not reach below zero: the test shows nothing", iv)
	}
	if _, err := (latencySection{}).Render(ev); err != nil {
		t.Errorf("Render: %v", err)
	}
}

// TestCrowdedDistributionsShowTheFeatured: with more policies than a
// distribution chart can overlay, the chart shows the recommendation, the
// runner-up and the baselines, and every policy's chart follows folded;
// with few policies every one is shown and nothing is folded.
func TestCrowdedDistributionsShowTheFeatured(t *testing.T) {
	for _, c := range []struct {
		policies []string
		shown    string // the shown chart's alt text
		folded   bool
	}{
		{[]string{"fifo", "edf", "dynamic"}, "![CDF of end-to-end latency, every policy](charts/latency-cdf.svg)", false},
		{[]string{"fifo", "round_robin", "random", "edf", "batch_aware", "dynamic", "edf+batch", "edf+migrate"},
			"![CDF of end-to-end latency: fifo, batch_aware, edf+batch, edf+migrate (the recommendation, the runner-up and the baselines)](charts/latency-cdf.svg)", true},
	} {
		ev := &section.Evaluation{Config: DefaultConfig(), Policies: c.policies, Replications: 2}
		ev.Config.Baselines = []string{"fifo", "batch_aware"}
		var reps [][]metrics.Summary
		var series [][]section.Series
		for i := range c.policies {
			// The later a policy, the lower its interactive violations:
			// the last is the best, the one before it the runner-up.
			v := 0.5 - 0.05*float64(i)
			var r []metrics.Summary
			var s []section.Series
			for k := range 2 {
				m := metrics.Summary{E2E: metrics.Latency{Mean: 0.1, P50: 0.05, P95: 0.2, P99: 0.3}, SLOViolation: v + 0.001*float64(k),
					Classes: []metrics.ClassSummary{{Class: "interactive", SLOViolation: v + 0.001*float64(k)}}}
				r = append(r, m)
				s = append(s, section.Series{E2E: []float64{0.1, 0.1}, Missed: []float64{0, 0}, InteractiveMissed: []float64{0, 0}})
			}
			reps, series = append(reps, r), append(series, s)
			ev.Results = append(ev.Results, section.Result{Summary: metrics.MeanSummary(r), Reps: r,
				E2ESketch: []float64{0.05, 0.1}, InteractiveSketch: []float64{0.05, 0.1}, WaitSketch: []float64{0.01, 0.02}})
		}
		var err error
		if ev.Analysis, err = section.NewAnalysis(reps, series, 0.95); err != nil {
			t.Fatal(err)
		}
		sec, err := (latencySection{}).Render(ev)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sec.Markdown, c.shown) {
			t.Errorf("%d policies: the section does not show %q:\n%s", len(c.policies), c.shown, sec.Markdown)
		}
		want := fmt.Sprintf("[CDF of end-to-end latency, every policy (%d)](charts/latency-cdf-all.svg)", len(c.policies))
		if got := strings.Contains(sec.Markdown, want); got != c.folded {
			t.Errorf("%d policies: folded chart %q present %v, want %v:\n%s", len(c.policies), want, got, c.folded, sec.Markdown)
		}

		// The load sweep's charts do the same.
		dir := t.TempDir()
		var points []schedulespec.SweepRow
		for _, p := range c.policies {
			for _, u := range []float64{0.3, 0.7} {
				points = append(points, schedulespec.SweepRow{Policy: p, Replication: 1, Load: u, ScheduleLoad: u, Jobs: 100,
					SLOAttainment: 1, InteractiveSLOAttainment: 1, MeanE2ES: 0.1, P99E2ES: 0.2})
			}
		}
		if err := parquetio.WriteFile(filepath.Join(dir, schedulespec.SweepFile), points, nil); err != nil {
			t.Fatal(err)
		}
		if err := parquetio.WriteFile(filepath.Join(dir, schedulespec.CapacityFile), []schedulespec.CapacityRow{}, nil); err != nil {
			t.Fatal(err)
		}
		ev.Schedule = dir
		sw := &sweepSection{}
		if err := sw.Read(ev); err != nil {
			t.Fatal(err)
		}
		sec, err = sw.Render(ev)
		if err != nil {
			t.Fatal(err)
		}
		folded := fmt.Sprintf("[SLO attainment of every job vs offered load, every policy (%d)](charts/sweep-slo-all.svg)", len(c.policies))
		shown := "![SLO attainment of every job vs offered load: fifo, batch_aware, edf+batch, edf+migrate (the recommendation, the runner-up and the baselines)](charts/sweep-slo.svg)"
		if !c.folded {
			shown = "![SLO attainment of every job vs offered load](charts/sweep-slo.svg)"
		}
		if !strings.Contains(sec.Markdown, shown) || strings.Contains(sec.Markdown, folded) != c.folded {
			t.Errorf("%d policies: the sweep section shows %q: %v, folds %q: %v, want true and %v:\n%s", len(c.policies),
				shown, strings.Contains(sec.Markdown, shown), folded, strings.Contains(sec.Markdown, folded), c.folded, sec.Markdown)
		}
	}
}

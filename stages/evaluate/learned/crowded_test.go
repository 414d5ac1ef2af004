package learned

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestCrowdedPredictionErrorShowsTheFeatured: with more policies than a
// chart overlays, each prediction-error chart shows the featured few (the
// recommendation, the runner-up and the baselines) and folds every
// policy's beneath it, as the latency and sweep charts do; with few
// policies it shows them all, folding nothing.
func TestCrowdedPredictionErrorShowsTheFeatured(t *testing.T) {
	for _, c := range []struct {
		policies []string
		shown    string
		folded   bool
	}{
		{[]string{"fifo", "edf", "dynamic"}, "one line per policy](charts/prediction-error-slo.svg)", false},
		{[]string{"fifo", "round_robin", "random", "edf", "batch_aware", "dynamic", "edf+batch", "edf+migrate"},
			"one line per policy: fifo, batch_aware, edf+batch, edf+migrate (the recommendation, the runner-up and the baselines)](charts/prediction-error-slo.svg)", true},
	} {
		ev := &section.Evaluation{Config: evaluatespec.DefaultConfig(), Policies: c.policies, Replications: 2}
		ev.Config.Baselines = []string{"fifo", "batch_aware"}
		var reps [][]metrics.Summary
		var series [][]section.Series
		var rows []schedulespec.StudyRow
		for i, p := range c.policies {
			// The later a policy, the lower its interactive violations:
			// the last is the best, the one before it the runner-up.
			v := 0.5 - 0.05*float64(i)
			var r []metrics.Summary
			var s []section.Series
			for k := range 2 {
				r = append(r, metrics.Summary{SLOViolation: v + 0.001*float64(k), Classes: []metrics.ClassSummary{{Class: "interactive", SLOViolation: v + 0.001*float64(k)}}})
				s = append(s, section.Series{E2E: []float64{0.1, 0.1}, Missed: []float64{0, 0}, InteractiveMissed: []float64{0, 0}})
				for _, e := range []float64{0, 0.5} {
					rows = append(rows, schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: p, Replication: int32(k + 1),
						Predictor: schedulespec.PredictorTable, PredictionError: e, PredictionMAPE: e / 2, InteractiveSLOAttainment: 1 - v - e/10, MeanE2ES: 0.1 + e})
				}
			}
			reps, series = append(reps, r), append(series, s)
		}
		var err error
		if ev.Analysis, err = section.NewAnalysis(reps, series, 0.95); err != nil {
			t.Fatal(err)
		}
		md, charts, err := (&runs{studies: rows}).predictionErrorText(ev)
		if err != nil {
			t.Fatal(err)
		}
		folded := fmt.Sprintf("every policy (%d)](charts/prediction-error-slo-all.svg)", len(c.policies))
		if !strings.Contains(md, c.shown) || strings.Contains(md, folded) != c.folded {
			t.Errorf("%d policies: shows %q: %v, folds %q: %v, want true and %v:\n%s", len(c.policies),
				c.shown, strings.Contains(md, c.shown), folded, strings.Contains(md, folded), c.folded, md)
		}
		if want := 2 + 2*btoi(c.folded); len(charts) != want {
			t.Errorf("%d policies: %d charts, want %d", len(c.policies), len(charts), want)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

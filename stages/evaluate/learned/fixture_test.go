package learned

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// learnedFixture is a small schedule artifact's learned part, numbers
// chosen by hand: two learned specs (learned with both its counterparts
// simulated, learned+batch with neither), their serving files (learned's
// decisions charged draws from the profile's timing of the serving path,
// learned+batch's the tight-loop fallback), the notes' wall-clock figures
// (learned's from a schedule that did not name its evaluator, so
// onnxruntime's; learned+batch's from the Go forward pass) and both
// studies.
type learnedFixture struct {
	policies []string
	serving  []schedulespec.ServingRow
	studies  []schedulespec.StudyRow
	notes    map[string]string
}

func newLearnedFixture() learnedFixture {
	f := learnedFixture{policies: []string{"fifo", "edf", "edf+migrate", "learned", "learned+batch"}}
	f.serving = []schedulespec.ServingRow{
		{Policy: "learned", Replication: 1, Decisions: 4000, Batches: 2500, MeanBatch: 1.6, Migrations: 310, CacheHits: 1000,
			HitRate: 0.25, CacheChanged: 12, Evaluated: 4000, Calls: 2400, CostS: 8e-6, CostP99S: 70e-6, CostSource: schedulespec.CostServing},
		// Without the audit the hits are not evaluated: cache_changed
		// says nothing.
		{Policy: "learned+batch", Replication: 1, Decisions: 3000, Batches: 1000, MeanBatch: 3, Migrations: 200, CacheHits: 600,
			HitRate: 0.2, Evaluated: 2400, Calls: 900, CostS: 0.00011, CostP99S: 0.00011, CostSource: schedulespec.CostTightLoop},
	}
	f.notes = map[string]string{
		"serving:learned:inference_s":           "0.041",
		"serving:learned:uncached_n":            "1900",
		"serving:learned:uncached_p50_us":       "9.21",
		"serving:learned:uncached_p99_us":       "66.1",
		"serving:learned:batched_n":             "1100",
		"serving:learned:batched_p50_us":        "5.12",
		"serving:learned:batched_p99_us":        "35",
		"serving:learned:cached_n":              "1000",
		"serving:learned:cached_p50_us":         "0.551",
		"serving:learned:cached_p99_us":         "1.03",
		"serving:learned+batch:evaluator":       "go",
		"serving:learned+batch:referred":        "3",
		"serving:learned+batch:inference_s":     "0.02",
		"serving:learned+batch:uncached_n":      "900",
		"serving:learned+batch:uncached_p50_us": "12",
		"serving:learned+batch:uncached_p99_us": "140",
		"serving:learned+batch:cached_n":        "600",
		"serving:learned+batch:cached_p50_us":   "0.6",
		"serving:learned+batch:cached_p99_us":   "1.2",
		"machine":                               "not a serving figure",
	}
	// Prediction error: every policy loses attainment and gains latency
	// with the error, fifo most, learned+batch least.
	mape := map[float64]float64{0: 0, 0.1: 0.05, 0.5: 0.25}
	for i, p := range f.policies {
		q := float64(len(f.policies)-i) / float64(len(f.policies)) // fifo 1, learned+batch 0.2
		for _, e := range []float64{0, 0.1, 0.5} {
			f.studies = append(f.studies, schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: p,
				Predictor: schedulespec.PredictorTable, PredictionError: e, PredictionMAPE: mape[e], Jobs: 5000,
				SLOAttainment: 0.99 - 0.1*q*e, InteractiveSLOAttainment: 0.995 - 0.1*q*e, MeanE2ES: 0.01 * (1 + q*e),
				P99E2ES: 0.1 * (1 + q*e), ThroughputJobsPerS: 90, GoodputJobsPerS: 89})
		}
		f.studies = append(f.studies, schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: p,
			Predictor: schedulespec.PredictorLearned, PredictionMAPE: 0.12, Jobs: 5000,
			SLOAttainment: 0.985, InteractiveSLOAttainment: 0.99 - 0.01*q, MeanE2ES: 0.011 + 0.001*q, P99E2ES: 0.11,
			ThroughputJobsPerS: 90, GoodputJobsPerS: 88})
	}
	// Decision cost: the 5 ms cost makes learned worse on every count;
	// learned+batch, which batches its decisions, loses attainment but
	// gains mean latency and keeps its P99.
	for _, c := range []struct {
		policy, cost, source string
		s, att, mean, p      float64
	}{
		{"learned", "profile", schedulespec.CostServing, 8e-6, 0.994, 0.0101, 0.1},
		{"learned", "0s", schedulespec.CostConfigured, 0, 0.995, 0.01, 0.1},
		{"learned", "5ms", schedulespec.CostConfigured, 0.005, 0.97, 0.014, 0.13},
		{"learned+batch", "profile", schedulespec.CostTightLoop, 0.00011, 0.995, 0.0102, 0.1},
		{"learned+batch", "0s", schedulespec.CostConfigured, 0, 0.996, 0.0101, 0.1},
		{"learned+batch", "5ms", schedulespec.CostConfigured, 0.005, 0.99, 0.0099, 0.1},
	} {
		f.studies = append(f.studies, schedulespec.StudyRow{Study: schedulespec.StudyDecisionCost, Policy: c.policy,
			Predictor: schedulespec.PredictorLearned, DecisionCost: c.cost, DecisionCostS: c.s, DecisionCostSource: c.source, Jobs: 5000,
			SLOAttainment: c.att - 0.001, InteractiveSLOAttainment: c.att, MeanE2ES: c.mean, P99E2ES: c.p,
			ThroughputJobsPerS: 90, GoodputJobsPerS: 89})
	}
	return f
}

// write writes the fixture's files into a new schedule directory and
// returns it.
func (f learnedFixture) write(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	byPolicy := map[string][]schedulespec.ServingRow{}
	for _, r := range f.serving {
		byPolicy[r.Policy] = append(byPolicy[r.Policy], r)
	}
	for p, rows := range byPolicy {
		path := filepath.Join(dir, filepath.FromSlash(schedulespec.PolicyFile(p, schedulespec.ServingFile)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := parquetio.WriteFile(path, rows, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f.studies != nil {
		if err := parquetio.WriteFile(filepath.Join(dir, schedulespec.StudiesFile), f.studies, nil); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// fixtureDiffs are the hand-made paired differences of learned against
// edf+migrate and edf, in CompareAll's order: better on mean latency and
// interactive violations, worse on P99, no different on the rest.
func fixtureDiffs(counterpart string) []metrics.Difference {
	d := func(metric string, a, b, lo, hi float64, sig bool) metrics.Difference {
		return metrics.Difference{Policy: "learned", Baseline: counterpart, Metric: metric, PolicyValue: a, BaselineValue: b,
			Value: a - b, Lo: lo, Hi: hi, Ratio: b / a, Significant: sig}
	}
	return []metrics.Difference{
		d(metrics.MetricMeanE2E, 0.0100, 0.0112, -0.002, -0.0004, true),
		d(metrics.MetricP99E2E, 0.104, 0.1, 0.001, 0.007, true),
		d(metrics.MetricSLOViolation, 0.01, 0.011, -0.003, 0.001, false),
		d(metrics.MetricInteractiveSLOViolation, 0.005, 0.025, -0.03, -0.01, true),
		d(metrics.MetricGoodput, 89.5, 89, -0.2, 1.2, false),
		d(metrics.MetricMakespan, 60, 61, -1, -1, true),
	}
}

// fixtureData reads the fixture as Run would, one replication of each
// policy, and gives the comparisons their differences; the evaluation
// has the fixture's policies and 20000 eval jobs.
func fixtureData(t *testing.T, f learnedFixture) (*section.Evaluation, *runs) {
	t.Helper()
	l, err := readRuns(f.write(t), f.policies, nil, 1, f.notes)
	if err != nil {
		t.Fatal(err)
	}
	if l != nil {
		for i, c := range l.comparisons {
			if c.simulated {
				l.comparisons[i].diffs = fixtureDiffs(c.counterpart)
			}
		}
	}
	results := make([]section.Result, len(f.policies))
	results[0].Summary.Jobs = 20000
	return &section.Evaluation{Config: evaluatespec.DefaultConfig(), Policies: f.policies, Results: results, Replications: 1}, l
}

// writeFile writes b as the file name in dir.
func writeFile(t *testing.T, dir, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

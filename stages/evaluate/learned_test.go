package evaluate

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/lib/metrics"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/schedule"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// learnedFixture is a small schedule artifact's learned part, numbers
// chosen by hand: two learned specs (learned with both its counterparts
// simulated, learned+batch with neither), their serving files, the
// notes' wall-clock figures and both studies.
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
			HitRate: 0.25, CacheChanged: 12, Evaluated: 4000, Calls: 2400, CostS: 0.00011},
		// Without the audit the hits are not evaluated: cache_changed
		// says nothing.
		{Policy: "learned+batch", Replication: 1, Decisions: 3000, Batches: 1000, MeanBatch: 3, Migrations: 200, CacheHits: 600,
			HitRate: 0.2, Evaluated: 2400, Calls: 900, CostS: 0.00011},
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
		policy, cost    string
		s, att, mean, p float64
	}{
		{"learned", "profile", 0.00011, 0.994, 0.0101, 0.1},
		{"learned", "0s", 0, 0.995, 0.01, 0.1},
		{"learned", "5ms", 0.005, 0.97, 0.014, 0.13},
		{"learned+batch", "profile", 0.00011, 0.995, 0.0102, 0.1},
		{"learned+batch", "0s", 0, 0.996, 0.0101, 0.1},
		{"learned+batch", "5ms", 0.005, 0.99, 0.0099, 0.1},
	} {
		f.studies = append(f.studies, schedulespec.StudyRow{Study: schedulespec.StudyDecisionCost, Policy: c.policy,
			Predictor: schedulespec.PredictorLearned, DecisionCost: c.cost, DecisionCostS: c.s, Jobs: 5000,
			SLOAttainment: c.att - 0.001, InteractiveSLOAttainment: c.att, MeanE2ES: c.mean, P99E2ES: c.p,
			ThroughputJobsPerS: 90, GoodputJobsPerS: 89})
	}
	return f
}

// write writes the fixture's files into a new schedule directory and
// returns it with the runs it lists.
func (f learnedFixture) write(t *testing.T) (string, *runSet) {
	t.Helper()
	dir := t.TempDir()
	for _, r := range f.serving {
		path := filepath.Join(dir, filepath.FromSlash(schedulespec.ReplicationFile(r.Policy, int(r.Replication), schedulespec.ServingFile)))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := parquetio.WriteFile(path, []schedulespec.ServingRow{r}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if f.studies != nil {
		if err := parquetio.WriteFile(filepath.Join(dir, schedulespec.StudiesFile), f.studies, nil); err != nil {
			t.Fatal(err)
		}
	}
	return dir, &runSet{policies: f.policies, replications: 1}
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

// fixtureData reads the fixture as Run would and gives the comparisons
// their differences.
func fixtureData(t *testing.T, f learnedFixture) *reportData {
	t.Helper()
	dir, runs := f.write(t)
	l, err := readLearned(dir, runs, f.notes)
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
	results := make([]policyResult, len(f.policies))
	results[0].summary.Jobs = 20000
	return &reportData{cfg: testConfig(), policies: f.policies, results: results, learned: l}
}

// TestLearnedSection builds the section from the fixture, checks that it
// says what the fixture's numbers say, and compares its Markdown with
// testdata/learned-section.md (-update rewrites it).
func TestLearnedSection(t *testing.T) {
	f := newLearnedFixture()
	d := fixtureData(t, f)
	sec, err := learnedSection(d)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Title != "Learned decisions" {
		t.Errorf("title %q", sec.Title)
	}
	for _, want := range []string{
		// The comparisons, the differences as diffText writes them.
		"**learned against edf+migrate** (the Threshold rule):",
		"| Mean end-to-end latency | 10 ms | 11.2 ms | -1.2 ms (-2 ms … -400 µs) | better |",
		"| P99 end-to-end latency | 104 ms | 100 ms | +4 ms (+1 ms … +7 ms) | worse |",
		"| SLO violations | 1.0% | 1.1% | no difference (-0.3 pp … +0.1 pp) | no difference |",
		"learned is better on mean end-to-end latency and interactive SLO violations; worse on P99 end-to-end latency; no different on SLO violations and goodput (jobs/s within SLO).",
		"**learned against edf** (no migration):",
		// learned+batch's counterparts were not simulated.
		"edf+batch+migrate (the Threshold rule with learned+batch's options; add edf+batch+migrate to schedule.policies to compare)",
		"edf+batch (no migration with learned+batch's options; add edf+batch to schedule.policies to compare)",
		// Serving, from serving.parquet.
		"| learned | 4000 | 310 | 1.60 | 2400 | 25.0% | 12 (1.2% of hits) | 110 µs |",
		"| learned+batch | 3000 | 200 | 3.00 | 900 | 20.0% | – (not audited) | 110 µs |",
		// The wall clock, from the notes, against the targets.
		"| learned | uncached: one decision | 1900 | 9.21 µs | 66.1 µs | P50 ≤ 20 µs: met; P99 ≤ 100 µs: met |",
		"| learned | batched: per decision | 1100 | 5.12 µs | 35 µs | ≤ 2 µs at batch 32 (benchmark); batches here average 1.60 decisions |",
		"| learned | cache hit, with standardising and the key | 1000 | 0.551 µs | 1.03 µs | ≤ 200 ns for the lookup alone (benchmark) |",
		"| learned+batch | uncached: one decision | 900 | 12 µs | 140 µs | P50 ≤ 20 µs: met; P99 ≤ 100 µs: **missed** |",
		"They come from this run's notes",
		"Time in onnxruntime in all: learned 41 ms, learned+batch 20 ms.",
		// The prediction-error study: fifo degrades most.
		"| *prediction MAPE* | *0.0%* | *5.0%* | *25.0%* | *12.0%* |",
		"From exact predictions to ±50% (MAPE 25.0%), **fifo** loses the most interactive SLO attainment: 99.5% → 94.5% (-5.0 pp); at the other end, **learned+batch**: 99.5% → 98.5% (-1.0 pp).",
		"From exact predictions to ±50% (MAPE 25.0%), **fifo**'s mean end-to-end latency grows the most: 10 ms → 15 ms (+50.0%); at the other end, **learned+batch**: 10 ms → 11 ms (+10.0%).",
		// The decision-cost study.
		"| learned | 5ms | 5 ms | 96.9% | 97.0% | 14 ms | 130 ms |",
		"With the dearest decisions, learned is worse on interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency.",
		"With the dearest decisions, learned+batch is better on mean end-to-end latency; worse on interactive SLO attainment; unchanged in P99 end-to-end latency.",
	} {
		if !strings.Contains(sec.Markdown, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	var names []string
	for _, c := range sec.Charts {
		names = append(names, c.Name)
		if !bytes.HasPrefix(c.SVG, []byte("<?xml")) || !strings.Contains(sec.Markdown, "](charts/"+c.Name+")") {
			t.Errorf("chart %s is not an SVG the section links", c.Name)
		}
	}
	if want := []string{"prediction-error-slo.svg", "prediction-error-mean-e2e.svg"}; !slices.Equal(names, want) {
		t.Errorf("charts %v, want %v", names, want)
	}
	if strings.Contains(sec.Markdown, "not a serving figure") {
		t.Error("the section shows a note that is no serving figure")
	}

	md := (&report.Document{Title: "learned", Sections: []report.Section{sec}}).Markdown()
	checkGolden(t, "learned-section.md", md, "the section")
}

// TestLearnedSectionParts leaves parts of the artifact out and checks
// that the section leaves out what rests on them, and no more.
func TestLearnedSectionParts(t *testing.T) {
	tests := []struct {
		name       string
		mutate     func(f *learnedFixture)
		none       bool     // no section at all
		has, lacks []string // headings and sentences
	}{
		{name: "no learned policy", mutate: func(f *learnedFixture) {
			f.policies = []string{"fifo", "edf", "edf+migrate"}
			f.serving = nil
		}, none: true},
		{name: "no studies file", mutate: func(f *learnedFixture) { f.studies = nil },
			has:   []string{"### The network against the rules", "### Serving"},
			lacks: []string{"### Sensitivity to prediction error", "### The cost of a decision"}},
		{name: "studies off", mutate: func(f *learnedFixture) { f.studies = []schedulespec.StudyRow{} },
			has:   []string{"### Serving"},
			lacks: []string{"### Sensitivity to prediction error", "### The cost of a decision"}},
		{name: "no decision costs", mutate: func(f *learnedFixture) {
			f.studies = slices.DeleteFunc(f.studies, func(r schedulespec.StudyRow) bool { return r.Study == schedulespec.StudyDecisionCost })
		}, has: []string{"### Sensitivity to prediction error"}, lacks: []string{"### The cost of a decision"}},
		{name: "no notes", mutate: func(f *learnedFixture) { f.notes = nil },
			has:   []string{"The schedule artifact's manifest notes no wall-clock serving figures for learned and learned+batch."},
			lacks: []string{"| learned | uncached: one decision |", "Time in onnxruntime"}},
		{name: "no interactive jobs", mutate: func(f *learnedFixture) {
			for i := range f.studies {
				f.studies[i].InteractiveSLOAttainment = math.NaN()
			}
		}, has: []string{"**fifo** loses the most SLO attainment", "(charts/prediction-error-slo.svg)",
			"With the dearest decisions, learned is worse on SLO attainment"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLearnedFixture()
			tt.mutate(&f)
			d := fixtureData(t, f)
			sec, err := learnedSection(d)
			if err != nil {
				t.Fatal(err)
			}
			if tt.none {
				if d.learned != nil || sec.Title != "" {
					t.Errorf("a section %q without a learned policy", sec.Title)
				}
				return
			}
			for _, w := range tt.has {
				if !strings.Contains(sec.Markdown, w) {
					t.Errorf("section lacks %q", w)
				}
			}
			for _, w := range tt.lacks {
				if strings.Contains(sec.Markdown, w) {
					t.Errorf("section has %q", w)
				}
			}
		})
	}
}

// TestCostText checks that the sentence on the dearest decisions follows
// the rows, whichever way they go.
func TestCostText(t *testing.T) {
	row := func(cost string, s, att, mean, p99 float64) schedulespec.StudyRow {
		return schedulespec.StudyRow{Study: schedulespec.StudyDecisionCost, Policy: "learned", DecisionCost: cost, DecisionCostS: s,
			SLOAttainment: att, InteractiveSLOAttainment: att, MeanE2ES: mean, P99E2ES: p99}
	}
	tests := []struct {
		name string
		rows []schedulespec.StudyRow
		want string // "" for no sentence
	}{
		{"worse", []schedulespec.StudyRow{row("0s", 0, 0.99, 0.01, 0.1), row("5ms", 0.005, 0.9, 0.02, 0.3)},
			"learned is worse on interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency."},
		{"better", []schedulespec.StudyRow{row("5ms", 0.005, 0.99, 0.01, 0.1), row("0s", 0, 0.9, 0.02, 0.3)},
			"learned is better on interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency."},
		{"unchanged", []schedulespec.StudyRow{row("0s", 0, 1, 0.01, 0.1), row("5ms", 0.005, 1, 0.01, 0.1)},
			"learned is unchanged in interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency."},
		{"the dearest is not last", []schedulespec.StudyRow{row("profile", 0.008, 0.5, 1, 2), row("0s", 0, 0.99, 0.01, 0.1), row("5ms", 0.005, 0.9, 0.02, 0.3)},
			"**learned at 8 ms a decision** (profile, the dearest) against 0 s (0s, the cheapest): interactive SLO attainment 50.0% against 99.0% (-49.0 pp)"},
		{"one cost", []schedulespec.StudyRow{row("0s", 0, 1, 0.01, 0.1)}, ""},
		{"equal costs", []schedulespec.StudyRow{row("0s", 0, 1, 0.01, 0.1), row("0ms", 0, 0.5, 0.01, 0.1)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := costText("learned", tt.rows)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("costText = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestDegradeText checks the sentence under each prediction-error chart
// against small tables of two policies.
func TestDegradeText(t *testing.T) {
	rows := func(a0, a1, b0, b1 float64) []schedulespec.StudyRow {
		var out []schedulespec.StudyRow
		for _, r := range []struct {
			p    string
			e, v float64
		}{{"edf", 0, a0}, {"edf", 0.5, a1}, {"learned", 0, b0}, {"learned", 0.5, b1}} {
			out = append(out, schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: r.p, Predictor: schedulespec.PredictorTable,
				PredictionError: r.e, PredictionMAPE: r.e / 2, InteractiveSLOAttainment: r.v, MeanE2ES: r.v})
		}
		return out
	}
	tests := []struct {
		name   string
		metric studyMetric
		rows   []schedulespec.StudyRow
		want   string
	}{
		{"learned loses most", studyInteractive, rows(0.99, 0.98, 0.99, 0.9),
			"**learned** loses the most interactive SLO attainment: 99.0% → 90.0% (-9.0 pp); at the other end, **edf**: 99.0% → 98.0% (-1.0 pp)."},
		{"none loses", studyInteractive, rows(0.9, 0.95, 0.9, 0.9),
			"No policy's interactive SLO attainment gets worse from exact predictions to ±50% (MAPE 25.0%); **edf** improves the most: 90.0% → 95.0% (+5.0 pp)."},
		{"none moves", studyInteractive, rows(1, 1, 1, 1), "No policy's interactive SLO attainment moves from exact predictions to ±50% (MAPE 25.0%)."},
		{"alike", studyInteractive, rows(1, 0.9, 1, 0.9), "every policy's interactive SLO attainment moves alike: 100.0% → 90.0% (-10.0 pp)."},
		{"latency", studyMean, rows(0.01, 0.03, 0.01, 0.011),
			"**edf**'s mean end-to-end latency grows the most: 10 ms → 30 ms (+200.0%); at the other end, **learned**: 10 ms → 11 ms (+10.0%)."},
		{"tie for the worst", studyMean, rows(0.01, 0.02, 0.01, 0.02), "every policy's mean end-to-end latency moves alike"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newPredictionError(tt.rows, []string{"edf", "learned"}).degradeText(tt.metric)
			if !strings.Contains(got, tt.want) {
				t.Errorf("degradeText = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestReadLearnedErrors damages one file or note at a time and checks
// that the error names it.
func TestReadLearnedErrors(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(f *learnedFixture)
		file   func(t *testing.T, dir string)
		want   []string
	}{
		{name: "no serving file", file: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "learned+batch", schedulespec.ServingFile))
		}, want: []string{"learned+batch/serving.parquet", "no such file"}},
		{name: "serving not parquet", file: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "learned"), schedulespec.ServingFile, []byte("PAR1 damaged"))
		}, want: []string{"learned/serving.parquet"}},
		{name: "serving of another run", file: func(t *testing.T, dir string) {
			r := newLearnedFixture().serving[1]
			r.Replication = 2
			if err := parquetio.WriteFile(filepath.Join(dir, "learned", schedulespec.ServingFile), []schedulespec.ServingRow{r}, nil); err != nil {
				t.Fatal(err)
			}
		}, want: []string{"learned/serving.parquet", "policy learned+batch replication 2, want learned replication 1"}},
		{name: "more hits than decisions", mutate: func(f *learnedFixture) { f.serving[1].CacheHits = 5000 },
			want: []string{"learned+batch/serving.parquet", "cache_hits 5000"}},
		{name: "note not a number", mutate: func(f *learnedFixture) { f.notes["serving:learned:cached_p99_us"] = "fast" },
			want: []string{"schedule manifest: note serving:learned:cached_p99_us = \"fast\""}},
		{name: "a path half noted", mutate: func(f *learnedFixture) { delete(f.notes, "serving:learned:batched_p99_us") },
			want: []string{"serving:learned:batched_n", "batched_p99_us"}},
		{name: "studies not parquet", file: func(t *testing.T, dir string) {
			write(t, dir, schedulespec.StudiesFile, []byte("not parquet"))
		}, want: []string{schedulespec.StudiesFile}},
		{name: "study of no policy", mutate: func(f *learnedFixture) { f.studies[2].Policy = "sjf" },
			want: []string{schedulespec.StudiesFile, "row 3", `policy "sjf" was not simulated`}},
		{name: "negative MAPE", mutate: func(f *learnedFixture) { f.studies[1].PredictionMAPE = -0.1 },
			want: []string{schedulespec.StudiesFile, "row 2", "prediction_mape = -0.1"}},
		{name: "unknown study", mutate: func(f *learnedFixture) { f.studies[0].Study = "load" },
			want: []string{schedulespec.StudiesFile, "row 1", `study "load"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newLearnedFixture()
			if tt.mutate != nil {
				tt.mutate(&f)
			}
			dir, runs := f.write(t)
			if tt.file != nil {
				tt.file(t, dir)
			}
			_, err := readLearned(dir, runs, f.notes)
			if err == nil {
				t.Fatal("readLearned succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("err = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestLearnedRows checks the learned scope of metrics.parquet: the
// serving counts and each simulated comparison's differences.
func TestLearnedRows(t *testing.T) {
	d := fixtureData(t, newLearnedFixture())
	rows := learnedRows(d.learned)
	find := func(policy, baseline, metric string) *MetricRow {
		i := slices.IndexFunc(rows, func(r MetricRow) bool {
			return r.Scope == ScopeLearned && r.Policy == policy && r.Baseline == baseline && r.Metric == metric
		})
		if i < 0 {
			t.Errorf("no %s row of %s against %q", metric, policy, baseline)
			return nil
		}
		return &rows[i]
	}
	if r := find("learned", "", "cache_changed"); r != nil && r.Value != 12 {
		t.Errorf("cache_changed %v, want 12", r.Value)
	}
	if r := find("learned+batch", "", "mean_batch"); r != nil && r.Value != 3 {
		t.Errorf("mean_batch %v, want 3", r.Value)
	}
	for _, base := range []string{"edf+migrate", "edf"} {
		want := fixtureDiffs(base)[0]
		if r := find("learned", base, metrics.MetricMeanE2E); r != nil && (r.Value != want.Value || *r.Lo != want.Lo || *r.Hi != want.Hi || !r.Significant) {
			t.Errorf("learned against %s: %+v, want %+v", base, r, want)
		}
	}
	if slices.ContainsFunc(rows, func(r MetricRow) bool { return r.Policy == "learned+batch" && r.Baseline != "" }) {
		t.Error("differences of learned+batch, whose counterparts were not simulated")
	}
	if learnedRows(nil) != nil {
		t.Error("rows without a learned policy")
	}
}

// TestLearnedRun simulates learned beside edf and edf+migrate with the
// placement network through onnxruntime (schedule's testdata), evaluates
// the artifact and checks the section against its sources: each paired
// difference is metrics.Compare's on the two traces, metrics.parquet's
// learned rows are serving.parquet's and those differences, and the
// wall-clock table is the notes'.
func TestLearnedRun(t *testing.T) {
	lib, src := orttest.Library(t)
	f := newFixtureWith(t, 1, func(c *schedule.Config, in *schedule.Inputs) {
		c.Policies = []string{"fifo", "round_robin", "edf", "edf+migrate", "learned"}
		c.Studies = schedule.Studies{Jobs: 1000, PredictionErrors: []float64{0.5}, DecisionCosts: []string{"5ms"}}
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
			return r.Scope == ScopeLearned && r.Policy == "learned" && r.Baseline == baseline && r.Metric == metric
		})
		if i < 0 {
			t.Errorf("metrics.parquet has no learned %s row against %q", metric, baseline)
			return nil
		}
		return &rows[i]
	}

	cl, err := metrics.ReadCluster(filepath.Join(f.in.Schedule, schedule.ClusterFile))
	if err != nil {
		t.Fatal(err)
	}
	trace := func(p string) *metrics.Trace {
		tr, err := metrics.ReadTrace(filepath.Join(f.in.Schedule, schedule.ReplicationFile(p, 1, schedule.TraceFile)), cl.Devices)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	bs := metrics.Bootstrap{Resamples: cfg.Bootstrap.Resamples, Confidence: cfg.Bootstrap.Confidence, Seed: 1} // run's seed
	for _, base := range []string{"edf+migrate", "edf"} {
		diffs, err := metrics.Compare(trace("learned"), trace(base), bs)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(md, "**learned against "+base+"**") {
			t.Errorf("report.md has no comparison of learned with %s", base)
		}
		for _, o := range headline() {
			x := diffs[slices.IndexFunc(diffs, func(x metrics.Difference) bool { return x.Metric == o.diff })]
			v := cmp.Or(verdict(o, x), "–")
			// The two tables share their metric rows; the values differ.
			row := fmt.Sprintf("| %s | %s | %s | %s | %s |", o.name, o.format(x.PolicyValue), o.format(x.BaselineValue), diffText(x, o.delta), v)
			if !strings.Contains(md, row) {
				t.Errorf("against %s: report.md lacks %q", base, row)
			}
			if r := find(base, o.diff); r != nil && (r.Value != x.Value || *r.Lo != x.Lo || *r.Hi != x.Hi || r.Significant != x.Significant) {
				t.Errorf("against %s, %s: metrics.parquet %v (%v … %v), Compare %v (%v … %v)", base, o.diff, r.Value, *r.Lo, *r.Hi, x.Value, x.Lo, x.Hi)
			}
		}
	}

	serving, err := parquetio.ReadAll[schedule.ServingRow](filepath.Join(f.in.Schedule, schedule.ReplicationFile("learned", 1, schedule.ServingFile)))
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
	if want := "| learned | uncached: one decision | " + n + " | "; !strings.Contains(md, want) {
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

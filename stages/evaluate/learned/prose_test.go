package learned

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/section"
	"github.com/mlsched/mlsched/stages/spec/evaluatespec"

	"github.com/mlsched/mlsched/stages/evaluate/golden"
	"github.com/mlsched/mlsched/stages/evaluate/report"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestLearnedSection builds the section from the fixture, checks that it
// says what the fixture's numbers say, and compares its Markdown with
// testdata/learned-section.md (-update rewrites it).
func TestLearnedSection(t *testing.T) {
	f := newLearnedFixture()
	ev, l := fixtureData(t, f)
	sec, err := render(ev, l)
	if err != nil {
		t.Fatal(err)
	}
	if sec.Title != "Learned decisions" {
		t.Errorf("title %q", sec.Title)
	}
	for _, want := range []string{
		// The comparisons, the differences as diffText writes them.
		"**learned against edf+migrate** (the Threshold rule as +migrate asks it: at once, inside the event, each idle device stopping at its first no):",
		"| Mean end-to-end latency | 10 ms | 11.2 ms | -1.2 ms (-2 ms … -400 µs) | better |",
		"| P99 end-to-end latency | 104 ms | 100 ms | +4 ms (+1 ms … +7 ms) | worse |",
		"| SLO violations | 1.0% | 1.1% | no difference (-0.3 pp … +0.1 pp) | no difference |",
		"learned is better on mean end-to-end latency and interactive SLO violations; worse on P99 end-to-end latency; no different on SLO violations and goodput (jobs/s within SLO).",
		"**learned against edf** (no migration):",
		// learned+batch's counterparts were not simulated.
		"edf+batch+migrate (the Threshold rule as +migrate asks it: at once, inside the event, each idle device stopping at its first no, with learned+batch's options; add edf+batch+migrate to schedule.policies to compare)",
		"edf+batch (no migration, with learned+batch's options; add edf+batch to schedule.policies to compare)",
		"learned\\~threshold (the Threshold rule asked exactly as the network is, about the same candidates, in the same batches and window, each batch of answers costing the same: only the network differs, with learned's options; set schedule.learned.ablations: true to compare)",
		// Serving, from serving.parquet.
		"| learned | 4000 | 310 | 1.60 | 2400 | 25.0% | 12 (1.2% of hits) | 8 µs (P99 70 µs) | serving path (profile) |",
		"| learned+batch | 3000 | 200 | 3.00 | 900 | 20.0% | – (not audited) | 110 µs | tight-loop mlp (profile) |",
		// The wall clock, from the notes, against the targets.
		"| learned | onnxruntime | uncached: one decision | 1900 | 9.21 µs | 66.1 µs | P50 ≤ 20 µs: met; P99 ≤ 100 µs: met |",
		"| learned | onnxruntime | batched: per decision | 1100 | 5.12 µs | 35 µs | ≤ 2 µs at batch 32 (benchmark); batches here average 1.60 decisions |",
		"| learned | onnxruntime | cache hit, with standardising and the key | 1000 | 0.551 µs | 1.03 µs | ≤ 200 ns for the lookup alone (benchmark) |",
		"| learned+batch | go (3 referred) | uncached: one decision | 900 | 12 µs | 140 µs | – (onnxruntime's target; the Go pass served) |",
		"They come from this run's notes",
		"Time in the evaluator in all: learned 41 ms, learned+batch 20 ms.",
		// What the clock charged, beside what serving took.
		"learned was charged draws from the serving path's measured distribution, 8 µs at the median and 70 µs at P99 for a batch of one decision: " +
			"0.87× and 1.06× the median (9.21 µs) and P99 (66.1 µs) that the uncached serving path took on the wall clock in this run",
		"learned+batch was charged the tight-loop fallback, 110 µs a decision (the profile's mean for its mlp, a tight loop's figure rather than this serving path's: " +
			"the profile has no timing of the serving path, being measured before profile.serving or imported without it), " +
			"with no served time in this run to set it beside: the Go forward pass computed its decisions",
		// The prediction-error study: fifo degrades most.
		"| *prediction MAPE* | *0.0%* | *5.0%* | *25.0%* | *12.0%* |",
		"From exact predictions to ±50% (MAPE 25.0%), **fifo** loses the most interactive SLO attainment: 99.5% → 94.5% (-5.0 pp); at the other end, **learned+batch**: 99.5% → 98.5% (-1.0 pp).",
		"From exact predictions to ±50% (MAPE 25.0%), **fifo**'s mean end-to-end latency grows the most: 10 ms → 15 ms (+50.0%); at the other end, **learned+batch**: 10 ms → 11 ms (+10.0%).",
		// The decision-cost study.
		"| learned | 5ms | 5 ms | configured | 96.9% | 97.0% | 14 ms | 130 ms |",
		"| learned | profile | 8 µs | serving path (profile) | 99.3% | 99.4% | 10.1 ms | 100 ms |",
		"| learned+batch | profile | 110 µs | tight-loop mlp (profile) | 99.4% | 99.5% | 10.2 ms | 100 ms |",
		"With the dearest decisions, learned is worse on interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency.",
		"With the dearest decisions, learned+batch is better on mean end-to-end latency; worse on interactive SLO attainment; unchanged in P99 end-to-end latency.",
	} {
		if !strings.Contains(sec.Markdown, want) {
			t.Errorf("section lacks %q", want)
		}
	}
	names := golden.Charts(t, sec)
	if want := []string{"prediction-error-slo.svg", "prediction-error-mean-e2e.svg"}; !slices.Equal(names, want) {
		t.Errorf("charts %v, want %v", names, want)
	}
	if strings.Contains(sec.Markdown, "not a serving figure") {
		t.Error("the section shows a note that is no serving figure")
	}

	md := (&report.Document{Title: "learned", Sections: []report.Section{sec}}).Markdown()
	golden.Check(t, "learned-section.md", md, "the section")
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
			// What was charged is still said, with nothing to set it against.
			has: []string{"The schedule artifact's manifest notes no wall-clock serving figures for learned and learned+batch.",
				"learned was charged draws from the serving path's measured distribution, 8 µs at the median and 70 µs at P99 for a batch of one decision;"},
			lacks: []string{"| learned | onnxruntime | uncached: one decision |", "Time in the evaluator", "took on the wall clock in this run"}},
		{name: "a configured cost", mutate: func(f *learnedFixture) {
			f.serving[0].CostS, f.serving[0].CostP99S, f.serving[0].CostSource = 0.005, 0.005, schedulespec.CostConfigured
		}, has: []string{"learned was charged the configured 5 ms a decision (schedule.learned.cost), 542.89× the uncached serving path's median",
			"| 5 ms | configured |"}},
		{name: "a schedule that did not record the source", mutate: func(f *learnedFixture) {
			f.serving[0].CostP99S, f.serving[0].CostSource = 0, ""
		}, has: []string{"learned was charged 8 µs a decision (the schedule artifact does not say from what: it was made before serving.parquet recorded it), 0.87× the uncached serving path's median",
			"| 8 µs | – |"}},
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
			ev, l := fixtureData(t, f)
			sec, err := render(ev, l)
			if err != nil {
				t.Fatal(err)
			}
			if tt.none {
				if l != nil || sec.Title != "" {
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
		{"better, one replication", []schedulespec.StudyRow{row("5ms", 0.005, 0.99, 0.01, 0.1), row("0s", 0, 0.9, 0.02, 0.3)},
			"**Against expectation**, the dearest decisions leave **learned** better off in interactive SLO attainment. With one replication of the study this cannot be told from noise"},
		{"unchanged", []schedulespec.StudyRow{row("0s", 0, 1, 0.01, 0.1), row("5ms", 0.005, 1, 0.01, 0.1)},
			"learned is unchanged in interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency."},
		{"the dearest is not last", []schedulespec.StudyRow{row("profile", 0.008, 0.5, 1, 2), row("0s", 0, 0.99, 0.01, 0.1), row("5ms", 0.005, 0.9, 0.02, 0.3)},
			"**learned at 8 ms a decision** (profile, the dearest) against 0 s (0s, the cheapest): interactive SLO attainment 50.0% against 99.0%: -49.0 pp;"},
		{"one cost", []schedulespec.StudyRow{row("0s", 0, 1, 0.01, 0.1)}, ""},
		{"equal costs", []schedulespec.StudyRow{row("0s", 0, 1, 0.01, 0.1), row("0ms", 0, 0.5, 0.01, 0.1)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := costText("learned", costCells(tt.rows), 1, 0.95)
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
			got := newPredictionError(tt.rows, []string{"edf", "learned"}, 0.95).degradeText(tt.metric)
			if !strings.Contains(got, tt.want) {
				t.Errorf("degradeText = %q, want it to contain %q", got, tt.want)
			}
		})
	}
}

// TestUnexpectedResults checks what the studies say where worse
// predictions or dearer decisions leave a policy better off: within
// noise where the paired interval over the replications holds zero, and
// more than noise, with the likeliest cause, where it does not.
func TestUnexpectedResults(t *testing.T) {
	// Replication r's attainment: exact at base[r], ±50% at base[r]+up[r].
	pe := func(policy string, base, up []float64) []schedulespec.StudyRow {
		var out []schedulespec.StudyRow
		for r := range base {
			for _, e := range []float64{0, 0.5} {
				v := base[r]
				if e > 0 {
					v += up[r]
				}
				out = append(out, schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: policy, Replication: int32(r + 1),
					Predictor: schedulespec.PredictorTable, PredictionError: e, PredictionMAPE: e / 2, InteractiveSLOAttainment: v})
			}
		}
		return out
	}
	// Replication r's attainment with train's predictor: base[r]+by[r].
	trained := func(policy string, base, by []float64) []schedulespec.StudyRow {
		var out []schedulespec.StudyRow
		for r := range base {
			out = append(out, schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: policy, Replication: int32(r + 1),
				Predictor: schedulespec.PredictorLearned, PredictionMAPE: 0.12, InteractiveSLOAttainment: base[r] + by[r]})
		}
		return out
	}
	base := []float64{0.80, 0.85, 0.90, 0.82, 0.88}
	noisy := []float64{0.02, -0.01, 0.015, -0.005, 0.01} // mean +0.6 pp, interval holds zero
	steady := []float64{0.03, 0.032, 0.029, 0.031, 0.03} // mean +3.0 pp, far from zero
	worse := []float64{-0.05, -0.04, -0.06, -0.05, -0.05}
	tests := []struct {
		name     string
		rows     [][]schedulespec.StudyRow
		want     []string
		dontWant []string
	}{
		{"as expected", [][]schedulespec.StudyRow{pe("edf", base, worse), pe("learned", base, worse)}, nil, []string{"Against expectation"}},
		{"within noise", [][]schedulespec.StudyRow{pe("edf", base, noisy), pe("learned", base, worse)},
			[]string{"**Against expectation**, worse predictions leave **edf** better off in interactive SLO attainment.",
				"Within noise, the paired 95% interval over 5 replications holding zero: **edf** 85.0% → 85.6%, +0.6 pp (-1.0 pp … +2.2 pp)."},
			[]string{"More than noise", "likeliest cause"}},
		{"more than noise", [][]schedulespec.StudyRow{pe("edf", base, steady), pe("learned+batch", base, steady)},
			[]string{"worse predictions leave 2 policies better off in interactive SLO attainment.", "More than noise at 95% over 5 replications: **edf** 85.0% → 88.0%, +3.0 pp (+2.9 pp … +3.2 pp)",
				"The likeliest cause for **edf**, which this report cannot test: with exact means, jobs of one model and batch size tie",
				"The likeliest cause for **learned+batch**, which this report cannot test: its migrations weigh predicted finishes"},
			[]string{"Within noise"}},
		{"train's predictor", [][]schedulespec.StudyRow{pe("edf", base, worse), trained("edf", base, steady), pe("learned", base, worse), trained("learned", base, worse)},
			[]string{"**Against expectation**, train's predictor's predictions (MAPE 12.0% against the means) leave **edf** better off in interactive SLO attainment. More than noise at 95% over 5 replications: **edf** 85.0% → 88.0%",
				"The likeliest cause for **edf**, which this report cannot test: train's predictor is a fitted curve"},
			[]string{"worse predictions leave", "**learned** 85.0%"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newPredictionError(slices.Concat(tt.rows...), []string{"edf", "learned", "learned+batch"}, 0.95).degradeText(studyInteractive)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("degradeText lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.dontWant {
				if strings.Contains(got, w) {
					t.Errorf("degradeText says %q:\n%s", w, got)
				}
			}
		})
	}

	// The dearest decisions, better in every replication by about 1 ms.
	var costs []schedulespec.StudyRow
	for r, mean := range []float64{0.070, 0.072, 0.069, 0.071} {
		for _, c := range []struct {
			name string
			s, d float64
		}{{"0s", 0, 0}, {"5ms", 0.005, -0.001}} {
			costs = append(costs, schedulespec.StudyRow{Study: schedulespec.StudyDecisionCost, Policy: "learned", Replication: int32(r + 1),
				DecisionCost: c.name, DecisionCostS: c.s, InteractiveSLOAttainment: 0.9, MeanE2ES: mean + c.d, P99E2ES: 0.5})
		}
	}
	got := costText("learned", costCells(costs), 4, 0.95)
	for _, w := range []string{"mean end-to-end latency 69.5 ms against 70.5 ms: -1 ms (-1 ms … -1 ms), -1.4%;",
		"**Against expectation**, the dearest decisions leave **learned** better off in mean end-to-end latency. More than noise at 95% over 4 replications: **learned** 70.5 ms → 69.5 ms, -1 ms",
		"The likeliest cause for **learned**, which this report cannot test: a charge delays each migration"} {
		if !strings.Contains(got, w) {
			t.Errorf("costText lacks %q:\n%s", w, got)
		}
	}
}

// TestFreeDecisionsShouldNotLose: where the learned policy, paying for
// its decisions, beats its ablation whose decisions cost nothing, the
// section says that this goes against expectation and why it may; where
// it does not, it says nothing of the kind.
func TestFreeDecisionsShouldNotLose(t *testing.T) {
	ev := &section.Evaluation{Config: evaluatespec.DefaultConfig(), Replications: 5}
	for _, tt := range []struct {
		counterpart string
		want        bool
	}{{"learned~free", true}, {"learned~threshold", false}} {
		l := &runs{comparisons: []comparison{{learned: "learned", counterpart: tt.counterpart, rule: "r", simulated: true, diffs: fixtureDiffs(tt.counterpart)}}}
		got := l.againstRulesText(ev)
		want := "**Against expectation**, learned, whose decisions cost time on the simulated clock, is better than learned\\~free, whose decisions cost nothing, " +
			"on mean end-to-end latency and interactive SLO violations: more than noise at 95%. The likeliest cause"
		if strings.Contains(got, want) != tt.want {
			t.Errorf("against %s: says %q = %v, want %v:\n%s", tt.counterpart, want, !tt.want, tt.want, got)
		}
	}
}

// TestCostTextWithinNoise: a change whose interval over the replications
// holds zero is no difference, whichever way its point estimate goes.
func TestCostTextWithinNoise(t *testing.T) {
	var rows []schedulespec.StudyRow
	for r, d := range []float64{0.004, -0.003, 0.002, -0.001} {
		for _, c := range []struct {
			name string
			s    float64
		}{{"0s", 0}, {"5ms", 0.005}} {
			mean := 0.07
			if c.s > 0 {
				mean += d
			}
			rows = append(rows, schedulespec.StudyRow{Study: schedulespec.StudyDecisionCost, Policy: "learned", Replication: int32(r + 1),
				DecisionCost: c.name, DecisionCostS: c.s, InteractiveSLOAttainment: 0.9, MeanE2ES: mean, P99E2ES: 0.5})
		}
	}
	got := costText("learned", costCells(rows), 4, 0.95)
	if want := "learned is no different (the interval holds zero) on interactive SLO attainment, mean end-to-end latency and P99 end-to-end latency."; !strings.Contains(got, want) {
		t.Errorf("costText lacks %q:\n%s", want, got)
	}
	if strings.Contains(got, "worse") || strings.Contains(got, "Against expectation") {
		t.Errorf("costText calls noise a change:\n%s", got)
	}
}

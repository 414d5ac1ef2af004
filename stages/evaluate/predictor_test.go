package evaluate

import (
	"math"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/evaluate/report"

	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// TestHonestScores: the predictor section sets the kept candidate's
// grouped k-fold MAPE beside the nested cross-validation's (with what the
// outer folds chose) and the error in use, which the studies' exact row of
// the learned predictor gives; without them it says nothing.
func TestHonestScores(t *testing.T) {
	score := func(split, cand, metric string, v float64) trainspec.MetricRow {
		return trainspec.MetricRow{Model: trainspec.ModelPredictor, Section: trainspec.SectionScore, Split: split, Candidate: cand, Metric: metric, Value: v}
	}
	tr := &trained{kind: predictor.KindAffine, at: map[trainKey]float64{}, rows: []trainspec.MetricRow{
		score(trainspec.SplitKFold, predictor.KindAffine, trainspec.MetricMAPE, 0.047),
		score(trainspec.SplitKFold, predictor.KindForest, trainspec.MetricMAPE, 0.19),
		score(trainspec.SplitNested, predictor.KindAuto, trainspec.MetricMAPE, 0.081),
		score(trainspec.SplitNested, predictor.KindAffine, trainspec.MetricChosen, 4),
		score(trainspec.SplitNested, predictor.KindForest, trainspec.MetricChosen, 1),
	}}
	for _, r := range tr.rows {
		tr.at[keyOf(r)] = r.Value
	}
	use := inUseOf([]schedulespec.StudyRow{
		{Study: schedulespec.StudyPredictionError, Policy: "edf", Predictor: schedulespec.PredictorTable, PredictionMAPE: 0},
		{Study: schedulespec.StudyPredictionError, Policy: "edf", Predictor: schedulespec.PredictorLearned, PredictionError: 0.1, PredictionMAPE: 0.09},
		{Study: schedulespec.StudyPredictionError, Policy: "edf", Predictor: schedulespec.PredictorLearned, PredictionMAPE: 0.178, Jobs: 20000},
	})
	if use == nil || use.mape != 0.178 || use.jobs != 20000 {
		t.Fatalf("inUseOf = %+v, want the learned predictor's exact row: 17.8%% over 20000 jobs", use)
	}
	text := honestText(tr, use)
	for _, want := range []string{"grouped k-fold MAPE, 4.7%, is also the figure that chose it", "gives the selection a MAPE of 8.1% (the outer folds chose affine in 4, forest in 1)",
		"over the first 20000 eval jobs", "the predictions are 17.8% from the profile's means"} {
		if !strings.Contains(text, want) {
			t.Errorf("honestText lacks %q:\n%s", want, text)
		}
	}
	// A kept table is the profile's means: its error in use is zero by
	// construction, and the text says so rather than leave a 0.0% to
	// puzzle over.
	tr.kind = predictor.KindTable
	tr.at[keyOf(score(trainspec.SplitKFold, predictor.KindTable, trainspec.MetricMAPE, 0.057))] = 0.057
	text = honestText(tr, &inUse{mape: 0, jobs: 20000})
	if want := "the predictions are 0.0% from the profile's means: the kept table is those means"; !strings.Contains(text, want) {
		t.Errorf("honestText for a kept table lacks %q:\n%s", want, text)
	}
	tr.kind = predictor.KindAffine
	tr.rows = tr.rows[:2]
	tr.at = map[trainKey]float64{}
	for _, r := range tr.rows {
		tr.at[keyOf(r)] = r.Value
	}
	if got := honestText(tr, nil); got != "" {
		t.Errorf("without nested scores or studies, honestText = %q, want nothing", got)
	}
}

// TestInUseOverReplications: the error in use is the mean over the
// replications of one policy's exact rows of the learned predictor.
func TestInUseOverReplications(t *testing.T) {
	row := func(policy string, rep int32, mape float64) schedulespec.StudyRow {
		return schedulespec.StudyRow{Study: schedulespec.StudyPredictionError, Policy: policy, Replication: rep,
			Predictor: schedulespec.PredictorLearned, PredictionMAPE: mape, Jobs: 10000}
	}
	use := inUseOf([]schedulespec.StudyRow{row("edf", 1, 0.10), row("edf", 2, 0.20), row("fifo", 1, 0.10), row("fifo", 2, 0.20), row("edf", 3, 0.30)})
	if use == nil || use.reps != 3 || math.Abs(use.mape-0.2) > 1e-12 || use.jobs != 10000 {
		t.Fatalf("inUseOf = %+v, want the mean 20%% over edf's 3 replications of 10000 jobs", use)
	}
	if text := honestText(&trained{kind: predictor.KindAffine, at: map[trainKey]float64{}}, use); !strings.Contains(text, "the mean over 3 replications") {
		t.Errorf("honestText does not say what the error in use is over:\n%s", text)
	}
}

// TestNetworkAgainstRules: each rule's paired difference from the
// network, and what is said where a rule is as accurate as the network:
// within noise where the interval holds zero, with the likeliest cause
// where it does not, and nothing for an artifact without the rows.
func TestNetworkAgainstRules(t *testing.T) {
	tests := []struct {
		name         string
		acc          [3]float64 // network minus the best feature: value, lo, hi
		want, absent []string
	}{
		{"network better", [3]float64{0.024, 0.006, 0.041},
			[]string{"accuracy +2.4 pp (+0.6 pp … +4.1 pp) over the best single feature and +3.0 pp (+1.0 pp … +5.0 pp) over the threshold rule",
				"regret per decision -150 ms (-200 ms … -100 ms) and -150 ms (-210 ms … -90 ms)"},
			[]string{"Against expectation"}},
		{"rule as good, within noise", [3]float64{-0.014, -0.035, 0.008},
			[]string{"**Against expectation**, the best single feature is as accurate as the network or more: 87.7% against 86.3%, a difference of -1.4 pp (-3.5 pp … +0.8 pp). Within noise"},
			[]string{"More than noise"}},
		{"rule better, more than noise", [3]float64{-0.03, -0.05, -0.01},
			[]string{"More than noise at 95%. The likeliest cause", "their AUCs (0.873 against 0.638)"},
			[]string{"Within noise"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			score := func(cand, metric string, v float64) trainspec.MetricRow {
				return trainspec.MetricRow{Model: trainspec.ModelPlacement, Section: trainspec.SectionScore, Split: trainspec.SplitTest, Candidate: cand, Metric: metric, Value: v}
			}
			nm := trainspec.MetricNetworkMinus
			rows := []trainspec.MetricRow{
				score(trainspec.ScorerNetwork, "accuracy", 0.863), score(trainspec.ScorerNetwork, "auc", 0.873),
				score(trainspec.ScorerBestFeature, "accuracy", 0.863-tt.acc[0]), score(trainspec.ScorerBestFeature, "auc", 0.638),
				score(trainspec.ScorerBestFeature, nm+"accuracy", tt.acc[0]), score(trainspec.ScorerBestFeature, nm+"accuracy_lo", tt.acc[1]),
				score(trainspec.ScorerBestFeature, nm+"accuracy_hi", tt.acc[2]),
				score(trainspec.ScorerBestFeature, nm+trainspec.MetricRegretS, -0.15), score(trainspec.ScorerBestFeature, nm+trainspec.MetricRegretS+"_lo", -0.2),
				score(trainspec.ScorerBestFeature, nm+trainspec.MetricRegretS+"_hi", -0.1),
				score(trainspec.ScorerThreshold, "accuracy", 0.833),
				score(trainspec.ScorerThreshold, nm+"accuracy", 0.03), score(trainspec.ScorerThreshold, nm+"accuracy_lo", 0.01),
				score(trainspec.ScorerThreshold, nm+"accuracy_hi", 0.05),
				score(trainspec.ScorerThreshold, nm+trainspec.MetricRegretS, -0.15), score(trainspec.ScorerThreshold, nm+trainspec.MetricRegretS+"_lo", -0.21),
				score(trainspec.ScorerThreshold, nm+trainspec.MetricRegretS+"_hi", -0.09),
			}
			tr := &trained{at: map[trainKey]float64{}, rows: rows}
			for _, r := range rows {
				tr.at[keyOf(r)] = r.Value
			}
			got := tr.againstRulesText(trainspec.SplitTest, []string{trainspec.ScorerNetwork, trainspec.ScorerBestFeature, trainspec.ScorerThreshold},
				trainspec.MetricRegretS, report.Secs)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tt.absent {
				if strings.Contains(got, w) {
					t.Errorf("says %q:\n%s", w, got)
				}
			}
		})
	}
	if got := (&trained{at: map[trainKey]float64{}}).againstRulesText(trainspec.SplitTest, []string{trainspec.ScorerNetwork, trainspec.ScorerBestFeature},
		trainspec.MetricRegretS, report.Secs); got != "" {
		t.Errorf("without the rows: %q, want nothing", got)
	}
}

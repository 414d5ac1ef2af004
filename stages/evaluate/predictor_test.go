package evaluate

import (
	"strings"
	"testing"

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

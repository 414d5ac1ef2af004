package evaluate

import (
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// TestOpCostText sets the per-operator model's leave-one-model-out score
// beside the kept candidate's on the same held-out configurations (those
// timed node by node, not every one the kept candidate was scored on),
// and says nothing without it.
func TestOpCostText(t *testing.T) {
	cv := func(cand, model string, batch int32, measured, predicted float64) trainspec.CVRow {
		return trainspec.CVRow{Split: trainspec.SplitModel, Candidate: cand, Device: "cpu", Model: model, Precision: "fp32", Batch: batch, Threads: 1,
			MeasuredS: measured, PredictedS: predicted, HasPrediction: true}
	}
	tr := &trained{kind: predictor.KindForest, at: map[trainKey]float64{}, cv: []trainspec.CVRow{
		cv(predictor.KindForest, "mlp", 1, 1, 1.5),
		cv(predictor.KindForest, "mlp", 64, 1, 9), // not timed node by node: left out
		cv(predictor.KindForest, "vit", 1, 2, 1),
		cv(trainspec.CandidateOpCost, "mlp", 1, 1, 1.1),
		cv(trainspec.CandidateOpCost, "vit", 1, 2, 2.2),
	}}
	if got := opCostText(tr); got != "" {
		t.Errorf("without opcost's scores: %q, want nothing", got)
	}
	for metric, v := range map[string]float64{trainspec.MetricMAPE: 0.1, trainspec.MetricWithin10: 1} {
		tr.at[trainKey{model: trainspec.ModelPredictor, section: trainspec.SectionScore, split: trainspec.SplitModel, candidate: trainspec.CandidateOpCost, metric: metric}] = v
	}
	got := opCostText(tr)
	for _, w := range []string{"**Per-operator model.** opcost", "over the 2 configurations timed node by node: MAPE 10.0%, 100.0% within ±10%",
		"on the 2 of them it predicts, forest's leave-one-model-out MAPE is 50.0%"} {
		if !strings.Contains(got, w) {
			t.Errorf("the text lacks %q:\n%s", w, got)
		}
	}
}

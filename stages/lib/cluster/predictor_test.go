package cluster

import (
	"context"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
)

// TestLearnedTables checks the learned predictor's tables: what the model
// says, per device (the declared device's speed is the simulator's to
// apply), for every batch a simulation can form.
func TestLearnedTables(t *testing.T) {
	prof := learnedProfile()
	model := trainPredictor(t, prof, predictor.KindLogLinear)
	cfg := testConfig()
	cfg.Cluster[1].Speed = 2
	cfg.Predictor = schedulespec.PredictorLearned
	w, err := Load(context.Background(), cfg, catalog.Zoo(), writeSamples(t, prof), generateJobs(t, mlpWorkload(4000), 3), 0, model)
	if err != nil {
		t.Fatal(err)
	}
	l := w.Cluster.learned
	filled := 0
	for d, dev := range cfg.Cluster {
		for pr, tab := range l.tab[d] {
			for b := 1; b < len(tab); b++ {
				want, _ := model.Predict(l.query(dev, int32(pr/numPrecisions), int32(pr%numPrecisions), b))
				if got := l.Predict(d, int32(pr/numPrecisions), int32(pr%numPrecisions), int32(b)); got != want || !(got > 0) {
					t.Fatalf("device %d pair %d batch %d: tabulated %v, model %v", d, pr, b, got, want)
				}
				filled++
			}
			if len(tab) > 0 && len(tab) <= cfg.Batching.MaxBatch {
				t.Errorf("device %d pair %d: tabulated to batch %d, short of max_batch %d", d, pr, len(tab)-1, cfg.Batching.MaxBatch)
			}
		}
	}
	if filled == 0 {
		t.Error("no table was filled")
	}
}

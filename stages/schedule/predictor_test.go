package schedule

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/train/predictorfit"
)

// learnedProfile times the mlp in both precisions at batch sizes 1, 4 and
// 16, with contention rows: enough configurations for a predictor.
func learnedProfile() []profilespec.Sample {
	var s []profilespec.Sample
	for _, p := range []string{profilespec.FP32, profilespec.FP16} {
		s = append(s, inference("cpu", "mlp", p, 1, 1.0, 1.2, 0.9, 1.1)...)
		s = append(s, inference("cpu", "mlp", p, 4, 2.1, 2.4, 2.0, 2.2)...)
		s = append(s, inference("cpu", "mlp", p, 16, 7, 7.5, 8, 7.2)...)
	}
	s = append(s, samples(profilespec.KindContention, "cpu", "mlp", profilespec.FP32, 1, 1, 1, 1, 1.1, 0.9)...)
	s = append(s, samples(profilespec.KindContention, "cpu", "mlp", profilespec.FP32, 1, 1, 2, 1.3, 1.4, 1.2)...)
	return s
}

// savePredictor trains a predictor of kind on s and writes its file.
func savePredictor(t *testing.T, s []profilespec.Sample, kind string) (string, *predictor.Model) {
	t.Helper()
	r, err := predictorfit.Train(s, predictorfit.Options{Catalog: catalog.Zoo(), Seed: 1, Kind: kind, Folds: 2, Trees: 3})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "predictor.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := r.Model.Save(f); err != nil {
		t.Fatal(err)
	}
	return path, r.Model
}

// TestLearnedPredictor simulates with train's predictor (a log-linear fit,
// which misses the profile's means) and with the profile's means: a
// policy that predicts nothing (round_robin) runs the same either way, one
// that places
// by predicted finish does not, and the learned tables hold exactly what
// the model predicts.
func TestLearnedPredictor(t *testing.T) {
	prof := learnedProfile()
	path, _ := savePredictor(t, prof, predictor.KindLogLinear)
	cfg := testConfig()
	cfg.Policies = []string{"round_robin", "greedy"}
	cfg.Cluster[1].Speed = 2 // the declared device: as fast as two CPU lanes
	samples, jobs := writeSamples(t, prof), generateJobs(t, mlpWorkload(4000), 3)
	run := func(pred string) output {
		c := cfg
		c.Predictor = pred
		dir := t.TempDir()
		if err := Run(context.Background(), c, 5, Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Predictor: path}, Output{Dir: dir, Metadata: testMeta}); err != nil {
			t.Fatal(err)
		}
		return readOutput(t, c, dir)
	}
	table, learned := run(PredictorTable), run(PredictorLearned)
	if !slices.Equal(table.traces["round_robin"], learned.traces["round_robin"]) {
		t.Error("round_robin, which predicts nothing, runs differently with the learned predictor")
	}
	moved := 0
	for i, r := range table.traces["greedy"] {
		if learned.traces["greedy"][i].Device != r.Device {
			moved++
		}
	}
	if moved == 0 {
		t.Error("greedy placed every job where it did with the profile's means: the learned predictor was not used")
	}

	// Without the file, or with one for another machine, the stage says so.
	bad := cfg
	bad.Predictor = PredictorLearned
	err := Run(context.Background(), bad, 5, Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs}, Output{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "learned predictor") {
		t.Errorf("Run without a predictor file = %v", err)
	}
	other := slices.Clone(prof)
	for i := range other {
		other[i].Device = "gpu"
	}
	otherPath, _ := savePredictor(t, other, predictor.KindLogLinear)
	err = Run(context.Background(), bad, 5, Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Predictor: otherPath}, Output{Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "has no prediction for mlp") || !strings.Contains(err.Error(), "schedule.predictor: table") {
		t.Errorf("Run with a predictor of another device = %v", err)
	}
}

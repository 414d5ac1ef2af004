package cluster

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/train/predictorfit"
)

// The fixtures: workloads from the generate stage itself (its encodings are
// what the reader must read), and small hand-made profiles.

// generateJobs runs the generate stage with cfg and returns its eval file.
func generateJobs(t testing.TB, cfg generate.Config, seed int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := generate.Run(context.Background(), cfg, seed, catalog.Zoo(), generate.Output{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, generatespec.JobsFile(generatespec.WorkloadEval))
}

// mlpWorkload is generate's default with only the mlp, in both precisions.
func mlpWorkload(jobs int64) generate.Config {
	cfg := generate.DefaultConfig()
	cfg.Train.Jobs, cfg.Eval.Jobs = 1, jobs
	cfg.Models = map[string]float64{"mlp": 1}
	return cfg
}

// inference makes one inference row per latency (in milliseconds).
func inference(kind, model, precision string, batch, concurrency int, latMS ...float64) []profilespec.Sample {
	out := make([]profilespec.Sample, len(latMS))
	for i, l := range latMS {
		out[i] = profilespec.Sample{Kind: kind, Backend: "onnxruntime", Provider: "CPUExecutionProvider",
			Device: "cpu", Model: model, Precision: precision, Batch: int32(batch), Threads: 1,
			Concurrency: int32(concurrency), Repeat: int32(i), LatencyS: l * 1e-3, Source: profilespec.SourceMeasured}
	}
	return out
}

// learnedProfile times the mlp in both precisions at batch sizes 1, 4 and
// 16, with contention rows: enough configurations for a predictor.
func learnedProfile() []profilespec.Sample {
	var s []profilespec.Sample
	for _, p := range []string{profilespec.FP32, profilespec.FP16} {
		s = append(s, inference(profilespec.KindInference, "mlp", p, 1, 1, 1.0, 1.2, 0.9, 1.1)...)
		s = append(s, inference(profilespec.KindInference, "mlp", p, 4, 1, 2.1, 2.4, 2.0, 2.2)...)
		s = append(s, inference(profilespec.KindInference, "mlp", p, 16, 1, 7, 7.5, 8, 7.2)...)
	}
	s = append(s, inference(profilespec.KindContention, "mlp", profilespec.FP32, 1, 1, 1, 1.1, 0.9)...)
	s = append(s, inference(profilespec.KindContention, "mlp", profilespec.FP32, 1, 2, 1.3, 1.4, 1.2)...)
	return s
}

// writeSamples writes a samples.parquet into a fresh directory.
func writeSamples(t testing.TB, s []profilespec.Sample) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), profilespec.SamplesFile)
	if err := parquetio.WriteFile(path, s, nil); err != nil {
		t.Fatal(err)
	}
	return path
}

// trainPredictor trains a predictor of kind on s.
func trainPredictor(t *testing.T, s []profilespec.Sample, kind string) *predictor.Model {
	t.Helper()
	r, err := predictorfit.Train(s, predictorfit.Options{Catalog: catalog.Zoo(), Seed: 1, Kind: kind, Folds: 2, Trees: 3})
	if err != nil {
		t.Fatal(err)
	}
	return r.Model
}

// testConfig is schedule's default without the sweep, the studies, the
// real runs and the learned policy.
func testConfig() schedulespec.Config {
	cfg := schedulespec.DefaultConfig()
	cfg.Sweep.Loads, cfg.Sweep.Tolerance = nil, 0
	cfg.Replications, cfg.Utilization = 1, 0
	cfg.Predictor = schedulespec.PredictorTable
	cfg.Policies = []string{"fifo", "greedy"}
	cfg.Studies, cfg.Real = schedulespec.Studies{}, schedulespec.Real{}
	return cfg
}

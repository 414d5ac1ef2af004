package train

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/stages/lib/catalog"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/generate"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/generatespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// samplesPath is a profile measured on a two-core machine with the
// default profile settings.
const samplesPath = "predictorfit/testdata/samples-default.parquet"

// trainJobs runs the generate stage with its defaults but for the job
// counts and returns the train workload's file.
func trainJobs(t testing.TB, jobs int64) string {
	t.Helper()
	cfg := generate.DefaultConfig()
	cfg.Train.Jobs, cfg.Eval.Jobs, cfg.Holdout.Jobs = jobs, 1, jobs/2
	dir := t.TempDir()
	if err := generate.Run(context.Background(), cfg, 1, catalog.Zoo(), generate.Output{Dir: dir}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, generatespec.JobsFile(generatespec.WorkloadTrain))
}

// small is a train section that runs in about a second.
func small() Config {
	cfg := trainspec.DefaultConfig()
	cfg.Predictor.Trees = 10
	cfg.Placement.Decisions = 4000
	cfg.Placement.Network.Epochs = 100
	return cfg
}

// run runs the stage into a new directory and returns it.
func run(t testing.TB, cfg Config, jobs string) string {
	t.Helper()
	dir := t.TempDir()
	notes := map[string]string{}
	// The progress bar: never past its total, never backwards, full at
	// the end.
	var last, total int64
	progress := func(done, all int64) {
		if done > all || done < last || (total != 0 && all != total) {
			t.Errorf("progress %d of %d after %d of %d", done, all, last, total)
		}
		last, total = done, all
	}
	// The holdout workload generate wrote beside the train one.
	holdout := filepath.Join(filepath.Dir(jobs), generatespec.JobsFile(generatespec.WorkloadHoldout))
	err := Run(context.Background(), cfg, trainspec.SimulationOf(schedulespec.DefaultConfig()), 7,
		Inputs{Models: catalogtest.ZooFile(t), Samples: samplesPath, Jobs: jobs, Holdout: holdout}, Output{Dir: dir, Metadata: map[string]string{"stage": "train"}, Notes: notes, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if last != total || total == 0 {
		t.Errorf("progress ended at %d of %d", last, total)
	}
	for _, k := range []string{"predictor", "rollouts", "network_training"} {
		if notes[k] == "" {
			t.Errorf("no %s note", k)
		}
	}
	return dir
}

// TestRunIsDeterministic runs the stage twice on the same inputs: every
// file is byte-identical.
func TestRunIsDeterministic(t *testing.T) {
	jobs := trainJobs(t, 20000)
	a, b := run(t, small(), jobs), run(t, small(), jobs)
	for _, name := range []string{trainspec.PredictorFile, trainspec.PlacementFile, trainspec.CVFile, trainspec.DecisionsFile, trainspec.MetricsFile} {
		x, err := os.ReadFile(filepath.Join(a, name))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between two runs on the same inputs", name)
		}
	}
}

// TestHeldOutScores reads what the stage wrote and checks the network on
// the decision points it never saw: no block of the workload in two
// splits, the test scores in metrics.parquet recomputed from
// decisions.parquet through the exported network, and the network
// better than the threshold rule there.
func TestHeldOutScores(t *testing.T) {
	dir := run(t, small(), trainJobs(t, 20000))
	rows, err := parquetio.ReadAll[trainspec.DecisionRow](filepath.Join(dir, trainspec.DecisionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != small().Placement.Decisions {
		t.Fatalf("%d decision points, want %d", len(rows), small().Placement.Decisions)
	}
	splitOf := map[int32]string{}
	count := map[string]int{}
	var x [][placement.Inputs]float32
	var y []bool
	for _, r := range rows {
		if s, ok := splitOf[r.Block]; ok && s != r.Split {
			t.Fatalf("block %d is in the %s and the %s split", r.Block, s, r.Split)
		}
		splitOf[r.Block] = r.Split
		count[r.Split]++
		if r.Split == trainspec.SplitTest {
			var v [placement.Inputs]float32
			copy(v[:], r.Features)
			x, y = append(x, v), append(y, r.Migrate)
		}
	}
	for _, s := range []string{trainspec.SplitTrain, trainspec.SplitValidation, trainspec.SplitTest} {
		if count[s] == 0 {
			t.Errorf("no point in the %s split: %v", s, count)
		}
	}
	s, err := placement.Evaluate(servePlacement(t, filepath.Join(dir, trainspec.PlacementFile), x), y)
	if err != nil {
		t.Fatal(err)
	}
	metrics, err := parquetio.ReadAll[trainspec.MetricRow](filepath.Join(dir, trainspec.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	score := func(scorer, metric string) float64 {
		for _, m := range metrics {
			if m.Model == trainspec.ModelPlacement && m.Section == trainspec.SectionScore && m.Candidate == scorer && m.Metric == metric {
				return m.Value
			}
		}
		t.Fatalf("metrics.parquet has no %s %s", scorer, metric)
		return 0
	}
	// onnxruntime computes in float32, the scores were computed in Go in
	// float64: a point within 1e-5 of the threshold may fall either way.
	if got := score(trainspec.ScorerNetwork, "accuracy"); math.Abs(got-s.Accuracy) > 1.5/float64(s.N) {
		t.Errorf("metrics.parquet: network accuracy %v, recomputed from decisions.parquet through onnxruntime %v", got, s.Accuracy)
	}
	if got := score(trainspec.ScorerNetwork, "auc"); math.Abs(got-s.AUC) > 1e-4 {
		t.Errorf("metrics.parquet: network AUC %v, recomputed from decisions.parquet through onnxruntime %v", got, s.AUC)
	}
	// Every scorer's intervals hold its figure, and its regret is what
	// its wrong decisions cost: none where it is always right, and some
	// where it errs.
	for _, sc := range []string{trainspec.ScorerNetwork, trainspec.ScorerThreshold, trainspec.ScorerBestFeature} {
		for _, m := range []string{"accuracy", "auc", trainspec.MetricRegretS} {
			if v, lo, hi := score(sc, m), score(sc, m+"_lo"), score(sc, m+"_hi"); !(lo <= v && v <= hi) {
				t.Errorf("%s %s %v outside its interval [%v, %v]", sc, m, v, lo, hi)
			}
		}
		if wrong, regret := score(sc, "fp")+score(sc, "fn"), score(sc, trainspec.MetricRegretS); (wrong == 0) != (regret == 0) || regret < 0 {
			t.Errorf("%s: %v wrong decisions, regret %v s per decision", sc, wrong, regret)
		}
	}
	if b := score(trainspec.ScorerNetwork, "blocks"); b < 2 || b > float64(count[trainspec.SplitTest]) {
		t.Errorf("the test points fall in %v blocks", b)
	}
	// On the holdout workload, which training never touched (another
	// seed, Poisson arrivals where train's are diurnal): every scorer has
	// its figures with intervals, and the network still ranks the points
	// nearly right.
	holdout := func(scorer, metric string) float64 {
		for _, m := range metrics {
			if m.Model == trainspec.ModelPlacement && m.Section == trainspec.SectionScore && m.Split == trainspec.SplitHoldout && m.Candidate == scorer && m.Metric == metric {
				return m.Value
			}
		}
		t.Fatalf("metrics.parquet has no holdout %s %s", scorer, metric)
		return 0
	}
	for _, sc := range []string{trainspec.ScorerNetwork, trainspec.ScorerThreshold, trainspec.ScorerBestFeature} {
		for _, m := range []string{"accuracy", "auc", trainspec.MetricRegretS} {
			if v, lo, hi := holdout(sc, m), holdout(sc, m+"_lo"), holdout(sc, m+"_hi"); !(lo <= v && v <= hi) {
				t.Errorf("holdout: %s %s %v outside its interval [%v, %v]", sc, m, v, lo, hi)
			}
		}
	}
	// The labels count the jobs that arrive after a decision, which no
	// input shows, so no scorer ranks the points nearly right; the
	// network must rank them far better than either rule does.
	for _, on := range []struct {
		split string
		score func(scorer, metric string) float64
	}{{trainspec.SplitTest, score}, {trainspec.SplitHoldout, holdout}} {
		n, auc := on.score(trainspec.ScorerNetwork, "n"), on.score(trainspec.ScorerNetwork, "auc")
		rules := max(on.score(trainspec.ScorerThreshold, "auc"), on.score(trainspec.ScorerBestFeature, "auc"))
		if n < 100 || auc < 0.8 || auc < rules+0.1 {
			t.Errorf("%s: the network's AUC %.3f on %v points, the rules' best %.3f; want at least 0.8 and 0.1 above the rules, on at least 100",
				on.split, auc, n, rules)
		}
	}
	// The labels' agreement with the other labellings, on the points of
	// the sample judged every way: each compared point is labelled or a
	// near tie under each, and the share agreeing lies in its interval.
	agreement := map[string]float64{}
	for _, m := range metrics {
		if m.Model == trainspec.ModelLabels && m.Section == trainspec.SectionAgreement {
			agreement[m.Candidate+" "+m.Metric] = m.Value
		}
	}
	for _, a := range alternatives(small().Placement) {
		name := judgementName(a) + " "
		compared, ties, points, agree := agreement[name+"compared"], agreement[name+"near_ties"], agreement[name+"points"], agreement[name+"agree"]
		v, lo, hi := agreement[name+"agreement"], agreement[name+"agreement_lo"], agreement[name+"agreement_hi"]
		if compared < agreementSample/2 || ties+points != compared || agree > points || math.Abs(v-agree/points) > 1e-12 || !(lo <= v && v <= hi && lo < hi) {
			t.Errorf("agreement with %s: %v of %v points (%v near ties of %v compared), %v in [%v, %v]", name, agree, points, ties, compared, v, lo, hi)
		}
	}
	// What it learned: far more of the held-out points decided right
	// than by always answering the majority label.
	majority := float64(max(s.Positives, s.N-s.Positives)) / float64(s.N)
	if s.Accuracy < majority+0.4*(1-majority) {
		t.Errorf("held-out network: accuracy %.3f (majority label %.3f, AUC %.3f); want 40%% of the majority's errors put right at least",
			s.Accuracy, majority, s.AUC)
	}
	// The predictor file loads and predicts a configuration the profile
	// did not measure.
	f, err := os.Open(filepath.Join(dir, trainspec.PredictorFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := predictor.Load(f)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := m.Predict(predictor.Query{Device: "cpu", Model: "resnet18", Precision: "fp32", Batch: 8, Threads: 1}); !ok || !(v > 0) {
		t.Errorf("the saved predictor predicts %v, %v for resnet18 at batch 8", v, ok)
	}
}

// servePlacement runs the ONNX network at path through onnxruntime on x,
// as the simulator serves it, and returns its predictions.
func servePlacement(t *testing.T, path string, x [][placement.Inputs]float32) placement.Predictions {
	t.Helper()
	orttest.Require(t)
	model, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(len(x))
	s, err := ort.NewSession(model, placement.InputName, []int64{n, placement.Inputs}, placement.OutputName, []int64{n, 1}, ort.SessionOptions{IntraOpThreads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := s.Input()
	for i := range x {
		copy(in[i*placement.Inputs:], x[i][:])
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	pr := placement.Predictions{Scorer: trainspec.ScorerNetwork}
	for _, v := range s.Output() {
		p := float64(v)
		pr.Score, pr.P, pr.Migrate = append(pr.Score, p), append(pr.P, p), append(pr.Migrate, p > placement.Threshold)
	}
	return pr
}

// TestRunErrors names what is wrong.
func TestRunErrors(t *testing.T) {
	jobs := trainJobs(t, 2000)
	bad := small()
	bad.Predictor.Folds = 1
	tests := []struct {
		name string
		cfg  Config
		in   Inputs
		want string
	}{
		{"config", bad, Inputs{Models: catalogtest.ZooFile(t), Samples: samplesPath, Jobs: jobs}, "train.predictor.folds"},
		{"no samples", small(), Inputs{Models: catalogtest.ZooFile(t), Samples: filepath.Join(t.TempDir(), "none.parquet"), Jobs: jobs}, "read profile samples"},
		{"no jobs", small(), Inputs{Models: catalogtest.ZooFile(t), Samples: samplesPath, Jobs: filepath.Join(t.TempDir(), "none.parquet")}, "none.parquet"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Run(context.Background(), tt.cfg, trainspec.SimulationOf(schedulespec.DefaultConfig()), 1, tt.in, Output{Dir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

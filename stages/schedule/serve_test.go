package schedule

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog/catalogtest"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/ort"
	"github.com/mlsched/mlsched/stages/lib/ort/orttest"
	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/schedulespec"
	"github.com/mlsched/mlsched/stages/train/placement"
)

// constantNetwork is a placement network whose answer is the sigmoid of
// bias whatever the inputs: +10 always migrates, -10 never does.
func constantNetwork(t *testing.T, bias float32) string {
	t.Helper()
	const h = 4
	n := &placement.Network{}
	for k := range placement.Inputs {
		n.Scale[k], n.Std[k] = 1, 1
	}
	n.Layers[0] = placement.Layer{In: placement.Inputs, Out: h, Weight: make([]float32, placement.Inputs*h), Bias: make([]float32, h)}
	n.Layers[1] = placement.Layer{In: h, Out: h, Weight: make([]float32, h*h), Bias: make([]float32, h)}
	n.Layers[2] = placement.Layer{In: h, Out: 1, Weight: make([]float32, h), Bias: []float32{bias}}
	b, err := n.ONNX(sim.FeatureNames[:])
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "placement.onnx")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLearnedPolicy runs the learned policy with networks that always and
// never migrate: the network decides (moves, or none), every decision is
// counted in serving.parquet, the audit finds a constant network's cached
// answers never wrong, and the decisions' cost shows on the clock.
func TestLearnedPolicy(t *testing.T) {
	lib, src := orttest.Library(t)
	prof := learnedProfile()
	samples, jobs := writeSamples(t, prof), generateJobs(t, mlpWorkload(3000), 3)
	run := func(bias float32, cost string) (ServingRow, []TraceRow) {
		cfg := testConfig()
		cfg.Policies = []string{"learned"}
		cfg.Learned.Cost = cost
		dir := t.TempDir()
		in := Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Placement: constantNetwork(t, bias), ORTLib: lib, ORTSource: src}
		if err := Run(context.Background(), cfg, 5, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
			t.Fatal(err)
		}
		rows, err := parquetio.ReadAll[ServingRow](filepath.Join(dir, "learned", ServingFile))
		if err != nil || len(rows) != 1 {
			t.Fatalf("serving.parquet: %v, %d rows", err, len(rows))
		}
		trace, err := parquetio.ReadAll[TraceRow](filepath.Join(dir, "learned", TraceFile))
		if err != nil {
			t.Fatal(err)
		}
		return rows[0], trace
	}
	moved := func(trace []TraceRow) int {
		n := 0
		for _, r := range trace {
			if r.Migrated {
				n++
			}
		}
		return n
	}
	always, alwaysTrace := run(10, "0s")
	never, neverTrace := run(-10, "0s")
	slow, _ := run(10, "5ms")
	if always.Decisions == 0 || always.Migrations == 0 || moved(alwaysTrace) == 0 {
		t.Errorf("an always-migrate network: %+v, %d jobs migrated", always, moved(alwaysTrace))
	}
	if never.Decisions == 0 || never.Migrations != 0 || moved(neverTrace) != 0 {
		t.Errorf("a never-migrate network: %+v, %d jobs migrated", never, moved(neverTrace))
	}
	for _, r := range []ServingRow{always, never, slow} {
		if r.CacheHits == 0 || r.CacheChanged != 0 || r.Evaluated != r.Decisions || r.HitRate != float64(r.CacheHits)/float64(r.Decisions) ||
			r.MeanBatch < 1 || r.Calls < r.Batches {
			t.Errorf("serving row %+v: want hits, none changed, every decision evaluated (audit), a mean batch of at least 1", r)
		}
	}
	if slow.CostS != 0.005 || always.CostS != 0 {
		t.Errorf("costs %v and %v, want 0.005 and 0", slow.CostS, always.CostS)
	}
	// A move decided in 5 ms leaves later than one decided at once: fewer
	// decisions come back while the lanes are held, so fewer moves.
	if slow.Migrations >= always.Migrations {
		t.Errorf("moves with 5 ms decisions %d, at once %d: want fewer", slow.Migrations, always.Migrations)
	}

	// Without a network, or with a damaged one, the stage says so.
	cfg := testConfig()
	cfg.Policies = []string{"learned"}
	bad := filepath.Join(t.TempDir(), "placement.onnx")
	os.WriteFile(bad, []byte("not onnx"), 0o644)
	for _, tt := range []struct{ placement, want string }{
		{filepath.Join(t.TempDir(), "none.onnx"), "placement network"},
		{bad, "placement.onnx"},
	} {
		err := Run(context.Background(), cfg, 5, Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Placement: tt.placement, ORTLib: lib, ORTSource: src}, Output{Dir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Run with placement %s = %v, want an error containing %q", tt.placement, err, tt.want)
		}
	}
	if ort.Version() == "" {
		t.Error("onnxruntime was not loaded")
	}
}

// TestLearnedCostSources: with the profile's timing of the serving path,
// schedule.learned.cost: profile charges each batch of decisions a draw
// from it, and serving.parquet says so, with the median and P99 of a
// decision's charge; the same seed twice writes the same files, byte for
// byte; a profile without serving rows falls back to the tight-loop mlp's
// mean, and serving.parquet says that instead.
func TestLearnedCostSources(t *testing.T) {
	lib, src := orttest.Library(t)
	jobs := generateJobs(t, mlpWorkload(2000), 3)
	network := constantNetwork(t, 10)
	served := append(learnedProfile(), samples(profilespec.KindServing, "cpu", profilespec.ServingModel, profilespec.FP32, 1, 1, 1, 0.5, 0.6, 0.7, 0.8, 5)...)
	served = append(served, samples(profilespec.KindServing, "cpu", profilespec.ServingModel, profilespec.FP32, 8, 1, 1, 1, 1.2, 1.4, 1.6, 8)...)
	run := func(prof []profilespec.Sample) (string, ServingRow) {
		cfg := testConfig()
		cfg.Policies = []string{"learned"}
		cfg.Learned.Cost = schedulespec.CostProfile
		dir := t.TempDir()
		in := Inputs{Models: catalogtest.ZooFile(t), Samples: writeSamples(t, prof), Jobs: jobs, Placement: network, ORTLib: lib, ORTSource: src}
		if err := Run(context.Background(), cfg, 5, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
			t.Fatal(err)
		}
		rows, err := parquetio.ReadAll[ServingRow](filepath.Join(dir, "learned", ServingFile))
		if err != nil || len(rows) != 1 {
			t.Fatalf("serving.parquet: %v, %d rows", err, len(rows))
		}
		return dir, rows[0]
	}
	dir, row := run(served)
	// The Hazen quantiles of the five calls of one decision: the middle
	// one, and the slowest.
	if row.CostSource != schedulespec.CostServing || math.Abs(row.CostS-0.7e-3) > 1e-12 || row.CostP99S != 5e-3 {
		t.Errorf("with serving rows: charged %v s at the median and %v s at P99 from %q, want 0.7 ms and 5 ms from %q",
			row.CostS, row.CostP99S, row.CostSource, schedulespec.CostServing)
	}
	again, _ := run(served)
	for _, f := range []string{filepath.Join("learned", ServingFile), filepath.Join("learned", TraceFile), filepath.Join("learned", DevicesFile)} {
		a, errA := os.ReadFile(filepath.Join(dir, f))
		b, errB := os.ReadFile(filepath.Join(again, f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between two runs of the same seed and profile (%v, %v)", f, errA, errB)
		}
	}
	_, row = run(learnedProfile())
	if row.CostSource != schedulespec.CostTightLoop || math.Abs(row.CostS-1.05e-3) > 1e-12 || row.CostP99S != row.CostS {
		t.Errorf("without serving rows: charged %v s at the median and %v s at P99 from %q, want the mlp's mean at batch 1, 1.05 ms, from %q",
			row.CostS, row.CostP99S, row.CostSource, schedulespec.CostTightLoop)
	}
}

// TestStudies runs both studies on a small workload: the rows a policy
// that reads predictions, a learned one and one that predicts nothing
// get, how far each row's predictions were from the means, and the cost of
// a decision.
func TestStudies(t *testing.T) {
	lib, src := orttest.Library(t)
	prof := learnedProfile()
	predPath, _ := savePredictor(t, prof, "loglinear")
	samples, jobs := writeSamples(t, prof), generateJobs(t, mlpWorkload(2000), 3)
	cfg := testConfig()
	cfg.Policies = []string{"round_robin", "greedy", "learned"}
	cfg.Predictor = PredictorLearned
	cfg.Studies = Studies{Jobs: 1500, Replications: 1, PredictionErrors: []float64{0.2, 0.5}, DecisionCosts: []string{"0s", "5ms"}}
	dir := t.TempDir()
	in := Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Predictor: predPath, Placement: "testdata/placement.onnx", ORTLib: lib, ORTSource: src}
	if err := Run(context.Background(), cfg, 5, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
		t.Fatal(err)
	}
	rows, err := parquetio.ReadAll[StudyRow](filepath.Join(dir, StudiesFile))
	if err != nil {
		t.Fatal(err)
	}
	type key struct {
		study, policy, pred, cost string
		e                         float64
	}
	got := map[key]StudyRow{}
	for _, r := range rows {
		got[key{r.Study, r.Policy, r.Predictor, r.DecisionCost, r.PredictionError}] = r
		if r.Jobs != 1500 {
			t.Errorf("%+v: %d jobs, want 1500", r, r.Jobs)
		}
	}
	want := []key{}
	for _, p := range []string{"greedy", "learned"} {
		want = append(want, key{StudyPredictionError, p, PredictorTable, "", 0}, key{StudyPredictionError, p, PredictorTable, "", 0.2},
			key{StudyPredictionError, p, PredictorTable, "", 0.5}, key{StudyPredictionError, p, PredictorLearned, "", 0})
	}
	for _, c := range []string{"profile", "0s", "5ms"} {
		want = append(want, key{StudyDecisionCost, "learned", PredictorLearned, c, 0})
	}
	if len(rows) != len(want) {
		t.Errorf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for _, k := range want {
		if _, ok := got[k]; !ok {
			t.Errorf("no row %+v", k)
		}
	}
	// The means exact are 0 off; 1 ± e per job is e/2 off on average;
	// train's predictor somewhere else.
	for _, e := range []float64{0, 0.2, 0.5} {
		r := got[key{StudyPredictionError, "greedy", PredictorTable, "", e}]
		if math.Abs(r.PredictionMAPE-e/2) > 0.02*max(e, 0.1) {
			t.Errorf("table ±%v: predictions %v off the means, want about %v", e, r.PredictionMAPE, e/2)
		}
	}
	if r := got[key{StudyPredictionError, "greedy", PredictorLearned, "", 0}]; !(r.PredictionMAPE > 0) {
		t.Errorf("the learned predictor is %v off the means, want some", r.PredictionMAPE)
	}
	if a, b := got[key{StudyPredictionError, "greedy", PredictorTable, "", 0}], got[key{StudyPredictionError, "greedy", PredictorTable, "", 0.5}]; a.MeanE2ES == b.MeanE2ES {
		t.Errorf("greedy runs the same with exact predictions and ±50%%: mean %v", a.MeanE2ES)
	}
	if r := got[key{StudyDecisionCost, "learned", PredictorLearned, "5ms", 0}]; r.DecisionCostS != 0.005 || r.DecisionCostSource != schedulespec.CostConfigured {
		t.Errorf("5ms row costs %v s from %q", r.DecisionCostS, r.DecisionCostSource)
	}
	if r := got[key{StudyDecisionCost, "learned", PredictorLearned, "profile", 0}]; math.Abs(r.DecisionCostS-0.00105) > 0.0001 || r.DecisionCostSource != schedulespec.CostTightLoop {
		t.Errorf("a decision at the profile's cost takes %v s from %q, want the profile's mlp at batch 1, about 1.05 ms, from %q (no serving rows)",
			r.DecisionCostS, r.DecisionCostSource, schedulespec.CostTightLoop)
	}
}

// TestServingRowsPerReplication: each learned policy's serving.parquet
// holds a row for each of its replications, in order, each counting that
// simulation's decisions, and no replication has a serving file of its
// own.
func TestServingRowsPerReplication(t *testing.T) {
	lib, src := orttest.Library(t)
	samples, jobs := writeSamples(t, learnedProfile()), generateJobs(t, mlpWorkload(2000), 3)
	cfg := testConfig()
	cfg.Policies = []string{"learned", "learned+batch", "edf"}
	cfg.Replications = 3
	dir := t.TempDir()
	in := Inputs{Models: catalogtest.ZooFile(t), Samples: samples, Jobs: jobs, Placement: "testdata/placement.onnx", ORTLib: lib, ORTSource: src}
	if err := Run(context.Background(), cfg, 5, in, Output{Dir: dir, Metadata: testMeta}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"learned", "learned+batch"} {
		rows, err := parquetio.ReadAll[ServingRow](filepath.Join(dir, p, ServingFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != cfg.Replications {
			t.Fatalf("%s: %d serving rows, want %d", p, len(rows), cfg.Replications)
		}
		for k, r := range rows {
			if r.Policy != p || r.Replication != int32(k+1) || r.Decisions == 0 {
				t.Errorf("%s: row %d is %s replication %d with %d decisions", p, k, r.Policy, r.Replication, r.Decisions)
			}
			if k > 0 {
				if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(ReplicationFile(p, k+1, ServingFile)))); !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("replication %d of %s has a serving file of its own (%v)", k+1, p, err)
				}
			}
		}
		if rows[0].Decisions == rows[1].Decisions && rows[1].Decisions == rows[2].Decisions {
			t.Errorf("%s: every replication made %d decisions: the rows look copied", p, rows[0].Decisions)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "edf", ServingFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("edf has a serving file (%v)", err)
	}
}

package predictorfit

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// opRows are a configuration of layers Gemm+Relu nodes of width w, each
// Gemm taking 1 ns per 1000 FLOPs, the Relus fused, and three timed runs
// whose median is 1 µs more than the nodes' sum.
func opRows(model string, batch, layers int, w int64) ([]profilespec.OperatorRow, []profilespec.Sample) {
	var ops []opcost.Op
	var sum float64
	for l := range layers {
		flops := 2 * int64(batch) * w * w
		g := opcost.Op{Op: "Gemm", Name: fmt.Sprintf("Gemm_%d", l), FLOPs: flops, BytesRead: 4 * w * w, BytesWritten: 4 * int64(batch) * w}
		if l > 0 {
			g.After, g.From = "Relu", len(ops)
		}
		g.Time = time.Duration(float64(flops) * 1e-12 * float64(time.Second))
		sum += g.Time.Seconds()
		ops = append(ops, g, opcost.Op{Op: "Relu", Name: fmt.Sprintf("Relu_%d", l), After: "Gemm", From: len(ops) + 1, Fused: true})
	}
	c := opcost.Config{Device: "cpu", Model: model, Precision: "fp32", Batch: batch, Threads: 1}
	var samples []profilespec.Sample
	for i, f := range []float64{0.9, 1, 1.2} {
		samples = append(samples, profilespec.Sample{Kind: profilespec.KindInference, Backend: "onnxruntime", Provider: "cpu", Device: "cpu",
			Model: model, Precision: "fp32", Batch: int32(batch), Threads: 1, Concurrency: 1, Repeat: int32(i), LatencyS: f * (sum + 1e-6), Source: "measured"})
	}
	return opcost.Rows(c, ops), samples
}

// TestFitOpCost fits the per-operator model to three models' nodes and
// scores it leave one model out: one held-out row per configuration,
// measured at its runs' median, in a fold per model, predicted within a
// few percent (the nodes follow one law); the file holds the one fit. A
// configuration of nodes without timed runs is refused.
func TestFitOpCost(t *testing.T) {
	var rows []profilespec.OperatorRow
	var samples []profilespec.Sample
	var models []catalog.Model
	for i, m := range []struct {
		layers int
		w      int64
	}{{2, 256}, {4, 128}, {3, 512}} {
		name := fmt.Sprintf("m%d", i)
		for _, b := range []int{1, 4} {
			r, s := opRows(name, b, m.layers, m.w)
			rows, samples = append(rows, r...), append(samples, s...)
		}
		mlp, _ := catalog.Zoo().Lookup("mlp")
		mlp.Name = name
		models = append(models, mlp)
	}
	cat, err := catalog.New(models)
	if err != nil {
		t.Fatal(err)
	}
	res, err := FitOpCost(rows, samples, cat)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.CV) != 6 || len(res.Skipped) > 0 {
		t.Fatalf("%d held-out rows (skipped %v), want 6", len(res.CV), res.Skipped)
	}
	for _, r := range res.CV {
		if r.Split != trainspec.SplitModel || r.Candidate != trainspec.CandidateOpCost || r.Model != fmt.Sprintf("m%d", r.Fold) || r.NSamples != 3 {
			t.Errorf("held-out row %+v", r)
		}
		if e := math.Abs(r.PredictedS/r.MeasuredS - 1); e > 0.05 {
			t.Errorf("%s batch %d: predicted %g s, measured %g s (%.0f%% off)", r.Model, r.Batch, r.PredictedS, r.MeasuredS, 100*e)
		}
	}
	var mape float64 = -1
	for _, s := range res.Scores {
		if s.Split == trainspec.SplitModel && s.Candidate == trainspec.CandidateOpCost && s.Metric == MetricMAPE {
			mape = s.Value
		}
	}
	if mape < 0 || mape > 0.05 {
		t.Errorf("leave-one-model-out MAPE %v, want a score under 5%%", mape)
	}
	if res.File == nil || len(res.File.Fits) != 1 || strings.Join(res.File.Fits[0].Models, ",") != "m0,m1,m2" {
		t.Errorf("file %+v, want one fit of m0, m1 and m2", res.File)
	}
	r, _ := opRows("m0", 8, 2, 256)
	if _, err := FitOpCost(append(rows, r...), samples, cat); err == nil || !strings.Contains(err.Error(), "m0 fp32 batch 8 threads 1: no timed runs") {
		t.Errorf("FitOpCost with nodes of an untimed configuration: %v, want it refused", err)
	}
}

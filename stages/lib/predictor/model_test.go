package predictor

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
)

// handMade is a log-linear model whose only weight is on log_flops_batch
// (the first feature): it predicts flops_per_sample × batch × e^-20
// seconds, which a test can work out by hand; the CPU's device column
// adds 0.5 to the log.
func handMade() File {
	devs := []string{"cpu", "gpu"}
	fs := FeatureList(devs)
	coef := make([]float64, len(fs))
	coef[0] = 1
	coef[len(baseFeatures)] = 0.5 // device=cpu
	return File{Format: Format, Kind: KindLogLinear, Target: TargetLog, Features: fs, Devices: devs, Models: catalog.Zoo().All(),
		Linear: &Linear{Intercept: -20, Coefficients: coef}}
}

// TestPredictByHand checks a hand-made model's predictions against the
// formula, and that they survive Save and Load bit for bit.
func TestPredictByHand(t *testing.T) {
	m, err := NewModel(handMade())
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	loaded, err := Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	mlp, _ := catalog.Zoo().Lookup("mlp")
	for _, tc := range []struct {
		q    Query
		want float64
	}{
		{Query{Device: "cpu", Model: "mlp", Precision: "fp32", Batch: 4, Threads: 1}, float64(mlp.FLOPsPerSample) * 4 * math.Exp(-19.5)},
		{Query{Device: "gpu", Model: "mlp", Precision: "fp16", Batch: 8, Threads: 2}, float64(mlp.FLOPsPerSample) * 8 * math.Exp(-20)},
	} {
		for name, model := range map[string]*Model{"built": m, "loaded": loaded} {
			got, ok := model.Predict(tc.q)
			if !ok || math.Abs(got-tc.want) > 1e-12*tc.want {
				t.Errorf("%s: Predict(%+v) = %v, %v; want %v", name, tc.q, got, ok, tc.want)
			}
		}
	}
}

// TestNoPredictionByHand lists the queries no feature vector stands for.
func TestNoPredictionByHand(t *testing.T) {
	m, err := NewModel(handMade())
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []Query{
		{Device: "tpu", Model: "mlp", Precision: "fp32", Batch: 1, Threads: 1},
		{Device: "cpu", Model: "gpt", Precision: "fp32", Batch: 1, Threads: 1},
		{Device: "cpu", Model: "mlp", Precision: "int8", Batch: 1, Threads: 1},
		{Device: "cpu", Model: "mlp", Precision: "fp32", Batch: 0, Threads: 1},
		{Device: "cpu", Model: "mlp", Precision: "fp32", Batch: 1, Threads: 0},
	} {
		if v, ok := m.Predict(q); ok {
			t.Errorf("Predict(%+v) = %v, want no prediction", q, v)
		}
	}
}

// TestNewModelRefuses names the field at fault in each bad file.
func TestNewModelRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*File)
		want string
	}{
		{"format", func(f *File) { f.Format = "other/1" }, "format: want"},
		{"kind", func(f *File) { f.Kind = "knn" }, `kind: unknown kind "knn"`},
		{"target", func(f *File) { f.Target = TargetTable }, "target: kind loglinear predicts"},
		{"devices unsorted", func(f *File) { f.Devices = []string{"gpu", "cpu"} }, "devices: want distinct non-empty names in sorted order"},
		{"features", func(f *File) { f.Features = f.Features[1:] }, "features: got"},
		{"no models", func(f *File) { f.Models = nil }, "models: empty"},
		{"a model twice", func(f *File) { f.Models = append(f.Models, f.Models[0]) }, `models: model "mlp": duplicate model`},
		{"no linear", func(f *File) { f.Linear = nil }, "linear: kind loglinear needs a linear part"},
		{"NaN", func(f *File) { f.Linear.Coefficients[2] = math.NaN() }, "linear.coefficients[2] (log_params): not finite"},
		{"trees", func(f *File) {
			f.Trees = []Tree{{Feature: []int32{-1}, Threshold: []float64{0}, Left: []int32{0}, Right: []int32{0}, Value: []float64{1}}}
		},
			"trees: kind loglinear has no trees, got 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := handMade()
			tc.edit(&f)
			if _, err := NewModel(f); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("NewModel: error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestFileIsACopy checks that editing the File a model returns leaves the
// model as it was: a Model is immutable, shared by concurrent simulations.
func TestFileIsACopy(t *testing.T) {
	m, err := NewModel(handMade())
	if err != nil {
		t.Fatal(err)
	}
	q := Query{Device: "cpu", Model: "mlp", Precision: "fp32", Batch: 4, Threads: 1}
	before, _ := m.Predict(q)
	f := m.File()
	f.Linear.Coefficients[0] = 3
	f.Devices[0] = "x"
	if after, _ := m.Predict(q); after != before {
		t.Errorf("Predict after editing File() = %v, want %v", after, before)
	}
}

//go:build !lean

package main

import (
	"encoding/json"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/opcost"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/lib/zoo"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

// TestPredictModelFile trains the tiny pipeline's predictor (a forest, on
// the imported profile), then predicts a model file the test builds and
// the profile never saw: every printed figure is the trained predictor's
// for the catalog figures of that file's graph, at every batch size of
// profile.batch_sizes on the profile's one device and thread count, in
// the table and in --json alike; and a name the profile's catalog holds
// (mlp) predicts from the graph too, not from mlp's measurements.
func TestPredictModelFile(t *testing.T) {
	p := newProject(t, "tiny.yaml")
	p.mustCLI("run", "--set", "train.predictor.kind=forest", "train")
	m, err := testmodels.WideMLP(zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.write("mine/widemlp.onnx", m.ONNX)

	// What the trained predictor gives the graph's figures.
	f, err := os.Open(p.stored("train/*/predictor.json"))
	if err != nil {
		t.Fatal(err)
	}
	pred, err := predictor.Load(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	entry, err := onnxgraph.CatalogModel("mine", "widemlp.onnx", m.ONNX, nil)
	if err != nil {
		t.Fatal(err)
	}
	if pred.Kind() != "forest" {
		t.Fatalf("the trained kind is %s, want forest", pred.Kind())
	}
	x := make([]float64, len(pred.Features()))
	want := map[int]float64{}
	batches := []int{1, 2, 4, 8, 16, 32, 64} // profile.batch_sizes' default
	for _, b := range batches {
		cat, err := catalog.New([]catalog.Model{entry})
		if err != nil {
			t.Fatal(err)
		}
		if !predictor.Featurize(x, predictor.Query{Device: "test-accelerator", Model: "mine", Precision: "fp32", Batch: b, Threads: 1}, cat, pred.Devices()) {
			t.Fatalf("batch %d: no feature vector", b)
		}
		want[b] = math.Exp(pred.LogAt(x))
	}

	for _, name := range []string{"", "mlp"} {
		args := []string{"predict", "mine/widemlp.onnx", "--json"}
		if name != "" {
			args = append(args, "--name", name)
		}
		var rows []Prediction
		if err := json.Unmarshal([]byte(p.mustCLI(args...)), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(batches) {
			t.Fatalf("%v: %d rows, want one per batch size of %v: %+v", args, len(rows), batches, rows)
		}
		for i, r := range rows {
			if r.Device != "test-accelerator" || r.Threads != 1 || r.Precision != "fp32" || r.Batch != batches[i] ||
				r.PredictedS == nil || *r.PredictedS != want[r.Batch] || r.OpLevelS != nil {
				t.Errorf("%v: row %d = %+v (predicted %v), want batch %d predicted %v and no op-level figure", args, i, r, deref(r.PredictedS), batches[i], want[batches[i]])
			}
		}
	}

	out := p.mustCLI("predict", "mine/widemlp.onnx")
	for _, w := range []string{"widemlp (widemlp.onnx):", "forest", "not timed"} {
		if !strings.Contains(out, w) {
			t.Errorf("the output lacks %q:\n%s", w, out)
		}
	}
	if strings.Contains(out, "OP-LEVEL") {
		t.Errorf("an op-level column without a per-operator model:\n%s", out)
	}
	for _, b := range batches {
		s := want[b]
		line := regexp.MustCompile(`(?m)^\s*test-accelerator\s+1\s+fp32\s+` + strconv.Itoa(b) + `\s+` + regexp.QuoteMeta(formatLatency(&s)) + `\s*$`)
		if !line.MatchString(out) {
			t.Errorf("no line for batch %d predicting %s:\n%s", b, formatLatency(&s), out)
		}
	}
}

func deref(x *float64) any {
	if x == nil {
		return nil
	}
	return *x
}

// TestPredictRefuses runs mlsched predict on what it must refuse: each a
// usage error (exit 2) naming what is wrong, the file's as the profile
// names them, and nothing printed on standard output.
func TestPredictRefuses(t *testing.T) {
	mobile, err := testmodels.MobileNet(zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	trained := newProject(t, "tiny.yaml")
	trained.mustCLI("run", "train")
	tests := []struct {
		name  string
		p     *project
		model func(t *testing.T) []byte
		args  []string
		want  []string
	}{
		{"no train version", newProject(t, "tiny.yaml"), func(*testing.T) []byte { return mobile.ONNX }, nil,
			[]string{"predict needs a trained predictor", "stage train has no stored version", "run 'mlsched run train'"}},
		{"not ONNX", trained, func(*testing.T) []byte { return []byte("arrival_s,model,batch_size\n0.1,mlp,1\n") }, nil,
			[]string{"m.onnx: not an ONNX model"}},
		{"truncated", trained, func(*testing.T) []byte { return mobile.ONNX[:len(mobile.ONNX)/2] }, nil,
			[]string{"m.onnx: not an ONNX model", "truncated"}},
		{"an unknown operator", trained, func(t *testing.T) []byte {
			return built(t, []int64{zoo.Batch, 8}, []int64{zoo.Batch, 8}, func(g *zoo.Graph, x string) string {
				return g.Op("Relu", g.Node("Hardmax", []string{g.Op("NonZero", x)}))
			})
		}, nil, []string{"m.onnx: ", "node NonZero_1 (NonZero)", "not one mlsched can count", "docs/models.md"}},
		{"two batch axis candidates", trained, func(t *testing.T) []byte {
			return built(t, []int64{zoo.Batch, zoo.Batch, 8}, []int64{zoo.Batch, zoo.Batch, 8}, func(g *zoo.Graph, x string) string { return g.Op("Relu", x) })
		}, nil, []string{"has 2 dynamic axes [0 1]", "batch_axis"}},
		{"a batch size of 0", trained, func(*testing.T) []byte { return mobile.ONNX }, []string{"--batch", "0"},
			[]string{"--batch 0: want a batch size of at least 1"}},
		{"a name no artifact may take", trained, func(*testing.T) []byte { return mobile.ONNX }, []string{"--name", "a b"},
			[]string{`model name "a b" (--name)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.p.write("m.onnx", tt.model(t))
			out, errs, code := tt.p.cli(append([]string{"predict", "m.onnx"}, tt.args...)...)
			if code != exitUsage || out != "" {
				t.Errorf("exit %d, want %d; stdout:\n%s", code, exitUsage, out)
			}
			for _, w := range tt.want {
				if !strings.Contains(errs, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errs)
				}
			}
			if strings.Contains(errs, "panic") {
				t.Errorf("stderr shows a panic:\n%s", errs)
			}
		})
	}
}

// TestPredictOpLevel profiles three models with each node timed
// (profile.operators), trains, and predicts a transformer encoder none of
// them is: beside the predictor's figure, each row has the per-operator
// model's, equal to what train's opcost.json gives the encoder's graph at
// that batch size; and train scored that model leave one model out.
func TestPredictOpLevel(t *testing.T) {
	requireORT(t)
	p := newProject(t, "predict.yaml")
	p.writeUserModels()
	p.mustCLI("run", "train")
	enc, err := testmodels.Encoder(zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	p.write("encoder.onnx", enc.ONNX)
	f, err := os.Open(p.stored("train/*/" + trainspec.OpCostFile))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := opcost.Load(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	fit, ok := ops.Lookup("cpu", "fp32")
	if !ok || strings.Join(fit.Models, ",") != "mlp,mobilenet,widemlp" {
		t.Fatalf("opcost.json: %+v, want a cpu fp32 fit of the three models", ops)
	}
	g, err := onnxgraph.Parse(enc.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Prediction
	if err := json.Unmarshal([]byte(p.mustCLI("predict", "encoder.onnx", "--json")), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want one per batch size of [1 2 4]: %+v", len(rows), rows)
	}
	for _, r := range rows {
		d, err := fit.Model.PredictGraph(g, 0, r.Batch, 1)
		if err != nil {
			t.Fatal(err)
		}
		if r.PredictedS == nil || r.OpLevelS == nil || *r.OpLevelS != d.Seconds() {
			t.Errorf("batch %d: predicted %v, op-level %v; want both, op-level %v", r.Batch, deref(r.PredictedS), deref(r.OpLevelS), d.Seconds())
		}
	}
	if out := p.mustCLI("predict", "encoder.onnx"); !strings.Contains(out, "OP-LEVEL") || !strings.Contains(out, "per-operator cost model") {
		t.Errorf("the table lacks the op-level column:\n%s", out)
	}
	scores, err := parquetio.ReadAll[trainspec.MetricRow](p.stored("train/*/" + trainspec.MetricsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(scores, func(r trainspec.MetricRow) bool {
		return r.Split == trainspec.SplitModel && r.Candidate == trainspec.CandidateOpCost && r.Metric == trainspec.MetricMAPE && r.Value > 0
	}) {
		t.Errorf("metrics.parquet has no leave-one-model-out MAPE of %s", trainspec.CandidateOpCost)
	}
}

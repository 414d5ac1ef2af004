package predictorfit

import (
	"bytes"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sjwhitworth/golearn/trees"

	"github.com/mlsched/mlsched/pipeline/parquetio"
	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/predictor"
	"github.com/mlsched/mlsched/stages/spec/profilespec"
	"github.com/mlsched/mlsched/stages/spec/trainspec"
)

const testdataSamples = "testdata/samples-default.parquet"

// loadSamples reads the measured default profile in testdata.
func loadSamples(t testing.TB) []profilespec.Sample {
	t.Helper()
	s, err := parquetio.ReadAll[profilespec.Sample](testdataSamples)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var trainOnce struct {
	sync.Once
	r   *Result
	err error
}

// trained is Train on the testdata profile with the default options and
// seed 1, run once for every test that only reads it.
func trained(t testing.TB) *Result {
	t.Helper()
	trainOnce.Do(func() {
		trainOnce.r, trainOnce.err = Train(loadSamples(t), Options{Catalog: catalog.Zoo(), Seed: 1})
	})
	if trainOnce.err != nil {
		t.Fatal(trainOnce.err)
	}
	return trainOnce.r
}

// score returns a reported score, failing if it is absent.
func score(t *testing.T, r *Result, split, cand, metric string) float64 {
	t.Helper()
	for _, s := range r.Scores {
		if s.Split == split && s.Candidate == cand && s.Metric == metric {
			return s.Value
		}
	}
	t.Fatalf("no score %s/%s/%s", split, cand, metric)
	return 0
}

// TestScoresOnTestdata checks the scores against the project's targets
// where they are met, and pins the measured level where they are not: the
// comment on each row says which. The figures are for seed 1.
func TestScoresOnTestdata(t *testing.T) {
	r := trained(t)
	tests := []struct {
		split, cand, metric string
		lo, hi              float64
		why                 string
	}{
		// Targets on grouped k-fold: R² ≥ 0.97 and MAPE ≤ 10% met by
		// affine (0.998, 6.3%); ≥ 90% within ±10% missed (85.2%): the
		// two-thread mlp configurations are bimodal (thread-pool
		// wake-ups) and step up at batch 16, where no neighbour shows it.
		{SplitKFold, KindAffine, MetricR2, 0.97, 1, "target r2 >= 0.97 met, measured 0.998"},
		{SplitKFold, KindAffine, MetricMAPE, 0, 0.10, "target 0.10 met, measured 0.063"},
		{SplitKFold, KindAffine, MetricWithin10, 0.83, 1, "target 0.90 MISSED, measured 0.852"},
		{SplitKFold, KindTable, MetricMAPE, 0.10, 0.14, "table baseline measured 0.121"},
		{SplitKFold, KindBoost, MetricMAPE, 0, 0.2, "measured 0.175"},
		{SplitKFold, KindForest, MetricMAPE, 0, 0.22, "measured 0.191"},
		{SplitKFold, KindCART, MetricMAPE, 0, 0.21, "measured 0.184"},
		{SplitKFold, KindLogLinear, MetricMAPE, 0, 0.31, "measured 0.284"},
		// Target MAPE ≤ 15% leaving a batch size out: met by affine (5.0%);
		// the table measures 12.6%.
		{SplitBatch, KindAffine, MetricMAPE, 0, 0.15, "target 0.15 met, measured 0.050"},
		{SplitBatch, KindTable, MetricMAPE, 0, 0.15, "measured 0.126"},
		// Where the table has no data (a model never seen) every learned
		// candidate predicts; the table predicts nothing.
		{SplitModel, KindTable, MetricCoverage, 0, 0, "table cannot predict an unseen model"},
		{SplitModel, KindAffine, MetricCoverage, 1, 1, "learned candidates always predict"},
		// 0.956 (MAPE 58%) while the catalog left out the ViT graph's
		// transposes, gathers and GELU product from its activation bytes;
		// 0.931 (MAPE 67%) counting them, as onnxgraph counts any graph.
		{SplitModel, KindAffine, MetricR2Log, 0.92, 1, "measured 0.931"},
		// Nested cross-validation: every outer fold's own grouped k-fold
		// chose affine, so the selection scores as affine does.
		{SplitNested, KindAuto, MetricMAPE, 0, 0.10, "measured 0.063, affine chosen in all 5 outer folds"},
		{SplitNested, KindAffine, MetricChosen, 5, 5, "affine chosen in all 5 outer folds"},
	}
	for _, tt := range tests {
		t.Run(tt.split+"/"+tt.cand+"/"+tt.metric, func(t *testing.T) {
			if v := score(t, r, tt.split, tt.cand, tt.metric); v < tt.lo || v > tt.hi {
				t.Errorf("%s/%s %s = %.4f, want in [%g, %g] (%s)", tt.split, tt.cand, tt.metric, v, tt.lo, tt.hi, tt.why)
			}
		})
	}
	// No worse than the table where it has data, on either split that
	// holds out measured batch sizes.
	for _, split := range []string{SplitKFold, SplitBatch} {
		if a, tb := score(t, r, split, KindAffine, MetricMAPEWhereTable), score(t, r, split, KindTable, MetricMAPEWhereTable); a > tb {
			t.Errorf("%s MAPE where the table predicts: affine %.4f > table %.4f", split, a, tb)
		}
		if a, tb := score(t, r, split, KindAffine, MetricWithin10WhereTable), score(t, r, split, KindTable, MetricWithin10WhereTable); a < tb {
			t.Errorf("%s within ±10%% where the table predicts: affine %.4f < table %.4f", split, a, tb)
		}
	}
	if got := r.Model.Kind(); got != KindAffine {
		t.Errorf("auto chose %s, want affine, the lowest grouped k-fold MAPE", got)
	}
}

// TestScoresRecomputed recomputes every pooled score from the CV rows, by
// its definition, and compares it with the reported one.
func TestScoresRecomputed(t *testing.T) {
	r := trained(t)
	for _, split := range Splits {
		for _, cand := range Kinds {
			var meas, pred []float64
			n := 0
			for _, c := range r.CV {
				if c.Split != split || c.Candidate != cand {
					continue
				}
				n++
				if c.HasPrediction {
					meas = append(meas, c.MeasuredS)
					pred = append(pred, c.PredictedS)
				}
			}
			want := map[string]float64{MetricN: float64(n), MetricCoverage: float64(len(meas)) / float64(n)}
			if len(meas) > 0 {
				var mape, mae, within, mean float64
				for i := range meas {
					e := math.Abs(pred[i]-meas[i]) / meas[i]
					mape += e
					mae += math.Abs(pred[i] - meas[i])
					if e <= 0.1 {
						within++
					}
					mean += meas[i]
				}
				k := float64(len(meas))
				mean /= k
				var res, tot float64
				for i := range meas {
					res += (pred[i] - meas[i]) * (pred[i] - meas[i])
					tot += (meas[i] - mean) * (meas[i] - mean)
				}
				want[MetricMAPE], want[MetricMAE], want[MetricWithin10], want[MetricR2] = mape/k, mae/k, within/k, 1-res/tot
			}
			for metric, w := range want {
				if got := score(t, r, split, cand, metric); math.Abs(got-w) > 1e-9*math.Max(1, math.Abs(w)) {
					t.Errorf("%s/%s %s = %v, recomputed from CV rows %v", split, cand, metric, got, w)
				}
			}
		}
	}
}

// TestFoldsNoLeak checks that every split's folds partition the
// configurations, that nothing of a held-out configuration (key or
// sample) reaches its fold's training set, and that the batch and model
// splits hold out whole batch sizes and models.
func TestFoldsNoLeak(t *testing.T) {
	inf, err := inferenceSamples(loadSamples(t), catalog.Zoo())
	if err != nil {
		t.Fatal(err)
	}
	cs := configsOf(inf)
	folds, err := foldsOf(cs, 5, 1)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]map[int]int{}
	for _, f := range folds {
		if seen[f.split] == nil {
			seen[f.split] = map[int]int{}
		}
		test := map[Query]bool{}
		testSamples := map[int]bool{}
		for _, i := range f.test {
			seen[f.split][i]++
			test[cs[i].Query] = true
			for _, s := range cs[i].samples {
				testSamples[s] = true
			}
		}
		var train []config
		for _, i := range f.train(len(cs)) {
			train = append(train, cs[i])
		}
		if len(train)+len(f.test) != len(cs) {
			t.Errorf("%s fold %d: %d train + %d test != %d configurations", f.split, f.index, len(train), len(f.test), len(cs))
		}
		for _, c := range train {
			if test[c.Query] {
				t.Errorf("%s fold %d: held-out %v is in the training set", f.split, f.index, c.Query)
			}
			for _, s := range c.samples {
				if testSamples[s] {
					t.Errorf("%s fold %d: sample %d of a held-out configuration trains", f.split, f.index, s)
				}
			}
			for _, i := range f.test {
				if f.split == SplitBatch && c.Batch == cs[i].Batch || f.split == SplitModel && c.Model == cs[i].Model {
					t.Errorf("%s fold %d: training %v shares the held-out value of %v", f.split, f.index, c.Query, cs[i].Query)
				}
			}
		}
		// The table fitted to the training set holds no held-out sample.
		ts := newTrainSet(train, inf, catalog.Zoo())
		m, err := fit(KindTable, &ts, &Options{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range m.File().Table {
			q := Query{Device: g.Device, Model: g.Model, Precision: g.Precision, Batch: int(g.Batch), Threads: int(g.Threads)}
			if test[q] {
				t.Errorf("%s fold %d: the table holds held-out %v", f.split, f.index, q)
			}
		}
	}
	for split, counts := range seen {
		if len(counts) != len(cs) {
			t.Errorf("%s: %d of %d configurations held out", split, len(counts), len(cs))
		}
		for i, n := range counts {
			if n != 1 {
				t.Errorf("%s: %v held out %d times, want once", split, cs[i].Query, n)
			}
		}
	}
}

// allConfigs returns the testdata configurations and samples.
func allConfigs(t *testing.T) ([]config, []profilespec.Sample) {
	t.Helper()
	inf, err := inferenceSamples(loadSamples(t), catalog.Zoo())
	if err != nil {
		t.Fatal(err)
	}
	return configsOf(inf), inf
}

// TestForestTreesDiffer checks that bagging really resamples: the trees,
// each grown on its own bootstrap sample, disagree on held-out rows.
func TestForestTreesDiffer(t *testing.T) {
	cs, inf := allConfigs(t)
	var train, test []config
	for i, c := range cs {
		if i%4 == 0 {
			test = append(test, c)
		} else {
			train = append(train, c)
		}
	}
	ts := newTrainSet(train, inf, catalog.Zoo())
	m, err := fit(KindForest, &ts, &Options{Trees: 10}, rngFor(1, "test"))
	if err != nil {
		t.Fatal(err)
	}
	distinct := 0
	for _, c := range test {
		f := m.File()
		x := make([]float64, len(f.Features))
		predictor.Featurize(x, c.Query, catalog.Zoo(), f.Devices)
		preds := map[float64]bool{}
		for i := range f.Trees {
			preds[f.Trees[i].At(x)] = true
		}
		if len(preds) > 1 {
			distinct++
		}
	}
	if distinct < len(test)/2 {
		t.Errorf("the forest's 10 trees disagree on %d of %d held-out configurations, want at least half", distinct, len(test))
	}
}

// TestGolearnTreeWalk checks that the walked tree predicts exactly what
// golearn's own Predict does.
func TestGolearnTreeWalk(t *testing.T) {
	cs, inf := allConfigs(t)
	ts := newTrainSet(cs, inf, catalog.Zoo())
	inst, err := instances(ts.x, ts.y, ts.names)
	if err != nil {
		t.Fatal(err)
	}
	g := trees.NewDecisionTreeRegressor(trees.MSE, 4)
	if err := g.Fit(inst); err != nil {
		t.Fatal(err)
	}
	want := g.Predict(inst)
	tr, err := growTree(ts.x, ts.y, ts.names, 4)
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range ts.x {
		if got := tr.At(x); got != want[i] {
			t.Errorf("row %d: walked tree = %v, golearn Predict = %v", i, got, want[i])
		}
	}
}

// TestNoPrediction checks the queries each kind has no prediction for.
func TestNoPrediction(t *testing.T) {
	cs, inf := allConfigs(t)
	var noVit []config
	for _, c := range cs {
		if c.Model != "vit" {
			noVit = append(noVit, c)
		}
	}
	ts := newTrainSet(noVit, inf, catalog.Zoo())
	for _, kind := range Kinds {
		m, err := fit(kind, &ts, &Options{Trees: 3}, rngFor(1, kind))
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			q    Query
			want bool
		}{
			{Query{Device: "cpu", Model: "resnet50", Precision: "fp32", Batch: 8, Threads: 1}, true},
			{Query{Device: "cpu", Model: "vit", Precision: "fp32", Batch: 4, Threads: 1}, kind != KindTable},
			{Query{Device: "gpu", Model: "resnet50", Precision: "fp32", Batch: 4, Threads: 1}, false},
			{Query{Device: "cpu", Model: "bert", Precision: "fp32", Batch: 4, Threads: 1}, false},
			{Query{Device: "cpu", Model: "resnet50", Precision: "int8", Batch: 4, Threads: 1}, false},
			{Query{Device: "cpu", Model: "resnet50", Precision: "fp32", Batch: 0, Threads: 1}, false},
		}
		for _, tt := range tests {
			if v, ok := m.Predict(tt.q); ok != tt.want || ok && !(v > 0 && finite(v)) {
				t.Errorf("%s: Predict(%+v) = %v, %v; want ok %v and a positive finite time", kind, tt.q, v, ok, tt.want)
			}
		}
	}
	r := trained(t)
	for _, c := range r.CV {
		if c.Split == SplitModel && c.Candidate == KindTable && c.HasPrediction {
			t.Errorf("leave-one-model-out: the table predicts held-out %s", c.Model)
		}
	}
}

// TestSaveLoad checks that a saved model loads into one that predicts
// the same numbers, bit for bit, and saves the same bytes.
func TestSaveLoad(t *testing.T) {
	cs, inf := allConfigs(t)
	ts := newTrainSet(cs, inf, catalog.Zoo())
	for _, kind := range Kinds {
		t.Run(kind, func(t *testing.T) {
			m, err := fit(kind, &ts, &Options{Trees: 5}, rngFor(1, kind))
			if err != nil {
				t.Fatal(err)
			}
			var a, b bytes.Buffer
			if err := m.Save(&a); err != nil {
				t.Fatal(err)
			}
			l, err := predictor.Load(bytes.NewReader(a.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			if err := l.Save(&b); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(a.Bytes(), b.Bytes()) {
				t.Error("saving the loaded model gives different bytes")
			}
			for _, c := range cs {
				for _, batch := range []int{1, 2, c.Batch, 8, 32, 100} {
					q := c.Query
					q.Batch = batch
					v1, ok1 := m.Predict(q)
					v2, ok2 := l.Predict(q)
					if v1 != v2 || ok1 != ok2 {
						t.Fatalf("Predict(%+v): trained %v, %v; loaded %v, %v", q, v1, ok1, v2, ok2)
					}
				}
			}
		})
	}
}

// TestDeterminism trains twice with one seed and checks that the model
// file and every reproducible row are identical.
func TestDeterminism(t *testing.T) {
	a := trained(t)
	b, err := Train(loadSamples(t), Options{Catalog: catalog.Zoo(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var ma, mb bytes.Buffer
	if err := a.Model.Save(&ma); err != nil {
		t.Fatal(err)
	}
	if err := b.Model.Save(&mb); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ma.Bytes(), mb.Bytes()) {
		t.Error("model files differ between two runs with one seed")
	}
	if !reflect.DeepEqual(a.CV, b.CV) || !reflect.DeepEqual(a.Scores, b.Scores) || !reflect.DeepEqual(a.Importances, b.Importances) {
		t.Error("CV rows, scores or importances differ between two runs with one seed")
	}
	// Another seed deals the k-fold configurations differently.
	c, err := Train(loadSamples(t), Options{Catalog: catalog.Zoo(), Seed: 2, Kind: KindTable})
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(a.CV, c.CV) {
		t.Error("seeds 1 and 2 give the same CV rows")
	}
}

// TestBadInput checks that Train and Load refuse what they cannot use,
// saying what is wrong.
func TestBadInput(t *testing.T) {
	good := loadSamples(t)
	unknown := slices.Clone(good)
	unknown[3].Model = "bert"
	invalid := slices.Clone(good)
	invalid[5].LatencyS = -1
	var matmulOnly []profilespec.Sample
	for _, s := range good {
		if s.Kind == profilespec.KindMatMul {
			matmulOnly = append(matmulOnly, s)
		}
	}
	tests := []struct {
		name    string
		samples []profilespec.Sample
		opts    Options
		want    string
	}{
		{"no rows", nil, Options{Catalog: catalog.Zoo()}, "no \"inference\" rows"},
		{"no inference rows", matmulOnly, Options{Catalog: catalog.Zoo()}, "no \"inference\" rows"},
		{"model not in catalog", unknown, Options{Catalog: catalog.Zoo()}, "row 4: column model: \"bert\" is not in the catalog"},
		{"invalid row", invalid, Options{Catalog: catalog.Zoo()}, "row 6: column latency_s"},
		{"unknown kind", good, Options{Catalog: catalog.Zoo(), Kind: "svm"}, "kind: unknown kind \"svm\""},
		{"no catalog", good, Options{}, "catalog: none given"},
		{"one fold", good, Options{Catalog: catalog.Zoo(), Folds: 1}, "folds: must be at least 2"},
		{"more folds than configurations", good[:40], Options{Catalog: catalog.Zoo(), Folds: 5}, "needs at least 5 configurations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Train(tt.samples, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Train: error %v, want one containing %q", err, tt.want)
			}
		})
	}

	cs, inf := allConfigs(t)
	ts := newTrainSet(cs, inf, catalog.Zoo())
	m, err := fit(KindBoost, &ts, &Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	loads := []struct {
		name, file, want string
	}{
		{"unknown kind", strings.Replace(file, `"kind": "boost"`, `"kind": "svm"`, 1), `kind: unknown kind "svm"`},
		{"format", strings.Replace(file, Format, "mlsched-predictor/0", 1), "format: want"},
		{"feature dropped", strings.Replace(file, `{
   "name": "log_flops",
   "encoding": "ln(catalog flops_per_sample)"
  },`, "", 1), "features: got 12, want 13"},
		{"huge parameter", strings.Replace(file, `"intercept": `, `"intercept": 1e999, "x": `, 1), "load"},
		{"unknown field", strings.Replace(file, `"kind"`, `"colour": 1, "kind"`, 1), "unknown field"},
		{"child out of range", strings.Replace(file, `"left": [
    1,`, `"left": [
    9999,`, 1), "child 9999 must come after it"},
	}
	for _, tt := range loads {
		t.Run("load "+tt.name, func(t *testing.T) {
			if tt.file == file {
				t.Fatal("the edit did not apply")
			}
			_, err := predictor.Load(strings.NewReader(tt.file))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load: error %v, want one containing %q", err, tt.want)
			}
		})
	}
	// NaN cannot be written as JSON at all; a model cannot hold one,
	// and the error names the parameter.
	f := m.File()
	f.Linear.Coefficients[2] = math.NaN()
	if _, err := predictor.NewModel(f); err == nil || !strings.Contains(err.Error(), "linear.coefficients[2] (log_params): not finite") {
		t.Errorf("NewModel with a NaN coefficient: error %v", err)
	}
}

// BenchmarkTrain is the whole of Train on the testdata profile.
func BenchmarkTrain(b *testing.B) {
	s := loadSamples(b)
	for b.Loop() {
		if _, err := Train(s, Options{Catalog: catalog.Zoo(), Seed: 1}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestAffine fits series that are exactly affine in batch, one with a
// single batch size and one whose latency falls with batch: the first is
// recovered to rounding, the others are left to the loglinear fallback, and a
// file with a negative per-sample cost does not load.
func TestAffine(t *testing.T) {
	var samples []profilespec.Sample
	add := func(model string, batch int32, lat float64) {
		for r := range 3 {
			samples = append(samples, profilespec.Sample{Kind: profilespec.KindInference, Backend: "onnxruntime", Provider: "CPUExecutionProvider",
				Device: "cpu", Model: model, Precision: profilespec.FP32, Batch: batch, Threads: 1, Concurrency: 1, Repeat: int32(r), LatencyS: lat, Source: "measured"})
		}
	}
	for _, b := range []int32{1, 2, 4, 8} {
		add("resnet18", b, 0.002+0.04*float64(b))
		add("resnet50", b, 0.5-0.01*float64(b)) // falls with batch: no affine fit
	}
	add("vit", 4, 0.15)
	inf, err := inferenceSamples(samples, catalog.Zoo())
	if err != nil {
		t.Fatal(err)
	}
	ts := newTrainSet(configsOf(inf), inf, catalog.Zoo())
	m, err := fit(KindAffine, &ts, &Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	line, err := fit(KindLogLinear, &ts, &Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []int{1, 3, 16, 64} {
		q := Query{Device: "cpu", Model: "resnet18", Precision: "fp32", Batch: b, Threads: 1}
		got, ok := m.Predict(q)
		if want := 0.002 + 0.04*float64(b); !ok || math.Abs(got-want) > 1e-12*want {
			t.Errorf("Predict(resnet18 batch %d) = %v, %v; want %v", b, got, ok, want)
		}
	}
	for _, q := range []Query{{Device: "cpu", Model: "vit", Precision: "fp32", Batch: 4, Threads: 1}, {Device: "cpu", Model: "resnet50", Precision: "fp32", Batch: 2, Threads: 1}, {Device: "cpu", Model: "resnet18", Precision: "fp32", Batch: 2, Threads: 2}} {
		got, ok := m.Predict(q)
		want, _ := line.Predict(q)
		if !ok || got != want {
			t.Errorf("Predict(%+v) = %v, %v; want loglinear's %v", q, got, ok, want)
		}
	}
	var buf bytes.Buffer
	if err := m.Save(&buf); err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(buf.String(), `"per_sample_s": 0.0`, `"per_sample_s": -0.0`, 1)
	if bad == buf.String() {
		t.Fatalf("no per_sample_s in\n%s", buf.String())
	}
	if _, err := predictor.Load(strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "per_sample_s ≥ 0") {
		t.Errorf("Load with a negative per-sample cost: %v", err)
	}
}

// TestKindsAreTheConfigs: train.predictor.kind takes auto and exactly the
// candidates Train fits, in the same order.
func TestKindsAreTheConfigs(t *testing.T) {
	if want := append([]string{KindAuto}, Kinds...); !slices.Equal(trainspec.Kinds, want) {
		t.Errorf("trainspec.Kinds = %v, want %v", trainspec.Kinds, want)
	}
}

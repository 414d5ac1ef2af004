package placement

import (
	"bytes"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// noise is the width of the synthetic labels' noisy band around the rule's
// boundary.
const noise = 0.05

// heldOut is a synthetic task split as the train stage splits it: test
// points held out first, the rest passed to Train.
type heldOut struct {
	fit, test synthetic
}

// splitSynthetic makes n synthetic points and holds out a fifth of them
// for the scores.
func splitSynthetic(n int, seed uint64) heldOut {
	all := makeSynthetic(n, noise, seed)
	kept, held, err := Holdout(all.y, 0.2, seed+1)
	if err != nil {
		panic(err) // thousands of points of both classes
	}
	return heldOut{fit: all.pick(kept), test: all.pick(held)}
}

// TestLearnsNonlinearRule checks what the network learns, on points it
// never saw: it must come close to the Bayes classifier and clearly beat
// both single-feature baselines, which cannot express a threshold that
// depends on another feature.
func TestLearnsNonlinearRule(t *testing.T) {
	d := splitSynthetic(30000, 7)
	net, curve, err := Train(d.fit.x, d.fit.y, nil, Options{Seed: 1, Epochs: 60})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d epochs, last %+v", len(curve), curve[len(curve)-1])

	rule, err := NewRule(colGain, true, minGain, d.fit.x, d.fit.y)
	if err != nil {
		t.Fatal(err)
	}
	best, err := BestRule(d.fit.x, d.fit.y)
	if err != nil {
		t.Fatal(err)
	}
	score := func(pr Predictions) Scores {
		t.Helper()
		s, err := Evaluate(pr, d.test.y)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-12s accuracy %.4f  AUC %.4f  log loss %.4f  ECE %.4f  %+v", s.Scorer, s.Accuracy, s.AUC, s.LogLoss, s.ECE, s.Confusion)
		return s
	}
	nn := score(net.Predictions("network", d.test.x))
	bayes := score(d.test.bayes())
	gain := score(rule.Predictions("gain_rule", d.test.x))
	single := score(best.Predictions("best_single", d.test.x))
	t.Logf("best single feature: %v (%s)", best, syntheticNames[best.Feature])

	for _, base := range []Scores{gain, single} {
		if nn.Accuracy < base.Accuracy+0.05 {
			t.Errorf("network accuracy %.4f, want at least %s's %.4f + 0.05", nn.Accuracy, base.Scorer, base.Accuracy)
		}
		if nn.AUC < base.AUC+0.05 {
			t.Errorf("network AUC %.4f, want at least %s's %.4f + 0.05", nn.AUC, base.Scorer, base.AUC)
		}
		if nn.LogLoss >= base.LogLoss {
			t.Errorf("network log loss %.4f, want below %s's %.4f", nn.LogLoss, base.Scorer, base.LogLoss)
		}
	}
	if nn.Accuracy < bayes.Accuracy-0.02 {
		t.Errorf("network accuracy %.4f, want within 0.02 of the Bayes classifier's %.4f", nn.Accuracy, bayes.Accuracy)
	}
	if nn.AUC < bayes.AUC-0.02 {
		t.Errorf("network AUC %.4f, want within 0.02 of the Bayes posterior's %.4f", nn.AUC, bayes.AUC)
	}
	if nn.ECE > 0.03 {
		t.Errorf("network ECE %.4f, want at most 0.03", nn.ECE)
	}
}

// TestTrainDeterministic trains twice on the same data and seed, the
// first time with every shard on its own thread, the second on one, and wants the same weights, curve and ONNX
// bytes; another seed must give other weights.
func TestTrainDeterministic(t *testing.T) {
	d := splitSynthetic(4000, 3)
	opts := Options{Seed: 11, Epochs: 8, Batch: 100}
	train := func(opts Options) (*Network, []Epoch, []byte) {
		t.Helper()
		n, c, err := Train(d.fit.x, d.fit.y, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := n.ONNX(syntheticNames)
		if err != nil {
			t.Fatal(err)
		}
		return n, c, b
	}
	// All shards in parallel, then all on one thread.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(shards))
	n1, c1, b1 := train(opts)
	runtime.GOMAXPROCS(1)
	n2, c2, b2 := train(opts)
	if !reflect.DeepEqual(n1, n2) {
		t.Error("two trainings with the same seed gave different networks")
	}
	if !reflect.DeepEqual(c1, c2) {
		t.Errorf("two trainings with the same seed gave different curves:\n%+v\n%+v", c1, c2)
	}
	if !bytes.Equal(b1, b2) {
		t.Error("two trainings with the same seed gave different ONNX bytes")
	}
	opts.Seed++
	if n3, _, _ := train(opts); reflect.DeepEqual(n1.Layers, n3.Layers) {
		t.Error("seeds 11 and 12 gave the same weights")
	}
}

// TestEarlyStoppingKeepsBestEpoch overfits a small noisy set: training
// must stop Patience epochs after the lowest validation loss, mark that
// epoch, and return its weights, which a training stopped right there
// reproduces exactly.
func TestEarlyStoppingKeepsBestEpoch(t *testing.T) {
	d := makeSynthetic(400, 0.2, 5)
	opts := Options{Seed: 2, Epochs: 400, Batch: 32, Patience: 8, ValFraction: 0.3}
	net, curve, err := Train(d.x, d.y, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	best := -1
	for i, e := range curve {
		if e.Epoch != i+1 {
			t.Fatalf("curve[%d].Epoch = %d", i, e.Epoch)
		}
		if best < 0 || e.ValLoss < curve[best].ValLoss {
			best = i
		}
	}
	for i, e := range curve {
		if e.Best != (i == best) {
			t.Errorf("curve[%d].Best = %t; the lowest validation loss is at epoch %d", i, e.Best, best+1)
		}
	}
	t.Logf("best epoch %d of %d: validation loss %.4f (at the stop %.4f), train loss %.4f (at the stop %.4f)",
		best+1, len(curve), curve[best].ValLoss, curve[len(curve)-1].ValLoss, curve[best].TrainLoss, curve[len(curve)-1].TrainLoss)
	if len(curve) == opts.Epochs {
		t.Fatalf("ran all %d epochs; want an early stop on this overfitting set", opts.Epochs)
	}
	if len(curve) != best+1+opts.Patience {
		t.Errorf("stopped after %d epochs, best %d, patience %d; want a stop at best + patience", len(curve), best+1, opts.Patience)
	}
	if last := curve[len(curve)-1]; !(last.TrainLoss < curve[best].TrainLoss) {
		t.Errorf("train loss %.4f at the stop, %.4f at the best epoch: the set does not overfit", last.TrainLoss, curve[best].TrainLoss)
	}
	opts.Epochs = best + 1
	again, _, err := Train(d.x, d.y, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(net, again) {
		t.Errorf("the network kept differs from the one at the end of epoch %d", best+1)
	}
}

// TestWeightsCount checks that a point's weight counts as that many copies
// of it: weights of 0 remove points from the loss.
func TestWeightsCount(t *testing.T) {
	d := makeSynthetic(3000, 0.1, 9)
	w := make([]float64, len(d.y))
	for i := range w {
		w[i] = 1
	}
	opts := Options{Seed: 4, Epochs: 3}
	plain, _, err := Train(d.x, d.y, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	unit, _, err := Train(d.x, d.y, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(plain, unit) {
		t.Error("weights of 1 and nil weights gave different networks")
	}
	// Flip the labels of a quarter of the points and give them weight 0:
	// the validation accuracy must not suffer.
	y := append([]bool(nil), d.y...)
	for i := 0; i < len(y); i += 4 {
		y[i] = !y[i]
		w[i] = 0
	}
	opts.Epochs = 20
	_, clean, err := Train(d.x, d.y, nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, masked, err := Train(d.x, y, w, opts)
	if err != nil {
		t.Fatal(err)
	}
	a, b := clean[len(clean)-1].ValAccuracy, masked[len(masked)-1].ValAccuracy
	if b < a-0.03 {
		t.Errorf("validation accuracy %.4f with flipped points weighted 0, %.4f without them; want about the same", b, a)
	}
}

func TestTrainRejectsBadInput(t *testing.T) {
	d := makeSynthetic(200, 0.1, 1)
	nan := append([][Inputs]float32(nil), d.x...)
	nan[17][3] = float32(math.NaN())
	inf := append([][Inputs]float32(nil), d.x...)
	inf[5][9] = float32(math.Inf(1))
	allFalse := make([]bool, len(d.y))
	onePos := make([]bool, len(d.y))
	onePos[0] = true
	negW := make([]float64, len(d.y))
	negW[3] = -1
	zeroW := make([]float64, len(d.y))
	tests := []struct {
		name string
		x    [][Inputs]float32
		y    []bool
		w    []float64
		opts Options
		want string
	}{
		{"nan feature", nan, d.y, nil, Options{}, "row 17: feature 3 is NaN"},
		{"inf feature", inf, d.y, nil, Options{}, "row 5: feature 9 is +Inf"},
		{"short labels", d.x, d.y[1:], nil, Options{}, "200 feature rows and 199 labels"},
		{"short weights", d.x, d.y, negW[1:], Options{}, "199 weights for 200 rows"},
		{"negative weight", d.x, d.y, negW, Options{}, "row 3: weight -1"},
		{"zero weights", d.x, d.y, zeroW, Options{}, "all have weight 0"},
		{"one class", d.x, allFalse, nil, Options{}, "all 200 labels are migrate=false"},
		{"one positive", d.x, onePos, nil, Options{}, "1 points with migrate=true"},
		{"empty", nil, nil, nil, Options{}, "all 0 labels"},
		{"negative epochs", d.x, d.y, nil, Options{Epochs: -1}, "epochs -1"},
		{"validation fraction 1", d.x, d.y, nil, Options{ValFraction: 1}, "validation fraction 1"},
		{"nan learning rate", d.x, d.y, nil, Options{LearningRate: math.NaN()}, "learning rate NaN"},
		{"diverging", d.x, d.y, nil, Options{Epochs: 3, LearningRate: 1e200}, "training diverged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, c, err := Train(tt.x, tt.y, tt.w, tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "placement: train: ") {
				t.Fatalf("Train = %v; want an error containing %q", err, tt.want)
			}
			if n != nil || c != nil {
				t.Error("Train returned a network or a curve with its error")
			}
		})
	}
}

func TestHoldout(t *testing.T) {
	d := makeSynthetic(1000, 0.1, 2)
	kept, held, err := Holdout(d.y, 0.25, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept)+len(held) != len(d.y) {
		t.Fatalf("%d kept + %d held for %d points", len(kept), len(held), len(d.y))
	}
	seen := make([]bool, len(d.y))
	for _, idx := range [][]int{kept, held} {
		for j, i := range idx {
			if seen[i] || (j > 0 && idx[j-1] >= i) {
				t.Fatalf("index %d repeated or out of order", i)
			}
			seen[i] = true
		}
	}
	var pos, heldPos int
	for i, v := range d.y {
		if v {
			pos++
		}
		_ = i
	}
	for _, i := range held {
		if d.y[i] {
			heldPos++
		}
	}
	if want := int(math.Round(0.25 * float64(pos))); heldPos != want {
		t.Errorf("%d of %d positives held out, want %d", heldPos, pos, want)
	}
	k2, h2, _ := Holdout(d.y, 0.25, 3)
	if !reflect.DeepEqual(k2, kept) || !reflect.DeepEqual(h2, held) {
		t.Error("the same seed gave another split")
	}
	if _, _, err := Holdout(d.y, 0, 3); err == nil {
		t.Error("Holdout(fraction 0) succeeded")
	}
	if _, _, err := Holdout([]bool{true, false, false}, 0.5, 3); err == nil {
		t.Error("Holdout with one positive succeeded")
	}
}

// BenchmarkTrain50k times a full training of 50,000 points for 50 epochs
// (early stopping disabled) at the default width and batch.
func BenchmarkTrain50k(b *testing.B) {
	d := makeSynthetic(50000, noise, 1)
	opts := Options{Seed: 1, Epochs: 50, Patience: 50}
	for b.Loop() {
		if _, _, err := Train(d.x, d.y, nil, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(50*50000*(1-DefaultValFraction)), "ns/point-epoch")
}

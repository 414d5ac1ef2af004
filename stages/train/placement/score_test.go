package placement

import (
	"bytes"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// predictions makes a Predictions whose score is also its probability and
// whose decision is score > 0.5.
func predictions(score []float64) Predictions {
	m := make([]bool, len(score))
	for i, s := range score {
		m[i] = s > 0.5
	}
	return Predictions{Scorer: "s", Score: score, P: score, Migrate: m}
}

// pairwiseAUC counts, over every positive–negative pair, the pairs the
// positive wins, ties counting one half.
func pairwiseAUC(score []float64, y []bool) float64 {
	var wins, pairs float64
	for i := range score {
		for j := range score {
			if !y[i] || y[j] {
				continue
			}
			pairs++
			switch {
			case score[i] > score[j]:
				wins++
			case score[i] == score[j]:
				wins += 0.5
			}
		}
	}
	return wins / pairs
}

// TestAUCMatchesPairwiseCount checks the rank AUC against a brute-force
// count over every pair, on scores with many ties and on hand cases.
func TestAUCMatchesPairwiseCount(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 20 {
		n := 50 + r.IntN(400)
		levels := 1 + r.IntN(30) // few levels: many ties
		score, y := make([]float64, n), make([]bool, n)
		for i := range n {
			score[i] = float64(r.IntN(levels)) / float64(levels)
			y[i] = r.Float64() < 0.2+0.6*score[i]
		}
		y[0], y[1] = true, false
		s, err := Evaluate(predictions(score), y)
		if err != nil {
			t.Fatal(err)
		}
		if want := pairwiseAUC(score, y); math.Abs(s.AUC-want) > 1e-12 {
			t.Errorf("trial %d (%d points, %d levels): AUC %.15f, pairwise count %.15f", trial, n, levels, s.AUC, want)
		}
	}
	tests := []struct {
		name  string
		score []float64
		y     []bool
		want  float64
	}{
		{"perfect", []float64{0.1, 0.2, 0.8, 0.9}, []bool{false, false, true, true}, 1},
		{"reversed", []float64{0.9, 0.8, 0.2, 0.1}, []bool{false, false, true, true}, 0},
		{"all tied", []float64{0.5, 0.5, 0.5, 0.5}, []bool{false, true, false, true}, 0.5},
		{"one swap", []float64{0.1, 0.6, 0.4, 0.9}, []bool{false, false, true, true}, 0.75},
	}
	for _, tt := range tests {
		s, err := Evaluate(predictions(tt.score), tt.y)
		if err != nil {
			t.Fatal(err)
		}
		if s.AUC != tt.want {
			t.Errorf("%s: AUC %v, want %v", tt.name, s.AUC, tt.want)
		}
	}
}

// TestROC checks the curve's ends, its monotonicity and that the area
// under it (trapezoids, exact for tied groups) equals the AUC; thinned to
// MaxROCPoints, the area stays close.
func TestROC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{40, 5000} {
		score, y := make([]float64, n), make([]bool, n)
		for i := range n {
			y[i] = i%3 == 0
			score[i] = r.NormFloat64()
			if y[i] {
				score[i] += 1
			}
			if i%7 == 0 {
				score[i] = 0 // a large tied group
			}
		}
		s, err := Evaluate(Predictions{Scorer: "roc", Score: score, P: make([]float64, n), Migrate: make([]bool, n)}, y)
		if err != nil {
			t.Fatal(err)
		}
		roc := s.ROC
		if len(roc) > MaxROCPoints {
			t.Errorf("n=%d: %d ROC points, want at most %d", n, len(roc), MaxROCPoints)
		}
		if first, last := roc[0], roc[len(roc)-1]; first.FPR != 0 || first.TPR != 0 || last.FPR != 1 || last.TPR != 1 {
			t.Errorf("n=%d: ROC runs from %+v to %+v, want (0,0) to (1,1)", n, first, last)
		}
		var area float64
		for i := 1; i < len(roc); i++ {
			if roc[i].FPR < roc[i-1].FPR || roc[i].TPR < roc[i-1].TPR {
				t.Fatalf("n=%d: ROC goes back at point %d: %+v after %+v", n, i, roc[i], roc[i-1])
			}
			if roc[i].Scorer != "roc" {
				t.Fatalf("point %d has scorer %q", i, roc[i].Scorer)
			}
			area += (roc[i].FPR - roc[i-1].FPR) * (roc[i].TPR + roc[i-1].TPR) / 2
		}
		tol := 1e-12
		if n > MaxROCPoints {
			tol = 0.01 // thinned
		}
		if math.Abs(area-s.AUC) > tol {
			t.Errorf("n=%d: area under %d ROC points %.6f, AUC %.6f", n, len(roc), area, s.AUC)
		}
	}
}

func TestThinKeepsSpreadPoints(t *testing.T) {
	var roc []ROCPoint
	for i := range 1001 {
		f := float64(i) / 1000
		roc = append(roc, ROCPoint{FPR: f, TPR: math.Sqrt(f)})
	}
	got := thin(roc, 50)
	if len(got) > 50 || len(got) < 45 {
		t.Fatalf("thin to 50 kept %d points", len(got))
	}
	if got[0] != roc[0] || got[len(got)-1] != roc[len(roc)-1] {
		t.Errorf("thin dropped an end: %+v … %+v", got[0], got[len(got)-1])
	}
	// The steep start of the curve keeps points too.
	if got[1].FPR > 0.01 {
		t.Errorf("second point %+v: the steep start lost its points", got[1])
	}
	if !reflect.DeepEqual(got, thin(roc, 50)) {
		t.Error("thin is not deterministic")
	}
}

// TestCalibration checks the bins on a hand example: counts sum to n,
// each bin holds its mean prediction and observed rate, p = 1 falls in
// the last bin, and ECE is the count-weighted gap.
func TestCalibration(t *testing.T) {
	p := []float64{0.05, 0.05, 0.15, 0.95, 1, 0.55, 0.55, 0.55, 0.55}
	y := []bool{false, true, false, true, true, true, true, false, false}
	s, err := Evaluate(predictions(p), y)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Calibration) != CalibrationBins {
		t.Fatalf("%d bins, want %d", len(s.Calibration), CalibrationBins)
	}
	total := 0
	for _, b := range s.Calibration {
		total += b.Count
	}
	if total != len(p) {
		t.Errorf("bin counts sum to %d, want %d", total, len(p))
	}
	want := map[int]Bin{
		0: {Scorer: "s", Bin: 0, Lo: 0, Hi: 0.1, Count: 2, MeanPredicted: 0.05, Observed: 0.5},
		1: {Scorer: "s", Bin: 1, Lo: 0.1, Hi: 0.2, Count: 1, MeanPredicted: 0.15, Observed: 0},
		5: {Scorer: "s", Bin: 5, Lo: 0.5, Hi: 0.6, Count: 4, MeanPredicted: 0.55, Observed: 0.5},
		9: {Scorer: "s", Bin: 9, Lo: 0.9, Hi: 1, Count: 2, MeanPredicted: 0.975, Observed: 1},
	}
	for i, b := range s.Calibration {
		w := want[i]
		if w.Count == 0 {
			w = Bin{Scorer: "s", Bin: i, Lo: float64(i) / 10, Hi: float64(i+1) / 10}
		}
		if math.Abs(b.MeanPredicted-w.MeanPredicted) > 1e-12 || b.Count != w.Count || b.Observed != w.Observed || b.Lo != w.Lo || b.Hi != w.Hi || b.Bin != w.Bin || b.Scorer != w.Scorer {
			t.Errorf("bin %d = %+v, want %+v", i, b, w)
		}
	}
	ece := (2*0.45 + 1*0.15 + 4*0.05 + 2*0.025) / 9
	if math.Abs(s.ECE-ece) > 1e-12 {
		t.Errorf("ECE %v, want %v", s.ECE, ece)
	}
}

func TestEvaluateConfusionAndLogLoss(t *testing.T) {
	pr := Predictions{
		Scorer:  "hand",
		Score:   []float64{0.9, 0.8, 0.3, 0.2, 0.6},
		P:       []float64{0.9, 0.8, 0.3, 0.2, 0.6},
		Migrate: []bool{true, true, false, false, true},
	}
	y := []bool{true, false, true, false, false}
	s, err := Evaluate(pr, y)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Confusion{TP: 1, FP: 2, TN: 1, FN: 1}); s.Confusion != want {
		t.Errorf("confusion %+v, want %+v", s.Confusion, want)
	}
	if s.N != 5 || s.Positives != 2 || s.Accuracy != 0.4 {
		t.Errorf("n %d, positives %d, accuracy %v; want 5, 2, 0.4", s.N, s.Positives, s.Accuracy)
	}
	ll := -(math.Log(0.9) + math.Log(0.2) + math.Log(0.3) + math.Log(0.8) + math.Log(0.4)) / 5
	if math.Abs(s.LogLoss-ll) > 1e-12 {
		t.Errorf("log loss %v, want %v", s.LogLoss, ll)
	}
	// A confident mistake is clipped, not infinite.
	pr.P = []float64{0, 1, 0, 0, 0}
	if s, _ := Evaluate(pr, y); math.IsInf(s.LogLoss, 0) || s.LogLoss < 10 {
		t.Errorf("log loss of p = 0 for a positive: %v, want large and finite", s.LogLoss)
	}
	rows := s.Metrics()
	names := make([]string, len(rows))
	for i, m := range rows {
		names[i] = m.Metric
		if m.Scorer != "hand" {
			t.Errorf("metric %s has scorer %q", m.Metric, m.Scorer)
		}
	}
	if got := strings.Join(names, ","); got != "n,positives,accuracy,auc,log_loss,ece,tp,fp,tn,fn" {
		t.Errorf("metrics %s", got)
	}
}

func TestEvaluateRejects(t *testing.T) {
	y := []bool{true, false, true}
	tests := []struct {
		name string
		pr   Predictions
		y    []bool
		want string
	}{
		{"short", predictions([]float64{0.1, 0.2}), y, "2 scores, 2 probabilities and 2 decisions for 3 labels"},
		{"nan score", predictions([]float64{0.1, math.NaN(), 0.3}), y, "point 1: score is NaN"},
		{"p above 1", Predictions{Score: []float64{1, 2, 3}, P: []float64{0, 1.5, 0}, Migrate: make([]bool, 3)}, y, "point 1: probability 1.5"},
		{"none", predictions(nil), nil, "no points to score"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Evaluate(tt.pr, tt.y); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Evaluate = %v, want an error containing %q", err, tt.want)
			}
		})
	}
}

// TestEvaluateOneClass scores points of one class: the accuracy, log loss
// and confusion stand, and there is no AUC or ROC curve to report.
func TestEvaluateOneClass(t *testing.T) {
	pr := Predictions{Scorer: "s", Score: []float64{0.1, 0.2, 0.7}, P: []float64{0.1, 0.2, 0.7}, Migrate: []bool{false, false, true}}
	s, err := Evaluate(pr, []bool{false, false, false})
	if err != nil {
		t.Fatal(err)
	}
	if s.Accuracy != 2.0/3 || s.Confusion != (Confusion{FP: 1, TN: 2}) || !math.IsNaN(s.AUC) || s.ROC != nil {
		t.Errorf("Evaluate = accuracy %v, confusion %+v, AUC %v, ROC %v; want 2/3, 1 FP and 2 TN, NaN, none", s.Accuracy, s.Confusion, s.AUC, s.ROC)
	}
	for _, m := range s.Metrics() {
		if m.Metric == "auc" || math.IsNaN(m.Value) {
			t.Errorf("Metrics has %s = %v", m.Metric, m.Value)
		}
	}
}

// TestBestRule plants a single-feature threshold (feature 4 below 0.3)
// among noise features and wants it found exactly.
func TestBestRule(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	x := make([][Inputs]float32, 500)
	y := make([]bool, len(x))
	for i := range x {
		for k := range Inputs {
			x[i][k] = float32(r.Float64())
		}
		y[i] = x[i][4] < 0.3
	}
	rule, err := BestRule(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if rule.Feature != 4 || rule.Above {
		t.Fatalf("BestRule = %v, want x[4] < about 0.3", rule)
	}
	lo, hi := float32(0), float32(1)
	for i := range x {
		if v := x[i][4]; y[i] {
			lo = max(lo, v)
		} else {
			hi = min(hi, v)
		}
	}
	if want := (float64(lo) + float64(hi)) / 2; rule.Threshold != want {
		t.Errorf("threshold %v, want the midpoint %v of %v and %v", rule.Threshold, want, lo, hi)
	}
	pos := 0
	for _, v := range y {
		if v {
			pos++
		}
	}
	if want := float64(pos+1) / float64(pos+2); rule.PMigrate != want || rule.PStay != 1/float64(len(y)-pos+2) {
		t.Errorf("PMigrate %v, PStay %v; want Laplace rates %v and %v", rule.PMigrate, rule.PStay, want, 1/float64(len(y)-pos+2))
	}
	s, err := Evaluate(rule.Predictions("best", x), y)
	if err != nil {
		t.Fatal(err)
	}
	if s.Accuracy != 1 || s.AUC != 1 {
		t.Errorf("on its training points the planted rule scores accuracy %v, AUC %v; want 1, 1", s.Accuracy, s.AUC)
	}
	// A constant feature set has no threshold.
	if _, err := BestRule(make([][Inputs]float32, 4), []bool{true, false, true, false}); err == nil {
		t.Error("BestRule on constant features succeeded")
	}
}

func TestNewRule(t *testing.T) {
	x := [][Inputs]float32{{0: 0.05}, {0: 0.2}, {0: 0.3}, {0: -0.1}}
	y := []bool{false, true, true, true}
	r, err := NewRule(0, true, 0.1, x, y)
	if err != nil {
		t.Fatal(err)
	}
	// Migrate side: 0.2 and 0.3, both positive; stay side: one of two.
	if r.PMigrate != 3.0/4 || r.PStay != 2.0/4 {
		t.Errorf("PMigrate %v, PStay %v; want 0.75 and 0.5", r.PMigrate, r.PStay)
	}
	pr := r.Predictions("gain", x)
	if want := []bool{false, true, true, false}; !reflect.DeepEqual(pr.Migrate, want) {
		t.Errorf("decisions %v, want %v", pr.Migrate, want)
	}
	if _, err := NewRule(Inputs, true, 0, x, y); err == nil {
		t.Error("NewRule with feature 10 succeeded")
	}
}

// TestRowsWriteToParquet writes every row type a later stage stores and
// reads it back unchanged.
func TestRowsWriteToParquet(t *testing.T) {
	s, err := Evaluate(predictions([]float64{0.1, 0.7, 0.4, 0.9}), []bool{false, true, false, true})
	if err != nil {
		t.Fatal(err)
	}
	curve := []Epoch{{Epoch: 1, TrainLoss: 0.7, ValLoss: 0.6, ValAccuracy: 0.5}, {Epoch: 2, TrainLoss: 0.5, ValLoss: 0.4, ValAccuracy: 0.8, Best: true}}
	roundTrip(t, s.Metrics())
	roundTrip(t, s.Calibration)
	roundTrip(t, s.ROC)
	roundTrip(t, curve)
}

func roundTrip[T any](t *testing.T, rows []T) {
	t.Helper()
	var buf bytes.Buffer
	if err := parquet.Write(&buf, rows); err != nil {
		t.Fatalf("write %T: %v", rows, err)
	}
	got, err := parquet.Read[T](bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatalf("read %T: %v", rows, err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("%T: read back %+v, wrote %+v", rows, got, rows)
	}
}

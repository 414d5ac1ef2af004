package placement

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Predictions is what one scorer says about each test point.
type Predictions struct {
	// Scorer names the scorer in every row of its scores.
	Scorer string
	// Score ranks the points, higher meaning more inclined to migrate; the
	// AUC and the ROC curve come from it.
	Score []float64
	// P is the probability of migrate; the log loss and the calibration
	// come from it.
	P []float64
	// Migrate is the decision; the accuracy and the confusion matrix come
	// from it.
	Migrate []bool
}

// Predictions returns the network's predictions for x: the probability is
// both the score and P, and the decision is P > Threshold.
func (n *Network) Predictions(scorer string, x [][Inputs]float32) Predictions {
	p := n.Predict(x)
	m := make([]bool, len(p))
	for i, v := range p {
		m[i] = v > Threshold
	}
	return Predictions{Scorer: scorer, Score: p, P: p, Migrate: m}
}

// Confusion counts the decisions against the labels.
type Confusion struct {
	TP, FP, TN, FN int
}

// Scores are one scorer's figures on the test points.
type Scores struct {
	Scorer string
	// N is the number of points, Positives those labelled migrate.
	N, Positives int
	// Accuracy is the share of decisions equal to the label.
	Accuracy float64
	// AUC is the probability that a random positive scores above a random
	// negative, ties counting one half (the Mann–Whitney statistic).
	AUC float64
	// LogLoss is the mean cross-entropy of P, clipped to [1e-15, 1−1e-15].
	LogLoss float64
	// ECE is the expected calibration error: the count-weighted mean of
	// |mean predicted − observed rate| over the calibration bins.
	ECE       float64
	Confusion Confusion
	// Calibration has CalibrationBins equal-width bins of P over [0, 1].
	Calibration []Bin
	// ROC is the ROC curve from (0, 0) to (1, 1), at most MaxROCPoints.
	ROC []ROCPoint
}

// CalibrationBins is the number of equal-width calibration bins.
const CalibrationBins = 10

// MaxROCPoints bounds the points of a ROC curve.
const MaxROCPoints = 200

// Metric is one number of a scorer's scores in long form, a row of
// metrics.parquet.
type Metric struct {
	Scorer string  `parquet:"scorer,dict"`
	Metric string  `parquet:"metric,dict"`
	Value  float64 `parquet:"value"`
}

// Bin is one calibration bin: the points whose P lies in [Lo, Hi) (the
// last bin includes 1).
type Bin struct {
	Scorer string  `parquet:"scorer,dict"`
	Bin    int     `parquet:"bin"`
	Lo     float64 `parquet:"lo"`
	Hi     float64 `parquet:"hi"`
	Count  int     `parquet:"count"`
	// MeanPredicted is the mean P of the bin's points, Observed the share
	// of them labelled migrate; both 0 for an empty bin.
	MeanPredicted float64 `parquet:"mean_predicted"`
	Observed      float64 `parquet:"observed"`
}

// ROCPoint is one point of a ROC curve: the shares of negatives and of
// positives whose score is at least some threshold.
type ROCPoint struct {
	Scorer string  `parquet:"scorer,dict"`
	FPR    float64 `parquet:"fpr"`
	TPR    float64 `parquet:"tpr"`
}

// Metrics returns the scalar scores in long form, in a fixed order.
func (s Scores) Metrics() []Metric {
	kv := []struct {
		name string
		v    float64
	}{
		{"n", float64(s.N)},
		{"positives", float64(s.Positives)},
		{"accuracy", s.Accuracy},
		{"auc", s.AUC},
		{"log_loss", s.LogLoss},
		{"ece", s.ECE},
		{"tp", float64(s.Confusion.TP)},
		{"fp", float64(s.Confusion.FP)},
		{"tn", float64(s.Confusion.TN)},
		{"fn", float64(s.Confusion.FN)},
	}
	rows := make([]Metric, 0, len(kv))
	for _, m := range kv {
		if !math.IsNaN(m.v) {
			rows = append(rows, Metric{Scorer: s.Scorer, Metric: m.name, Value: m.v})
		}
	}
	return rows
}

// Evaluate scores pr against the labels y (true = migrate) of the same
// points. Points of one class alone have no AUC (NaN, and Metrics leaves
// it out) and no ROC curve.
func Evaluate(pr Predictions, y []bool) (Scores, error) {
	s, err := evaluate(pr, y)
	if err != nil {
		return Scores{}, fmt.Errorf("placement: evaluate %s: %w", pr.Scorer, err)
	}
	return s, nil
}

func evaluate(pr Predictions, y []bool) (Scores, error) {
	n := len(y)
	if len(pr.Score) != n || len(pr.P) != n || len(pr.Migrate) != n {
		return Scores{}, fmt.Errorf("%d scores, %d probabilities and %d decisions for %d labels", len(pr.Score), len(pr.P), len(pr.Migrate), n)
	}
	for i := range n {
		if math.IsNaN(pr.Score[i]) {
			return Scores{}, fmt.Errorf("point %d: score is NaN", i)
		}
		if !(pr.P[i] >= 0 && pr.P[i] <= 1) {
			return Scores{}, fmt.Errorf("point %d: probability %v is outside [0, 1]", i, pr.P[i])
		}
	}
	s := Scores{Scorer: pr.Scorer, N: n}
	for i, pos := range y {
		c := &s.Confusion
		switch {
		case pos && pr.Migrate[i]:
			c.TP++
		case pos:
			c.FN++
		case pr.Migrate[i]:
			c.FP++
		default:
			c.TN++
		}
		if pos {
			s.Positives++
		}
	}
	if n == 0 {
		return Scores{}, errors.New("no points to score")
	}
	s.Accuracy = float64(s.Confusion.TP+s.Confusion.TN) / float64(n)
	s.LogLoss = logLoss(pr.P, y)
	s.Calibration, s.ECE = calibration(pr.Scorer, pr.P, y)
	if s.Positives == 0 || s.Positives == n {
		// No pair of a positive and a negative: no AUC, no ROC curve.
		s.AUC = math.NaN()
		return s, nil
	}
	var full []ROCPoint
	s.AUC, full = rankCurve(pr.Score, y)
	s.ROC = thin(full, MaxROCPoints)
	for i := range s.ROC {
		s.ROC[i].Scorer = pr.Scorer
	}
	return s, nil
}

func logLoss(p []float64, y []bool) float64 {
	const eps = 1e-15
	var sum float64
	for i, v := range p {
		v = min(max(v, eps), 1-eps)
		if y[i] {
			sum -= math.Log(v)
		} else {
			sum -= math.Log1p(-v)
		}
	}
	return sum / float64(len(p))
}

// calibration bins p into CalibrationBins equal-width bins and returns them
// with the expected calibration error.
func calibration(scorer string, p []float64, y []bool) ([]Bin, float64) {
	bins := make([]Bin, CalibrationBins)
	sumP := make([]float64, CalibrationBins)
	pos := make([]int, CalibrationBins)
	for i, v := range p {
		b := min(int(v*CalibrationBins), CalibrationBins-1)
		bins[b].Count++
		sumP[b] += v
		if y[i] {
			pos[b]++
		}
	}
	var ece float64
	for b := range bins {
		bn := &bins[b]
		bn.Scorer, bn.Bin = scorer, b
		bn.Lo, bn.Hi = float64(b)/CalibrationBins, float64(b+1)/CalibrationBins
		if bn.Count > 0 {
			bn.MeanPredicted = sumP[b] / float64(bn.Count)
			bn.Observed = float64(pos[b]) / float64(bn.Count)
			ece += float64(bn.Count) * math.Abs(bn.MeanPredicted-bn.Observed)
		}
	}
	return bins, ece / float64(len(p))
}

// rankCurve returns the AUC from the ranks of score (tied scores share
// their mean rank) and the full ROC curve, one point per distinct score.
func rankCurve(score []float64, y []bool) (float64, []ROCPoint) {
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	// Descending score; the index only makes the order total.
	slices.SortFunc(idx, func(a, b int) int {
		return cmp.Or(cmp.Compare(score[b], score[a]), cmp.Compare(a, b))
	})
	var npos, nneg float64
	for _, v := range y {
		if v {
			npos++
		} else {
			nneg++
		}
	}
	roc := []ROCPoint{{}}
	var tp, fp float64
	for lo := 0; lo < len(idx); {
		hi := lo
		for ; hi < len(idx) && score[idx[hi]] == score[idx[lo]]; hi++ {
			if y[idx[hi]] {
				tp++
			} else {
				fp++
			}
		}
		roc = append(roc, ROCPoint{FPR: fp / nneg, TPR: tp / npos})
		lo = hi
	}
	return weightedAUC(idx, score, y, nil), roc
}

// thin keeps at most limit points of a ROC curve, its first and last
// among them, spread evenly along the curve: FPR + TPR grows from 0 to 2
// along it, and a point is kept when that sum first reaches the next of
// evenly spaced marks limit − 1 apart.
func thin(roc []ROCPoint, limit int) []ROCPoint {
	if len(roc) <= limit {
		return roc
	}
	step := 2 / float64(limit-1)
	out := []ROCPoint{roc[0]}
	next := step
	for _, p := range roc[1 : len(roc)-1] {
		if s := p.FPR + p.TPR; s >= next && len(out) < limit-1 {
			out = append(out, p)
			next = (math.Floor(s/step) + 1) * step
		}
	}
	return append(out, roc[len(roc)-1])
}

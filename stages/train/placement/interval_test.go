package placement

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestWeightedAUC: counting a point w times gives the AUC of the points
// with each one repeated w times.
func TestWeightedAUC(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var score []float64
	var y []bool
	w := make([]float64, 300)
	for i := range w {
		score = append(score, float64(rng.IntN(40))) // ties on purpose
		y = append(y, rng.Float64() < 0.3+0.01*score[i])
		w[i] = float64(rng.IntN(4))
	}
	var rs []float64
	var ry []bool
	for i := range w {
		for range int(w[i]) {
			rs, ry = append(rs, score[i]), append(ry, y[i])
		}
	}
	want, _ := rankCurve(rs, ry)
	order := make([]int, len(score))
	for i := range order {
		order[i] = i
	}
	sortDesc(order, score)
	if got := weightedAUC(order, score, y, w); math.Abs(got-want) > 1e-12 {
		t.Errorf("weighted AUC %v, AUC of the repeated points %v", got, want)
	}
}

func sortDesc(order []int, score []float64) {
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && score[order[j]] > score[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
}

// TestScoreBlocks checks the figures by hand on six points in three
// blocks, then the bootstrap's intervals around them.
func TestScoreBlocks(t *testing.T) {
	y := []bool{true, false, true, false, true, false}
	pr := Predictions{Scorer: "s", Score: []float64{0.9, 0.2, 0.4, 0.6, 0.8, 0.1}, Migrate: []bool{true, false, false, true, true, false}}
	pr.P = pr.Score
	o := Outcomes{
		// Point 2 (a wrong stay) cost 0.3 s against moving, point 3 (a
		// wrong move) 0.1 s against staying; the rest chose the better.
		Stay:  []float64{2, 1, 1.3, 1, 3, 1},
		Move:  []float64{1, 2, 1.0, 1.1, 2, 5},
		Block: []int32{7, 7, 9, 9, 4, 4},
	}
	s, err := ScoreBlocks(pr, y, o, 2000, 0.95, 1)
	if err != nil {
		t.Fatal(err)
	}
	if s.Blocks != 3 {
		t.Errorf("%d blocks, want 3", s.Blocks)
	}
	// 4 of 6 right; AUC: positives 0.9, 0.8, 0.4 against negatives 0.6,
	// 0.2, 0.1: 8 of 9 pairs.
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"accuracy", s.Accuracy.Value, 4.0 / 6}, {"AUC", s.AUC.Value, 8.0 / 9}, {"regret", s.Regret.Value, 0.4 / 6}} {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, iv := range []struct {
		name string
		Interval
	}{{"accuracy", s.Accuracy}, {"AUC", s.AUC}, {"regret", s.Regret}} {
		if !(iv.Lo <= iv.Value && iv.Value <= iv.Hi) || iv.Lo == iv.Hi {
			t.Errorf("%s %v: interval [%v, %v] does not hold it, or has no width", iv.name, iv.Value, iv.Lo, iv.Hi)
		}
	}
	// Blocks 4 and 7 are each right twice, block 9 never: a resample's
	// accuracy is a multiple of 1/3 from 0 (block 9 three times) to 1.
	for _, v := range []float64{s.Accuracy.Lo, s.Accuracy.Hi} {
		if k := v * 3; math.Abs(k-math.Round(k)) > 1e-12 {
			t.Errorf("accuracy interval end %v is no multiple of 1/3", v)
		}
	}
	again, _ := ScoreBlocks(pr, y, o, 2000, 0.95, 1)
	if again != s {
		t.Errorf("the same seed gave %+v, then %+v", s, again)
	}
	if _, err := ScoreBlocks(pr, y[:5], o, 10, 0.95, 1); err == nil {
		t.Error("five labels for six points: no error")
	}
}

// TestWilson checks Wilson's interval against values worked out from its
// formula, including the shares of 0 and 1, where it keeps its width.
func TestWilson(t *testing.T) {
	tests := []struct {
		k, n, conf float64
		lo, hi     float64
	}{
		{5, 10, 0.95, 0.236593, 0.763407},
		{0, 10, 0.95, 0, 0.277533},
		{122, 122, 0.95, 0.969474, 1},
		{3, 3, 0.95, 0.438503, 1},
		{81, 100, 0.9, 0.737640, 0.866027},
	}
	for _, tt := range tests {
		lo, hi := Wilson(tt.k, tt.n, tt.conf)
		// The ends at a share of 0 or 1 are exact: an interval of 1
		// must hold 1.
		if math.Abs(lo-tt.lo) > 1e-6 || math.Abs(hi-tt.hi) > 1e-6 || tt.lo == 0 && lo != 0 || tt.hi == 1 && hi != 1 {
			t.Errorf("Wilson(%v, %v, %v) = [%.6f, %.6f], want [%.6f, %.6f]", tt.k, tt.n, tt.conf, lo, hi, tt.lo, tt.hi)
		}
	}
	if lo, hi := Wilson(0, 0, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) {
		t.Errorf("Wilson of no draws = [%v, %v], want NaN", lo, hi)
	}
}

// TestBlockBootstrap resamples blocks of points that share their value
// within a block: each resample's mean is a mean of block values, so an
// interval's ends are multiples of 1/blocks for 0/1 values; a statistic
// that is NaN on every resample has no interval, and no points is an
// error.
func TestBlockBootstrap(t *testing.T) {
	block := []int32{3, 3, 8, 8, 5, 5, 1, 1}
	x := []float64{1, 1, 0, 0, 1, 1, 1, 1}
	mean := func(w []float64) float64 {
		var s, n float64
		for i := range w {
			s, n = s+w[i]*x[i], n+w[i]
		}
		return s / n
	}
	never := func([]float64) float64 { return math.NaN() }
	ivs, nb, err := BlockBootstrap(block, 500, 0.95, 3, mean, never)
	if err != nil {
		t.Fatal(err)
	}
	if nb != 4 || ivs[0].Value != 0.75 {
		t.Errorf("%d blocks, mean %v; want 4 and 0.75", nb, ivs[0].Value)
	}
	for _, v := range []float64{ivs[0].Lo, ivs[0].Hi} {
		if k := v * 4; math.Abs(k-math.Round(k)) > 1e-12 {
			t.Errorf("interval end %v is no multiple of 1/4", v)
		}
	}
	if !(ivs[0].Lo < 0.75 && ivs[0].Hi == 1) {
		t.Errorf("interval [%v, %v] of 0.75 over 4 blocks, one of them 0: want it from below 0.75 to 1", ivs[0].Lo, ivs[0].Hi)
	}
	if !math.IsNaN(ivs[1].Lo) || !math.IsNaN(ivs[1].Hi) {
		t.Errorf("a statistic NaN on every resample has the interval [%v, %v]", ivs[1].Lo, ivs[1].Hi)
	}
	if _, _, err := BlockBootstrap(nil, 10, 0.95, 1, mean); err == nil {
		t.Error("no points: no error")
	}
}

// TestDifferenceBlocks compares two scorers on 40 blocks of points: one
// against itself is no difference at all; one right on every point
// against one wrong on a quarter of them is better by a quarter, with an
// interval clear of zero and a lower regret; two that err on as many
// points, in different blocks, cannot be told apart.
func TestDifferenceBlocks(t *testing.T) {
	const n = 400
	y := make([]bool, n)
	o := Outcomes{Stay: make([]float64, n), Move: make([]float64, n), Block: make([]int32, n)}
	for i := range n {
		y[i] = i%3 == 0
		o.Block[i] = int32(i / 10)
		o.Stay[i], o.Move[i] = 1, 2
		if y[i] {
			o.Stay[i], o.Move[i] = 2, 1
		}
	}
	scorer := func(name string, wrong func(i int) bool) Predictions {
		p := Predictions{Scorer: name, Migrate: make([]bool, n), Score: make([]float64, n)}
		for i := range n {
			p.Migrate[i] = y[i] != wrong(i)
		}
		return p
	}
	right := scorer("right", func(int) bool { return false })
	quarter := scorer("quarter", func(i int) bool { return i%4 == 0 })
	evens := scorer("even blocks", func(i int) bool { return (i/10)%2 == 0 && i%5 == 0 })
	odds := scorer("odd blocks", func(i int) bool { return (i/10)%2 == 1 && i%5 == 0 })
	tests := []struct {
		name           string
		a, b           Predictions
		acc            float64
		clear, regrets bool // the interval excludes zero; a's regret is the lower
	}{
		{"itself", right, right, 0, false, false},
		{"right against a quarter wrong", right, quarter, 0.25, true, true},
		{"as many errors elsewhere", evens, odds, 0, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DifferenceBlocks(tt.a, tt.b, y, o, 500, 0.95, 9)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(d.Accuracy.Value-tt.acc) > 1e-12 {
				t.Errorf("accuracy difference %v, want %v", d.Accuracy.Value, tt.acc)
			}
			if clear := d.Accuracy.Lo > 0 || d.Accuracy.Hi < 0; clear != tt.clear {
				t.Errorf("interval [%v, %v] clear of zero = %v, want %v", d.Accuracy.Lo, d.Accuracy.Hi, clear, tt.clear)
			}
			if lower := d.Regret.Hi < 0; lower != tt.regrets {
				t.Errorf("regret difference %v [%v, %v]: a's clearly lower = %v, want %v", d.Regret.Value, d.Regret.Lo, d.Regret.Hi, lower, tt.regrets)
			}
		})
	}
	if _, err := DifferenceBlocks(right, Predictions{Scorer: "short"}, y, o, 10, 0.95, 1); err == nil {
		t.Error("a scorer without decisions: no error")
	}
}

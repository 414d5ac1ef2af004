package outputanalysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// near reports whether got is within 1e-6 of want, NaN matching NaN.
func near(got, want float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return math.Abs(got-want) <= 1e-6
}

// b2i is 1 for true, for counting.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestTInterval(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name       string
		x          []float64
		confidence float64
		want       Interval
	}{
		// mean 3, s = √2.5, t(0.975, 4) = 2.776445: h = 2.776445·√2.5/√5.
		{"five values", []float64{1, 2, 3, 4, 5}, 0.95, Interval{Mean: 3, Lo: 1.036757, Hi: 4.963243, N: 5}},
		// t(0.95, 4) = 2.131847: h = 2.131847·√0.5.
		{"90%", []float64{5, 4, 3, 2, 1}, 0.90, Interval{Mean: 3, Lo: 1.492557, Hi: 4.507443, N: 5}},
		// mean 3, s = √2, t(0.975, 1) = 12.706205: h = 12.706205.
		{"two values", []float64{2, 4}, 0.95, Interval{Mean: 3, Lo: -9.706205, Hi: 15.706205, N: 2}},
		{"constant", []float64{7, 7, 7}, 0.95, Interval{Mean: 7, Lo: 7, Hi: 7, N: 3}},
		{"one value", []float64{7}, 0.95, Interval{Mean: 7, Lo: nan, Hi: nan, N: 1}},
		{"no values", nil, 0.95, Interval{Mean: nan, Lo: nan, Hi: nan}},
		{"NaN value", []float64{1, nan, 3}, 0.95, Interval{Mean: nan, Lo: nan, Hi: nan, N: 3}},
		{"confidence 1", []float64{1, 2, 3}, 1, Interval{Mean: 2, Lo: nan, Hi: nan, N: 3}},
		{"confidence 0", []float64{1, 2, 3}, 0, Interval{Mean: 2, Lo: nan, Hi: nan, N: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := TInterval(tc.x, tc.confidence)
			if !near(got.Mean, tc.want.Mean) || !near(got.Lo, tc.want.Lo) || !near(got.Hi, tc.want.Hi) || got.N != tc.want.N || got.Method != MethodT {
				t.Errorf("TInterval(%v, %v) = %+v, want %+v with method %q", tc.x, tc.confidence, got, tc.want, MethodT)
			}
		})
	}
}

func TestPairedTInterval(t *testing.T) {
	tests := []struct {
		name    string
		a, b    []float64
		want    Interval
		wantErr bool
	}{
		// d = 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.302653: h = 4.302653/√3.
		{"three pairs", []float64{10, 12, 14}, []float64{9, 10, 11}, Interval{Mean: 2, Lo: -0.484138, Hi: 4.484138, N: 3}, false},
		// A common shift in every replication is no uncertainty at all:
		// the pairing removes the workload's variance.
		{"common workload effect", []float64{1, 101, 51}, []float64{0, 100, 50}, Interval{Mean: 1, Lo: 1, Hi: 1, N: 3}, false},
		{"unequal lengths", []float64{1, 2}, []float64{1}, Interval{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PairedTInterval(tc.a, tc.b, 0.95)
			if (err != nil) != tc.wantErr {
				t.Fatalf("PairedTInterval(%v, %v) error = %v, want error %v", tc.a, tc.b, err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if !near(got.Mean, tc.want.Mean) || !near(got.Lo, tc.want.Lo) || !near(got.Hi, tc.want.Hi) || got.N != tc.want.N || got.Method != MethodPairedT {
				t.Errorf("PairedTInterval(%v, %v) = %+v, want %+v with method %q", tc.a, tc.b, got, tc.want, MethodPairedT)
			}
		})
	}
}

func TestIntervalCovers(t *testing.T) {
	iv := Interval{Mean: 1, Lo: 0, Hi: 2}
	nan := Interval{Mean: 1, Lo: math.NaN(), Hi: math.NaN()}
	for _, tc := range []struct {
		iv   Interval
		v    float64
		want bool
	}{
		{iv, 0, true}, {iv, 2, true}, {iv, 1.5, true}, {iv, -0.1, false}, {iv, 2.1, false}, {nan, 1, false},
	} {
		if got := tc.iv.Covers(tc.v); got != tc.want {
			t.Errorf("%+v.Covers(%v) = %v, want %v", tc.iv, tc.v, got, tc.want)
		}
	}
	if got := iv.HalfWidth(); got != 1 {
		t.Errorf("HalfWidth() = %v, want 1", got)
	}
}

func TestIndependentDifference(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name string
		a, b Interval
		want Interval
	}{
		// Half-widths 3 and 4 make 5.
		{"both", Interval{Mean: 10, Lo: 7, Hi: 13, N: 3}, Interval{Mean: 14, Lo: 10, Hi: 18, N: 5}, Interval{Mean: 4, Lo: -1, Hi: 9, N: 3}},
		{"zero widths", Interval{Mean: 0, Lo: 0, Hi: 0, N: 3}, Interval{Mean: 0.25, Lo: 0.25, Hi: 0.25, N: 3}, Interval{Mean: 0.25, Lo: 0.25, Hi: 0.25, N: 3}},
		{"a without", Interval{Mean: 10, Lo: nan, Hi: nan, N: 1}, Interval{Mean: 14, Lo: 10, Hi: 18, N: 5}, Interval{Mean: 4, Lo: nan, Hi: nan, N: 1}},
		{"b without", Interval{Mean: 10, Lo: 7, Hi: 13, N: 3}, Interval{Mean: 9, Lo: nan, Hi: nan, N: 1}, Interval{Mean: -1, Lo: nan, Hi: nan, N: 1}},
		{"infinite", Interval{Mean: 1, Lo: 0, Hi: 2, N: 3}, Interval{Mean: math.Inf(1), Lo: math.Inf(1), Hi: math.Inf(1), N: 3}, Interval{Mean: math.Inf(1), Lo: nan, Hi: nan, N: 3}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := IndependentDifference(tc.a, tc.b)
			if !near(got.Mean, tc.want.Mean) && got.Mean != tc.want.Mean || !near(got.Lo, tc.want.Lo) || !near(got.Hi, tc.want.Hi) || got.N != tc.want.N || got.Method != MethodIndependent {
				t.Errorf("IndependentDifference(%+v, %+v) = %+v, want %+v", tc.a, tc.b, got, tc.want)
			}
		})
	}
}

// TestIndependentDifferenceCovers checks the claim of its doc: two
// systems with unequal variances, five independent replications each,
// and the difference's 90% interval covers the true difference at least
// 90% of the time (it is conservative), though not so often as to be
// useless.
func TestIndependentDifferenceCovers(t *testing.T) {
	const trials, reps, confidence = 4000, 5, 0.90
	rng := rand.New(rand.NewPCG(1, 2))
	draw := func(mean, sd float64) []float64 {
		x := make([]float64, reps)
		for i := range x {
			x[i] = mean + sd*rng.NormFloat64()
		}
		return x
	}
	covered := 0
	for range trials {
		a, b := TInterval(draw(10, 1), confidence), TInterval(draw(12, 3), confidence)
		covered += b2i(IndependentDifference(a, b).Covers(2))
	}
	if rate := float64(covered) / trials; rate < confidence || rate > 0.99 {
		t.Errorf("the 90%% interval covered the true difference in %.3f of %d trials, want [0.90, 0.99]", rate, trials)
	}
}

package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestQuantile checks the nearest-rank quantile by hand and against
// gonum's empirical quantile.
func TestQuantile(t *testing.T) {
	one20 := make([]float64, 20)
	for i := range one20 {
		one20[i] = float64(i + 1)
	}
	tests := []struct {
		name string
		x    []float64
		p    float64
		want float64
	}{
		{"p0 is the least", one20, 0, 1},
		{"p50 of 20", one20, 0.5, 10},
		{"p51 of 20", one20, 0.51, 11},
		{"p95 of 20", one20, 0.95, 19},
		{"p99 of 20", one20, 0.99, 20},
		{"p100 is the most", one20, 1, 20},
		{"one value", []float64{7}, 0.99, 7},
		{"none", nil, 0.5, math.NaN()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := quantile(tt.x, tt.p); !(got == tt.want || math.IsNaN(got) && math.IsNaN(tt.want)) {
				t.Errorf("quantile(%v) = %v, want %v", tt.p, got, tt.want)
			}
		})
	}
	r := rand.New(rand.NewPCG(1, 1))
	for n := 1; n < 300; n += 7 {
		x := make([]float64, n)
		for i := range x {
			x[i] = math.Round(r.NormFloat64() * 10) // with ties
		}
		slices.Sort(x)
		for _, p := range []float64{0, 0.01, 0.025, 0.1, 0.5, 0.9, 0.95, 0.975, 0.99, 0.999, 1} {
			if got, want := quantile(x, p), stat.Quantile(p, stat.Empirical, x, nil); got != want {
				t.Errorf("n %d: quantile(%v) = %v, stat.Quantile = %v", n, p, got, want)
			}
		}
	}
}

func TestSortFloats(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	for _, n := range []int{0, 1, 100, smallSort, 5000, 100_000} {
		x := make([]float64, n)
		for i := range x {
			switch i % 4 {
			case 0:
				x[i] = r.ExpFloat64()
			case 1:
				x[i] = -r.ExpFloat64() * 1e-3
			case 2:
				x[i] = float64(r.IntN(5)) // ties, zeros
			default:
				x[i] = r.NormFloat64() * 1e9
			}
		}
		want := slices.Clone(x)
		slices.Sort(want)
		sortFloats(x)
		if !slices.Equal(x, want) {
			t.Errorf("n %d: sortFloats differs from slices.Sort", n)
		}
	}
}

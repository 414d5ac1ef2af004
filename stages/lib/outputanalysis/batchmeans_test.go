package outputanalysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// ar1 is n values of the stationary AR(1) process Y_i = mu + X_i,
// X_{i+1} = phi·X_i + ε_i with standard normal ε, X_0 drawn from the
// stationary law N(0, 1/(1−phi²)): a series with mean mu whose lag-j
// autocorrelation is phi^j.
func ar1(seed uint64, n int, mu, phi float64) []float64 {
	rng := rand.New(rand.NewPCG(seed, 2))
	y := make([]float64, n)
	x := rng.NormFloat64() / math.Sqrt(1-phi*phi)
	for i := range y {
		y[i] = mu + x
		x = phi*x + rng.NormFloat64()
	}
	return y
}

// TestBatchMeansAR1 runs BatchMeans on AR(1) series of known mean: its
// 95% intervals cover the mean in at least 90% of 200 seeds at every
// autocorrelation, and the batch size it chooses grows with the
// autocorrelation.
func TestBatchMeansAR1(t *testing.T) {
	const (
		seeds = 200
		n     = 1 << 14
		mu    = 10
	)
	prev := 0
	for _, phi := range []float64{0, 0.5, 0.9, 0.99} {
		covered, passed := 0, 0
		sizes := make([]int, seeds)
		for s := range seeds {
			y := ar1(uint64(s), n, mu, phi)
			iv, info := BatchMeans(y, 0.95)
			covered += b2i(iv.Covers(mu))
			passed += b2i(info.Passed)
			sizes[s] = info.BatchSize
			if info.Batches*info.BatchSize+info.Skipped != n || info.Batches < MinBatches || iv.N != info.Batches || iv.Method != MethodBatchMeans {
				t.Fatalf("φ=%v seed %d: BatchMeans = %+v, %+v: inconsistent batching", phi, s, iv, info)
			}
		}
		slices.Sort(sizes)
		median := sizes[seeds/2]
		t.Logf("φ=%v: covered μ in %d/%d, test passed in %d, median batch size %d", phi, covered, seeds, passed, median)
		if covered < seeds*90/100 {
			t.Errorf("φ=%v: BatchMeans covered the mean in %d/%d seeds; want at least 90%%", phi, covered, seeds)
		}
		if median <= prev {
			t.Errorf("φ=%v: median batch size %d; want more than %d, the smaller φ's", phi, median, prev)
		}
		prev = median
	}
}

func TestBatchMeans(t *testing.T) {
	ramp := make([]float64, 5000)
	for i := range ramp {
		ramp[i] = float64(i)
	}
	tests := []struct {
		name        string
		y           []float64
		wantPassed  bool
		wantBatches int // 0: not checked
		wantNaN     bool
	}{
		// Independent values pass at the first level, 1280 batches, in
		// most seeds; this one does.
		{"independent", normals(1, 20_000), true, MaxBatches, false},
		// A shorter run starts from fewer batches: 10·2^j ≤ n.
		{"short independent", normals(2, 700), true, 640, false},
		// Correlated far beyond the run's length: nothing passes, and the
		// interval over 10 batches is flagged.
		{"too correlated", ar1(3, 2000, 0, 0.999), false, MinBatches, false},
		{"ramp", ramp, false, MinBatches, false},
		{"constant", make([]float64, 100), true, 80, false},
		{"too short", normals(4, MinBatches-1), false, 0, true},
		{"NaN", append(normals(5, 100), math.NaN()), false, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			iv, info := BatchMeans(tc.y, 0.95)
			if info.Passed != tc.wantPassed || (tc.wantBatches != 0 && info.Batches != tc.wantBatches) || math.IsNaN(iv.Lo) != tc.wantNaN {
				t.Errorf("BatchMeans(%d values) = %+v, %+v; want passed %v, %d batches, NaN interval %v", len(tc.y), iv, info, tc.wantPassed, tc.wantBatches, tc.wantNaN)
			}
		})
	}
}

func TestLag1Test(t *testing.T) {
	tests := []struct {
		name    string
		y       []float64
		lag1, z float64
	}{
		// Alternating values: Σ(Y_i−Ȳ)(Y_{i+1}−Ȳ) = −3, Σ(Y_i−Ȳ)² = 4,
		// Σ(Y_{i+1}−Y_i)² = 12: r = −0.75, C = 1 − 12/8 = −0.5,
		// sd √(2/15).
		{"alternating", []float64{1, -1, 1, -1}, -0.75, -0.5 / math.Sqrt(2.0/15)},
		// 1, 2, 3, 4: cross = (−1.5)(−0.5)+(−0.5)(0.5)+(0.5)(1.5) = 1.25,
		// ss = 5, succ = 3: r = 0.25, C = 1 − 3/10 = 0.7.
		{"rising", []float64{1, 2, 3, 4}, 0.25, 0.7 / math.Sqrt(2.0/15)},
		{"constant", []float64{2, 2, 2}, 0, 0},
	}
	for _, tc := range tests {
		lag1, z := lag1Test(tc.y)
		if !near(lag1, tc.lag1) || !near(z, tc.z) {
			t.Errorf("lag1Test(%v) = %v, %v; want %v, %v", tc.y, lag1, z, tc.lag1, tc.z)
		}
	}
}

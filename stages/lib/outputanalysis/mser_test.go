package outputanalysis

import (
	"math"
	"math/rand/v2"
	"testing"
)

// normals is n standard normal draws from seed.
func normals(seed uint64, n int) []float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	y := make([]float64, n)
	for i := range y {
		y[i] = rng.NormFloat64()
	}
	return y
}

// shifted adds by to the first k values of y and returns y.
func shifted(y []float64, k int, by float64) []float64 {
	for i := range y[:k] {
		y[i] += by
	}
	return y
}

func TestMSER(t *testing.T) {
	ramp := make([]float64, 1000)
	for i := range ramp {
		ramp[i] = float64(i)
	}
	decay := normals(7, 5000)
	for i := range decay {
		decay[i] += 10 * math.Exp(-float64(i)/100)
	}
	tests := []struct {
		name     string
		y        []float64
		m        int
		dLo, dHi int // d must lie in [dLo, dHi]
		wantOK   bool
	}{
		// The first 500 of 5000 values shifted by 2 standard deviations:
		// the deletion is the transient, to a batch or two.
		{"shift of 500", shifted(normals(1, 5000), 500, 2), MSER5, 500, 510, true},
		{"shift of 500, MSER-1", shifted(normals(2, 5000), 500, 2), 1, 490, 510, true},
		{"shift of 1500", shifted(normals(3, 5000), 1500, 1), MSER5, 1500, 1510, true},
		// A transient that fades as 10·e^(−i/100): it is below a tenth of
		// the noise after about 460 values.
		{"exponential decay", decay, MSER5, 250, 700, true},
		// Stationary: little or nothing to delete.
		{"stationary", normals(4, 5000), MSER5, 0, 250, true},
		{"stationary, other seed", normals(5, 5000), MSER5, 0, 250, true},
		{"constant", make([]float64, 100), MSER5, 0, 0, true},
		// A ramp never settles: the statistic falls to the end of the run.
		{"ramp", ramp, MSER5, 0, 500, false},
		// A shift that lasts past half the run: no steady state within it.
		{"shift past the middle", shifted(normals(6, 5000), 3500, 3), MSER5, 0, 2500, false},
		{"too short", normals(8, 49), MSER5, 0, 0, false},
		{"NaN", []float64{1, 2, math.NaN(), 4, 5, 6, 7, 8, 9, 10, 11, 12}, 1, 0, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := MSER(tc.y, tc.m)
			if d < tc.dLo || d > tc.dHi || ok != tc.wantOK {
				t.Errorf("MSER(%d values, %d) = %d, %v; want d in [%d, %d], ok %v", len(tc.y), tc.m, d, ok, tc.dLo, tc.dHi, tc.wantOK)
			}
			if d%tc.m != 0 {
				t.Errorf("MSER(%d values, %d) = %d: not a multiple of the batch size", len(tc.y), tc.m, d)
			}
		})
	}
}

func TestMSERPanicsOnBatchSize(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("MSER(y, 0) did not panic")
		}
	}()
	MSER(make([]float64, 100), 0)
}

func TestReplicationDeletion(t *testing.T) {
	// Five runs, each started 3 standard deviations high for its first
	// 400 values, one of them longer than the others: the averaged series
	// is as long as the shortest run.
	runs := make([][]float64, 5)
	for r := range runs {
		n := 4000
		if r == 2 {
			n = 6000
		}
		runs[r] = shifted(normals(uint64(100+r), n), 400, 3)
	}
	iv, del := ReplicationDeletion(runs, 0.95)
	if del.Deleted < 400 || del.Deleted > 410 || !del.OK {
		t.Errorf("ReplicationDeletion deleted %d (ok %v); want 400 to 410, ok", del.Deleted, del.OK)
	}
	if !iv.Covers(0) || iv.N != 5 || iv.Method != MethodReplicationDeletion {
		t.Errorf("ReplicationDeletion = %+v; want an interval over 5 runs covering 0, method %q", iv, MethodReplicationDeletion)
	}
	// Without the deletion the transient's bias, 3·400/4000 = 0.3, would
	// put 0 outside: the deletion is what makes the interval cover.
	means := make([]float64, len(runs))
	for r, y := range runs {
		for _, v := range y {
			means[r] += v / float64(len(y))
		}
	}
	if raw := TInterval(means, 0.95); raw.Covers(0) {
		t.Errorf("the undeleted interval %+v covers 0; the test's transient is too weak to show anything", raw)
	}

	// An empty run has no mean: no interval.
	if iv, _ := ReplicationDeletion([][]float64{runs[0], nil}, 0.95); !math.IsNaN(iv.Lo) {
		t.Errorf("ReplicationDeletion with an empty run = %+v; want NaN bounds", iv)
	}
}

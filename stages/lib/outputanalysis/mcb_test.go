package outputanalysis

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// crnSystems is k systems' outputs over reps replications with common
// random numbers: system i in replication r is base[i] + W_r + noise·ε_ir,
// where the workload effect W_r, shared by every system, has standard
// deviation 10 and ε is standard normal.
func crnSystems(seed uint64, reps int, noise float64, base ...float64) [][]float64 {
	rng := rand.New(rand.NewPCG(seed, 3))
	v := make([][]float64, len(base))
	for i := range v {
		v[i] = make([]float64, reps)
	}
	for r := range reps {
		w := 10 * rng.NormFloat64()
		for i, b := range base {
			v[i][r] = b + w + noise*rng.NormFloat64()
		}
	}
	return v
}

// TestMCBHandComputed checks the intervals and the verdicts against
// values worked by hand. For A = (1, 2, 3), B = (2, 4, 3), C = (5, 5, 8):
// A−B has mean −1 and s = 1, A−C −4 and 1, B−C −3 and 2; with k = 3,
// R = 3, t(1 − 0.05/2, 2) = 4.302653, so w_AB = w_AC = 4.302653/√3 =
// 2.484138 and w_BC = 4.968275.
func TestMCBHandComputed(t *testing.T) {
	abc := [][]float64{{1, 2, 3}, {2, 4, 3}, {5, 5, 8}}
	// The two-system case: w = t(0.95, 2)·1/√3 = 2.919986/√3 = 1.685854.
	ab := abc[:2]
	type bound struct{ lo, hi float64 }
	tests := []struct {
		name    string
		values  [][]float64
		obj     Objective
		delta   float64
		bounds  []bound
		verdict Verdict
		best    int
		set     []int
	}{
		// Minimize, A: max(d_AB − w, d_AC − w) = max(−3.484138, −6.484138);
		// max(d_AB + w, d_AC + w) = max(1.484138, −1.515862). C: d_CA − w
		// = 1.515862 > 0, so C's Lo is 0: C is worse than A, out of the set.
		{"minimize", abc, Minimize, 0, []bound{{-3.484138, 1.484138}, {-1.484138, 3.484138}, {0, 7.968275}}, Inseparable, -1, []int{0, 1}},
		// A's bad end, 1.484138, is within a zone of 1.5 but not of 1.
		{"minimize, δ=1.5", abc, Minimize, 1.5, []bound{{-3.484138, 1.484138}, {-1.484138, 3.484138}, {0, 7.968275}}, WithinDelta, 0, []int{0, 1}},
		{"minimize, δ=1", abc, Minimize, 1, []bound{{-3.484138, 1.484138}, {-1.484138, 3.484138}, {0, 7.968275}}, Inseparable, -1, []int{0, 1}},
		// Maximize, A: min(d_AB + w, d_AC + w) = −1.515862 < 0: A is worse
		// than C, its Hi is 0. B and C remain; C's Lo, −1.968275, is the
		// mildest.
		{"maximize", abc, Maximize, 0, []bound{{-6.484138, 0}, {-7.968275, 1.968275}, {-1.968275, 6.484138}}, Inseparable, -1, []int{1, 2}},
		{"maximize, δ=2", abc, Maximize, 2, []bound{{-6.484138, 0}, {-7.968275, 1.968275}, {-1.968275, 6.484138}}, WithinDelta, 2, []int{1, 2}},
		// Two systems: A − B ∈ [−1 − 1.685854, −1 + 1.685854].
		{"two systems", ab, Minimize, 0, []bound{{-2.685854, 0.685854}, {-0.685854, 2.685854}}, Inseparable, -1, []int{0, 1}},
		{"two systems, δ=0.7", ab, Minimize, 0.7, []bound{{-2.685854, 0.685854}, {-0.685854, 2.685854}}, WithinDelta, 0, []int{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := MCB(tc.values, tc.obj, 0.95, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			for i, b := range tc.bounds {
				s := c.Systems[i]
				if !near(s.Lo, b.lo) || !near(s.Hi, b.hi) {
					t.Errorf("system %d: MCB interval [%v, %v], want [%v, %v]", i, s.Lo, s.Hi, b.lo, b.hi)
				}
				if s.Candidate != slices.Contains(tc.set, i) {
					t.Errorf("system %d: candidate %v, want %v", i, s.Candidate, !s.Candidate)
				}
			}
			if c.Verdict != tc.verdict || c.Best != tc.best || !slices.Equal(c.Set, tc.set) {
				t.Errorf("MCB = %v, best %d, set %v; want %v, best %d, set %v", c.Verdict, c.Best, c.Set, tc.verdict, tc.best, tc.set)
			}
		})
	}
}

// TestMCBVerdicts checks the verdicts on constructed data: a clear best,
// two systems within noise, identical systems, and the cases with
// nothing to compare.
func TestMCBVerdicts(t *testing.T) {
	nan := math.NaN()
	clear := crnSystems(1, 10, 0.5, 10, 12, 14)
	close := crnSystems(2, 10, 1, 10, 10.05, 14)
	same := crnSystems(3, 10, 0.5, 10, 10)
	same[1] = slices.Clone(same[0])
	withNaN := crnSystems(4, 10, 0.5, 10, 12, 9)
	withNaN[2][3] = nan
	tests := []struct {
		name     string
		values   [][]float64
		obj      Objective
		delta    float64
		verdict  Verdict
		best     int
		set      []int
		excluded []int
	}{
		// The workload effect (sd 10) dwarfs the 2-unit gaps, but CRN
		// pairs it away: the best is separated.
		{"clear best, minimize", clear, Minimize, 0, Separated, 0, []int{0}, nil},
		{"clear best, maximize", clear, Maximize, 0, Separated, 2, []int{2}, nil},
		{"clear best, with a zone", clear, Minimize, 1, Separated, 0, []int{0}, nil},
		// 0.05 apart with noise 1: the two cannot be told apart.
		{"two within noise", close, Minimize, 0, Inseparable, -1, []int{0, 1}, nil},
		// ... but with a zone of 2 the better mean is within it of the best.
		{"two within noise, δ=2", close, Minimize, 2, WithinDelta, 0, []int{0, 1}, nil},
		// Identical outputs: neither eliminates the other; with a zone the
		// lower index is named.
		{"identical", same, Minimize, 0, Inseparable, -1, []int{0, 1}, nil},
		{"identical, δ=0.1", same, Minimize, 0.1, WithinDelta, 0, []int{0, 1}, nil},
		// System 2 would be best, but one of its values is NaN: it is left
		// out, and 0 is best of the rest.
		{"NaN excluded", withNaN, Minimize, 0, Separated, 0, []int{0}, []int{2}},
		{"one system", clear[:1], Minimize, 0, NoVerdict, -1, nil, nil},
		{"no systems", nil, Minimize, 0, NoVerdict, -1, nil, nil},
		{"one system left", [][]float64{clear[0], {1, 2, nan, 4, 5, 6, 7, 8, 9, 10}}, Minimize, 0, NoVerdict, -1, nil, []int{1}},
		{"one replication", [][]float64{{1}, {2}}, Minimize, 0, NoVerdict, -1, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := MCB(tc.values, tc.obj, 0.95, tc.delta)
			if err != nil {
				t.Fatal(err)
			}
			if c.Verdict != tc.verdict || c.Best != tc.best || !slices.Equal(c.Set, tc.set) {
				t.Errorf("MCB = %v, best %d, set %v (reason %q); want %v, best %d, set %v", c.Verdict, c.Best, c.Set, c.Reason, tc.verdict, tc.best, tc.set)
			}
			if (c.Verdict == NoVerdict) != (c.Reason != "") {
				t.Errorf("MCB = %v with reason %q: a reason goes with no verdict, and only then", c.Verdict, c.Reason)
			}
			for i, s := range c.Systems {
				if s.Excluded != slices.Contains(tc.excluded, i) {
					t.Errorf("system %d: excluded %v, want %v", i, s.Excluded, !s.Excluded)
				}
				if c.Verdict != NoVerdict && !s.Excluded && !(s.Lo <= 0 && s.Hi >= 0) {
					t.Errorf("system %d: MCB interval [%v, %v] does not contain 0", i, s.Lo, s.Hi)
				}
			}
		})
	}
	// With one replication the means are still given.
	c, _ := MCB([][]float64{{1}, {2}}, Minimize, 0.95, 0)
	if c.Systems[1].Mean != 2 || !math.IsNaN(c.Systems[1].Lo) {
		t.Errorf("MCB with one replication: system 1 = %+v; want mean 2, NaN bounds", c.Systems[1])
	}
}

func TestMCBErrors(t *testing.T) {
	two := [][]float64{{1, 2}, {2, 3}}
	for _, tc := range []struct {
		name       string
		values     [][]float64
		confidence float64
		delta      float64
	}{
		{"unequal replications", [][]float64{{1, 2}, {2}}, 0.95, 0},
		{"confidence 1", two, 1, 0},
		{"confidence 0", two, 0, 0},
		{"negative delta", two, 0.95, -1},
		{"NaN delta", two, 0.95, math.NaN()},
	} {
		if _, err := MCB(tc.values, Minimize, tc.confidence, tc.delta); err == nil {
			t.Errorf("%s: MCB gave no error", tc.name)
		}
	}
}

// TestMCBCoverage checks the procedure's guarantee by simulation: over
// 1000 experiments of four normal systems with common random numbers and
// ten replications, all four MCB intervals hold together, and the set
// holds the true best, in at least 95% of them, less sampling slack
// (Bonferroni makes the procedure conservative). The equal-means
// configuration is the least favourable one.
func TestMCBCoverage(t *testing.T) {
	const trials = 1000
	for _, tc := range []struct {
		name string
		mu   []float64
		obj  Objective
	}{
		{"spread, minimize", []float64{0, 0.3, 0.6, 1}, Minimize},
		{"spread, maximize", []float64{0, 0.3, 0.6, 1}, Maximize},
		{"equal means", []float64{0, 0, 0, 0}, Minimize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			better := func(a, b float64) bool { return a < b }
			if tc.obj == Maximize {
				better = func(a, b float64) bool { return a > b }
			}
			best := 0
			for i, m := range tc.mu {
				if better(m, tc.mu[best]) {
					best = i
				}
			}
			joint, inSet := 0, 0
			for s := range trials {
				c, err := MCB(crnSystems(uint64(1000+s), 10, 1, tc.mu...), tc.obj, 0.95, 0)
				if err != nil {
					t.Fatal(err)
				}
				all := true
				for i, sys := range c.Systems {
					other := math.NaN() // the best of the others' true means
					for j, m := range tc.mu {
						if j != i && (math.IsNaN(other) || better(m, other)) {
							other = m
						}
					}
					truth := tc.mu[i] - other
					all = all && sys.Lo <= truth && truth <= sys.Hi
				}
				joint += b2i(all)
				inSet += b2i(slices.Contains(c.Set, best))
			}
			t.Logf("joint coverage %d/%d, best in the set %d/%d", joint, trials, inSet, trials)
			if joint < trials*94/100 || inSet < trials*94/100 {
				t.Errorf("joint coverage %d/%d, best in the set %d/%d; want at least 94%% each", joint, trials, inSet, trials)
			}
		})
	}
}

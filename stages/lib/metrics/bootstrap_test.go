package metrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/stat"
)

// TestPCG checks that pcg is math/rand/v2's PCG.
func TestPCG(t *testing.T) {
	for _, seed := range [][2]uint64{{0, 0}, {1, 2}, {math.MaxUint64, 12345}} {
		want := rand.NewPCG(seed[0], seed[1])
		got := pcg{seed[0], seed[1]}
		for i := range 1000 {
			if g, w := got.Uint64(), want.Uint64(); g != w {
				t.Fatalf("seed %v: output %d = %#x, want %#x", seed, i, g, w)
			}
		}
	}
}

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

func TestInterval(t *testing.T) {
	seq := func(n int) []float64 {
		x := make([]float64, n)
		for i := range x {
			x[n-1-i] = float64(i + 1) // descending: interval sorts
		}
		return x
	}
	nan := math.NaN()
	tests := []struct {
		name string
		bs   Bootstrap
		reps []float64
		want Interval
	}{
		{"95% of 1000", Bootstrap{Resamples: 1000, Confidence: 0.95}, seq(1000), Interval{25, 975}},
		{"90% of 1000", Bootstrap{Resamples: 1000, Confidence: 0.9}, seq(1000), Interval{50, 950}},
		{"95% of 200", Bootstrap{Resamples: 200, Confidence: 0.95}, seq(200), Interval{5, 195}},
		{"NaNs left out", Bootstrap{Resamples: 1002, Confidence: 0.95}, append(seq(1000), nan, nan), Interval{25, 975}},
		{"all NaN", Bootstrap{Resamples: 2, Confidence: 0.95}, []float64{nan, nan}, Interval{nan, nan}},
		{"bad confidence", Bootstrap{Resamples: 1000, Confidence: 95}, seq(1000), Interval{nan, nan}},
	}
	same := func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.bs.interval(tt.reps); !same(got.Lo, tt.want.Lo) || !same(got.Hi, tt.want.Hi) {
				t.Errorf("interval = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBootstrapValidate(t *testing.T) {
	tests := []struct {
		bs Bootstrap
		ok bool
	}{
		{Bootstrap{Resamples: 1000, Confidence: 0.95}, true},
		{Bootstrap{Resamples: 0, Confidence: 0.5}, true},
		{Bootstrap{Resamples: -1, Confidence: 0.95}, false},
		{Bootstrap{Resamples: 10, Confidence: 0}, false},
		{Bootstrap{Resamples: 10, Confidence: 1}, false},
		{Bootstrap{Resamples: 10, Confidence: math.NaN()}, false},
	}
	for _, tt := range tests {
		if err := tt.bs.Validate(); (err == nil) != tt.ok {
			t.Errorf("%+v.Validate() = %v, want ok %v", tt.bs, err, tt.ok)
		}
	}
}

// TestResample checks resample's counts against the multinomial they
// should follow: n draws in all, each position's count Binomial(n, 1/n)
// (probabilities 0.3679, 0.3679, 0.1839, 0.0613 for 0-3 at this n), every
// block's share in proportion to its size; and the same seed gives the
// same counts.
func TestResample(t *testing.T) {
	const n, reps = 10_000, 300 // blocks of 4096, 4096 and 1808
	counts := make([]count, n)
	var hist [5]float64
	var blockSum [3]float64
	var g pcg
	bs := Bootstrap{Seed: 9}
	for j := range reps {
		bs.rng(&g, streamPaired, j)
		resample(counts, &g)
		total := 0
		for i, c := range counts {
			total += int(c)
			hist[min(int(c), 4)]++
			blockSum[i/resampleBlock] += float64(c)
		}
		if total != n {
			t.Fatalf("replicate %d: %d draws, want %d", j, total, n)
		}
	}
	for c, p := range []float64{0.36786, 0.36790, 0.18395, 0.06131} {
		got := hist[c] / (n * reps)
		if se := math.Sqrt(p * (1 - p) / (n * reps)); math.Abs(got-p) > 5*se {
			t.Errorf("fraction of counts of %d = %.5f, want %.5f ± %.5f", c, got, p, 5*se)
		}
	}
	for b, size := range []float64{4096, 4096, 1808} {
		want := size * reps
		if math.Abs(blockSum[b]-want) > 5*math.Sqrt(want) {
			t.Errorf("block %d drew %v times in all, want %v ± %v", b, blockSum[b], want, 5*math.Sqrt(want))
		}
	}
	again := make([]count, n)
	bs.rng(&g, streamPaired, reps-1)
	resample(again, &g)
	if !slices.Equal(again, counts) {
		t.Error("replicate drawn twice with the same seed differs")
	}
}

// TestQuantileReplicates checks that drawing only the top k values, with
// the margin quantileInterval uses and with none (where the answer lies
// below the top k half the time), gives the replicates' P99 the
// distribution that resampling all n gives.
func TestQuantileReplicates(t *testing.T) {
	const n, reps = 2000, 4000
	sorted := make([]float64, n)
	for i := range sorted {
		sorted[i] = float64(i + 1)
	}
	m := n - rank(0.99, n) + 1 // 21
	bs := Bootstrap{Resamples: reps, Confidence: 0.95, Seed: 4}
	full := make([]float64, reps)
	counts := make([]count, n)
	var g pcg
	for j := range full {
		bs.rng(&g, streamPaired, j)
		resample(counts, &g)
		cum := 0
		for i := n - 1; cum < m; i-- {
			cum += int(counts[i])
			full[j] = sorted[i]
		}
	}
	want := summary5(full)
	for _, k := range []int{m + int(8*math.Sqrt(float64(m))) + 32, m} {
		got := summary5(bs.quantileReplicates(sorted, 0.99, k))
		// The replicates' P99 has a standard deviation of about 4.5.
		if math.Abs(got[0]-want[0]) > 0.5 {
			t.Errorf("top %d: mean replicate %v, resampling all %v", k, got[0], want[0])
		}
		for q := 1; q < len(got); q++ {
			if math.Abs(got[q]-want[q]) > 2 {
				t.Errorf("top %d: replicates' quantiles %v, resampling all %v", k, got[1:], want[1:])
				break
			}
		}
	}
}

// summary5 returns the mean of x and its 2.5%, 25%, 75% and 97.5%
// quantiles.
func summary5(x []float64) [5]float64 {
	x = slices.Clone(x)
	slices.Sort(x)
	return [5]float64{mean(x), quantile(x, 0.025), quantile(x, 0.25), quantile(x, 0.75), quantile(x, 0.975)}
}

// TestCoverage checks that the intervals cover the truth at about their
// nominal rate: for 200 data sets of 1000 exponential latencies (mean 1,
// P99 ln 100), the mean's and the P99's 95% intervals from Compare against
// a baseline of zero latencies, and the P99's from Summarize.
func TestCoverage(t *testing.T) {
	if testing.Short() {
		t.Skip("200 bootstraps")
	}
	const sets, n = 200, 1000
	truthP99 := math.Log(100)
	zero := synthExp(n, 0, 0)
	var meanIn, p99In, sumP99In int
	for d := range sets {
		tr := synthExp(n, uint64(d)+1, 1)
		bs := Bootstrap{Resamples: 1000, Confidence: 0.95, Seed: uint64(d)}
		diffs, err := Compare(tr, zero, bs)
		if err != nil {
			t.Fatal(err)
		}
		if diffs[0].Lo <= 1 && 1 <= diffs[0].Hi {
			meanIn++
		}
		if diffs[1].Lo <= truthP99 && truthP99 <= diffs[1].Hi {
			p99In++
		}
		s := Summarize(tr, []float64{0}, Cluster{Devices: tr.Devices, Lanes: []int32{1}}, Bounds{}, nil, bs)
		if s.E2EP99CI.Lo <= truthP99 && truthP99 <= s.E2EP99CI.Hi {
			sumP99In++
		}
	}
	for _, c := range []struct {
		name   string
		in     int
		lo, hi float64
	}{
		{"mean, paired", meanIn, 0.88, 0.99},
		{"p99, paired", p99In, 0.85, 0.995},
		{"p99, summary", sumP99In, 0.85, 0.995},
	} {
		cover := float64(c.in) / sets
		t.Logf("%s: coverage %.3f", c.name, cover)
		if cover < c.lo || cover > c.hi {
			t.Errorf("%s: the 95%% interval covered the truth in %.3f of %d data sets, want %.2f to %.3f", c.name, cover, sets, c.lo, c.hi)
		}
	}
}

// synthExp makes a trace of n completed batch jobs, all meeting their SLO,
// with end-to-end latencies drawn from an exponential of the given mean
// (0 for none), all service.
func synthExp(n int, seed uint64, mean float64) *Trace {
	r := rand.New(rand.NewPCG(seed, 0))
	t := &Trace{Policy: "exp", Devices: []string{"d"}}
	for i := range n {
		e := r.ExpFloat64() * mean
		t.JobID = append(t.JobID, int64(i))
		t.Class = append(t.Class, Batch)
		t.Arrival = append(t.Arrival, 0)
		t.Start = append(t.Start, 0)
		t.Wait = append(t.Wait, 0)
		t.End = append(t.End, e)
		t.Service = append(t.Service, e)
		t.E2E = append(t.E2E, e)
		t.SLOMet = append(t.SLOMet, true)
		t.Rejected = append(t.Rejected, false)
		t.Device = append(t.Device, 0)
		t.BatchSize = append(t.BatchSize, 1)
	}
	return t
}

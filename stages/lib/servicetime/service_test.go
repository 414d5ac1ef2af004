package servicetime

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/spec/profilespec"
)

const ms = 1e-3

// rows makes one sample row per latency, given in milliseconds.
func rows(kind, source, device, model, precision string, batch, threads, concurrency int, latMS ...float64) []profilespec.Sample {
	out := make([]profilespec.Sample, len(latMS))
	for i, l := range latMS {
		out[i] = profilespec.Sample{Kind: kind, Backend: "onnxruntime", Provider: "CPUExecutionProvider",
			Device: device, Model: model, Precision: precision, Batch: int32(batch), Threads: int32(threads),
			Concurrency: int32(concurrency), Repeat: int32(i), LatencyS: l * ms, Source: source}
	}
	return out
}

func inference(device, model, precision string, batch, threads int, latMS ...float64) []profilespec.Sample {
	return rows(profilespec.KindInference, profilespec.SourceMeasured, device, model, precision, batch, threads, 1, latMS...)
}

func contention(device string, k int, latMS ...float64) []profilespec.Sample {
	return rows(profilespec.KindContention, profilespec.SourceMeasured, device, "m", profilespec.FP32, 1, 1, k, latMS...)
}

// fixture is a small hand-made profile whose every expected value in the
// tests below is computed by hand. Latencies are in milliseconds.
//
//	cpu/m/fp32/threads=1  batch 1: 1 2 3 4 (mean 2.5); batch 4: 10 12 14 16 18 (mean 14); batch 8: 20 24 (mean 22)
//	cpu/m/fp32/threads=2  batch 4: 8; batch 8: 12          (line 4 + b: positive overhead)
//	cpu/m/fp32/threads=4  batch 4: 4; batch 8: 12          (line -4 + 2b: negative intercept)
//	cpu/m/fp16/threads=1  batch 4: 10; batch 8: 9          (falling: noise)
//	cpu/solo/fp32/threads=1  batch 4: 2 4                  (one size only)
//	cpu contention, m batch 1: k=1: 1 2 3 (median 2); k=2: 2 3 4 5 (3.5); k=4: 6 7 7 8 (7)
//
// and rows the table must ignore: inference at concurrency 2, matmul and
// provider rows, with latencies that would show if they were used.
func fixture() []profilespec.Sample {
	var s []profilespec.Sample
	s = append(s, inference("cpu", "m", profilespec.FP32, 4, 1, 16, 10, 18, 12, 14)...)
	s = append(s, inference("cpu", "m", profilespec.FP32, 1, 1, 4, 1, 3, 2)...)
	s = append(s, inference("cpu", "m", profilespec.FP32, 8, 1, 24, 20)...)
	s = append(s, inference("cpu", "m", profilespec.FP32, 4, 2, 8)...)
	s = append(s, inference("cpu", "m", profilespec.FP32, 8, 2, 12)...)
	s = append(s, inference("cpu", "m", profilespec.FP32, 4, 4, 4)...)
	s = append(s, inference("cpu", "m", profilespec.FP32, 8, 4, 12)...)
	s = append(s, inference("cpu", "m", profilespec.FP16, 4, 1, 10)...)
	s = append(s, inference("cpu", "m", profilespec.FP16, 8, 1, 9)...)
	s = append(s, inference("cpu", "solo", profilespec.FP32, 4, 1, 4, 2)...)
	s = append(s, contention("cpu", 1, 3, 1, 2)...)
	s = append(s, contention("cpu", 2, 5, 2, 4, 3)...)
	s = append(s, contention("cpu", 4, 7, 8, 6, 7)...)
	// Ignored rows.
	s = append(s, rows(profilespec.KindInference, profilespec.SourceMeasured, "cpu", "m", profilespec.FP32, 4, 1, 2, 1000, 2000)...)
	s = append(s, rows(profilespec.KindMatMul, profilespec.SourceMeasured, "cpu", "matmul", profilespec.FP32, 128, 1, 1, 5000)...)
	s = append(s, profilespec.Sample{Kind: profilespec.KindMatMul, Device: "cpu", Model: "matmul", LatencyS: -1}) // invalid, but not used
	return s
}

func mustTable(t testing.TB, samples []profilespec.Sample) *Table {
	t.Helper()
	tab, err := NewTable(samples)
	if err != nil {
		t.Fatalf("NewTable: %v", err)
	}
	return tab
}

func mustCurve(t testing.TB, tab *Table, device, model, precision string, threads int) *Curve {
	t.Helper()
	c, err := tab.Curve(device, model, precision, threads)
	if err != nil {
		t.Fatalf("Curve: %v", err)
	}
	return c
}

// near reports whether got equals want up to rounding: the expected values
// are exact decimals that the float arithmetic reproduces to a few ulps.
func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Abs(want)
}

func TestQuantile(t *testing.T) {
	tab := mustTable(t, fixture())
	tests := []struct {
		name      string
		precision string
		model     string
		threads   int
		batch     int
		u         float64
		wantMS    float64
	}{
		// Measured sizes: Hazen quantile, h = u·n - ½.
		{"b1 u=0", profilespec.FP32, "m", 1, 1, 0, 1},
		{"b1 flat below first midpoint", profilespec.FP32, "m", 1, 1, 0.125, 1},
		{"b1 u=0.25 h=0.5", profilespec.FP32, "m", 1, 1, 0.25, 1.5},
		{"b1 u=0.3 h=0.7", profilespec.FP32, "m", 1, 1, 0.3, 1.7},
		{"b1 median", profilespec.FP32, "m", 1, 1, 0.5, 2.5},
		{"b1 last midpoint", profilespec.FP32, "m", 1, 1, 0.875, 4},
		{"b1 flat above last midpoint", profilespec.FP32, "m", 1, 1, 0.99, 4},
		{"b1 u=1 clamps", profilespec.FP32, "m", 1, 1, 1, 4},
		{"b1 u<0 clamps", profilespec.FP32, "m", 1, 1, -0.5, 1},
		{"b1 NaN u is 0", profilespec.FP32, "m", 1, 1, math.NaN(), 1},
		{"b4 median of 5", profilespec.FP32, "m", 1, 4, 0.5, 14},
		{"b4 u=0.25 h=0.75", profilespec.FP32, "m", 1, 4, 0.25, 11.5},
		{"b4 u=0.1 first midpoint", profilespec.FP32, "m", 1, 4, 0.1, 10},
		{"b4 u=0.7 h=3", profilespec.FP32, "m", 1, 4, 0.7, 16},
		{"b4 u=0.9 last midpoint", profilespec.FP32, "m", 1, 4, 0.9, 18},
		{"b8 u=0 of 2", profilespec.FP32, "m", 1, 8, 0, 20},
		{"b8 u=0.375 h=0.25", profilespec.FP32, "m", 1, 8, 0.375, 21},
		{"b8 median of 2", profilespec.FP32, "m", 1, 8, 0.5, 22},
		{"b8 u=0.75", profilespec.FP32, "m", 1, 8, 0.75, 24},
		// Between: (1-w)·Q_lo + w·Q_hi at the same u.
		{"b2 median w=1/3", profilespec.FP32, "m", 1, 2, 0.5, 2.0/3*2.5 + 1.0/3*14},
		{"b3 u=0 w=2/3", profilespec.FP32, "m", 1, 3, 0, 1.0/3*1 + 2.0/3*10},
		{"b6 u=0.25 w=1/2", profilespec.FP32, "m", 1, 6, 0.25, (11.5 + 20) / 2},
		{"b6 median", profilespec.FP32, "m", 1, 6, 0.5, 18},
		// Above: Q_8 + t·(Q_8 - Q_4), t = (b-8)/4.
		{"b12 median t=1", profilespec.FP32, "m", 1, 12, 0.5, 22 + 8},
		{"b12 u=0.25 t=1", profilespec.FP32, "m", 1, 12, 0.25, 20 + 8.5},
		{"b16 median t=2", profilespec.FP32, "m", 1, 16, 0.5, 22 + 2*8},
		// Batch below 1 counts as 1.
		{"b0 is b1", profilespec.FP32, "m", 1, 0, 0.5, 2.5},
		{"b-3 is b1", profilespec.FP32, "m", 1, -3, 0.5, 2.5},
		// Below the smallest, threads=2: line 4 + b inside [b/4·8, 8].
		{"below b2 line", profilespec.FP32, "m", 2, 2, 0.5, 6},
		{"below b1 line", profilespec.FP32, "m", 2, 1, 0.5, 5},
		{"below b3 line", profilespec.FP32, "m", 2, 3, 0.9, 7},
		{"threads=2 above b16", profilespec.FP32, "m", 2, 16, 0.5, 12 + 2*4},
		// Below, threads=4: line -4 + 2b falls under the floor b/4·4.
		{"below b2 floor", profilespec.FP32, "m", 4, 2, 0.5, 2},
		{"below b3 floor", profilespec.FP32, "m", 4, 3, 0.5, 3},
		{"below b1 floor", profilespec.FP32, "m", 4, 1, 0.5, 1},
		// Falling segment 10 → 9: flat outside, linear inside.
		{"falling below is flat", profilespec.FP16, "m", 1, 2, 0.5, 10},
		{"falling above is flat", profilespec.FP16, "m", 1, 16, 0.5, 9},
		{"falling between", profilespec.FP16, "m", 1, 6, 0.5, 9.5},
		// One size only: proportional to batch.
		{"solo measured", profilespec.FP32, "solo", 1, 4, 0.5, 3},
		{"solo above", profilespec.FP32, "solo", 1, 8, 0.5, 6},
		{"solo below", profilespec.FP32, "solo", 1, 2, 0.5, 1.5},
		{"solo b1 u=0", profilespec.FP32, "solo", 1, 1, 0, 0.5},
		{"solo b1 u=1", profilespec.FP32, "solo", 1, 1, 1, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := mustCurve(t, tab, "cpu", tc.model, tc.precision, tc.threads)
			got := c.Quantile(tc.batch, tc.u)
			if want := tc.wantMS * ms; !near(got, want) {
				t.Errorf("%s Quantile(%d, %v) = %.15g, want %.15g", c.Key(), tc.batch, tc.u, got, want)
			}
		})
	}
}

func TestMean(t *testing.T) {
	tab := mustTable(t, fixture())
	tests := []struct {
		model     string
		precision string
		threads   int
		batch     int
		wantMS    float64
	}{
		{"m", profilespec.FP32, 1, 1, 2.5},
		{"m", profilespec.FP32, 1, 4, 14},
		{"m", profilespec.FP32, 1, 8, 22},
		{"m", profilespec.FP32, 1, 2, 2.0/3*2.5 + 1.0/3*14},
		{"m", profilespec.FP32, 1, 6, 18},
		{"m", profilespec.FP32, 1, 12, 22 + 8},
		{"m", profilespec.FP32, 1, 0, 2.5},
		{"m", profilespec.FP32, 2, 2, 6},
		{"m", profilespec.FP32, 4, 2, 2},
		{"m", profilespec.FP16, 1, 2, 10},
		{"m", profilespec.FP16, 1, 16, 9},
		{"solo", profilespec.FP32, 1, 4, 3},
		{"solo", profilespec.FP32, 1, 8, 6},
		{"solo", profilespec.FP32, 1, 2, 1.5},
	}
	for _, tc := range tests {
		c := mustCurve(t, tab, "cpu", tc.model, tc.precision, tc.threads)
		if got, want := c.Mean(tc.batch), tc.wantMS*ms; !near(got, want) {
			t.Errorf("%s Mean(%d) = %.15g, want %.15g", c.Key(), tc.batch, got, want)
		}
	}
}

// TestLargeBatches covers measured sizes past the span table (maxSpans),
// where sizes are searched for rather than looked up.
func TestLargeBatches(t *testing.T) {
	var s []profilespec.Sample
	s = append(s, inference("gpu", "m", profilespec.FP32, 2, 1, 1)...)
	s = append(s, inference("gpu", "m", profilespec.FP32, 5000, 1, 100)...)
	s = append(s, inference("gpu", "m", profilespec.FP32, 6000, 1, 120)...)
	c := mustCurve(t, mustTable(t, s), "gpu", "m", profilespec.FP32, 1)
	tests := []struct {
		batch  int
		wantMS float64
	}{
		{1, 1 - 99.0/4998}, // below: the line through (2, 1) and (5000, 100)
		{2, 1},             // measured, in the table
		{maxSpans, 1 + 99*float64(maxSpans-2)/4998}, // between, the table's last entry
		{4500, 1 + 99*4498.0/4998},                  // between, past the table
		{5000, 100},                                 // measured, past the table
		{5500, 110},                                 // between
		{6000, 120},                                 // measured, the largest
		{7000, 140},                                 // above
	}
	for _, tc := range tests {
		if got, want := c.Quantile(tc.batch, 0.5), tc.wantMS*ms; !near(got, want) {
			t.Errorf("Quantile(%d, 0.5) = %.15g, want %.15g", tc.batch, got, want)
		}
		if got, want := c.Mean(tc.batch), tc.wantMS*ms; !near(got, want) {
			t.Errorf("Mean(%d) = %.15g, want %.15g", tc.batch, got, want)
		}
	}
}

// TestLookupMatchesSearch checks that the span table and the shortcut above
// the largest size give, bit for bit, what searching the measured sizes
// gives.
func TestLookupMatchesSearch(t *testing.T) {
	tab := mustTable(t, fixture())
	for _, k := range tab.Keys() {
		c := mustCurve(t, tab, k.Device, k.Model, k.Precision, k.Threads)
		for b := -2; b <= c.top+20; b++ {
			s := c.locate(b)
			for _, u := range []float64{0, 0.1, 0.37, 0.5, 0.81, 0.99} {
				if got, want := c.Quantile(b, u), c.quantileAt(&s, u); math.Float64bits(got) != math.Float64bits(want) {
					t.Errorf("%s Quantile(%d, %v) = %v, want %v as searched", k, b, u, got, want)
				}
			}
			if got, want := c.Mean(b), s.apply(c.means[s.i], c.means[s.j]); math.Float64bits(got) != math.Float64bits(want) {
				t.Errorf("%s Mean(%d) = %v, want %v as searched", k, b, got, want)
			}
		}
	}
}

func TestCurveAccessors(t *testing.T) {
	c := mustCurve(t, mustTable(t, fixture()), "cpu", "m", profilespec.FP32, 1)
	if got, want := c.Batches(), []int{1, 4, 8}; !slices.Equal(got, want) {
		t.Errorf("Batches() = %v, want %v", got, want)
	}
	if got, want := c.Key(), (Key{"cpu", "m", profilespec.FP32, 1}); got != want {
		t.Errorf("Key() = %v, want %v", got, want)
	}
	if got := c.Source(); got != profilespec.SourceMeasured {
		t.Errorf("Source() = %q, want %q", got, profilespec.SourceMeasured)
	}
}

// TestQuantilePositive sweeps batch sizes and levels, the extreme ones
// included, on every curve of the fixture.
func TestQuantilePositive(t *testing.T) {
	tab := mustTable(t, fixture())
	us := []float64{math.Inf(-1), -1, 0, 1e-300, 0.1, 0.5, 0.999999, 1, 2, math.Inf(1), math.NaN()}
	for _, k := range tab.Keys() {
		c, err := tab.Curve(k.Device, k.Model, k.Precision, k.Threads)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range []int{math.MinInt, -1, 0, 1, 2, 3, 5, 7, 9, 100, 1 << 20, math.MaxInt} {
			for _, u := range us {
				if q := c.Quantile(b, u); !(q > 0) || math.IsInf(q, 0) {
					t.Errorf("%s Quantile(%d, %v) = %v, want a positive finite time", k, b, u, q)
				}
			}
			if m := c.Mean(b); !(m > 0) || math.IsInf(m, 0) {
				t.Errorf("%s Mean(%d) = %v, want a positive finite time", k, b, m)
			}
		}
	}
}

func TestContentionFactor(t *testing.T) {
	samples := fixture()
	// gpu0: medians 10, 9, 12 at k = 1, 2, 3: k=2 measured 0.9, clamped to 1.
	for k, lat := range map[int]float64{1: 10, 2: 9, 3: 12} {
		samples = append(samples, rows(profilespec.KindContention, "import:gpu.csv", "gpu0", "m", profilespec.FP32, 1, 1, k, lat)...)
	}
	// gpu1: medians 10, 15, 14 at k = 1, 2, 4: a falling last segment.
	for k, lat := range map[int]float64{1: 10, 2: 15, 4: 14} {
		samples = append(samples, rows(profilespec.KindContention, "import:gpu.csv", "gpu1", "m", profilespec.FP32, 1, 1, k, lat)...)
	}
	// base: no k=1 contention rows; inference rows of the same session stand in (median 2).
	samples = append(samples, inference("base", "m", profilespec.FP32, 1, 1, 1, 2, 3)...)
	samples = append(samples, contention("base", 2, 3)...)
	samples = append(samples, contention("base", 4, 5)...)
	// tpu: latencies, no contention rows.
	samples = append(samples, inference("tpu", "m", profilespec.FP32, 1, 1, 1)...)
	// mix: sessions of two models, each run over its own model's median
	// alone: a 1 1 1 (1) and 1.2 1.4 at k=2; b 10 (10), 10 11 at k=2, and
	// 30 at k=4: ratios 1.2 1.4 1 1.1 at k=2, median 1.15; 3 at k=4. The
	// ratio of the pooled medians would be 5.5/1 instead.
	samples = append(samples, rows(profilespec.KindContention, profilespec.SourceMeasured, "mix", "a", profilespec.FP32, 2, 1, 1, 1, 1, 1)...)
	samples = append(samples, rows(profilespec.KindContention, profilespec.SourceMeasured, "mix", "a", profilespec.FP32, 2, 1, 2, 1.2, 1.4)...)
	samples = append(samples, rows(profilespec.KindContention, profilespec.SourceMeasured, "mix", "b", profilespec.FP32, 2, 1, 1, 10)...)
	samples = append(samples, rows(profilespec.KindContention, profilespec.SourceMeasured, "mix", "b", profilespec.FP32, 2, 1, 2, 10, 11)...)
	samples = append(samples, rows(profilespec.KindContention, profilespec.SourceMeasured, "mix", "b", profilespec.FP32, 2, 1, 4, 30)...)
	tab := mustTable(t, samples)

	tests := []struct {
		device   string
		measured bool
		k        int
		want     float64
	}{
		{"cpu", true, -1, 1},
		{"cpu", true, 0, 1},
		{"cpu", true, 1, 1},
		{"cpu", true, 2, 3.5 / 2},
		{"cpu", true, 3, (1.75 + 3.5) / 2},
		{"cpu", true, 4, 7.0 / 2},
		{"cpu", true, 6, 3.5 + 2*(3.5-1.75)/2},
		{"cpu", true, 100, 3.5 + 96*(3.5-1.75)/2},
		{"gpu0", true, 2, 1},               // 0.9 clamped
		{"gpu0", true, 3, 1.2},             // 12/10
		{"gpu0", true, 4, 1.2 + (1.2 - 1)}, // slope of the clamped points
		{"gpu1", true, 2, 1.5},
		{"gpu1", true, 3, (1.5 + 1.4) / 2},
		{"gpu1", true, 4, 1.4},
		{"gpu1", true, 8, 1.4}, // falling last segment: flat
		{"base", true, 1, 1},
		{"base", true, 2, 1.5},
		{"base", true, 3, 2},
		{"base", true, 4, 2.5},
		{"tpu", false, 1, 1},
		{"tpu", false, 8, 1},
		{"mix", true, 2, 1.15},
		{"mix", true, 3, (1.15 + 3) / 2},
		{"mix", true, 4, 3},
	}
	for _, tc := range tests {
		c, err := tab.Contention(tc.device)
		if err != nil {
			t.Fatalf("Contention(%s): %v", tc.device, err)
		}
		if got := c.Measured(); got != tc.measured {
			t.Errorf("Contention(%s).Measured() = %v, want %v", tc.device, got, tc.measured)
		}
		if got := c.Factor(tc.k); !near(got, tc.want) {
			t.Errorf("Contention(%s).Factor(%d) = %.15g, want %.15g", tc.device, tc.k, got, tc.want)
		}
	}
	c, _ := tab.Contention("tpu")
	if got := c.String(); !strings.Contains(got, "not measured") {
		t.Errorf("unmeasured Contention.String() = %q, want it to say so", got)
	}
	c, _ = tab.Contention("base")
	if got := c.String(); !strings.Contains(got, "baseline from its inference rows") || !strings.Contains(got, "k=4×2.500") {
		t.Errorf("Contention(base).String() = %q, want the fallback baseline and the factors named", got)
	}
	c, _ = tab.Contention("mix")
	if got := c.String(); !strings.Contains(got, "sessions of a+b/fp32 batch 2") {
		t.Errorf("Contention(mix).String() = %q, want both models named", got)
	}
}

func TestNewTableErrors(t *testing.T) {
	good := inference("cpu", "m", profilespec.FP32, 1, 1, 1)
	bad := func(mut func(*profilespec.Sample)) []profilespec.Sample {
		s := slices.Clone(fixture())
		mut(&s[3])
		return s
	}
	tests := []struct {
		name    string
		samples []profilespec.Sample
		want    []string
	}{
		{"no rows", nil, []string{"no \"inference\" rows", "among 0 rows"}},
		{"no inference rows", append(contention("cpu", 1, 1), rows(profilespec.KindMatMul, profilespec.SourceMeasured, "cpu", "matmul", profilespec.FP32, 128, 1, 1, 3)...),
			[]string{"no \"inference\" rows of concurrency 1", "among 2 rows"}},
		{"only concurrent inference", rows(profilespec.KindInference, profilespec.SourceMeasured, "cpu", "m", profilespec.FP32, 1, 1, 2, 1),
			[]string{"no \"inference\" rows of concurrency 1"}},
		{"zero latency", bad(func(s *profilespec.Sample) { s.LatencyS = 0 }), []string{"row 4 ", "latency_s", "got 0"}},
		{"negative latency", bad(func(s *profilespec.Sample) { s.LatencyS = -1 }), []string{"row 4 ", "latency_s"}},
		{"NaN latency", bad(func(s *profilespec.Sample) { s.LatencyS = math.NaN() }), []string{"row 4 ", "NaN"}},
		{"infinite latency", bad(func(s *profilespec.Sample) { s.LatencyS = math.Inf(1) }), []string{"row 4 ", "+Inf"}},
		{"batch 0", bad(func(s *profilespec.Sample) { s.Batch = 0 }), []string{"row 4 ", "column batch: must be at least 1"}},
		{"threads 0", bad(func(s *profilespec.Sample) { s.Threads = 0 }), []string{"row 4 ", "column threads: must be at least 1"}},
		// The profile stage's checks of imported rows apply here too.
		{"unknown precision", bad(func(s *profilespec.Sample) { s.Precision = "int8" }), []string{"row 4 ", `column precision: want fp32 or fp16, got "int8"`}},
		{"no provider", bad(func(s *profilespec.Sample) { s.Provider = "" }), []string{"row 4 ", "column provider: empty"}},
		{"bad contention row", append(slices.Clone(good), rows(profilespec.KindContention, profilespec.SourceMeasured, "cpu", "m", profilespec.FP32, 1, 1, 0, 1)...),
			[]string{"row 2 ", "contention cpu/m/fp32", "column concurrency: must be at least 1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTable(tc.samples)
			if err == nil {
				t.Fatal("NewTable succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("NewTable error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestLookupErrors(t *testing.T) {
	samples := fixture()
	// The same configuration measured here and imported under the same device name.
	samples = append(samples, inference("cpu", "m", profilespec.FP32, 1, 8, 5)...)
	samples = append(samples, rows(profilespec.KindInference, "import:other.csv", "cpu", "m", profilespec.FP32, 1, 8, 1, 6)...)
	// Contention without a baseline, and two contention measurements on one device.
	samples = append(samples, rows(profilespec.KindContention, "import:x.csv", "nobase", "m", profilespec.FP32, 1, 1, 2, 3)...)
	samples = append(samples, rows(profilespec.KindContention, "import:x.csv", "two", "m", profilespec.FP32, 1, 1, 1, 3)...)
	samples = append(samples, rows(profilespec.KindContention, "import:x.csv", "two", "n", profilespec.FP32, 2, 1, 1, 3)...)
	tab := mustTable(t, samples)

	curve := []struct {
		name                     string
		device, model, precision string
		threads                  int
		notMeasured              bool
		want                     []string
	}{
		{"other threads", "cpu", "m", profilespec.FP32, 3, true,
			[]string{"cpu/m/fp32/threads=3", "not measured", "cpu/m/fp16/threads=1, cpu/m/fp32/threads=1, cpu/m/fp32/threads=2, cpu/m/fp32/threads=4, cpu/m/fp32/threads=8"}},
		{"other device", "gpu", "m", profilespec.FP32, 1, true, []string{"gpu/m/fp32/threads=1", "the profile measured m at cpu/m/fp16/threads=1"}},
		{"unknown model", "cpu", "vit", profilespec.FP32, 1, true, []string{"cpu/vit/fp32/threads=1", "model vit was not profiled", "profiled models: m, solo"}},
		{"two origins", "cpu", "m", profilespec.FP32, 8, false,
			[]string{"cpu/m/fp32/threads=8", "2 origins", "import:other.csv onnxruntime/CPUExecutionProvider, measured onnxruntime/CPUExecutionProvider", "device name"}},
	}
	for _, tc := range curve {
		t.Run("curve "+tc.name, func(t *testing.T) {
			c, err := tab.Curve(tc.device, tc.model, tc.precision, tc.threads)
			if err == nil {
				t.Fatalf("Curve = %v, want an error", c.Key())
			}
			if got := errors.Is(err, ErrNotMeasured); got != tc.notMeasured {
				t.Errorf("errors.Is(%q, ErrNotMeasured) = %v, want %v", err, got, tc.notMeasured)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Curve error = %q, want it to contain %q", err, w)
				}
			}
		})
	}

	cont := []struct {
		device      string
		notMeasured bool
		want        []string
	}{
		{"nowhere", true, []string{"device nowhere", "not measured", "devices cpu, nobase, two"}},
		{"nobase", false, []string{"device nobase", "without a one-session baseline", "profile.contention.sessions"}},
		{"two", false, []string{"device two has 2 contention measurements", "m/fp32 batch 1 threads 1 from import:x.csv", "n/fp32 batch 2"}},
	}
	for _, tc := range cont {
		t.Run("contention "+tc.device, func(t *testing.T) {
			_, err := tab.Contention(tc.device)
			if err == nil {
				t.Fatal("Contention succeeded, want an error")
			}
			if got := errors.Is(err, ErrNotMeasured); got != tc.notMeasured {
				t.Errorf("errors.Is(%q, ErrNotMeasured) = %v, want %v", err, got, tc.notMeasured)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Contention error = %q, want it to contain %q", err, w)
				}
			}
		})
	}
	// The ambiguous curve blocks only itself.
	if _, err := tab.Curve("cpu", "m", profilespec.FP32, 1); err != nil {
		t.Errorf("Curve(cpu/m/fp32/threads=1) beside an ambiguous one: %v", err)
	}
}

// TestDeterminism builds tables from the fixture in several row orders and
// checks that every service time agrees to the bit.
func TestDeterminism(t *testing.T) {
	base := fixture()
	grid := func(tab *Table) []uint64 {
		var out []uint64
		for _, k := range tab.Keys() {
			c := mustCurve(t, tab, k.Device, k.Model, k.Precision, k.Threads)
			for b := 0; b <= 20; b++ {
				out = append(out, math.Float64bits(c.Mean(b)))
				for i := range 64 {
					out = append(out, math.Float64bits(c.Quantile(b, float64(i)/64+1.0/640)))
				}
			}
		}
		con, err := tab.Contention("cpu")
		if err != nil {
			t.Fatal(err)
		}
		for k := range 10 {
			out = append(out, math.Float64bits(con.Factor(k)))
		}
		return out
	}
	want := grid(mustTable(t, base))
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 5 {
		shuffled := slices.Clone(base)
		r.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if got := grid(mustTable(t, shuffled)); !slices.Equal(got, want) {
			t.Fatalf("trial %d: service times differ after shuffling the rows", trial)
		}
	}
}

// popSD is the standard deviation of the latencies, 1/n form, in ms.
func popSD(latMS ...float64) float64 {
	var mean, ss float64
	for _, x := range latMS {
		mean += x
	}
	mean /= float64(len(latMS))
	for _, x := range latMS {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss / float64(len(latMS)))
}

// TestDrawsReproduceMean draws Quantile(b, U) with U from a seeded uniform
// PCG stream and checks that the draws average to Mean(b). Each case names
// the fixed linear combination of measured sizes' quantile functions that
// Q_b is, so the tolerance follows from the measured spreads: the standard
// deviation of Q_b(U) is at most Σ|c_k|·σ_k (Minkowski), σ_k being at most
// the 1/n standard deviation of size k's samples (see the package doc), and
// the tolerance is 4 standard errors of the mean of n draws.
func TestDrawsReproduceMean(t *testing.T) {
	tab := mustTable(t, fixture())
	c := mustCurve(t, tab, "cpu", "m", profilespec.FP32, 1)
	sd := map[int]float64{1: popSD(1, 2, 3, 4), 4: popSD(10, 12, 14, 16, 18), 8: popSD(20, 24)}
	tests := []struct {
		batch int
		coef  map[int]float64 // Q_b = Σ coef[k]·Q_k
	}{
		{1, map[int]float64{1: 1}},
		{4, map[int]float64{4: 1}},
		{8, map[int]float64{8: 1}},
		{2, map[int]float64{1: 2.0 / 3, 4: 1.0 / 3}},
		{6, map[int]float64{4: 0.5, 8: 0.5}},
		{12, map[int]float64{4: -1, 8: 2}}, // Q_8(u) - Q_4(u) >= 2 ms for every u, so no clamp binds
	}
	const n = 200_000
	for _, tc := range tests {
		r := rand.New(rand.NewPCG(1, uint64(tc.batch)))
		var sum float64
		for range n {
			sum += c.Quantile(tc.batch, r.Float64())
		}
		var sigma float64
		for k, w := range tc.coef {
			sigma += math.Abs(w) * sd[k] * ms
		}
		got, want := sum/n, c.Mean(tc.batch)
		if tol := 4 * sigma / math.Sqrt(n); math.Abs(got-want) > tol {
			t.Errorf("batch %d: mean of %d draws = %.9g, want Mean = %.9g within %.3g", tc.batch, n, got, want, tol)
		}
	}
}

// TestDrawsReproduceDistribution checks the whole distribution at a measured
// size: for distinct samples x_0 < ... < x_{n-1}, P(Q(U) <= x_k) = (k+½)/n
// for k < n-1, and x_0 and x_{n-1} carry atoms of ½/n, each probability
// estimated within 4 binomial standard errors.
func TestDrawsReproduceDistribution(t *testing.T) {
	c := mustCurve(t, mustTable(t, fixture()), "cpu", "m", profilespec.FP32, 1)
	var x []float64 // as rows computes them, so that == compares exactly
	for _, v := range []float64{10, 12, 14, 16, 18} {
		x = append(x, v*ms)
	}
	m := float64(len(x))
	const n = 200_000
	below := make([]int, len(x))
	var atMin, atMax int
	r := rand.New(rand.NewPCG(5, 6))
	for range n {
		q := c.Quantile(4, r.Float64())
		for k := range x {
			if q <= x[k] {
				below[k]++
			}
		}
		if q == x[0] {
			atMin++
		}
		if q == x[len(x)-1] {
			atMax++
		}
	}
	check := func(what string, count int, p float64) {
		got := float64(count) / n
		if tol := 4 * math.Sqrt(p*(1-p)/n); math.Abs(got-p) > tol {
			t.Errorf("%s = %.5f, want %.5f within %.5f", what, got, p, tol)
		}
	}
	for k := range len(x) - 1 {
		check(fmt.Sprintf("P(Q(U) <= x_%d)", k), below[k], (float64(k)+0.5)/m)
	}
	if below[len(x)-1] != n {
		t.Errorf("P(Q(U) <= x_max) = %d/%d, want 1", below[len(x)-1], n)
	}
	check("P(Q(U) = x_min)", atMin, 0.5/m)
	check("P(Q(U) = x_max)", atMax, 0.5/m)
}

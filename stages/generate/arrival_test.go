package generate

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// arrivalCase is one arrival process with the statistics theory predicts.
type arrivalCase struct {
	name string
	a    Arrival
	// cv is the expected coefficient of variation of the gaps, or 0 where
	// the gaps are correlated and their CV has no simple closed form.
	cv float64
	// idc is the expected index of dispersion of counts, Var(N)/E(N), over
	// windows of window seconds, or 0 to skip the check.
	idc    float64
	window float64
}

// mmppIDC is the index of dispersion of counts of a two-state MMPP over a
// window of t seconds (Heffes and Lucantoni 1986): with s1, s2 the rates of
// leaving states 1 and 2 and s = s1 + s2,
// IDC(t) = 1 + 2·s1·s2·(λ1−λ2)² / (s³·λ̄) · (1 − (1 − e^(−s·t)) / (s·t)).
func mmppIDC(rate float64, b Bursty, t float64) float64 {
	m := newMMPP(rate, b, rand.New(rand.NewPCG(0, 0)))
	sLow, sHigh := 1/m.meanStay[0], 1/m.meanStay[1]
	s := sLow + sHigh
	d := m.rates[1] - m.rates[0]
	return 1 + 2*sLow*sHigh*d*d/(s*s*s*rate)*(1-(1-math.Exp(-s*t))/(s*t))
}

func arrivalCases() []arrivalCase {
	base := DefaultConfig().Eval.Arrival
	with := func(f func(a *Arrival)) Arrival {
		a := base
		f(&a)
		return a
	}
	mmpp := with(func(a *Arrival) {
		a.Process, a.Rate = ProcessBursty, 1000
		a.Bursty = Bursty{Model: BurstyMMPP, HighFraction: 0.2, RateRatio: 5, MeanBurst: 100 * time.Millisecond}
	})
	return []arrivalCase{
		{name: "poisson", a: with(func(a *Arrival) { a.Process, a.Rate = ProcessPoisson, 1000 }),
			cv: 1, idc: 1, window: 1},
		{name: "gamma cv 0.5", a: with(func(a *Arrival) {
			a.Process, a.Rate, a.Bursty.Model, a.Bursty.CV = ProcessBursty, 1000, BurstyGamma, 0.5
		}),
			cv: 0.5, idc: 0.25, window: 1},
		{name: "gamma cv 3", a: with(func(a *Arrival) { a.Process, a.Rate, a.Bursty.Model, a.Bursty.CV = ProcessBursty, 1000, BurstyGamma, 3 }),
			cv: 3, idc: 9, window: 1},
		{name: "mmpp", a: mmpp, idc: mmppIDC(1000, mmpp.Bursty, 10), window: 10},
		{name: "diurnal", a: with(func(a *Arrival) {
			a.Process, a.Rate = ProcessDiurnal, 1000
			a.Diurnal = Diurnal{Amplitude: 0.8, Period: 10 * time.Second}
		})},
	}
}

// TestArrivalProcesses draws n arrivals from each process and compares the
// mean rate, the gap CV and the dispersion of counts with theory. Every
// tolerance is a number of standard errors computed from the sample size,
// so a failure means a real deviation, not bad luck (at 5 SE a false alarm
// has odds below one in a million per check).
func TestArrivalProcesses(t *testing.T) {
	const (
		n  = 1_000_000
		se = 5.0 // standard errors allowed
	)
	for _, tc := range arrivalCases() {
		t.Run(tc.name, func(t *testing.T) {
			src := rand.NewPCG(11, 12)
			proc := newArrivals(tc.a, rand.New(src), src)
			times := make([]float64, n)
			var sum, sumSq float64
			prev := 0.0
			for i := range times {
				times[i] = proc.next()
				gap := times[i] - prev
				if gap < 0 {
					t.Fatalf("arrival %d at %v precedes arrival %d at %v", i, times[i], i-1, prev)
				}
				sum += gap
				sumSq += gap * gap
				prev = times[i]
			}
			mean := sum / n
			cv := math.Sqrt(sumSq/n-mean*mean) / mean

			// The rate estimate n/T has relative standard error
			// sqrt(IDC/n): count variance is IDC times the Poisson one
			// (for a renewal process IDC = CV²). The diurnal count over
			// whole periods is Poisson, so its IDC is 1.
			idc := tc.idc
			if idc == 0 {
				idc = 1
			}
			rate := n / times[n-1]
			t.Logf("rate %.2f/s (want %.2f), gap CV %.4f", rate, tc.a.Rate, cv)
			if tol := se * math.Sqrt(idc/n); math.Abs(rate/tc.a.Rate-1) > tol {
				t.Errorf("mean rate = %.2f/s, want %.2f/s within %.2f%%", rate, tc.a.Rate, 100*tol)
			}

			if tc.cv > 0 {
				// Relative SE of a sample CV: sqrt((2+κ)/(4n) + CV²/n),
				// κ the excess kurtosis of the gaps, 6/shape for a gamma.
				kurt := 6 * tc.cv * tc.cv
				if tol := se * math.Sqrt((2+kurt)/(4*n)+tc.cv*tc.cv/n); math.Abs(cv/tc.cv-1) > tol {
					t.Errorf("gap CV = %.4f, want %.4f within %.2f%%", cv, tc.cv, 100*tol)
				}
			}

			if tc.idc > 0 {
				got, windows := countDispersion(times, tc.window)
				t.Logf("IDC %.3f over %d windows (want %.3f)", got, windows, tc.idc)
				// The sample variance of m roughly normal window counts has
				// relative SE sqrt(2/(m−1)).
				if tol := se * math.Sqrt(2/float64(windows-1)); math.Abs(got/tc.idc-1) > tol {
					t.Errorf("index of dispersion over %gs windows = %.3f, want %.3f within %.0f%%", tc.window, got, tc.idc, 100*tol)
				}
			}

			if tc.a.Process == ProcessDiurnal {
				checkDiurnalShape(t, times, tc.a.Diurnal, se)
			}
		})
	}
}

// countDispersion returns Var(N)/E(N) of the counts in consecutive windows
// of length w over the whole windows the arrivals span.
func countDispersion(times []float64, w float64) (idc float64, windows int) {
	windows = int(times[len(times)-1] / w)
	counts := make([]float64, windows)
	for _, t := range times {
		if k := int(t / w); k < windows {
			counts[k]++
		}
	}
	var sum, sumSq float64
	for _, c := range counts {
		sum += c
		sumSq += c * c
	}
	m := float64(windows)
	mean := sum / m
	return (sumSq - m*mean*mean) / (m - 1) / mean, windows
}

// checkDiurnalShape checks that the rising half of each period holds its
// share of the arrivals: ∫ over [0, P/2] of (1 + A·sin(2πt/P)) dt / P is
// 1/2 + A/π of the arrivals of whole periods.
func checkDiurnalShape(t *testing.T, times []float64, d Diurnal, se float64) {
	t.Helper()
	period := d.Period.Seconds()
	whole := math.Floor(times[len(times)-1]/period) * period
	var in, first float64
	for _, at := range times {
		if at >= whole {
			break
		}
		in++
		if math.Mod(at, period) < period/2 {
			first++
		}
	}
	want := 0.5 + d.Amplitude/math.Pi
	got := first / in
	// Given the total, each arrival falls in the first half independently.
	if tol := se * math.Sqrt(want*(1-want)/in); math.Abs(got-want) > tol {
		t.Errorf("fraction of arrivals in the rising half = %.4f, want %.4f ± %.4f", got, want, tol)
	}
}

func TestMMPPStationaryRate(t *testing.T) {
	b := Bursty{Model: BurstyMMPP, HighFraction: 0.3, RateRatio: 8, MeanBurst: time.Second}
	m := newMMPP(50, b, rand.New(rand.NewPCG(1, 1)))
	h := b.HighFraction
	if got := h*m.rates[1] + (1-h)*m.rates[0]; math.Abs(got-50) > 1e-9 {
		t.Errorf("stationary mean rate = %v, want 50", got)
	}
	if got := m.meanStay[1] / (m.meanStay[0] + m.meanStay[1]); math.Abs(got-h) > 1e-12 {
		t.Errorf("fraction of time in the high state = %v, want %v", got, h)
	}
}

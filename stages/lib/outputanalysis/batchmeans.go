package outputanalysis

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// The batch-size rule's constants; BatchMeans documents the rule.
const (
	// MinBatches is the fewest batches BatchMeans uses: below about ten
	// the t quantile grows fast and the variance estimate is poor
	// (Schmeiser 1982 finds 10 to 30 batches enough for an interval).
	MinBatches = 10
	// MaxBatches is the number of batches BatchMeans starts from when the
	// run is long enough: 10·2⁷, so that halving ends at exactly 10.
	MaxBatches = 1280
	// BatchTestLevel is the level of the one-sided test of the batch
	// means' lag-1 autocorrelation. It is higher than the interval's 5%
	// on purpose: a false "independent" costs coverage, a false
	// "correlated" only a wider interval (Fishman and Yarberry 1997 use
	// 0.10 as well).
	BatchTestLevel = 0.10
)

// BatchInfo says how BatchMeans batched the run, so that a report can
// show it and flag an interval whose batches failed the test.
type BatchInfo struct {
	// BatchSize is the number of consecutive observations per batch.
	BatchSize int
	// Batches is the number of batches the interval is over.
	Batches int
	// Skipped is the number of observations left out at the start of the
	// run so that Batches·BatchSize observations end with it.
	Skipped int
	// Lag1 is the sample lag-1 autocorrelation of the batch means,
	// Σ_{i<k}(Y_i−Ȳ)(Y_{i+1}−Ȳ) / Σ_i(Y_i−Ȳ)².
	Lag1 float64
	// Z is the test statistic: the von Neumann estimate of the lag-1
	// autocorrelation, C = 1 − Σ_{i<k}(Y_{i+1}−Y_i)² / (2·Σ_i(Y_i−Ȳ)²),
	// divided by its standard deviation √((k−2)/(k²−1)) under
	// independence.
	Z float64
	// Passed reports whether the batch means passed the independence
	// test at the chosen size. When false, no batch size down to
	// MinBatches batches made them look independent: the run is too
	// short for its autocorrelation and the interval is unreliable,
	// most likely too narrow.
	Passed bool
}

// BatchMeans is the interval for the steady-state mean of one long run y
// by non-overlapping batch means (Law 2015, ch. 9): the run is cut into k
// batches of consecutive observations, and TInterval is taken over the k
// batch means, which are nearly independent when the batches are long
// compared with the run's autocorrelation. Delete the initial transient
// first (MSER); BatchMeans takes y as stationary.
//
// The batch size is chosen by testing the batch means for lag-1
// autocorrelation, as LBATCH does (Fishman and Yarberry 1997; the
// sequential doubling of Law and Carson 1979): start with k = MaxBatches
// batches, or the largest 10·2^j not above n for a shorter run; at each
// k, batches of ⌊n/k⌋ observations (the first n mod k left out) are
// averaged and the von Neumann test (von Neumann 1941; Young 1941) is
// applied to their means: C/√((k−2)/(k²−1)) is compared with the
// standard normal's 1 − BatchTestLevel quantile (1.2816). If it is not
// above it, the means pass and k is used; otherwise k is halved (the
// batch size doubled) and the test repeated, never below MinBatches
// batches. If even MinBatches batches fail, the interval is given over
// them with Passed false. A run of fewer than MinBatches observations, or
// one holding a NaN or an infinity, gives a NaN interval.
func BatchMeans(y []float64, confidence float64) (Interval, BatchInfo) {
	nan := math.NaN()
	none := Interval{Mean: nan, Lo: nan, Hi: nan, Method: MethodBatchMeans}
	n := len(y)
	if n < MinBatches {
		return none, BatchInfo{Lag1: nan, Z: nan}
	}
	for _, v := range y {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return none, BatchInfo{Lag1: nan, Z: nan}
		}
	}
	k := MinBatches
	for 2*k <= min(n, MaxBatches) {
		k *= 2
	}
	crit := distuv.UnitNormal.Quantile(1 - BatchTestLevel)
	means := make([]float64, k)
	for {
		size := n / k
		skip := n - k*size
		means = means[:k]
		for i := range means {
			var s float64
			for _, v := range y[skip+i*size : skip+(i+1)*size] {
				s += v
			}
			means[i] = s / float64(size)
		}
		lag1, z := lag1Test(means)
		info := BatchInfo{BatchSize: size, Batches: k, Skipped: skip, Lag1: lag1, Z: z, Passed: !(z > crit)}
		if info.Passed || k/2 < MinBatches {
			iv := TInterval(means, confidence)
			iv.Method = MethodBatchMeans
			return iv, info
		}
		k /= 2
	}
}

// lag1Test is the sample lag-1 autocorrelation of y and the von Neumann
// test statistic (see BatchInfo). Means that do not vary at all are
// independent as far as the test can tell: both are then 0.
func lag1Test(y []float64) (lag1, z float64) {
	k := len(y)
	mean, _ := meanSD(y)
	var ss, cross, succ float64
	for i, v := range y {
		ss += (v - mean) * (v - mean)
		if i > 0 {
			cross += (y[i-1] - mean) * (v - mean)
			succ += (v - y[i-1]) * (v - y[i-1])
		}
	}
	if ss == 0 {
		return 0, 0
	}
	c := 1 - succ/(2*ss)
	kf := float64(k)
	return cross / ss, c / math.Sqrt((kf-2)/(kf*kf-1))
}

package outputanalysis

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Methods, as Interval.Method names them: a report says which one each of
// its tables uses.
const (
	// MethodT is the Student t interval over independent replications.
	MethodT = "Student t over replications"
	// MethodPairedT is the Student t interval over the differences of two
	// systems paired by replication (common random numbers).
	MethodPairedT = "paired Student t over replications"
	// MethodReplicationDeletion is the deletion of the initial transient
	// found by MSER-5 on the replications' averaged series, then the
	// Student t interval over the replications' truncated means.
	MethodReplicationDeletion = "replication/deletion (MSER-5 on the averaged series), Student t over replications"
	// MethodBatchMeans is the Student t interval over the non-overlapping
	// batch means of one long run.
	MethodBatchMeans = "non-overlapping batch means of one run"
	// MethodIndependent is the difference of two estimates from
	// independent experiments, the two half-widths combined in quadrature.
	MethodIndependent = "difference of independent estimates, half-widths in quadrature"
)

// Interval is a point estimate with its confidence interval. Lo and Hi are
// NaN where no interval can be given: fewer than two values, a confidence
// outside (0, 1), or a NaN among the values (then Mean is NaN too).
type Interval struct {
	// Mean is the point estimate.
	Mean float64
	// Lo and Hi bound the interval.
	Lo, Hi float64
	// N is the number of independent values the interval rests on:
	// replications, or batches for batch means.
	N int
	// Method names the method (one of the Method constants).
	Method string
}

// HalfWidth is half the interval's width; NaN where there is no interval.
func (iv Interval) HalfWidth() float64 { return (iv.Hi - iv.Lo) / 2 }

// Covers reports whether v lies in the closed interval [Lo, Hi]; false
// where there is no interval.
func (iv Interval) Covers(v float64) bool { return iv.Lo <= v && v <= iv.Hi }

// TInterval is the mean of x and its Student t interval at the given
// confidence: x̄ ± t(1−α/2, n−1)·s/√n with α = 1 − confidence and s the
// sample standard deviation (divisor n−1). The values must be independent
// and identically distributed, as the outputs of independent replications
// are (Law 2015, ch. 9); the jobs of one queue are not, which is why this
// is applied to replication means and not to jobs.
func TInterval(x []float64, confidence float64) Interval {
	iv := Interval{Mean: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), N: len(x), Method: MethodT}
	if len(x) == 0 {
		return iv
	}
	mean, sd := meanSD(x)
	iv.Mean = mean
	if len(x) < 2 || !validConfidence(confidence) || math.IsNaN(sd) {
		return iv
	}
	h := tQuantile(1-(1-confidence)/2, len(x)-1) * sd / math.Sqrt(float64(len(x)))
	iv.Lo, iv.Hi = mean-h, mean+h
	return iv
}

// PairedTInterval is the Student t interval for the mean of a − b over the
// differences a[r] − b[r], paired by replication r: with common random
// numbers both systems saw the same workload and draws in replication r,
// so the difference's variance is smaller than the two systems' summed
// (Law 2015, ch. 10, the paired-t interval). a and b must have one value
// per replication each.
func PairedTInterval(a, b []float64, confidence float64) (Interval, error) {
	if len(a) != len(b) {
		return Interval{}, fmt.Errorf("outputanalysis: paired t interval: %d values against %d; want one per replication each", len(a), len(b))
	}
	d := make([]float64, len(a))
	for r := range a {
		d[r] = a[r] - b[r]
	}
	iv := TInterval(d, confidence)
	iv.Method = MethodPairedT
	return iv, nil
}

// IndependentDifference is b − a for two estimates from independent
// experiments (two runs of the pipeline, each with its own replications),
// with an interval whose half-width is the two half-widths combined in
// quadrature, √(h_a² + h_b²): the variance of a difference of independent
// estimates is the sum of theirs, and in the normal approximation each
// half-width is the same quantile times its standard error. a and b must
// have the same confidence. Against Welch's approximate-t interval for
// two systems simulated independently (Law 2015, ch. 10, §10.2.2, the
// modified two-sample-t interval; B. L. Welch, The significance of the
// difference between two means when the population variances are
// unequal, Biometrika 29, 1938) it is conservative when both estimates
// rest on the same number of replications: Welch's degrees of freedom
// are then at least each estimate's, so its t quantile is at most theirs.
// Lo and Hi are NaN where either estimate has no interval.
func IndependentDifference(a, b Interval) Interval {
	d := Interval{Mean: b.Mean - a.Mean, Lo: math.NaN(), Hi: math.NaN(), N: min(a.N, b.N), Method: MethodIndependent}
	if h := math.Hypot(a.HalfWidth(), b.HalfWidth()); !math.IsNaN(h) && !math.IsInf(h, 0) {
		d.Lo, d.Hi = d.Mean-h, d.Mean+h
	}
	return d
}

// meanSD is the mean of x and its sample standard deviation (NaN for one
// value), both by two passes, which keeps the variance of values far from
// zero (latencies in seconds since the epoch of a run, say) accurate.
func meanSD(x []float64) (mean, sd float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	if len(x) < 2 {
		return mean, math.NaN()
	}
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(len(x)-1))
}

// tQuantile is the p-quantile of Student's t with df degrees of freedom.
func tQuantile(p float64, df int) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(df)}.Quantile(p)
}

// validConfidence reports whether c is a usable confidence level.
func validConfidence(c float64) bool { return c > 0 && c < 1 }

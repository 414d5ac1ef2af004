package metrics

import "math"

// Latency summarizes a set of durations in seconds: their mean, their
// nearest-rank quantiles (see the package doc) and their largest. Every
// field is NaN for an empty set.
type Latency struct {
	Mean, P50, P95, P99, Max float64
}

// rank returns the nearest rank, from 1, of the p-quantile among n > 0
// values: the smallest r with r >= p·n, the product taken in floating
// point as gonum's stat.Quantile takes it.
func rank(p float64, n int) int {
	return max(int(math.Ceil(p*float64(n))), 1)
}

// quantile returns the nearest-rank p-quantile of the ascending values
// sorted, the same as stat.Quantile(p, stat.Empirical, sorted, nil), or
// NaN when there are none.
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	return sorted[rank(p, len(sorted))-1]
}

// mean returns the mean of x, summed in order, or NaN when x is empty.
func mean(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	var s float64
	for _, v := range x {
		s += v
	}
	return s / float64(len(x))
}

// latencyFrom summarizes values whose mean is mean and which sorted
// holds in ascending order.
func latencyFrom(mean float64, sorted []float64) Latency {
	if len(sorted) == 0 {
		nan := math.NaN()
		return Latency{nan, nan, nan, nan, nan}
	}
	return Latency{Mean: mean, P50: quantile(sorted, 0.50), P95: quantile(sorted, 0.95), P99: quantile(sorted, 0.99), Max: sorted[len(sorted)-1]}
}

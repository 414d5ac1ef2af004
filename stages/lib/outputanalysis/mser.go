package outputanalysis

import "math"

// MSER5 is the batch size of MSER-5, MSER applied to means of five
// consecutive observations, the most effective of the truncation rules
// that White, Cobb and Spratt (2000) compared: the batching smooths the
// series, so that single observations sway the statistic less.
const MSER5 = 5

// mserMinBatches is the shortest batched series MSER judges: with fewer
// batch means the statistic's minimum says nothing about a steady state.
const mserMinBatches = 10

// mserTail is the number of batch means the statistic always keeps: it is
// not evaluated for deletions that would leave fewer. With one or two
// means left, a short quiet stretch at the end of a run (a queue that
// happened to empty, every wait 0) gives a statistic of about zero and
// would pass for a steady state found at the very end; implementations of
// MSER ignore the last few batches for the same reason.
const mserTail = 5

// MSER is the MSER-m truncation point of the series y (White 1997; White,
// Cobb and Spratt 2000, where m = 5 is MSER-5): how many observations to
// delete from its start as the initial transient, and whether the series
// shows a steady state at all.
//
// The rule: y is cut into b = ⌊n/m⌋ non-overlapping batches of m
// consecutive observations (the last n mod m observations are left out of
// the batching) and Z_1, ..., Z_b are their means. For a deletion of d
// batches, the MSER statistic is
//
//	MSER(d) = 1/(b−d)² · Σ_{j=d+1..b} (Z_j − Z̄(d))²,   Z̄(d) = mean of Z_{d+1..b},
//
// the squared half-width, up to a constant, of the marginal confidence
// interval of the truncated mean: deleting more removes bias until the
// loss of data outweighs it. The statistic is evaluated for d = 0, 1, ...,
// b − 5 (so that at least five batch means remain). The deletion returned
// is the d in the first half, d ≤ ⌊b/2⌋, with the smallest statistic (the
// smallest such d on ties), in observations: m·d. ok is false when the
// statistic is smaller still somewhere in the second half: the series has
// no steady state that MSER can detect within it, and the run is too
// short for its transient (the literature's rule of rejecting a
// truncation point beyond n/2, White 1997). ok is also false,
// with d = 0, for a series of fewer than 10 batches or one holding a NaN
// or an infinity.
//
// MSER panics if m < 1.
func MSER(y []float64, m int) (d int, ok bool) {
	if m < 1 {
		panic("outputanalysis: MSER batch size m < 1")
	}
	b := len(y) / m
	if b < mserMinBatches {
		return 0, false
	}
	z := make([]float64, b)
	for j := range z {
		var s float64
		for _, v := range y[j*m : (j+1)*m] {
			s += v
		}
		z[j] = s / float64(m)
		if math.IsNaN(z[j]) || math.IsInf(z[j], 0) {
			return 0, false
		}
	}
	// Walk backwards, so that each deletion's mean and sum of squares
	// comes from the previous one's by Welford's update: one pass, and no
	// cancellation of large sums.
	half, last := b/2, b-mserTail
	firstMin, firstAt, secondMin := math.Inf(1), 0, math.Inf(1)
	var mean, ss float64
	for j := b - 1; j >= 0; j-- {
		kept := float64(b - j)
		dz := z[j] - mean
		mean += dz / kept
		ss += dz * (z[j] - mean)
		if j > last {
			continue
		}
		stat := ss / (kept * kept)
		switch {
		case j <= half && stat <= firstMin: // <=: the smallest d wins a tie
			firstMin, firstAt = stat, j
		case j > half && stat < secondMin:
			secondMin = stat
		}
	}
	return firstAt * m, firstMin <= secondMin
}

// Deletion is the initial transient ReplicationDeletion deleted.
type Deletion struct {
	// Deleted is the number of observations deleted from the start of
	// every replication.
	Deleted int
	// OK is MSER's ok on the averaged series: false when it showed no
	// steady state within its first half (Deleted is then still the
	// first half's best, and the interval should be read with that
	// caveat: the runs are too short for their transient).
	OK bool
}

// ReplicationDeletion is the interval for a steady-state mean from
// independent replications, each started afresh the same way (Law 2015,
// ch. 9, the replication/deletion approach): the initial transient is
// found by MSER-5 on the averaged series, the same number of observations
// is deleted from the start of every run, each run's remaining
// observations are averaged, and TInterval is taken over those averages,
// one per run.
//
// The averaged series is the mean across the runs at each observation
// index, over the length of the shortest run, as in Welch's procedure
// (Law 2015, ch. 9). MSER is not run on each replication alone: in a
// congested queue a long busy period early in a stationary run looks to
// MSER like a transient, and deleting it leaves the rest of the run, and
// so the interval, biased low. The transient is common to every run,
// started alike, while the busy periods are independent, so averaging
// keeps the first and damps the second. The calibration test measures
// both ways.
//
// The deletion is at most half the shortest run, so every run keeps
// observations; an empty run gives a NaN mean and so a NaN interval.
func ReplicationDeletion(runs [][]float64, confidence float64) (Interval, Deletion) {
	shortest := 0
	for r, y := range runs {
		if r == 0 || len(y) < shortest {
			shortest = len(y)
		}
	}
	avg := make([]float64, shortest)
	for _, y := range runs {
		for i, v := range y[:shortest] {
			avg[i] += v
		}
	}
	for i := range avg {
		avg[i] /= float64(len(runs))
	}
	d, ok := MSER(avg, MSER5)
	means := make([]float64, len(runs))
	for r, y := range runs {
		means[r] = math.NaN()
		if len(y) > d {
			var s float64
			for _, v := range y[d:] {
				s += v
			}
			means[r] = s / float64(len(y)-d)
		}
	}
	iv := TInterval(means, confidence)
	iv.Method = MethodReplicationDeletion
	return iv, Deletion{Deleted: d, OK: ok}
}

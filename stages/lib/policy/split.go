package policy

import (
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/sim"
)

// splitEvenly divides j's samples across the devices that can hold it so
// that the parts are predicted to finish together: device d runs at r_d
// samples a second (j's batch over its predicted time there, the rate at
// full size) behind a backlog of w_d seconds, so its part b_d ends at
// w_d + b_d/r_d. Water-filling picks the common end T with
// Σ r_d·(T − w_d) = batch over the devices with w_d < T; with equal
// backlogs the parts are in proportion to the devices' speeds. Sizes are
// rounded by largest remainder (lowest device first on ties). Only devices
// that hold the whole job take part, so every part fits. The rates assume
// time grows in proportion to samples; a batch's fixed cost makes small
// parts end a little later than predicted.
//
// Only devices whose predicted time and backlog are finite, with a time
// above zero, take part: a rate of zero or infinity has no share to
// compute. When fewer than two such devices remain, or the arithmetic
// overflows, the job runs whole (its placer chooses the device): a
// prediction past float64's range is no reason to fail a simulation.
func splitEvenly(j *sim.Job, s *sim.State) []int32 {
	n := s.Devices()
	rate := make([]float64, n)
	wait := make([]float64, n)
	var devs []int
	first := -1 // the first device that holds j, for a job run whole
	for d := range n {
		if !s.Fits(d, j) {
			continue
		}
		if first < 0 {
			first = d
		}
		r, w := float64(j.Batch)/s.Predict(d, j), s.Backlog(d)
		if !(r > 0) || math.IsInf(r, 0) || !(w >= 0) || math.IsInf(w, 0) {
			continue
		}
		rate[d], wait[d] = r, w
		devs = append(devs, d)
	}
	if len(devs) < 2 {
		return whole(j, n, first)
	}
	slices.SortStableFunc(devs, func(a, b int) int {
		switch {
		case wait[a] < wait[b]:
			return -1
		case wait[a] > wait[b]:
			return 1
		}
		return 0
	})
	// Add devices in order of backlog while the common end is beyond the
	// next one's backlog.
	var sumR, sumRW, end float64
	used := 0
	for _, d := range devs {
		if used > 0 && end <= wait[d] {
			break
		}
		sumR += rate[d]
		sumRW += rate[d] * wait[d]
		end = (float64(j.Batch) + sumRW) / sumR
		used++
	}
	share := make([]float64, n)
	for _, d := range devs[:used] {
		share[d] = rate[d] * (end - wait[d])
		// Each share lies in [0, batch] up to rounding; anything else
		// is an overflow.
		if !(share[d] >= 0 && share[d] <= float64(j.Batch)+1) {
			return whole(j, n, first)
		}
	}
	sizes, ok := roundShares(share, j.Batch)
	if !ok {
		return whole(j, n, first)
	}
	return sizes
}

// whole gives all of j's samples to device d, or to device 0 when no
// device holds j (the simulator rejects such a job before it splits):
// one part, so the job runs whole where its placer puts it.
func whole(j *sim.Job, n, d int) []int32 {
	out := make([]int32, n)
	out[max(d, 0)] = j.Batch
	return out
}

// roundShares rounds non-negative shares summing to total into integers
// summing to total, by largest remainder; ties go to the lowest index. It
// reports false when the shares, rounded, cannot sum to total (they did
// not sum to it, up to rounding).
func roundShares(share []float64, total int32) ([]int32, bool) {
	out := make([]int32, len(share))
	var sum int64
	for i, v := range share {
		if !(v >= 0 && v <= float64(total)+1) {
			return nil, false
		}
		out[i] = int32(math.Floor(v))
		sum += int64(out[i])
	}
	// Each share gains at most one sample, so this ends within
	// len(share) rounds.
	for ; sum < int64(total); sum++ {
		best := -1
		for i, v := range share {
			if v-math.Floor(v) <= 0 {
				continue
			}
			if best < 0 || v-math.Floor(v) > share[best]-math.Floor(share[best]) {
				best = i
			}
		}
		if best < 0 {
			return nil, false
		}
		out[best]++
		share[best] = math.Floor(share[best]) // one extra sample each
	}
	return out, sum == int64(total)
}

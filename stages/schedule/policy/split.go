package policy

import (
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/schedule/sim"
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
func splitEvenly(j *sim.Job, s *sim.State) []int32 {
	n := s.Devices()
	rate := make([]float64, n)
	wait := make([]float64, n)
	var devs []int
	for d := range n {
		if s.Fits(d, j) {
			rate[d] = float64(j.Batch) / s.Predict(d, j)
			wait[d] = s.Backlog(d)
			devs = append(devs, d)
		}
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
	}
	return roundShares(share, j.Batch)
}

// roundShares rounds non-negative shares summing to total into integers
// summing to total, by largest remainder; ties go to the lowest index.
func roundShares(share []float64, total int32) []int32 {
	out := make([]int32, len(share))
	var sum int32
	for i, v := range share {
		out[i] = int32(math.Floor(v))
		sum += out[i]
	}
	for ; sum < total; sum++ {
		best := -1
		for i, v := range share {
			if v <= 0 {
				continue
			}
			if best < 0 || v-math.Floor(v) > share[best]-math.Floor(share[best]) {
				best = i
			}
		}
		if best < 0 {
			break // no shares: the caller checks the sum
		}
		out[best]++
		share[best] = math.Floor(share[best]) // one extra sample each
	}
	return out
}

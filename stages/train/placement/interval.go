package placement

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Outcomes are what each test point's two branches came to (label.Point's
// Stay and Move, in the labelling objective's unit: seconds of latency
// summed over the jobs judged, or their missed SLOs) and the block of the
// workload it was drawn from.
type Outcomes struct {
	Stay, Move []float64
	Block      []int32
}

// Interval is a statistic's value on the test points with its percentile
// interval from the block bootstrap.
type Interval struct {
	Value, Lo, Hi float64
}

// BlockScores are one scorer's accuracy, AUC and regret with intervals.
type BlockScores struct {
	Accuracy, AUC, Regret Interval
	// Blocks is how many blocks the test points fall in, the bootstrap's
	// unit.
	Blocks int
}

// Regret is what a scorer's decisions cost against the better branch of
// each point, in the objective's unit: the mean over the points of the
// chosen branch's outcome less the better one's (0 where the decision was
// right, and large only where a wrong decision mattered), so that a
// scorer is charged for what its mistakes cost and not merely counted
// wrong.
func regret(migrate []bool, o Outcomes, i int) float64 {
	chosen := o.Stay[i]
	if migrate[i] {
		chosen = o.Move[i]
	}
	return chosen - min(o.Stay[i], o.Move[i])
}

// ScoreBlocks scores pr against the labels y with intervals by the block
// bootstrap of the test points (BlockBootstrap). A resample with one class
// alone has no AUC and is left out of its interval.
func ScoreBlocks(pr Predictions, y []bool, o Outcomes, resamples int, confidence float64, seed uint64) (BlockScores, error) {
	n := len(y)
	if len(pr.Migrate) != n || len(pr.Score) != n || len(o.Stay) != n || len(o.Move) != n || len(o.Block) != n {
		return BlockScores{}, fmt.Errorf("placement: %s: %d decisions, %d scores and %d, %d and %d outcomes and blocks for %d labels",
			pr.Scorer, len(pr.Migrate), len(pr.Score), len(o.Stay), len(o.Move), len(o.Block), n)
	}
	if n == 0 || resamples < 1 || !(confidence > 0 && confidence < 1) {
		return BlockScores{}, fmt.Errorf("placement: %s: %d points, %d resamples, confidence %g", pr.Scorer, n, resamples, confidence)
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Or(cmp.Compare(pr.Score[b], pr.Score[a]), cmp.Compare(a, b)) })
	accuracy := func(w []float64) float64 {
		var sum, right float64
		for i := range n {
			sum += w[i]
			if pr.Migrate[i] == y[i] {
				right += w[i]
			}
		}
		return right / sum
	}
	auc := func(w []float64) float64 { return weightedAUC(order, pr.Score, y, w) }
	cost := func(w []float64) float64 {
		var sum, cost float64
		for i := range n {
			sum += w[i]
			cost += w[i] * regret(pr.Migrate, o, i)
		}
		return cost / sum
	}
	ivs, nb, err := BlockBootstrap(o.Block, resamples, confidence, seed, accuracy, auc, cost)
	if err != nil {
		return BlockScores{}, fmt.Errorf("placement: %s: %w", pr.Scorer, err)
	}
	return BlockScores{Accuracy: ivs[0], AUC: ivs[1], Regret: ivs[2], Blocks: nb}, nil
}

// Difference is how scorer a does against scorer b on the same points:
// a's accuracy less b's and a's regret less b's, each with its interval
// from one block bootstrap of the points for both (the pair resampled
// together, so that what the points share cancels, as in a paired test).
type Difference struct {
	Accuracy, Regret Interval
}

// DifferenceBlocks compares scorers a and b on the labels y and outcomes
// o with intervals by the block bootstrap (BlockBootstrap): a difference
// whose interval holds zero cannot be told from noise at confidence.
func DifferenceBlocks(a, b Predictions, y []bool, o Outcomes, resamples int, confidence float64, seed uint64) (Difference, error) {
	n := len(y)
	for _, pr := range []Predictions{a, b} {
		if len(pr.Migrate) != n || len(o.Stay) != n || len(o.Move) != n || len(o.Block) != n {
			return Difference{}, fmt.Errorf("placement: %s against %s: %s has %d decisions for %d labels, %d and %d outcomes and %d blocks",
				a.Scorer, b.Scorer, pr.Scorer, len(pr.Migrate), n, len(o.Stay), len(o.Move), len(o.Block))
		}
	}
	mean := func(w []float64, f func(i int) float64) float64 {
		var sum, v float64
		for i := range n {
			sum += w[i]
			v += w[i] * f(i)
		}
		return v / sum
	}
	right := func(pr Predictions, i int) float64 {
		if pr.Migrate[i] == y[i] {
			return 1
		}
		return 0
	}
	accuracy := func(w []float64) float64 {
		return mean(w, func(i int) float64 { return right(a, i) - right(b, i) })
	}
	cost := func(w []float64) float64 {
		return mean(w, func(i int) float64 { return regret(a.Migrate, o, i) - regret(b.Migrate, o, i) })
	}
	ivs, _, err := BlockBootstrap(o.Block, resamples, confidence, seed, accuracy, cost)
	if err != nil {
		return Difference{}, fmt.Errorf("placement: %s against %s: %w", a.Scorer, b.Scorer, err)
	}
	return Difference{Accuracy: ivs[0], Regret: ivs[1]}, nil
}

// BlockBootstrap gives each statistic of points drawn in blocks its value
// and an interval by the block bootstrap: the points' blocks (block[i] is
// point i's) are resampled with replacement, resamples times, each
// resample keeping every point of each block it draws, and each interval
// is the resamples' percentile interval at confidence. A statistic is
// computed from the points' weights, how many times each is drawn (all 1
// for its value); one that is undefined on a resample returns NaN there,
// and the resample is left out of its interval. It also returns how many
// blocks there are.
//
// Points of one block are decisions of one stretch of one simulation,
// which depend on each other; blocks, far apart in the workload, are close
// to independent, so resampling whole blocks keeps the dependence inside
// them (the cluster bootstrap: Davison and Hinkley, Bootstrap Methods and
// their Application, 1997, §3.8; Field and Welsh, "Bootstrapping clustered
// data", JRSS B 69:369–390, 2007), where an interval that took the points
// for independent draws would be too narrow.
func BlockBootstrap(block []int32, resamples int, confidence float64, seed uint64, stats ...func(w []float64) float64) ([]Interval, int, error) {
	n := len(block)
	if n == 0 || resamples < 1 || !(confidence > 0 && confidence < 1) {
		return nil, 0, fmt.Errorf("block bootstrap of %d points, %d resamples, confidence %g", n, resamples, confidence)
	}
	// Each block's index, in order of first appearance.
	blockOf := make([]int, n)
	index := map[int32]int{}
	for i, b := range block {
		k, ok := index[b]
		if !ok {
			k = len(index)
			index[b] = k
		}
		blockOf[i] = k
	}
	nb := len(index)
	w := make([]float64, n)
	for i := range w {
		w[i] = 1
	}
	out := make([]Interval, len(stats))
	for k, stat := range stats {
		out[k].Value = stat(w)
	}
	rng := rand.New(rand.NewPCG(seed, 0x626c6f636b73)) // "blocks"
	count := make([]float64, nb)
	draws := make([][]float64, len(stats))
	for range resamples {
		clear(count)
		for range nb {
			count[rng.IntN(nb)]++
		}
		for i := range w {
			w[i] = count[blockOf[i]]
		}
		for k, stat := range stats {
			if v := stat(w); !math.IsNaN(v) {
				draws[k] = append(draws[k], v)
			}
		}
	}
	for k := range out {
		out[k].Lo, out[k].Hi = percentiles(draws[k], confidence)
	}
	return out, nb, nil
}

// Wilson is Wilson's score interval at confidence for a share of k
// successes in n independent draws (Wilson, "Probable inference, the law
// of succession, and statistical inference", JASA 22:209–212, 1927):
// unlike the normal approximation it has width where k is 0 or n, where
// a bootstrap has none.
func Wilson(k, n, confidence float64) (lo, hi float64) {
	if !(n > 0) {
		return math.NaN(), math.NaN()
	}
	z := math.Sqrt2 * math.Erfinv(confidence)
	p, z2 := k/n, z*z
	centre := (p + z2/(2*n)) / (1 + z2/n)
	half := z / (1 + z2/n) * math.Sqrt(p*(1-p)/n+z2/(4*n*n))
	lo, hi = max(0, centre-half), min(1, centre+half)
	// At k = 0 or n one end is the share itself; the formula's last
	// bits may miss it.
	if k == 0 {
		lo = 0
	}
	if k == n {
		hi = 1
	}
	return lo, hi
}

// weightedAUC is the Mann–Whitney AUC of the points in order (descending
// score), each counted w times (once with w nil), ties counting one half;
// NaN without both classes.
func weightedAUC(order []int, score []float64, y []bool, w []float64) float64 {
	weight := func(k int) float64 {
		if w == nil {
			return 1
		}
		return w[k]
	}
	var pos, neg float64
	for _, i := range order {
		if y[i] {
			pos += weight(i)
		} else {
			neg += weight(i)
		}
	}
	if pos == 0 || neg == 0 {
		return math.NaN()
	}
	// Walking from the highest score down, each positive outranks the
	// negatives still below it; a tied group counts its cross pairs half.
	var pairs, negAbove float64
	for lo := 0; lo < len(order); {
		hi := lo
		var gp, gn float64
		for ; hi < len(order) && score[order[hi]] == score[order[lo]]; hi++ {
			if k := order[hi]; y[k] {
				gp += weight(k)
			} else {
				gn += weight(k)
			}
		}
		pairs += gp*(neg-negAbove-gn) + gp*gn/2
		negAbove += gn
		lo = hi
	}
	return pairs / (pos * neg)
}

// percentiles is the percentile interval of xs at confidence: its
// (1−confidence)/2 and (1+confidence)/2 quantiles, by the nearest rank;
// NaN without values.
func percentiles(xs []float64, confidence float64) (lo, hi float64) {
	if len(xs) == 0 {
		return math.NaN(), math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	at := func(q float64) float64 {
		k := int(math.Ceil(q*float64(len(s)))) - 1
		return s[min(max(k, 0), len(s)-1)]
	}
	return at((1 - confidence) / 2), at((1 + confidence) / 2)
}

package metrics

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/stat/distuv"
)

// Bootstrap configures the bootstrap intervals; see the package doc for
// the method.
type Bootstrap struct {
	// Resamples is the number of bootstrap replicates; 0 computes point
	// estimates only, with NaN intervals.
	Resamples int
	// Confidence is the intervals' coverage, in (0, 1): 0.95 for 95%.
	Confidence float64
	// Seed seeds every replicate's generator: the same inputs and Seed
	// give identical intervals, on any number of cores.
	Seed uint64
}

// Validate checks that b is usable.
func (b Bootstrap) Validate() error {
	var errs []error
	if b.Resamples < 0 {
		errs = append(errs, fmt.Errorf("bootstrap: resamples is %d; want at least 0", b.Resamples))
	}
	if !(b.Confidence > 0 && b.Confidence < 1) {
		errs = append(errs, fmt.Errorf("bootstrap: confidence is %v; want a fraction strictly between 0 and 1", b.Confidence))
	}
	return errors.Join(errs...)
}

// Interval is a bootstrap percentile interval at Bootstrap.Confidence.
// Both ends are NaN where there is no interval: no resamples, or a metric
// undefined on the data.
type Interval struct {
	Lo, Hi float64
}

// Random streams, one per kind of replicate, so that no two share draws.
const (
	streamQuantile uint64 = 1 + iota
	streamPaired
)

// rng seeds g for replicate j of stream: two rounds of SplitMix64 turn
// (Seed, stream, j) into the generator's 128-bit state, so neighbouring
// replicates start at unrelated points of its period.
func (b Bootstrap) rng(g *pcg, stream uint64, j int) {
	hi := splitmix64(b.Seed ^ splitmix64(stream))
	*g = pcg{hi: hi, lo: splitmix64(hi ^ splitmix64(uint64(j)+0x632be59bd9b4e019))}
}

// pcg is math/rand/v2's PCG generator (128-bit LCG, DXSM output): pcg{hi,
// lo} gives the same numbers as rand.NewPCG(hi, lo), which a test checks.
// It is written out so that the draw loop can keep the state in registers:
// through rand.PCG's methods it went through memory on every draw, which
// made the generator, not the counting, the cost of a resample.
type pcg struct{ hi, lo uint64 }

// Uint64 returns the next number; pcg is a rand.Source.
func (g *pcg) Uint64() uint64 {
	var u uint64
	g.hi, g.lo, u = pcgNext(g.hi, g.lo)
	return u
}

// pcgNext advances the state (hi, lo) and returns it with the output.
func pcgNext(hi, lo uint64) (nhi, nlo, out uint64) {
	const (
		mulHi    = 2549297995355413924
		mulLo    = 4865540595714422341
		incHi    = 6364136223846793005
		incLo    = 1442695040888963407
		cheapMul = 0xda942042e4dd58b5
	)
	nhi, nlo = bits.Mul64(lo, mulLo)
	nhi += hi*mulLo + lo*mulHi
	nlo, c := bits.Add64(nlo, incLo, 0)
	nhi, _ = bits.Add64(nhi, incHi, c)
	out = nhi
	out ^= out >> 32
	out *= cheapMul
	out ^= out >> 48
	out *= nlo | 1
	return nhi, nlo, out
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// interval returns the percentile interval of the replicates' values,
// leaving out NaNs (replicates on which the metric is undefined, such as a
// resample without interactive jobs). It sorts reps.
func (b Bootstrap) interval(reps []float64) Interval {
	reps = slices.DeleteFunc(reps, math.IsNaN)
	if len(reps) == 0 || b.Validate() != nil {
		return Interval{math.NaN(), math.NaN()}
	}
	slices.Sort(reps)
	// Rounded to 12 places so that (1 - 0.95)/2 is 0.025, and 1000
	// replicates give the 25th and 975th, not the 26th.
	tail := math.Round((1-b.Confidence)/2*1e12) / 1e12
	return Interval{quantile(reps, tail), quantile(reps, 1-tail)}
}

// runReplicates calls fn for every replicate j in [0, r) on up to
// GOMAXPROCS goroutines, each with its own state from newState. fn must
// write only replicate j's results, so that they do not depend on the
// number of goroutines or on which ran j.
func runReplicates[S any](r int, newState func() S, fn func(s S, j int)) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), r) {
		wg.Go(func() {
			s := newState()
			for {
				j := int(next.Add(1) - 1)
				if j >= r {
					return
				}
				fn(s, j)
			}
		})
	}
	wg.Wait()
}

// count is a resample's number of draws of one value. A value is drawn
// about once per resample; more than 2^32-1 times is out of reach, since a
// trace has fewer rows.
type count = uint32

// draw adds k draws, uniform over the positions of counts, to counts. Each
// 64-bit output of src gives two positions by Lemire's multiply-shift on
// its 32-bit halves, rejecting the few products that would bias it, so
// each position is exactly uniform. len(counts) must be below 2^32.
func draw(counts []count, k int, g *pcg) {
	n := uint32(len(counts))
	if n == 0 {
		return
	}
	thresh := -n % n // 2^32 mod n: low products below it are rejected
	n64 := uint64(n)
	hi, lo := g.hi, g.lo
	var u uint64
	for k >= 2 {
		hi, lo, u = pcgNext(hi, lo)
		if m := (u & math.MaxUint32) * n64; uint32(m) >= thresh {
			counts[m>>32]++
			k--
		}
		if m := (u >> 32) * n64; uint32(m) >= thresh {
			counts[m>>32]++
			k--
		}
	}
	for k == 1 {
		hi, lo, u = pcgNext(hi, lo)
		if m := (u & math.MaxUint32) * n64; uint32(m) >= thresh {
			counts[m>>32]++
			k--
		}
	}
	g.hi, g.lo = hi, lo
}

// resampleBlock is the number of positions resample spreads draws over at
// a time: their counters, 16 KiB, stay in L1.
const resampleBlock = 1 << 12

// resample sets counts to the number of times each position is drawn in
// len(counts) uniform draws with replacement: one bootstrap resample. It
// goes block by block: the number of draws that land in a block, given
// those in the blocks before it, is Binomial(draws left, block size /
// positions left), and those draws are uniform over the block. That is
// exactly the distribution of the draws scattered one by one, but the
// counters written stay in cache; scattering a million jobs' draws over
// the whole array cost four times as much.
func resample(counts []count, g *pcg) {
	left, rest := len(counts), len(counts) // draws and positions to go
	for start := 0; start < len(counts); start += resampleBlock {
		block := counts[start:min(start+resampleBlock, len(counts))]
		clear(block)
		k := left
		if len(block) < rest && left > 0 {
			k = int(distuv.Binomial{N: float64(left), P: float64(len(block)) / float64(rest), Src: g}.Rand())
		}
		draw(block, k, g)
		left -= k
		rest -= len(block)
	}
}

// quantileInterval returns the percentile interval of the nearest-rank
// p-quantile of the ascending values sorted.
func (b Bootstrap) quantileInterval(sorted []float64, p float64) Interval {
	if len(sorted) == 0 || b.Validate() != nil || b.Resamples == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	n := len(sorted)
	m := n - rank(p, n) + 1
	return b.interval(b.quantileReplicates(sorted, p, min(n, m+int(8*math.Sqrt(float64(m)))+32)))
}

// quantileReplicates returns the replicates' p-quantiles of the ascending
// values sorted, which are not empty, drawing the top k of them first.
//
// A resample's p-quantile is its m-th largest value, m = n - rank + 1,
// and depends only on the draws that land among the largest values. So a
// replicate draws top, the number of the n draws that land among the top k
// positions, from Binomial(n, k/n), then spreads top draws uniformly over
// those k positions and walks down from the largest: the same distribution
// as n draws over all positions, at a cost of O(k) rather than O(n).
// quantileInterval takes k as m plus eight standard deviations and a
// margin, so that top < m, where the answer lies below the top k, is too
// rare to matter for speed; it is handled exactly all the same, by drawing
// the other n - top over the rest.
func (b Bootstrap) quantileReplicates(sorted []float64, p float64, k int) []float64 {
	n := len(sorted)
	m := n - rank(p, n) + 1
	reps := make([]float64, b.Resamples)
	var g pcg
	counts := make([]count, k)
	for j := range reps {
		b.rng(&g, streamQuantile, j)
		top := n
		if k < n {
			top = int(distuv.Binomial{N: float64(n), P: float64(k) / float64(n), Src: &g}.Rand())
		}
		if top < m {
			counts = make([]count, n) // rare: the answer is below the top k
			draw(counts[n-k:], top, &g)
			draw(counts[:n-k], n-top, &g)
		} else {
			counts = counts[:k]
			clear(counts)
			draw(counts, top, &g)
		}
		// Walk down from the largest value until m draws are passed.
		off := n - len(counts)
		cum := 0
		for i := len(counts) - 1; i >= 0; i-- {
			if cum += int(counts[i]); cum >= m {
				reps[j] = sorted[off+i]
				break
			}
		}
	}
	return reps
}

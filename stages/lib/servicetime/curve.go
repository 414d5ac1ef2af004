package servicetime

import "slices"

// Curve is one (device, model, precision, threads) configuration's measured
// latency distribution at each of its measured batch sizes, compiled for the
// simulator's hot loop: Quantile and Mean allocate nothing and touch only a
// few cache lines. A Curve is immutable and safe for concurrent use.
//
// Times are seconds on the profiled device itself; a declared accelerator's
// speed factor is the simulator's to apply.
type Curve struct {
	key    Key
	source string
	// batches are the measured batch sizes, ascending; the latencies of
	// batches[i] are sorted[off[i]:off[i+1]], ascending, and their mean is
	// means[i]. One flat slice keeps a curve's samples together in memory.
	batches []int
	off     []int
	sorted  []float64
	means   []float64
	// spans[b] is where batch size b falls among the measured sizes, for
	// every b from 0 to the largest measured size or maxSpans: looking it
	// up rather than searching halves the cost of a draw. Sizes above the
	// largest are one division away (beyond); only negative sizes and sizes
	// past maxSpans are searched for (locate).
	spans []span
	// top is the largest measured size, and width the batch distance its
	// extrapolation line is measured over.
	top   int
	width float64
}

// maxSpans bounds the table of spans, so that an imported profile with a
// huge batch size costs at most maxSpans·32 bytes per curve.
const maxSpans = 4096

// newCurve compiles the samples of one configuration, keyed by batch size.
// Every latency must already be checked finite and positive.
func newCurve(key Key, source string, byBatch map[int][]float64) *Curve {
	c := &Curve{key: key, source: source, off: []int{0}}
	for b := range byBatch {
		c.batches = append(c.batches, b)
	}
	slices.Sort(c.batches)
	for _, b := range c.batches {
		lat := slices.Clone(byBatch[b])
		slices.Sort(lat)
		// Summing the sorted values makes the mean independent of the
		// order the rows arrived in, to the last bit.
		var sum float64
		for _, x := range lat {
			sum += x
		}
		c.sorted = append(c.sorted, lat...)
		c.off = append(c.off, len(c.sorted))
		c.means = append(c.means, sum/float64(len(lat)))
	}
	n := len(c.batches)
	c.top = c.batches[n-1]
	c.width = float64(c.top) // one size: the line through the origin
	if n > 1 {
		c.width = float64(c.top - c.batches[n-2])
	}
	c.spans = make([]span, min(c.top, maxSpans)+1)
	for b := range c.spans {
		c.spans[b] = c.locate(b)
	}
	return c
}

// Key returns the configuration the curve was measured for.
func (c *Curve) Key() Key { return c.key }

// Source returns the profile source of the curve's samples: "measured", or
// "import:<file>" for an imported profile.
func (c *Curve) Source() string { return c.source }

// Batches returns the measured batch sizes, ascending. Every other size is
// interpolated or extrapolated from these.
func (c *Curve) Batches() []int { return slices.Clone(c.batches) }

// Quantile returns the ground-truth service time, in seconds, of a batch of
// the given size at quantile level u: with u uniform on [0, 1) the results
// follow the measured latency distribution at measured sizes, and the
// interpolated one between them (see the package doc for the exact rules).
// It is a pure function of its arguments, so a simulator that draws u from
// its own seeded source replays exactly. A batch below 1 counts as 1; u is
// clamped to [0, 1], and a NaN u counts as 0, so the result is always a
// positive finite number.
func (c *Curve) Quantile(batch int, u float64) float64 {
	// The span lookup is written out here and in Mean rather than in a
	// helper because the compiler would not inline the helper, and the
	// call and copy cost as much as the lookup.
	var s span
	switch {
	case uint(batch) < uint(len(c.spans)):
		s = c.spans[batch]
	case batch > c.top:
		s = c.beyond(batch)
	default:
		s = c.locate(batch)
	}
	return c.quantileAt(&s, u)
}

// quantileAt is Quantile at a located batch size.
func (c *Curve) quantileAt(s *span, u float64) float64 {
	v := c.quantile(s.i, u)
	if s.rule == ruleExact || s.rule == ruleScale {
		return s.apply(v, v)
	}
	return s.apply(v, c.quantile(s.j, u))
}

// Mean returns the expected service time, in seconds, of a batch of the
// given size: the measured mean at measured sizes, and the same
// interpolation and extrapolation as Quantile applied to the means
// elsewhere. Where no clamp of those rules binds it equals the mean of
// Quantile(batch, U) over U uniform, so a policy predicting with Mean is
// unbiased against the ground truth.
func (c *Curve) Mean(batch int) float64 {
	var s span
	switch {
	case uint(batch) < uint(len(c.spans)):
		s = c.spans[batch]
	case batch > c.top:
		s = c.beyond(batch)
	default:
		s = c.locate(batch)
	}
	return s.apply(c.means[s.i], c.means[s.j])
}

// quantile is the Hazen (midpoint) empirical quantile of the samples of
// batches[i]: with n sorted samples x_0..x_{n-1}, the piecewise-linear
// function through the points ((k+½)/n, x_k), constant at x_0 below ½/n and
// at x_{n-1} above 1-½/n. It spends probability 1/n around each sample, so
// its mean over u uniform is exactly the sample mean.
func (c *Curve) quantile(i int32, u float64) float64 {
	x := c.sorted[c.off[i]:c.off[i+1]]
	h := u*float64(len(x)) - 0.5
	if !(h > 0) { // also catches a NaN u
		return x[0]
	}
	last := len(x) - 1
	if h >= float64(last) {
		return x[last]
	}
	k := int(h)
	return x[k] + (h-float64(k))*(x[k+1]-x[k])
}

// rule says how the value at a batch size follows from the values at one or
// two measured sizes.
type rule uint8

const (
	ruleExact   rule = iota // a measured size: v_i
	ruleScale               // one measured size only: v_i·f
	ruleBetween             // b_i < b < b_j = b_{i+1}: (1-w)·v_i + w·v_j
	ruleAbove               // b > b_j, the largest: v_j + w·max(0, v_j-v_i)
	ruleBelow               // b < b_i, the smallest: min(v_i, max(v_i - w·(v_j-v_i), f·v_i))
)

// span is where a batch size falls among the measured ones, with the
// weights its rule needs; i and j index batches, and are 32-bit so that a
// span fits in 32 bytes.
type span struct {
	w, f float64
	i, j int32
	rule rule
}

// beyond is the span of a batch size above the largest measured one.
func (c *Curve) beyond(batch int) span {
	n := int32(len(c.batches))
	if n == 1 {
		return span{rule: ruleScale, f: float64(batch) / c.width}
	}
	return span{rule: ruleAbove, i: n - 2, j: n - 1, w: float64(batch-c.top) / c.width}
}

// locate finds where a batch size falls among the measured sizes by
// searching them.
func (c *Curve) locate(batch int) span {
	b := c.batches
	n := len(b)
	batch = max(batch, 1)
	switch {
	case batch > c.top:
		return c.beyond(batch)
	case n == 1 && batch == b[0]:
		return span{rule: ruleExact}
	case n == 1:
		return span{rule: ruleScale, f: float64(batch) / float64(b[0])}
	case batch < b[0]:
		return span{rule: ruleBelow, i: 0, j: 1,
			w: float64(b[0]-batch) / float64(b[1]-b[0]),
			f: float64(batch) / float64(b[0])}
	}
	// Invariant: b[lo] <= batch <= b[hi]. A profile measures a handful of
	// sizes, so this loop runs two or three times.
	lo, hi := 0, n-1
	for hi-lo > 1 {
		mid := int(uint(lo+hi) >> 1)
		if b[mid] <= batch {
			lo = mid
		} else {
			hi = mid
		}
	}
	switch batch {
	case b[lo]:
		return span{rule: ruleExact, i: int32(lo), j: int32(lo)}
	case b[hi]:
		return span{rule: ruleExact, i: int32(hi), j: int32(hi)}
	}
	return span{rule: ruleBetween, i: int32(lo), j: int32(hi), w: float64(batch-b[lo]) / float64(b[hi]-b[lo])}
}

// apply combines the values vi and vj of the span's measured sizes. Both
// are positive, and so is the result: between is a convex combination,
// above is at least vj, below is at least f·vi, and scaling multiplies by a
// positive f.
func (s *span) apply(vi, vj float64) float64 {
	switch s.rule {
	case ruleScale:
		return vi * s.f
	case ruleBetween:
		return (1-s.w)*vi + s.w*vj
	case ruleAbove:
		return vj + s.w*max(0, vj-vi)
	case ruleBelow:
		return min(vi, max(vi-s.w*(vj-vi), s.f*vi))
	}
	return vi
}

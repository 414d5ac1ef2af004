package columnar

import (
	"cmp"
	"math"
	"math/bits"

	"github.com/parquet-go/parquet-go"
)

// pageBounds returns the page's smallest and largest values as parquet-go
// finds them, and false for a page without values.
func (c *column) pageBounds() (lo, hi parquet.Value, ok bool) {
	if c.dict {
		if len(c.i32) == 0 {
			return lo, hi, false
		}
		switch c.kind {
		case parquet.Int32:
			return parquet.Int32Value(c.pageLo), parquet.Int32Value(c.pageHi), true
		case parquet.Double:
			// In page order: which of two equal values (0 and -0) is
			// kept depends on it.
			return doubleBounds(c.i32, func(i int32) float64 { return c.dictF64[i] })
		default:
			lo, hi := usedBounds(c.usedIndexes(), c.dictStr)
			return parquet.ByteArrayValue([]byte(lo)), parquet.ByteArrayValue([]byte(hi)), true
		}
	}
	switch c.kind {
	case parquet.Boolean:
		if c.nbools == 0 {
			return lo, hi, false
		}
		full, rest := c.nbools/8, c.nbools%8
		hasTrue, allTrue := false, true
		for _, x := range c.bools[:full] {
			hasTrue = hasTrue || x != 0
			allTrue = allTrue && x == 0xff
		}
		if rest > 0 {
			mask := byte(1)<<rest - 1
			x := c.bools[full] & mask
			hasTrue = hasTrue || x != 0
			allTrue = allTrue && x == mask
		}
		return parquet.BooleanValue(allTrue), parquet.BooleanValue(hasTrue), true
	case parquet.Int32:
		if len(c.i32) == 0 {
			return lo, hi, false
		}
		a, b := minMax(c.i32)
		return parquet.Int32Value(a), parquet.Int32Value(b), true
	case parquet.Int64:
		if len(c.i64) == 0 {
			return lo, hi, false
		}
		a, b := minMax(c.i64)
		return parquet.Int64Value(a), parquet.Int64Value(b), true
	default:
		if len(c.f64) == 0 {
			return lo, hi, false
		}
		return doubleBoundsOf(c.f64)
	}
}

// usedBounds returns the smallest and largest of dict's entries at used,
// which is not empty.
func usedBounds[V cmp.Ordered](used []int32, dict []V) (lo, hi V) {
	lo, hi = dict[used[0]], dict[used[0]]
	for _, i := range used[1:] {
		lo, hi = min(lo, dict[i]), max(hi, dict[i])
	}
	return lo, hi
}

// usedIndexes returns the dictionary indexes the page holds, each once.
func (c *column) usedIndexes() []int32 {
	words := (c.dictLen() + 63) / 64
	if cap(c.used) < words {
		c.used = make([]uint64, words)
	}
	used := c.used[:words]
	clear(used)
	for _, i := range c.i32 {
		used[i/64] |= 1 << (i % 64)
	}
	c.usedIdx = c.usedIdx[:0]
	for w, bitsSet := range used {
		for bitsSet != 0 {
			b := bits.TrailingZeros64(bitsSet)
			c.usedIdx = append(c.usedIdx, int32(w*64+b))
			bitsSet &= bitsSet - 1
		}
	}
	return c.usedIdx
}

func (c *column) dictLen() int {
	return max(len(c.dictI32), len(c.dictF64), len(c.dictStr))
}

func minMax[V int32 | int64](v []V) (lo, hi V) {
	lo, hi = v[0], v[0]
	for _, x := range v[1:] {
		lo, hi = min(lo, x), max(hi, x)
	}
	return lo, hi
}

// doubleBoundsOf is parquet-go's doublePage.Bounds: NaNs are skipped unless
// every value is one, and of equal values (0 and -0) the first is kept.
func doubleBoundsOf(data []float64) (lo, hi parquet.Value, ok bool) {
	i := 0
	for i < len(data) && math.IsNaN(data[i]) {
		i++
	}
	if i == len(data) {
		return parquet.DoubleValue(data[0]), parquet.DoubleValue(data[0]), true
	}
	a, b := data[i], data[i]
	for _, v := range data[i+1:] {
		// A NaN is neither less nor greater than a bound: skipped.
		if v < a {
			a = v
		}
		if v > b {
			b = v
		}
	}
	return parquet.DoubleValue(a), parquet.DoubleValue(b), true
}

func doubleBounds(idx []int32, at func(int32) float64) (lo, hi parquet.Value, ok bool) {
	vs := make([]float64, len(idx))
	for k, i := range idx {
		vs[k] = at(i)
	}
	return doubleBoundsOf(vs)
}

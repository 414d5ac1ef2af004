package zoo

import "math"

// float16Bits returns the IEEE 754 binary16 encoding of f rounded to the
// nearest representable value, ties to even, as onnxruntime and numpy round.
// Values from 65520 up (half-way past the largest half, 65504) become
// infinities, values up to 2⁻²⁵ (half the smallest subnormal) signed zeros,
// and NaNs stay NaN.
func float16Bits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	a := b & 0x7fffffff
	switch {
	case a > 0x7f800000:
		return sign | 0x7e00 // quiet NaN
	case a >= 0x477ff000: // 65520, and infinity
		return sign | 0x7c00
	case a >= 0x38800000: // 2⁻¹⁴, the smallest normal half
		// Rebias the exponent from 127 to 15 and drop 13 mantissa bits,
		// adding just under half of the dropped unit plus the kept lowest
		// bit: ties round to even without a branch, which random weights
		// would mispredict half the time. A carry out of the mantissa
		// correctly bumps the exponent.
		return sign | uint16((a-(127-15)<<23+0xfff+a>>13&1)>>13)
	}
	// A half subnormal counts units of 2⁻²⁴, and a is M·2^(exp−150) with
	// the implicit bit in M, so shift M right by 126−exp. Rounding 0x3ff up
	// gives 0x400, the smallest normal half. float32 subnormals (exp 0) are
	// far too small and flush to zero.
	exp := a >> 23
	shift := 126 - exp
	if exp == 0 || shift > 24 {
		return sign
	}
	m := a&0x7fffff | 0x800000
	h, rem, half := m>>shift, m&(1<<shift-1), uint32(1)<<(shift-1)
	if rem > half || rem == half && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

package zoo

import (
	"math"
	"testing"
)

// float16Value decodes a binary16 encoding exactly; it is the reference the
// encoder is checked against.
func float16Value(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp := int(h>>10) & 0x1f
	mant := float64(h & 0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(mant, -24)
	case 0x1f:
		if mant != 0 {
			return math.NaN()
		}
		return sign * math.Inf(1)
	}
	return sign * math.Ldexp(1024+mant, exp-25)
}

// TestFloat16RoundTrip encodes every finite and infinite half value, and
// every midpoint between neighbours, which float32 holds exactly: a half has
// an 11-bit significand, a midpoint needs 12 and float32 has 24.
func TestFloat16RoundTrip(t *testing.T) {
	for h := range 1 << 16 {
		h := uint16(h)
		v := float16Value(h)
		if math.IsNaN(v) {
			if got := float16Bits(float32(v)); got&0x7c00 != 0x7c00 || got&0x3ff == 0 {
				t.Errorf("float16Bits(NaN) = %#04x, want a NaN", got)
			}
			continue
		}
		if got := float16Bits(float32(v)); got != h {
			t.Fatalf("float16Bits(%g) = %#04x, want %#04x", v, got, h)
		}
		if h&0x7fff >= 0x7bff { // the largest finite half and infinity have no finite upper neighbour
			continue
		}
		next := h + 1
		mid := float32((v + float16Value(next)) / 2)
		even := h
		if h&1 == 1 {
			even = next
		}
		if got := float16Bits(mid); got != even {
			t.Errorf("float16Bits(%g), midway between %#04x and %#04x = %#04x, want the even one %#04x", mid, h, next, got, even)
		}
		away := float32(math.Copysign(math.Inf(1), float64(mid)))
		if got := float16Bits(math.Nextafter32(mid, away)); got != next {
			t.Errorf("float16Bits(just past %g) = %#04x, want %#04x", mid, got, next)
		}
		if got := float16Bits(math.Nextafter32(mid, 0)); got != h {
			t.Errorf("float16Bits(just short of %g) = %#04x, want %#04x", mid, got, h)
		}
	}
}

func TestFloat16Edges(t *testing.T) {
	tests := []struct {
		in   float32
		want uint16
	}{
		{65504, 0x7bff},
		{65519.99, 0x7bff},
		{65520, 0x7c00}, // the midpoint to the next (non-existent) binade rounds to even: infinity
		{1e10, 0x7c00},
		{-1e10, 0xfc00},
		{float32(math.Inf(-1)), 0xfc00},
		{0x1p-24, 0x0001},   // smallest subnormal
		{0x1p-25, 0x0000},   // half of it ties to even zero
		{0x1.8p-25, 0x0001}, // three quarters rounds up
		{0x1p-30, 0x0000},
		{-0x1p-30, 0x8000},
		{math.SmallestNonzeroFloat32, 0x0000},
		{0x1.ff8p-15, 0x03ff}, // largest subnormal
		{0x1.ffcp-15, 0x0400}, // plus half a unit ties to the even smallest normal
		{1, 0x3c00},
		{-2, 0xc000},
		{0.1, 0x2e66},
	}
	for _, tt := range tests {
		if got := float16Bits(tt.in); got != tt.want {
			t.Errorf("float16Bits(%g) = %#04x, want %#04x", tt.in, got, tt.want)
		}
	}
}

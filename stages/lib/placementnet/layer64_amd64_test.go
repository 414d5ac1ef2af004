package placementnet

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestLayer64Kernels runs the AVX2 kernel and the Go one on the same
// random chunks (zeros, negative zeros, NaN and large inputs among them)
// and requires the same outputs: the same sums to the bit, but for the
// sign of a zero (the Go loop skips a zero input, the AVX2 one adds its
// ±0 product), which == does not tell apart, and neither can any later
// product or sum.
func TestLayer64Kernels(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 kernel on this machine: forward runs the Go one")
	}
	r := rand.New(rand.NewPCG(7, 7))
	for trial := range 2000 {
		x, w, bias := randomChunk(r, 1+r.IntN(80), 8, 1)
		if trial%100 == 0 {
			x[r.IntN(len(x))] = float32(math.NaN())
		}
		var a, b [lanes]float32
		layer64AVX2(&a, &bias, x, w)
		layer64Go(&b, &bias, x, w)
		sameOutputs(t, trial, "AVX2", &a, &b, func(a, b float32) bool { return a == b })
	}
}

// TestLayer64SparseKernel runs the AVX2 kernel that skips zero inputs and
// the Go one on the same random chunks of 64 to 256 inputs, about half of
// them ±0 as after ReLU (NaN and large ones among the rest), and requires
// the same outputs to the bit: both add the rows of the inputs that are
// not ±0, in order.
func TestLayer64SparseKernel(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 kernel on this machine: forward runs the Go one")
	}
	r := rand.New(rand.NewPCG(8, 8))
	for trial := range 2000 {
		x, w, bias := randomChunk(r, lanes*(1+r.IntN(4)), 10, 4)
		switch trial % 100 {
		case 0:
			x[r.IntN(len(x))] = float32(math.NaN())
		case 1:
			clear(x) // no input to add: the biases through ReLU
		case 2:
			for i := range x {
				x[i] = 1 // every bit of the mask set
			}
		}
		var a, b [lanes]float32
		layer64SparseAVX2(&a, &bias, x, w)
		layer64Go(&b, &bias, x, w)
		sameOutputs(t, trial, "sparse AVX2", &a, &b, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) })
	}
}

// randomChunk makes in inputs, their weights and a chunk's biases: of
// every `of` inputs about zeros are +0, one −0, one large and the rest
// normal.
func randomChunk(r *rand.Rand, in, of, zeros int) (x, w []float32, bias [lanes]float32) {
	x, w = make([]float32, in), make([]float32, lanes*in)
	for i := range x {
		switch v := r.IntN(of); {
		case v < zeros:
			x[i] = 0
		case v == zeros:
			x[i] = float32(math.Copysign(0, -1))
		case v == zeros+1:
			x[i] = float32(r.NormFloat64() * 1e6)
		default:
			x[i] = float32(r.NormFloat64())
		}
	}
	for i := range w {
		w[i] = float32(r.NormFloat64() / 8)
	}
	for j := range bias {
		bias[j] = float32(r.NormFloat64())
	}
	return x, w, bias
}

// sameOutputs fails the test at the first output where a kernel's (a)
// and Go's (b) differ by same, NaN matching NaN.
func sameOutputs(t *testing.T, trial int, kernel string, a, b *[lanes]float32, same func(a, b float32) bool) {
	t.Helper()
	for j := range a {
		if !same(a[j], b[j]) && !(math.IsNaN(float64(a[j])) && math.IsNaN(float64(b[j]))) {
			t.Fatalf("trial %d, output %d: %s %v (%08x), Go %v (%08x)", trial, j, kernel, a[j], math.Float32bits(a[j]), b[j], math.Float32bits(b[j]))
		}
	}
}

// TestDot64Kernels: the output layer's sum over a chunk is the same to the
// bit in AVX2 and in Go, on random chunks with zeros, large values and
// now and then a NaN.
func TestDot64Kernels(t *testing.T) {
	if !hasAVX2 {
		t.Skip("no AVX2 kernel on this machine: forward runs the Go one")
	}
	r := rand.New(rand.NewPCG(9, 9))
	for trial := range 5000 {
		var x, w [lanes]float32
		for j := range x {
			switch r.IntN(6) {
			case 0:
				x[j] = 0
			case 1:
				x[j] = float32(r.NormFloat64() * 1e6)
			default:
				x[j] = float32(r.ExpFloat64())
			}
			w[j] = float32(r.NormFloat64())
		}
		if trial%500 == 0 {
			x[r.IntN(lanes)] = float32(math.NaN())
		}
		a, b := dot64AVX2(&x, &w), dot64Go(&x, &w)
		if math.Float32bits(a) != math.Float32bits(b) && !(math.IsNaN(float64(a)) && math.IsNaN(float64(b))) {
			t.Fatalf("trial %d: AVX2 %v (%08x), Go %v (%08x)", trial, a, math.Float32bits(a), b, math.Float32bits(b))
		}
	}
}

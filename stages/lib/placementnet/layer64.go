package placementnet

// lanes is how many outputs of a hidden layer layer64 computes at once: a
// hidden layer's outputs are computed in chunks of 64, the width the
// train stage gives them, padded with outputs of zero weight and bias.
const lanes = 64

// layer64Go sets h to ReLU(b + Σ_i x[i]·W_i), b the chunk's 64 biases, W_i
// row i of w (w[64·i:][:64]): each product rounded to float32 before it is
// added, the inputs in order. The float32 conversion forbids the compiler
// to fuse the multiply and the add, which would round once instead of
// twice: with it, this loop and the AVX2 one make the same sums on every
// machine, and the same outputs (but for the sign of a zero, which no
// later product or sum can tell).
//
// It skips an input of ±0, which changes no sum but the sign of a zero:
// the weights are finite, so the product is ±0. Here that saves about
// half of the second layer, whose inputs ReLU zeroed. The AVX2 kernels
// do both: layer64AVX2, for the first layer, multiplies every input,
// where a branch per input costs more than it saves; layer64SparseAVX2,
// for the later ones, skips the zeros by a mask of the nonzero inputs
// (BenchmarkForward: 190 to 155 ns a point).
func layer64Go(h, b *[lanes]float32, x []float32, w []float32) {
	*h = *b
	w = w[:lanes*len(x)]
	for i, a := range x {
		if a == 0 {
			continue
		}
		r := (*[lanes]float32)(w[lanes*i:])
		for j := range h {
			h[j] += float32(a * r[j])
		}
	}
	for j, v := range h {
		// The builtin compiles to MINSS and MAXSS, not a branch, which
		// about half the outputs would mispredict.
		h[j] = max(v, 0)
	}
}

// dot64Go is the output layer's sum over a chunk of 64 inputs, Σ x[j]·w[j],
// in the order the AVX2 kernel makes it: eight lanes, lane l summing
// x[8c+l]·w[8c+l] for c = 0 to 7, each product rounded before it is
// added; then ((l0+l4) + (l2+l6)) + ((l1+l5) + (l3+l7)).
func dot64Go(x, w *[lanes]float32) float32 {
	var l [8]float32
	for j := range l {
		l[j] = float32(x[j] * w[j])
	}
	for c := 8; c < lanes; c += 8 {
		for j := range l {
			l[j] += float32(x[c+j] * w[c+j])
		}
	}
	return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]))
}

package placementnet

// lanes is how many outputs of a hidden layer layer64 computes at once: a
// hidden layer's outputs are computed in chunks of 64, the width the
// train stage gives them, padded with outputs of zero weight and bias.
const lanes = 64

// layer64Go sets h, which holds 64 biases, to ReLU(h + Σ_i x[i]·W_i), W_i
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
func layer64Go(h *[lanes]float32, x []float32, w []float32) {
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

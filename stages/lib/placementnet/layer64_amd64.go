package placementnet

import "golang.org/x/sys/cpu"

// layer64AVX2 is layer64Go in AVX2 (layer64_amd64.s).
//
//go:noescape
func layer64AVX2(h, b *[lanes]float32, x []float32, w []float32)

// layer64SparseAVX2 is layer64AVX2 skipping the inputs of ±0, for len(x)
// a multiple of 64 (layer64_amd64.s).
//
//go:noescape
func layer64SparseAVX2(h, b *[lanes]float32, x []float32, w []float32)

// dot64AVX2 is dot64Go in AVX2 (layer64_amd64.s).
//
//go:noescape
func dot64AVX2(x, w *[lanes]float32) float32

// hasAVX2 chooses the kernels forward runs; the tests turn it off to run
// the Go ones on the same machine.
var hasAVX2 = cpu.X86.HasAVX2

// layer64 computes a chunk of a hidden layer as layer64Go does, in AVX2
// where the CPU has it.
func layer64(h, b *[lanes]float32, x []float32, w []float32) {
	if !hasAVX2 {
		layer64Go(h, b, x, w)
		return
	}
	if len(w) < lanes*len(x) {
		panic("placementnet: layer64: fewer weights than inputs")
	}
	layer64AVX2(h, b, x, w)
}

// layer64Sparse is layer64 for inputs that are mostly zero, a hidden
// layer's after the first: the AVX2 kernel adds only the rows of the
// inputs that are not ±0, as layer64Go does, where it has the inputs in
// blocks of 64 (a previous layer's padded width always is).
func layer64Sparse(h, b *[lanes]float32, x []float32, w []float32) {
	if !hasAVX2 || len(x)%lanes != 0 {
		layer64(h, b, x, w)
		return
	}
	if len(w) < lanes*len(x) {
		panic("placementnet: layer64: fewer weights than inputs")
	}
	layer64SparseAVX2(h, b, x, w)
}

// dot64 is the output layer's sum over a chunk, as dot64Go makes it, in
// AVX2 where the CPU has it.
func dot64(x, w *[lanes]float32) float32 {
	if !hasAVX2 {
		return dot64Go(x, w)
	}
	return dot64AVX2(x, w)
}

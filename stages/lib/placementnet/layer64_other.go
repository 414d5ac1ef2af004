//go:build !amd64

package placementnet

// hasAVX2 is false: there is no AVX2 kernel on this architecture.
var hasAVX2 = false

// layer64 computes a chunk of a hidden layer: layer64Go, on this
// architecture.
func layer64(h, b *[lanes]float32, x []float32, w []float32) { layer64Go(h, b, x, w) }

// layer64Sparse computes a chunk of a hidden layer whose inputs are mostly
// zero: layer64Go, which skips them, on this architecture.
func layer64Sparse(h, b *[lanes]float32, x []float32, w []float32) { layer64Go(h, b, x, w) }

// dot64 is the output layer's sum over a chunk: dot64Go, on this
// architecture.
func dot64(x, w *[lanes]float32) float32 { return dot64Go(x, w) }

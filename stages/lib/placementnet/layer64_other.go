//go:build !amd64

package placementnet

// hasAVX2 is false: there is no AVX2 kernel on this architecture.
var hasAVX2 = false

// layer64 computes a chunk of a hidden layer: layer64Go, on this
// architecture.
func layer64(h *[lanes]float32, x []float32, w []float32) { layer64Go(h, x, w) }

// layer64Sparse computes a chunk of a hidden layer whose inputs are mostly
// zero: layer64Go, which skips them, on this architecture.
func layer64Sparse(h *[lanes]float32, x []float32, w []float32) { layer64Go(h, x, w) }

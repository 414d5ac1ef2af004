package placementnet

import "golang.org/x/sys/cpu"

// layer64AVX2 is layer64Go in AVX2 (layer64_amd64.s).
//
//go:noescape
func layer64AVX2(h *[lanes]float32, x []float32, w []float32)

// hasAVX2 chooses the kernel layer64 runs; the tests turn it off to run
// the Go one on the same machine.
var hasAVX2 = cpu.X86.HasAVX2

// layer64 computes a chunk of a hidden layer as layer64Go does, in AVX2
// where the CPU has it.
func layer64(h *[lanes]float32, x []float32, w []float32) {
	if !hasAVX2 {
		layer64Go(h, x, w)
		return
	}
	if len(w) < lanes*len(x) {
		panic("placementnet: layer64: fewer weights than inputs")
	}
	layer64AVX2(h, x, w)
}

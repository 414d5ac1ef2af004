// Package nodeprof times each node of an ONNX model with onnxruntime's own
// profiler (ort.SessionOptions.ProfilePrefix, ort.ReadTrace) and maps the
// optimised graph's kernels back to the file's nodes (opcost.NodeTimes),
// what package opcost learns its per-operator costs from. It is apart from
// opcost because it needs onnxruntime, through cgo, and the command line,
// which predicts with opcost, links no C library.
//
// A fused kernel's time goes to the heaviest node it absorbed, and the
// nodes it absorbed ran none (attribute); a kernel that names no node of
// the file (a layout change) goes to the node whose kernel ran before it.
package nodeprof

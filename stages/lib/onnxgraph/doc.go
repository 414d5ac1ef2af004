// Package onnxgraph reads an ONNX model and derives from its graph alone
// what mlsched's catalog holds of a model (package catalog): its input and
// output, the batch axis, the parameters, the FLOPs and the activation
// bytes of one sample. The profile stage uses it on the model files users
// name in profile.models; its tests check that on the zoo's graphs it gives
// exactly the catalog's built-in figures.
//
// # Passes
//
// Parse reads the file and checks it (a graph, an operator set, weights
// stored in the file and as long as their dimensions say). Infer walks the
// nodes in order at one batch size, inferring every tensor's element type
// and shape, and returns each node's figures: multiply-adds, FLOPs, bytes
// read and written, parameter bytes, whether the node is folded (all its
// inputs constant: computed once when the model loads) and whether its
// outputs count as activations. Summarize runs it at batch 1, 2 and 4:
// one sample's figures are the growth from one to two, and must grow in
// proportion to the batch. A per-operator latency model (nn-Meter: Zhang
// et al., "nn-Meter: Towards Accurate Latency Prediction of Deep-Learning
// Model Inference on Diverse Edge Devices", MobiSys 2021) can take each
// pass's nodes as they are.
//
// Shapes that depend on values, a Reshape's target, a Pad's widths, a
// Resize's scales, are read from initializers and constants and followed
// through the operators exporters compute them with (Shape, Gather,
// Unsqueeze, Concat, Slice, Cast, arithmetic, Where): torch.onnx.export
// writes x.view(x.size(0), -1) so. A shape computed from the input's data
// rather than its shape (NonZero, a reshape by a tensor's values) cannot be
// known before a run, and is refused.
//
// # Counting
//
// FLOPs follow the catalog's convention, the published one: a multiply-add
// of a matrix operator (Conv, ConvTranspose, Gemm, MatMul, attention built
// from MatMul) is 2 FLOPs, and nothing else counts toward a model's
// FLOPsPerSample. Each node's own FLOPs also count the element-wise work,
// for per-operator models: one operation per output element for an
// element-wise function, four for softmax, five per element for a
// normalisation, one per input element for a reduction or a global
// pooling, one per window element per output for a pooling, none for data
// movement.
//
// Activation bytes sum the outputs of every node that runs, at fp32, except
// views (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout), shape
// reads (Shape, Size), and element-wise operators with at most one input
// that changes from run to run: a bias add, a scale, an activation
// function, softmax, an inference batch norm, which runtimes fuse into the
// producer or run in place. Element-wise operators of two changing tensors
// (a residual add, GELU's product) count, as do convolutions, matrix
// products, pooling, normalisation and data movement (Transpose, Gather,
// Concat, Pad, Slice).
//
// Parameters are the elements of the floating-point initializers; their
// element type gives the model's precision (fp32 or fp16). Integer
// initializers are shapes and indices; weights written as Constant nodes
// rather than initializers are not counted as parameters.
//
// # Refusals
//
// An operator the analysis does not know (Operators lists the ones it
// does), one of another domain than ONNX's own, or a model-local function
// is refused, naming the node: without its output's shape every node after
// it is unknown too, so counting it as zero FLOPs would silently drop not
// one node but the rest of the graph. Models are also refused with no
// dynamic input axis or several (unless the config names the batch axis,
// and then the others must be fixed), more than one input or output, an
// input of another type than float32, weights in an external file or of
// another type than fp32 and fp16, and a node whose inputs do not fit its
// operator (a reshape that fixes the batch size is the common one). Each
// error wraps ErrNotONNX, ErrUnsupported, ErrBatchAxis or ErrShape, and a
// node's is a *NodeError.
package onnxgraph

// Package opcost predicts a model's latency from its graph, before it has
// ever run: the kernel-level approach of nn-Meter (Zhang et al., "nn-Meter:
// Towards Accurate Latency Prediction of Deep-Learning Model Inference on
// Diverse Edge Devices", MobiSys 2021). Package nodeprof times each node
// of a model with onnxruntime's own profiler; a cost model learned from
// those times predicts each node of another model from its shapes, and
// the model's latency as the sum of its nodes plus a per-run overhead.
//
// # Kernels and nodes
//
// The profile times the graph as the real runs execute it, optimised at
// onnxruntime's highest level, since that is the latency to predict; a
// graph run unoptimised is another program (ResNet-18 at batch 4 takes a
// third longer, a MobileNet-style CNN four times as long). The optimised
// graph's kernels are mapped back to the file's nodes by name (nodeprof's
// attribution): a fused kernel's time goes to the heaviest node it
// absorbed, and the absorbed element-wise nodes cost nothing, which is
// what a cost model should learn of a Relu after a Conv. Profiling the
// graph unoptimised instead maps every kernel to its node but predicts
// worse (docs/benchmarks.md, "A model never run").
//
// # The cost model
//
// Fit learns, per operator and thread count, a kernel's time as a power
// law of its FLOPs and its bytes moved (least squares on logs, over the
// nodes that ran a kernel), and the share of the operator's nodes that ran
// none, after each operator before it: onnxruntime fuses a Relu into the
// Conv before it but not into a Transpose. A node's expected cost is its
// kernel's times the chance that it runs one. The nodes' sum is then
// calibrated to plain runs' latencies in log space, which holds the
// executor's per-run work and undoes the profiler's inflation of small
// kernels (Model.Calibration). LeaveOneModelOut scores it as the train
// stage scores its predictor: each model held out in turn, fitted on the
// others.
//
// The package links no C library: the command line predicts with it
// (mlsched predict), built without cgo; the profiling, which needs
// onnxruntime, is package nodeprof's.
package opcost

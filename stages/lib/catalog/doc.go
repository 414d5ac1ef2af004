// Package catalog describes the neural networks mlsched profiles and
// schedules: the zoo's four (a small MLP, ResNet-18, ResNet-50 and
// ViT-Ti/16, Zoo), and any a user brings as an ONNX file, whose figures
// package onnxgraph derives from the graph under the same conventions.
//
// The figures are architectural facts, not measurements: parameter count,
// forward FLOPs per sample, fp32 input and activation bytes per sample and
// fp32 weight bytes, and the input's and output's names and shapes. They
// let the generate stage give every synthetic job a memory need, a task
// size and a roofline arithmetic intensity, the schedule stage admit jobs
// to memory, and the predictor learn across models. How fast a model
// actually runs on a machine is measured by the profile stage and never
// read from here.
//
// The profile stage writes the catalog of the models it profiles to its
// models.parquet (File, Read); every stage after it reads that, so that a
// user's model is treated as the zoo's are.
//
// # Derivation
//
// Each zoo model is described once as a sequence of layers (arch.go) and
// every figure is counted from that description, so the numbers cannot
// drift apart; package onnxgraph's analysis of the graphs package zoo builds
// gives the same figures (its tests check that):
//
//   - Params counts the parameters of the inference graph: conv and linear
//     weights and biases, layer-norm scale and shift, class token and
//     position embedding. The ResNets' batch norms are folded into their
//     convolutions, as inference runtimes do, leaving one bias per channel
//     where the reference model trains two parameters (γ and β); running
//     statistics are buffers, not parameters. Params plus the folded
//     channels equals the published trainable counts exactly:
//     torchvision's resnet18 (11,689,512, of which 4,800 folded) and
//     resnet50 (25,557,032, of which 26,560 folded), and timm's
//     vit_tiny_patch16_224 (5,717,416, none folded).
//   - FLOPsPerSample counts each multiply-add of a convolution, a linear layer
//     or an attention matrix product as 2 FLOPs, the usual convention. A bias
//     add takes the place of an output's first addition, so it is inside that
//     count; the other element-wise work (batch norm, ReLU, GELU, softmax,
//     layer norm, residual adds, pooling) is not counted, as in the published
//     figures. Halved, the totals match the multiply-add counts usually quoted
//     as "GFLOPs": 1.81 G for ResNet-18 and 4.09 G for ResNet-50
//     (torchvision), and 1.25 G for ViT-Ti/16 against the 1.3 G the DeiT
//     paper reports for DeiT-Ti. The MLP's 9,600 FLOPs are exact:
//     2 × (10·64 + 64·64 + 64·1).
//   - ActivationBytesPerSample sums the fp32 size of every tensor an inference
//     forward pass produces, assuming batch norm is folded into the preceding
//     convolution and element-wise operators of one changing tensor (ReLU,
//     a bias add, softmax) run in place, as inference runtimes do, and views
//     (reshapes) copy nothing: the outputs of convolutions, linear layers,
//     pooling, normalisation, data movement (transposes, gathers, pads) and
//     element-wise operators of two changing tensors (residual adds). It is
//     the footprint without buffer reuse, an upper bound on what a runtime
//     keeps live, and a lower bound on the bytes the pass writes.
//   - InputBytesPerSample is the fp32 size of one input sample; WeightBytes is
//     4 × Params.
package catalog

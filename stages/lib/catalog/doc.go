// Package catalog describes the four neural networks mlsched profiles and
// schedules: a small MLP, ResNet-18, ResNet-50 and ViT-Ti/16.
//
// The figures here are architectural facts, derived from each network's
// layer list rather than measured: parameter count, forward FLOPs per sample,
// fp32 input and activation bytes per sample and fp32 weight bytes. They let
// the generate stage give every synthetic job a memory need, a task size and
// a roofline arithmetic intensity. How fast a model actually runs on a
// machine is measured by the profile stage and never read from here.
//
// # Derivation
//
// Each model is described once as a sequence of layers (arch.go) and every
// figure is counted from that description, so the numbers cannot drift apart:
//
//   - Params counts trainable parameters only (conv and linear weights and
//     biases, batch-norm and layer-norm scale and shift, class token and
//     position embedding); batch-norm running statistics are buffers, not
//     parameters. The counts equal the published ones exactly: torchvision's
//     resnet18 (11,689,512) and resnet50 (25,557,032) and timm's
//     vit_tiny_patch16_224 (5,717,416).
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
//     convolution and ReLU/GELU run in place (as inference runtimes do): the
//     outputs of convolutions, linear layers, pooling, residual adds, layer
//     norms and attention scores. It is the footprint without buffer reuse, an
//     upper bound on what a runtime keeps live, and a lower bound on the bytes
//     the pass writes.
//   - InputBytesPerSample is the fp32 size of one input sample; WeightBytes is
//     4 × Params.
package catalog

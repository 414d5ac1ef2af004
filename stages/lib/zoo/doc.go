// Package zoo builds the ONNX models mlsched profiles and schedules, in Go,
// with seeded random weights: the profile stage times them through
// onnxruntime, and the train stage exports its placement network with the
// same Graph builder. The architectures are the catalog's (stages/lib/catalog, Zoo);
// Names lists them in its order.
//
// # Models
//
//   - mlp: the placement network's shape, 10 → 64 → 64 → 1 with ReLU, ReLU
//     and a sigmoid, each layer a Gemm with nn.Linear's layout.
//   - resnet18, resnet50: torchvision's resnet18 and resnet50 (v1.5, stride
//     in the 3×3 convolution) as inference runtimes see them: every batch
//     norm folded into its convolution as a bias, ReLU, a 3×3/2 max pool,
//     residual Adds, GlobalAveragePool, Flatten and a Gemm to 1000 classes.
//   - vit: ViT-Ti/16 (timm's vit_tiny_patch16_224): a 16×16/16 patch
//     convolution to 192 channels, a class token and a position embedding
//     (added with Pad and Add so that shapes stay static, see vit.go), 12
//     pre-norm blocks of LayerNormalization, 3-head self-attention,
//     LayerNormalization and a 768-wide MLP whose GELU is built from Erf, a
//     final LayerNormalization and a Gemm head on the class token.
//
// Every model has one input, "input", and one output, "output", both fp32,
// with a symbolic batch dimension "N": input [N, 10] and output [N, 1] for
// the MLP, input [N, 3, 224, 224] and output [N, 1000] for the others (the
// output is the logits, without softmax). Signature returns them, with
// Batch (-1) for N. MatMul builds the throughput probe Y = A·B instead: A an
// [n, n] input, B an [n, n] initializer, Y the [n, n] output.
//
// # IR and opset
//
// Models are written for ONNX IR version 8 and opset 17. These are the
// newest that the onnx 1.12 checker (Debian's python3-onnx, which the tests
// run) accepts, and onnxruntime 1.24 loads them. Opset 17 brings
// LayerNormalization; Gelu only arrives in opset 20, so GELU is written
// out as x·(1 + erf(x/√2))/2. Attention is plain MatMul and Softmax.
//
// # Weights and parameters
//
// Initializers are exactly the model's parameters: shapes, pads and scalars
// are Constant nodes. Each parameter tensor is drawn uniformly from its own
// PCG stream, seeded by Options.Seed and the tensor's name, so the same
// options give byte-identical models and a change to one layer leaves the
// others' weights alone. Scales follow the reference initializations
// (nn.Linear's ±1/√fan-in, timm's standard deviation of 0.02, layer norms at
// one and zero); ResNet convolutions use He scaling with each residual
// branch's last convolution shrunk as in Fixup, standing in for the batch
// norms a trained network has, so that activations stay near unit size.
// Parameters are named after the reference state dicts (layer1.0.conv1.weight,
// blocks.3.attn.qkv.bias).
//
// The parameter counts equal the catalog's, which counts the graph an
// inference runtime executes: where the reference model's batch norm has a
// scale γ and a shift β per channel, the folded graph keeps only the
// per-channel bias β − γμ/σ and multiplies γ/σ into the weights. Each
// folded bias carries a doc string saying so; with one more parameter per
// folded channel the counts are the reference models' trainable ones.
//
// # Precision
//
// An fp16 model (Options.Precision "fp16") stores every weight and constant
// as float16, the fp32 weights of the same seed rounded to nearest-even, and
// every operator between the casts is typed float16. Its interface stays
// fp32: a Cast to
// float16 follows the input, and a Cast back to float produces the output,
// so the profile stage feeds both precisions the same tensors. Whether, and
// how fast, onnxruntime's CPU provider runs it is for the profile stage to
// measure.
//
// Building is fast (ResNet-50, about 100 MB in fp32, takes a fraction of a
// second), so models are rebuilt when needed rather than stored.
package zoo

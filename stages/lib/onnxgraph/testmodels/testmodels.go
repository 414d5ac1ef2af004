// Package testmodels builds ONNX models that tests use as a user's own: not
// the zoo's architectures, built with the zoo's Graph builder and seeded
// weights, small enough to profile in milliseconds, and in the shapes
// exporters write (an unfolded batch norm, ReLU6 as Clip, a reshape
// computed from the input's shape as torch.onnx.export writes x.view(N, -1)).
package testmodels

import (
	"fmt"
	"math"

	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// Model is a built test model and what a test checks it against.
type Model struct {
	// Name is how tests name it in a config.
	Name string
	// ONNX is the serialized model.
	ONNX []byte
	// Input and Output are the shapes of one sample, without the batch
	// axis (first in both).
	Input, Output []int64
	// MACs are one sample's multiply-adds, counted by hand from the layers
	// below, and Params the parameters the graph holds.
	MACs, Params int64
}

// MobileNet is a depthwise-separable CNN in the style of MobileNet (Howard
// et al., 2017) on 3×32×32 inputs: a 3×3/2 convolution to 16 channels,
// then two blocks of a 3×3 depthwise convolution (the second of stride 2)
// and a 1×1 pointwise one, each followed by an unfolded batch norm and
// ReLU6 (Clip to [0, 6]), global average pooling and a Gemm to 10 classes.
func MobileNet(precision string, seed int64) (Model, error) {
	g, err := zoo.NewGraph("mobilenet", precision, seed)
	if err != nil {
		return Model{}, err
	}
	zero, six := g.Scalar(0), g.Scalar(6)
	relu6 := func(x string) string { return g.Op("Clip", x, zero, six) }
	var macs, params int64
	// conv adds a k×k convolution of in to out channels in groups, with a
	// bias, on a side×side input; it returns the output side.
	conv := func(x *string, name string, in, out, k, stride, groups, side int64) int64 {
		w := g.Uniform(name+".weight", []int64{out, in / groups, k, k}, 1/math.Sqrt(float64(in/groups*k*k)))
		b := g.Uniform(name+".bias", []int64{out}, 0.1)
		p := k / 2
		*x = g.Node("Conv", []string{*x, w, b}, zoo.AttrInts("kernel_shape", k, k), zoo.AttrInts("strides", stride, stride),
			zoo.AttrInts("pads", p, p, p, p), zoo.AttrInt("group", groups))
		o := (side+2*p-k)/stride + 1
		macs += o * o * out * (in / groups) * k * k
		params += out*(in/groups)*k*k + out
		return o
	}
	bn := func(x *string, name string, ch int64) {
		*x = g.Node("BatchNormalization", []string{*x, g.Fill(name+".weight", []int64{ch}, 1), g.Fill(name+".bias", []int64{ch}, 0),
			g.Fill(name+".running_mean", []int64{ch}, 0), g.Fill(name+".running_var", []int64{ch}, 1)}, zoo.AttrFloat("epsilon", 1e-5))
		*x = relu6(*x)
		params += 4 * ch
	}
	x := g.Input("input", []int64{zoo.Batch, 3, 32, 32})
	side := conv(&x, "stem", 3, 16, 3, 2, 1, 32)
	x = relu6(x)
	in := int64(16)
	for i, b := range []struct{ out, stride int64 }{{32, 1}, {64, 2}} {
		side = conv(&x, fmt.Sprintf("block%d.dw", i), in, in, 3, b.stride, in, side)
		bn(&x, fmt.Sprintf("block%d.dw_bn", i), in)
		side = conv(&x, fmt.Sprintf("block%d.pw", i), in, b.out, 1, 1, 1, side)
		bn(&x, fmt.Sprintf("block%d.pw_bn", i), b.out)
		in = b.out
	}
	x = g.Node("Flatten", []string{g.Op("GlobalAveragePool", x)}, zoo.AttrInt("axis", 1))
	w := g.Uniform("fc.weight", []int64{10, in}, 1/math.Sqrt(float64(in)))
	b := g.Uniform("fc.bias", []int64{10}, 1/math.Sqrt(float64(in)))
	g.Output("output", g.Node("Gemm", []string{x, w, b}, zoo.AttrInt("transB", 1)), []int64{zoo.Batch, 10})
	macs += in * 10
	params += 10*in + 10
	onnx, err := g.Bytes()
	return Model{Name: "mobilenet", ONNX: onnx, Input: []int64{3, 32, 32}, Output: []int64{10}, MACs: macs, Params: params}, err
}

// WideMLP is a perceptron of another shape than the zoo's: inputs of 4×8
// features flattened as torch.onnx.export writes x.view(x.size(0), -1)
// (Shape, Gather, Unsqueeze, Concat, Reshape), then 32 → 256 → 256 → 8 with
// MatMul and bias Adds, tanh between, and a softmax.
func WideMLP(precision string, seed int64) (Model, error) {
	g, err := zoo.NewGraph("widemlp", precision, seed)
	if err != nil {
		return Model{}, err
	}
	x := g.Input("features", []int64{zoo.Batch, 4, 8})
	n := g.Op("Unsqueeze", g.Node("Gather", []string{g.Op("Shape", x), g.Int64Scalar(0)}, zoo.AttrInt("axis", 0)), g.Int64s(0))
	x = g.Op("Reshape", x, g.Node("Concat", []string{n, g.Int64s(-1)}, zoo.AttrInt("axis", 0)))
	var macs, params int64
	widths := []int64{32, 256, 256, 8}
	for i := 1; i < len(widths); i++ {
		in, out := widths[i-1], widths[i]
		w := g.Uniform(fmt.Sprintf("fc%d.weight", i), []int64{in, out}, 1/math.Sqrt(float64(in)))
		b := g.Uniform(fmt.Sprintf("fc%d.bias", i), []int64{out}, 1/math.Sqrt(float64(in)))
		x = g.Op("Add", g.Op("MatMul", x, w), b)
		if i < len(widths)-1 {
			x = g.Op("Tanh", x)
		}
		macs += in * out
		params += in*out + out
	}
	g.Output("probs", g.Node("Softmax", []string{x}, zoo.AttrInt("axis", -1)), []int64{zoo.Batch, 8})
	onnx, err := g.Bytes()
	return Model{Name: "widemlp", ONNX: onnx, Input: []int64{4, 8}, Output: []int64{8}, MACs: macs, Params: params}, err
}

// Encoder dimensions: wider and deeper per token than the zoo's ViT-Ti
// (192 wide, 3 heads), on a shorter sequence.
const (
	encTokens = 64
	encDim    = 256
	encHeads  = 8
	encHead   = encDim / encHeads
	encHidden = 4 * encDim
	encDepth  = 4
	encClass  = 16
)

// Encoder is a post-norm transformer encoder in the style of BERT (Devlin
// et al., 2019), another shape of transformer than the zoo's pre-norm ViT:
// inputs of 64 tokens of 256 features, 4 layers of 8-head self-attention
// and a ReLU MLP of 1024, each added to its input and then layer-normed,
// and a Gemm to 16 classes on the first token.
func Encoder(precision string, seed int64) (Model, error) {
	g, err := zoo.NewGraph("encoder", precision, seed)
	if err != nil {
		return Model{}, err
	}
	var macs, params int64
	bound := 1 / math.Sqrt(encDim)
	linear := func(x, name string, in, out int64) string {
		w := g.Uniform(name+".weight", []int64{in, out}, bound)
		b := g.Uniform(name+".bias", []int64{out}, bound)
		macs += encTokens * in * out
		params += in*out + out
		return g.Op("Add", g.Op("MatMul", x, w), b)
	}
	norm := func(x, name string) string {
		params += 2 * encDim
		return g.Node("LayerNormalization", []string{x, g.Fill(name+".weight", []int64{encDim}, 1), g.Fill(name+".bias", []int64{encDim}, 0)},
			zoo.AttrInt("axis", -1), zoo.AttrFloat("epsilon", 1e-12))
	}
	x := g.Input("tokens", []int64{zoo.Batch, encTokens, encDim})
	for i := range encDepth {
		p := fmt.Sprintf("layer.%d.", i)
		h := g.Op("Reshape", linear(x, p+"qkv", encDim, 3*encDim), g.Int64s(0, encTokens, 3, encHeads, encHead))
		h = g.Node("Transpose", []string{h}, zoo.AttrInts("perm", 2, 0, 3, 1, 4))
		part := func(j int64) string { return g.Node("Gather", []string{h, g.Int64Scalar(j)}, zoo.AttrInt("axis", 0)) }
		k := g.Node("Transpose", []string{part(1)}, zoo.AttrInts("perm", 0, 1, 3, 2))
		scores := g.Op("Div", g.Op("MatMul", part(0), k), g.Scalar(float32(math.Sqrt(encHead))))
		a := g.Op("MatMul", g.Node("Softmax", []string{scores}, zoo.AttrInt("axis", -1)), part(2))
		macs += 2 * encTokens * encTokens * encDim
		a = g.Op("Reshape", g.Node("Transpose", []string{a}, zoo.AttrInts("perm", 0, 2, 1, 3)), g.Int64s(0, encTokens, encDim))
		x = norm(g.Op("Add", x, linear(a, p+"proj", encDim, encDim)), p+"norm1")
		h = linear(g.Op("Relu", linear(x, p+"fc1", encDim, encHidden)), p+"fc2", encHidden, encDim)
		x = norm(g.Op("Add", x, h), p+"norm2")
	}
	x = g.Node("Gather", []string{x, g.Int64Scalar(0)}, zoo.AttrInt("axis", 1))
	w := g.Uniform("head.weight", []int64{encClass, encDim}, bound)
	b := g.Uniform("head.bias", []int64{encClass}, bound)
	g.Output("logits", g.Node("Gemm", []string{x, w, b}, zoo.AttrInt("transB", 1)), []int64{zoo.Batch, encClass})
	macs += encDim * encClass
	params += encDim*encClass + encClass
	onnx, err := g.Bytes()
	return Model{Name: "encoder", ONNX: onnx, Input: []int64{encTokens, encDim}, Output: []int64{encClass}, MACs: macs, Params: params}, err
}

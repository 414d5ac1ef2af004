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

package zoo

import (
	"fmt"
	"math"
)

// foldedBatchNorm is the doc string of every convolution bias that stands
// for a folded batch norm. Folding y = γ(conv(x) − μ)/σ + β gives a
// convolution with weights scaled by γ/σ and bias β − γμ/σ, so the graph
// has one parameter per channel fewer than the reference model, which
// counts γ and β: the catalog's counts, and the tests, rely on this mark.
const foldedBatchNorm = "folded batch norm: bias β − γμ/σ; the scale γ/σ is folded into the convolution weight"

// resnet18 is torchvision's resnet18: four stages of two basic blocks.
func resnet18(g *Graph, x string) string { return resnet(g, x, [4]int{2, 2, 2, 2}, false) }

// resnet50 is torchvision's resnet50 (v1.5, stride in the 3×3 convolution):
// stages of 3, 4, 6 and 3 bottleneck blocks.
func resnet50(g *Graph, x string) string { return resnet(g, x, [4]int{3, 4, 6, 3}, true) }

// resnet builds a torchvision ResNet at inference: every convolution carries
// its folded batch norm as a bias, then come ReLU, max pooling, residual
// Adds, global average pooling, Flatten and a Gemm to 1000 classes.
// Parameters are named as in torchvision's state dict, a folded bias after
// the batch norm it replaces.
//
// There is no batch norm to renormalize random weights, so they are scaled
// to keep activations near unit size all the way through, as a trained
// network's are: He initialization (variance 2/fan-in) for convolutions
// followed by ReLU, and each residual branch's last convolution shrunk by
// √blocks so that the sum of all blocks' contributions stays bounded
// (as Fixup does). With plain He initialization every block adds as much
// as it receives, and ResNet-50's logits come out hundreds of times larger
// (rms about 250 against 0.6 for seed 1 and a standard normal input),
// nearer fp16's limit of 65504 than any trained network's.
func resnet(g *Graph, x string, blocks [4]int, bottleneck bool) string {
	total := 0
	for _, n := range blocks {
		total += n
	}
	c := resnetConv{g: g, branchGain: math.Sqrt2 / math.Sqrt(float64(total))}
	x = g.Op("Relu", c.conv(x, "conv1", "bn1", 3, 64, 7, 2, math.Sqrt2))
	x = g.Node("MaxPool", []string{x}, AttrInts("kernel_shape", 3, 3), AttrInts("strides", 2, 2), AttrInts("pads", 1, 1, 1, 1))
	in := int64(64)
	for stage, n := range blocks {
		width := int64(64) << stage
		for block := range n {
			stride := int64(1)
			if block == 0 && stage > 0 {
				stride = 2
			}
			prefix := fmt.Sprintf("layer%d.%d.", stage+1, block)
			if bottleneck {
				x, in = c.bottleneck(x, prefix, in, width, stride), 4*width
			} else {
				x, in = c.basic(x, prefix, in, width, stride), width
			}
		}
	}
	x = g.Op("GlobalAveragePool", x)
	x = g.Node("Flatten", []string{x}, AttrInt("axis", 1))
	return dense(g, x, "fc", in, 1000)
}

// resnetConv adds a ResNet's convolutions.
type resnetConv struct {
	g *Graph
	// branchGain scales the last convolution of each residual branch.
	branchGain float64
}

// basic is a basic block: two 3×3 convolutions and a shortcut.
func (c resnetConv) basic(x, prefix string, in, width, stride int64) string {
	y := c.g.Op("Relu", c.conv(x, prefix+"conv1", prefix+"bn1", in, width, 3, stride, math.Sqrt2))
	y = c.conv(y, prefix+"conv2", prefix+"bn2", width, width, 3, 1, c.branchGain)
	return c.g.Op("Relu", c.g.Op("Add", y, c.shortcut(x, prefix, in, width, stride)))
}

// bottleneck is a bottleneck block: 1×1 down to width, 3×3 at width (with
// the stride), 1×1 up to 4·width, and a shortcut.
func (c resnetConv) bottleneck(x, prefix string, in, width, stride int64) string {
	y := c.g.Op("Relu", c.conv(x, prefix+"conv1", prefix+"bn1", in, width, 1, 1, math.Sqrt2))
	y = c.g.Op("Relu", c.conv(y, prefix+"conv2", prefix+"bn2", width, width, 3, stride, math.Sqrt2))
	y = c.conv(y, prefix+"conv3", prefix+"bn3", width, 4*width, 1, 1, c.branchGain)
	return c.g.Op("Relu", c.g.Op("Add", y, c.shortcut(x, prefix, in, 4*width, stride)))
}

// shortcut is the identity, or a strided 1×1 projection where the block
// changes the side or the channel count. The projection has unit gain: its
// input is the block's input, not a ReLU of a fresh convolution.
func (c resnetConv) shortcut(x, prefix string, in, out, stride int64) string {
	if stride == 1 && in == out {
		return x
	}
	return c.conv(x, prefix+"downsample.0", prefix+"downsample.1", in, out, 1, stride, 1)
}

// conv adds a k×k convolution with "same" padding for odd k and the bias of
// its folded batch norm. The weights are uniform with standard deviation
// gain/√fan-in; the bias is uniform in ±1/√fan-in, PyTorch's default for a
// convolution bias.
func (c resnetConv) conv(x, conv, bn string, in, out, k, stride int64, gain float64) string {
	fanIn := float64(in * k * k)
	w := c.g.Uniform(conv+".weight", []int64{out, in, k, k}, gain*math.Sqrt(3/fanIn))
	b := c.g.Uniform(bn+".bias", []int64{out}, 1/math.Sqrt(fanIn))
	c.g.Describe(b, foldedBatchNorm)
	p := k / 2
	return c.g.Node("Conv", []string{x, w, b},
		AttrInts("kernel_shape", k, k), AttrInts("strides", stride, stride), AttrInts("pads", p, p, p, p))
}

package zoo

import (
	"fmt"
	"math"
)

// ViT-Ti/16 (timm's vit_tiny_patch16_224, DeiT-Ti) dimensions.
const (
	vitPatch   = 16
	vitSide    = 224 / vitPatch // patches along each side
	vitPatches = vitSide * vitSide
	vitTokens  = vitPatches + 1 // and the class token
	vitDim     = 192
	vitHeads   = 3
	vitHeadDim = vitDim / vitHeads
	vitHidden  = 4 * vitDim
	vitDepth   = 12
)

// vitStd is the standard deviation timm initializes ViT weights with
// (truncated normal 0.02); the zoo draws them uniformly with that deviation.
const vitStd = 0.02

// vitTiny builds ViT-Ti/16 at 224×224 as timm does: a 16×16/16 patch
// convolution to 192 channels, a class token, a learned position embedding,
// 12 pre-norm blocks of 3-head self-attention and a GELU MLP of 768, a
// final layer norm and a linear head on the class token. Parameters are
// named as in timm's state dict; the weights of linear layers applied with
// MatMul are stored transposed, [in, out].
func vitTiny(g *Graph, x string) string {
	w := g.Uniform("patch_embed.proj.weight", []int64{vitDim, 3, vitPatch, vitPatch}, vitStd*math.Sqrt(3))
	b := g.Uniform("patch_embed.proj.bias", []int64{vitDim}, vitStd*math.Sqrt(3))
	x = g.Node("Conv", []string{x, w, b}, AttrInts("kernel_shape", vitPatch, vitPatch), AttrInts("strides", vitPatch, vitPatch))
	x = g.Op("Reshape", x, g.Int64s(0, vitDim, vitPatches)) // 0 keeps the batch dimension
	x = g.Node("Transpose", []string{x}, AttrInts("perm", 0, 2, 1))

	// Concat cannot broadcast the class token over the batch, and an Expand
	// to the runtime batch size (Shape, Gather, Concat) is opaque to
	// onnx's static shape inference, which would lose the symbolic batch
	// dimension N. Instead, padding the patches with a zero token in front
	// and adding pos_embed plus the class token padded to all positions
	// computes the same sum with shapes known statically.
	x = g.Op("Pad", x, g.Int64s(0, 1, 0, 0, 0, 0))
	cls := g.Uniform("cls_token", []int64{1, 1, vitDim}, vitStd*math.Sqrt(3))
	pos := g.Uniform("pos_embed", []int64{1, vitTokens, vitDim}, vitStd*math.Sqrt(3))
	x = g.Op("Add", x, g.Op("Add", pos, g.Op("Pad", cls, g.Int64s(0, 0, 0, 0, vitPatches, 0))))

	for i := range vitDepth {
		x = vitBlock(g, x, fmt.Sprintf("blocks.%d.", i))
	}
	x = layerNorm(g, x, "norm")
	x = g.Node("Gather", []string{x, g.Int64Scalar(0)}, AttrInt("axis", 1)) // the class token: [N, dim]
	w = g.Uniform("head.weight", []int64{1000, vitDim}, vitStd*math.Sqrt(3))
	b = g.Uniform("head.bias", []int64{1000}, vitStd*math.Sqrt(3))
	return g.Node("Gemm", []string{x, w, b}, AttrInt("transB", 1))
}

// vitBlock is one pre-norm transformer block on [N, tokens, dim].
func vitBlock(g *Graph, x, prefix string) string {
	// Attention, as timm computes it: one qkv projection split into heads,
	// softmax(q·kᵀ/√head_dim)·v, heads concatenated and projected. The scale
	// is applied to q, which is cheaper than to the scores and equal.
	h := linear(g, layerNorm(g, x, prefix+"norm1"), prefix+"attn.qkv", vitDim, 3*vitDim)
	h = g.Op("Reshape", h, g.Int64s(0, vitTokens, 3, vitHeads, vitHeadDim))
	h = g.Node("Transpose", []string{h}, AttrInts("perm", 2, 0, 3, 1, 4)) // [3, N, heads, tokens, head_dim]
	part := func(i int64) string { return g.Node("Gather", []string{h, g.Int64Scalar(i)}, AttrInt("axis", 0)) }
	q := g.Op("Mul", part(0), g.Scalar(float32(1/math.Sqrt(vitHeadDim))))
	k := g.Node("Transpose", []string{part(1)}, AttrInts("perm", 0, 1, 3, 2))
	scores := g.Node("Softmax", []string{g.Op("MatMul", q, k)}, AttrInt("axis", -1))
	a := g.Op("MatMul", scores, part(2))
	a = g.Node("Transpose", []string{a}, AttrInts("perm", 0, 2, 1, 3)) // [N, tokens, heads, head_dim]
	a = g.Op("Reshape", a, g.Int64s(0, vitTokens, vitDim))
	x = g.Op("Add", x, linear(g, a, prefix+"attn.proj", vitDim, vitDim))

	h = linear(g, layerNorm(g, x, prefix+"norm2"), prefix+"mlp.fc1", vitDim, vitHidden)
	h = linear(g, gelu(g, h), prefix+"mlp.fc2", vitHidden, vitDim)
	return g.Op("Add", x, h)
}

// linear adds a fully connected layer on the last axis of a tensor of any
// rank: MatMul with a [in, out] weight, then the bias.
func linear(g *Graph, x, name string, in, out int64) string {
	w := g.Uniform(name+".weight", []int64{in, out}, vitStd*math.Sqrt(3))
	b := g.Uniform(name+".bias", []int64{out}, vitStd*math.Sqrt(3))
	return g.Op("Add", g.Op("MatMul", x, w), b)
}

// layerNorm normalizes the last axis with timm's ε of 1e-6; its scale and
// shift start at one and zero, as in timm.
func layerNorm(g *Graph, x, name string) string {
	scale := g.Fill(name+".weight", []int64{vitDim}, 1)
	shift := g.Fill(name+".bias", []int64{vitDim}, 0)
	return g.Node("LayerNormalization", []string{x, scale, shift}, AttrInt("axis", -1), AttrFloat("epsilon", 1e-6))
}

// gelu is the exact GELU, x·(1 + erf(x/√2))/2, from opset-17 operators.
func gelu(g *Graph, x string) string {
	e := g.Op("Erf", g.Op("Mul", x, g.Scalar(float32(1/math.Sqrt2))))
	return g.Op("Mul", g.Op("Mul", x, g.Op("Add", e, g.Scalar(1))), g.Scalar(0.5))
}

package onnxgraph

import (
	"fmt"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// window is the geometry of a convolution's or a pooling's sliding window
// over the spatial axes: kernel, strides, dilations, and the padding at
// each end, as the node's attributes give them.
type window struct {
	kernel, strides, dilations, padBegin, padEnd []int64
	autoPad                                      string
	ceil                                         bool
}

// windowOf reads a node's window attributes for d spatial axes; kernel
// is the kernel the weights imply (nil for a pooling, whose kernel_shape
// is required).
func windowOf(c *nodeCtx, d int, kernel []int64) (window, error) {
	w := window{kernel: kernel, autoPad: c.attrString("auto_pad", "NOTSET"), ceil: c.attrInt("ceil_mode", 0) != 0}
	if ks, ok := c.attrInts("kernel_shape"); ok {
		if kernel != nil && !slices.Equal(ks, kernel) {
			return w, fmt.Errorf("%w: kernel_shape %v differs from the weights' %v", ErrShape, ks, kernel)
		}
		w.kernel = ks
	}
	if len(w.kernel) != d {
		return w, fmt.Errorf("%w: a kernel of %d axes (kernel_shape %v) for %d spatial axes", ErrShape, len(w.kernel), w.kernel, d)
	}
	ones := func(name string) ([]int64, error) {
		v, ok := c.attrInts(name)
		if !ok {
			v = make([]int64, d)
			for i := range v {
				v[i] = 1
			}
		}
		if len(v) != d || slices.ContainsFunc(v, func(x int64) bool { return x < 1 }) {
			return nil, fmt.Errorf("%w: %s %v: want %d values of at least 1", ErrShape, name, v, d)
		}
		return v, nil
	}
	var err error
	if w.strides, err = ones("strides"); err != nil {
		return w, err
	}
	if w.dilations, err = ones("dilations"); err != nil {
		return w, err
	}
	pads, ok := c.attrInts("pads")
	if !ok {
		pads = make([]int64, 2*d)
	}
	if len(pads) != 2*d || slices.ContainsFunc(pads, func(x int64) bool { return x < 0 }) {
		return w, fmt.Errorf("%w: pads %v: want %d values of at least 0", ErrShape, pads, 2*d)
	}
	w.padBegin, w.padEnd = pads[:d], pads[d:]
	switch w.autoPad {
	case "NOTSET", "VALID", "SAME_UPPER", "SAME_LOWER":
	default:
		return w, fmt.Errorf("%w: auto_pad %q", ErrShape, w.autoPad)
	}
	return w, nil
}

// out is the output size of spatial axis i over an input of size in, as
// onnxruntime computes it (pool_attributes.h and conv_attributes.h).
func (w window) out(i int, in int64) (int64, error) {
	k := w.dilations[i]*(w.kernel[i]-1) + 1
	s := w.strides[i]
	var n int64
	switch w.autoPad {
	case "SAME_UPPER", "SAME_LOWER":
		n = (in + s - 1) / s
	case "VALID":
		n = (in-k)/s + 1
	default:
		span := in + w.padBegin[i] + w.padEnd[i] - k
		if span < 0 {
			return 0, fmt.Errorf("%w: a window of %d over %d (padded by %d+%d) on spatial axis %d", ErrShape, k, in, w.padBegin[i], w.padEnd[i], i)
		}
		n = span/s + 1
		if w.ceil && span%s != 0 {
			n++
			// The last window must start inside the input or its
			// leading padding (onnxruntime and PyTorch drop it).
			if (n-1)*s >= in+w.padBegin[i] {
				n--
			}
		}
	}
	if n < 1 {
		return 0, fmt.Errorf("%w: a window of %d with stride %d leaves no output over %d on spatial axis %d", ErrShape, k, s, in, i)
	}
	return n, nil
}

// outShape is the output shape [batch, channels, out...] of the window
// slid over the spatial axes spatial: a convolution's and a pooling's.
func (w window) outShape(batch, channels int64, spatial []int64) ([]int64, error) {
	shape := []int64{batch, channels}
	for i, in := range spatial {
		n, err := w.out(i, in)
		if err != nil {
			return nil, err
		}
		shape = append(shape, n)
	}
	return shape, nil
}

// inferConv infers a convolution: X [N, C, spatial...] and W [M, C/group,
// kernel...] give [N, M, out...], each output element C/group·∏kernel
// multiply-adds.
func inferConv(c *nodeCtx) error {
	x, wt := c.in[0], c.in[1]
	if len(x.shape) < 3 || len(wt.shape) != len(x.shape) {
		return fmt.Errorf("%w: input %s and weight %s: want [N C spatial...] and [M C/group kernel...] of equal rank",
			ErrShape, shapeString(x.shape), shapeString(wt.shape))
	}
	group := c.attrInt("group", 1)
	cin, m := x.shape[1], wt.shape[0]
	if group < 1 || cin != wt.shape[1]*group || m%group != 0 {
		return fmt.Errorf("%w: input %s has %d channels; weight %s with group %d wants %d", ErrShape,
			shapeString(x.shape), cin, shapeString(wt.shape), group, wt.shape[1]*group)
	}
	d := len(x.shape) - 2
	w, err := windowOf(c, d, wt.shape[2:])
	if err != nil {
		return err
	}
	shape, err := w.outShape(x.shape[0], m, x.shape[2:])
	if err != nil {
		return err
	}
	c.set(0, x.elem, shape, nil)
	c.macs = elements(shape) * wt.shape[1] * elements(wt.shape[2:])
	return nil
}

// inferConvTranspose infers a transposed convolution: X [N, C, spatial...]
// and W [C, M/group, kernel...] give [N, M, out...]; every input element
// scatters into M/group·∏kernel outputs, a multiply-add each.
func inferConvTranspose(c *nodeCtx) error {
	x, wt := c.in[0], c.in[1]
	if len(x.shape) < 3 || len(wt.shape) != len(x.shape) || x.shape[1] != wt.shape[0] {
		return fmt.Errorf("%w: input %s and weight %s: want [N C spatial...] and [C M/group kernel...] of equal rank",
			ErrShape, shapeString(x.shape), shapeString(wt.shape))
	}
	group := c.attrInt("group", 1)
	if group < 1 || x.shape[1]%group != 0 {
		return fmt.Errorf("%w: group %d does not divide the %d input channels", ErrShape, group, x.shape[1])
	}
	d := len(x.shape) - 2
	w, err := windowOf(c, d, wt.shape[2:])
	if err != nil {
		return err
	}
	outPad, ok := c.attrInts("output_padding")
	if !ok {
		outPad = make([]int64, d)
	}
	given, hasShape := c.attrInts("output_shape")
	if len(outPad) != d || hasShape && len(given) != d && len(given) != d+2 {
		return fmt.Errorf("%w: output_padding %v or output_shape %v for %d spatial axes", ErrShape, outPad, given, d)
	}
	shape := []int64{x.shape[0], wt.shape[1] * group}
	for i := range d {
		in := x.shape[2+i]
		var n int64
		switch {
		case hasShape:
			n = given[len(given)-d+i]
		case w.autoPad == "SAME_UPPER" || w.autoPad == "SAME_LOWER":
			n = in * w.strides[i]
		default:
			n = w.strides[i]*(in-1) + outPad[i] + w.dilations[i]*(w.kernel[i]-1) + 1 - w.padBegin[i] - w.padEnd[i]
		}
		if n < 1 {
			return fmt.Errorf("%w: spatial axis %d would have size %d", ErrShape, i, n)
		}
		shape = append(shape, n)
	}
	c.set(0, x.elem, shape, nil)
	c.macs = elements(x.shape) * wt.shape[1] * elements(wt.shape[2:])
	return nil
}

// inferGemm infers Y = op(A)·op(B) + C for 2-D A and B: M·N·K
// multiply-adds (the bias add is inside them, as the published counts
// take it).
func inferGemm(c *nodeCtx) error {
	a, b := c.in[0].shape, c.in[1].shape
	if len(a) != 2 || len(b) != 2 {
		return fmt.Errorf("%w: A %s and B %s must be matrices", ErrShape, shapeString(a), shapeString(b))
	}
	m, k := a[0], a[1]
	if c.attrInt("transA", 0) != 0 {
		m, k = k, m
	}
	k2, n := b[0], b[1]
	if c.attrInt("transB", 0) != 0 {
		k2, n = n, k2
	}
	if k != k2 {
		return fmt.Errorf("%w: A %s (transA %d) and B %s (transB %d) disagree on the inner dimension, %d against %d",
			ErrShape, shapeString(a), c.attrInt("transA", 0), shapeString(b), c.attrInt("transB", 0), k, k2)
	}
	if bias := c.input(2); bias != nil {
		if _, err := broadcastShapes([]int64{m, n}, bias.shape); err != nil {
			return err
		}
	}
	c.set(0, c.in[0].elem, []int64{m, n}, nil)
	c.macs = m * n * k
	return nil
}

// inferMatMul infers numpy's matmul: the last two axes multiply, the
// leading ones broadcast, and a 1-D operand gains and then loses an axis.
func inferMatMul(c *nodeCtx) error {
	a, b := slices.Clone(c.in[0].shape), slices.Clone(c.in[1].shape)
	if len(a) == 0 || len(b) == 0 {
		return fmt.Errorf("%w: MatMul of a scalar", ErrShape)
	}
	vecA, vecB := len(a) == 1, len(b) == 1
	if vecA {
		a = []int64{1, a[0]}
	}
	if vecB {
		b = []int64{b[0], 1}
	}
	m, k, k2, n := a[len(a)-2], a[len(a)-1], b[len(b)-2], b[len(b)-1]
	if k != k2 {
		return fmt.Errorf("%w: %s times %s: inner dimensions %d and %d differ", ErrShape, shapeString(c.in[0].shape), shapeString(c.in[1].shape), k, k2)
	}
	lead, err := broadcastShapes(a[:len(a)-2], b[:len(b)-2])
	if err != nil {
		return err
	}
	shape := slices.Clone(lead)
	if !vecA {
		shape = append(shape, m)
	}
	if !vecB {
		shape = append(shape, n)
	}
	c.set(0, c.in[0].elem, shape, nil)
	c.macs = elements(lead) * m * n * k
	return nil
}

// inferPool infers a max, average or Lp pooling: one comparison or
// addition per kernel element of each output.
func inferPool(c *nodeCtx) error {
	x := c.in[0]
	if len(x.shape) < 3 {
		return fmt.Errorf("%w: input %s: want [N C spatial...]", ErrShape, shapeString(x.shape))
	}
	d := len(x.shape) - 2
	w, err := windowOf(c, d, nil)
	if err != nil {
		return err
	}
	shape, err := w.outShape(x.shape[0], x.shape[1], x.shape[2:])
	if err != nil {
		return err
	}
	c.set(0, x.elem, shape, nil)
	c.set(1, onnxpb.TensorProto_INT64, shape, nil) // MaxPool's indices
	c.flops = elements(shape) * elements(w.kernel)
	return nil
}

// inferGlobalPool pools each channel's whole spatial extent to one value.
func inferGlobalPool(c *nodeCtx) error {
	x := c.in[0]
	if len(x.shape) < 3 {
		return fmt.Errorf("%w: input %s: want [N C spatial...]", ErrShape, shapeString(x.shape))
	}
	shape := reduced(x.shape, axesFrom(2, len(x.shape)), true)
	c.set(0, x.elem, shape, nil)
	c.flops = elements(x.shape)
	return nil
}

// inferLayerNorm infers a layer normalization over the axes from axis on,
// with its optional mean and inverse standard deviation outputs.
func inferLayerNorm(c *nodeCtx) error {
	x := c.in[0]
	a, err := axis(c.attrInt("axis", -1), len(x.shape))
	if err != nil {
		return err
	}
	stats := reduced(x.shape, axesFrom(a, len(x.shape)), true)
	c.set(0, x.elem, x.shape, nil)
	c.set(1, onnxpb.TensorProto_FLOAT, stats, nil)
	c.set(2, onnxpb.TensorProto_FLOAT, stats, nil)
	c.flops = normOps * elements(x.shape)
	return nil
}

// inferBatchNorm infers an inference batch normalization: a scale and a
// shift per channel, which runtimes fold into the convolution before it.
func inferBatchNorm(c *nodeCtx) error {
	x := c.in[0]
	if len(x.shape) < 2 {
		return fmt.Errorf("%w: input %s has no channel axis", ErrShape, shapeString(x.shape))
	}
	if c.attrInt("training_mode", 0) != 0 {
		return fmt.Errorf("%w: training_mode is set; mlsched counts inference graphs", ErrUnsupported)
	}
	c.set(0, x.elem, x.shape, nil)
	for i := 1; i < len(c.out); i++ {
		c.set(i, x.elem, x.shape[1:2], nil)
	}
	c.flops = 2 * elements(x.shape)
	return nil
}

// reduceAxesInput is the opset from which each reduction takes its axes
// as an input rather than an attribute.
func reduceAxesInput(op string) int64 {
	if op == "ReduceSum" {
		return 13
	}
	return 18
}

// inferReduce infers a reduction over its axes (all of them when none are
// given, unless noop_with_empty_axes), keeping them as 1s or dropping
// them: one operation per input element.
func inferReduce(c *nodeCtx) error {
	x := c.in[0]
	var as []int64
	if c.opset >= reduceAxesInput(c.n.GetOpType()) {
		if c.input(1) != nil {
			v, err := c.ints(1)
			if err != nil {
				return err
			}
			as = v
		}
	} else {
		as, _ = c.attrInts("axes")
	}
	if len(as) == 0 {
		if c.attrInt("noop_with_empty_axes", 0) != 0 {
			c.set(0, x.elem, x.shape, nil)
			return nil
		}
		for i := range x.shape {
			as = append(as, int64(i))
		}
	}
	ax, err := axes(as, len(x.shape))
	if err != nil {
		return err
	}
	shape := reduced(x.shape, ax, c.attrInt("keepdims", 1) != 0)
	c.set(0, x.elem, shape, nil)
	c.flops = elements(x.shape)
	return nil
}

// inferArgReduce infers ArgMax and ArgMin along one axis.
func inferArgReduce(c *nodeCtx) error {
	x := c.in[0]
	a, err := axis(c.attrInt("axis", 0), len(x.shape))
	if err != nil {
		return err
	}
	shape := reduced(x.shape, []int{a}, c.attrInt("keepdims", 1) != 0)
	c.set(0, onnxpb.TensorProto_INT64, shape, nil)
	c.flops = elements(x.shape)
	return nil
}

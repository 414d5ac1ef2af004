package onnxgraph

import (
	"fmt"
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// inferReshape infers a Reshape to its shape input's values: 0 keeps the
// input's size on that axis (unless allowzero), -1 takes what is left.
func inferReshape(c *nodeCtx) error {
	x := c.in[0]
	target, err := c.ints(1)
	if err != nil {
		return err
	}
	allowZero := c.attrInt("allowzero", 0) != 0
	shape := make([]int64, len(target))
	infer := -1
	for i, d := range target {
		switch {
		case d == 0 && !allowZero:
			if i >= len(x.shape) {
				return fmt.Errorf("%w: shape %v copies axis %d of an input of rank %d", ErrShape, target, i, len(x.shape))
			}
			shape[i] = x.shape[i]
		case d == -1:
			if infer >= 0 {
				return fmt.Errorf("%w: shape %v has two -1s", ErrShape, target)
			}
			infer = i
		case d < 0:
			return fmt.Errorf("%w: shape %v has a negative size", ErrShape, target)
		default:
			shape[i] = d
		}
	}
	n := elements(x.shape)
	if infer >= 0 {
		shape[infer] = 1
		rest := elements(shape)
		if rest == 0 || n%rest != 0 {
			return fmt.Errorf("%w: cannot reshape %s (%d elements) to %v; the graph may fix a size that depends on the batch "+
				"(export with a dynamic batch axis, so that reshapes follow it)", ErrShape, shapeString(x.shape), n, target)
		}
		shape[infer] = n / rest
	}
	if elements(shape) != n {
		return fmt.Errorf("%w: cannot reshape %s (%d elements) to %v; the graph may fix a size that depends on the batch "+
			"(export with a dynamic batch axis, so that reshapes follow it)", ErrShape, shapeString(x.shape), n, target)
	}
	c.set(0, x.elem, shape, x.values())
	return nil
}

// inferFlatten infers a Flatten to a matrix at axis.
func inferFlatten(c *nodeCtx) error {
	x := c.in[0]
	a := c.attrInt("axis", 1)
	if a < 0 {
		a += int64(len(x.shape))
	}
	if a < 0 || a > int64(len(x.shape)) {
		return fmt.Errorf("%w: axis %d of a tensor of rank %d", ErrShape, c.attrInt("axis", 1), len(x.shape))
	}
	c.set(0, x.elem, []int64{elements(x.shape[:a]), elements(x.shape[a:])}, x.values())
	return nil
}

// inferSqueeze drops the given axes of size 1, or every axis of size 1.
func inferSqueeze(c *nodeCtx) error {
	x := c.in[0]
	as, given, err := c.optionalInts(1, "axes")
	if err != nil {
		return err
	}
	var shape []int64
	if !given {
		for _, d := range x.shape {
			if d != 1 {
				shape = append(shape, d)
			}
		}
	} else {
		ax, err := axes(as, len(x.shape))
		if err != nil {
			return err
		}
		for i, d := range x.shape {
			if !slices.Contains(ax, i) {
				shape = append(shape, d)
			} else if d != 1 {
				return fmt.Errorf("%w: axis %d of %s has size %d, not 1", ErrShape, i, shapeString(x.shape), d)
			}
		}
	}
	c.set(0, x.elem, shape, x.values())
	return nil
}

// inferUnsqueeze inserts axes of size 1 at the given places of the output.
func inferUnsqueeze(c *nodeCtx) error {
	x := c.in[0]
	as, given, err := c.optionalInts(1, "axes")
	if err != nil {
		return err
	}
	if !given {
		return fmt.Errorf("%w: no axes", ErrShape)
	}
	r := len(x.shape) + len(as)
	ax, err := axes(as, r)
	if err != nil {
		return err
	}
	shape := make([]int64, 0, r)
	next := 0
	for i := range r {
		if slices.Contains(ax, i) {
			shape = append(shape, 1)
		} else {
			shape = append(shape, x.shape[next])
			next++
		}
	}
	c.set(0, x.elem, shape, x.values())
	return nil
}

// inferTranspose permutes the axes (reverses them by default).
func inferTranspose(c *nodeCtx) error {
	x := c.in[0]
	perm, ok := c.attrInts("perm")
	if !ok {
		for i := len(x.shape) - 1; i >= 0; i-- {
			perm = append(perm, int64(i))
		}
	}
	if len(perm) != len(x.shape) {
		return fmt.Errorf("%w: perm %v for a tensor of rank %d", ErrShape, perm, len(x.shape))
	}
	shape := make([]int64, len(perm))
	seen := make([]bool, len(perm))
	for i, p := range perm {
		if p < 0 || p >= int64(len(perm)) || seen[p] {
			return fmt.Errorf("%w: perm %v is not a permutation", ErrShape, perm)
		}
		seen[p] = true
		shape[i] = x.shape[p]
	}
	var val *value
	if len(x.shape) <= 1 {
		val = x.values()
	}
	c.set(0, x.elem, shape, val)
	return nil
}

// inferConcat joins its inputs along axis; their other sizes must agree.
func inferConcat(c *nodeCtx) error {
	first := c.in[0]
	a, err := axis(c.attrInt("axis", 0), len(first.shape))
	if err != nil {
		return err
	}
	shape := slices.Clone(first.shape)
	shape[a] = 0
	var ints []int64
	var floats []float64
	known := len(first.shape) == 1
	for i, t := range c.in {
		if t == nil {
			continue
		}
		if len(t.shape) != len(shape) {
			return fmt.Errorf("%w: input %d %s and input 0 %s differ in rank", ErrShape, i, shapeString(t.shape), shapeString(first.shape))
		}
		for j, d := range t.shape {
			if j != a && d != shape[j] {
				return fmt.Errorf("%w: input %d %s and input 0 %s differ on axis %d", ErrShape, i, shapeString(t.shape), shapeString(first.shape), j)
			}
		}
		shape[a] += t.shape[a]
		if v := t.values(); known && v.known() {
			if v.ints != nil {
				ints = append(ints, v.ints...)
			} else {
				floats = append(floats, v.floats...)
			}
		} else {
			known = false
		}
	}
	var val *value
	switch {
	case known && floats == nil && int64(len(ints)) == shape[0]:
		val = &value{ints: ints}
	case known && ints == nil && int64(len(floats)) == shape[0]:
		val = &value{floats: floats}
	}
	c.set(0, first.elem, shape, val)
	return nil
}

// inferSplit cuts its input along axis into the sizes given, or into
// equal parts, one per output.
func inferSplit(c *nodeCtx) error {
	x := c.in[0]
	a, err := axis(c.attrInt("axis", 0), len(x.shape))
	if err != nil {
		return err
	}
	sizes, given, err := c.optionalInts(1, "split")
	if err != nil {
		return err
	}
	d := x.shape[a]
	if !given {
		parts := int64(len(c.out))
		if n := c.attrInt("num_outputs", 0); n > 0 {
			parts = n
		}
		if parts < 1 {
			return fmt.Errorf("%w: no outputs", ErrShape)
		}
		chunk := (d + parts - 1) / parts
		for i := range parts {
			sizes = append(sizes, max(0, min(chunk, d-i*chunk)))
		}
	}
	var sum int64
	for _, s := range sizes {
		sum += s
	}
	if len(sizes) != len(c.out) || sum != d {
		return fmt.Errorf("%w: split %v of axis %d (size %d) into %d outputs", ErrShape, sizes, a, d, len(c.out))
	}
	for i, s := range sizes {
		shape := slices.Clone(x.shape)
		shape[a] = s
		c.set(i, x.elem, shape, nil)
	}
	return nil
}

// inferSlice infers a Slice as onnxruntime clamps its starts and ends.
func inferSlice(c *nodeCtx) error {
	x := c.in[0]
	var starts, ends, as, steps []int64
	if c.opset < 10 {
		starts, _ = c.attrInts("starts")
		ends, _ = c.attrInts("ends")
		as, _ = c.attrInts("axes")
	} else {
		var err error
		if starts, err = c.ints(1); err != nil {
			return err
		}
		if ends, err = c.ints(2); err != nil {
			return err
		}
		if c.input(3) != nil {
			if as, err = c.ints(3); err != nil {
				return err
			}
		}
		if c.input(4) != nil {
			if steps, err = c.ints(4); err != nil {
				return err
			}
		}
	}
	if as == nil {
		for i := range starts {
			as = append(as, int64(i))
		}
	}
	if steps == nil {
		for range starts {
			steps = append(steps, 1)
		}
	}
	if len(ends) != len(starts) || len(as) != len(starts) || len(steps) != len(starts) {
		return fmt.Errorf("%w: starts %v, ends %v, axes %v and steps %v differ in length", ErrShape, starts, ends, as, steps)
	}
	ax, err := axes(as, len(x.shape))
	if err != nil {
		return err
	}
	shape := slices.Clone(x.shape)
	first, stride := int64(0), int64(1)
	for j, a := range ax {
		dim, st := x.shape[a], steps[j]
		start, end := starts[j], ends[j]
		if start < 0 {
			start += dim
		}
		if end < 0 {
			end += dim
		}
		var n int64
		switch {
		case st > 0:
			start, end = min(max(start, 0), dim), min(max(end, 0), dim)
			n = max(0, (end-start+st-1)/st)
		case st < 0:
			start, end = min(max(start, 0), dim-1), min(max(end, -1), dim-1)
			n = max(0, (start-end-st-1)/-st)
		default:
			return fmt.Errorf("%w: step 0 on axis %d", ErrShape, a)
		}
		shape[a] = n
		if len(x.shape) == 1 {
			first, stride = start, st
		}
	}
	var val *value
	if v := x.values(); v.known() && len(x.shape) == 1 {
		n := int(shape[0])
		if v.ints != nil {
			val = &value{ints: make([]int64, n)}
			for i := range n {
				val.ints[i] = v.ints[first+int64(i)*stride]
			}
		} else {
			val = &value{floats: make([]float64, n)}
			for i := range n {
				val.floats[i] = v.floats[first+int64(i)*stride]
			}
		}
	}
	c.set(0, x.elem, shape, val)
	return nil
}

// inferGather takes the indexed slices of data along axis.
func inferGather(c *nodeCtx) error {
	x, idx := c.in[0], c.in[1]
	a, err := axis(c.attrInt("axis", 0), len(x.shape))
	if err != nil {
		return err
	}
	shape := slices.Concat(x.shape[:a], idx.shape, x.shape[a+1:])
	var val *value
	if xv, iv := x.values(), idx.values(); xv.known() && iv.known() && len(x.shape) == 1 {
		is := iv.asInts()
		out := make([]float64, len(is))
		for i, j := range is {
			if j < 0 {
				j += x.shape[0]
			}
			if j < 0 || j >= x.shape[0] {
				return fmt.Errorf("%w: index %d is out of range for %s", ErrShape, is[i], shapeString(x.shape))
			}
			out[i] = xv.at(int(j))
		}
		val = &value{floats: out}
		if xv.ints != nil {
			val = &value{ints: (&value{floats: out}).asInts()}
		}
	}
	c.set(0, x.elem, shape, val)
	return nil
}

// inferGatherElements takes elements of data at the indices' positions.
func inferGatherElements(c *nodeCtx) error {
	if len(c.in[0].shape) != len(c.in[1].shape) {
		return fmt.Errorf("%w: data %s and indices %s differ in rank", ErrShape, shapeString(c.in[0].shape), shapeString(c.in[1].shape))
	}
	c.set(0, c.in[0].elem, c.in[1].shape, nil)
	return nil
}

// inferPad widens each axis by its pads at either end.
func inferPad(c *nodeCtx) error {
	x := c.in[0]
	pads, given, err := c.optionalInts(1, "pads")
	if err != nil {
		return err
	}
	if !given {
		return fmt.Errorf("%w: no pads", ErrShape)
	}
	ax := make([]int, len(x.shape))
	for i := range ax {
		ax[i] = i
	}
	if c.input(3) != nil {
		as, err := c.ints(3)
		if err != nil {
			return err
		}
		if ax, err = axes(as, len(x.shape)); err != nil {
			return err
		}
	}
	if len(pads) != 2*len(ax) {
		return fmt.Errorf("%w: %d pads for %d axes", ErrShape, len(pads), len(ax))
	}
	shape := slices.Clone(x.shape)
	for j, a := range ax {
		shape[a] += pads[j] + pads[len(ax)+j]
		if shape[a] < 0 {
			return fmt.Errorf("%w: pads %v leave axis %d of %s negative", ErrShape, pads, a, shapeString(x.shape))
		}
	}
	c.set(0, x.elem, shape, nil)
	return nil
}

// inferExpand broadcasts its input to a shape.
func inferExpand(c *nodeCtx) error {
	to, err := c.ints(1)
	if err != nil {
		return err
	}
	shape, err := broadcastShapes(c.in[0].shape, to)
	if err != nil {
		return err
	}
	c.set(0, c.in[0].elem, shape, nil)
	return nil
}

// inferTile repeats its input along each axis.
func inferTile(c *nodeCtx) error {
	x := c.in[0]
	reps, err := c.ints(1)
	if err != nil {
		return err
	}
	if len(reps) != len(x.shape) {
		return fmt.Errorf("%w: %d repeats for rank %d", ErrShape, len(reps), len(x.shape))
	}
	shape := slices.Clone(x.shape)
	for i, r := range reps {
		if r < 0 {
			return fmt.Errorf("%w: repeats %v", ErrShape, reps)
		}
		shape[i] *= r
	}
	c.set(0, x.elem, shape, nil)
	return nil
}

// inferResize infers Resize (and the older Upsample) from its sizes, or
// its scales (each output size the floor of input size × scale).
func inferResize(c *nodeCtx) error {
	x := c.in[0]
	var scales []float64
	var sizes []int64
	scaleInput := 2
	if c.n.GetOpType() == "Upsample" || c.opset < 11 {
		scaleInput = 1
	}
	if t := c.input(scaleInput); t != nil {
		v := t.values()
		if !v.known() {
			return fmt.Errorf("%w: scales are computed at run time", ErrUnsupported)
		}
		scales = v.asFloats()
	} else if fs, ok := c.attrFloats("scales"); ok {
		for _, f := range fs {
			scales = append(scales, float64(f))
		}
	}
	if scaleInput == 2 && c.input(3) != nil {
		v, err := c.ints(3)
		if err != nil {
			return err
		}
		sizes = v
	}
	ax := make([]int, len(x.shape))
	for i := range ax {
		ax[i] = i
	}
	if as, ok := c.attrInts("axes"); ok {
		var err error
		if ax, err = axes(as, len(x.shape)); err != nil {
			return err
		}
	}
	shape := slices.Clone(x.shape)
	switch {
	case len(sizes) > 0:
		if len(sizes) != len(ax) {
			return fmt.Errorf("%w: %d sizes for %d axes", ErrShape, len(sizes), len(ax))
		}
		for j, a := range ax {
			shape[a] = sizes[j]
		}
	case len(scales) > 0:
		if len(scales) != len(ax) {
			return fmt.Errorf("%w: %d scales for %d axes", ErrShape, len(scales), len(ax))
		}
		for j, a := range ax {
			if !(scales[j] > 0) {
				return fmt.Errorf("%w: scale %v", ErrShape, scales[j])
			}
			shape[a] = int64(math.Floor(float64(x.shape[a]) * scales[j]))
		}
	default:
		return fmt.Errorf("%w: neither scales nor sizes", ErrShape)
	}
	c.set(0, x.elem, shape, nil)
	c.flops = elements(shape)
	return nil
}

// inferDepthToSpace moves blocks of channels into space, or back.
func inferDepthToSpace(c *nodeCtx) error {
	x := c.in[0]
	b := c.attrInt("blocksize", 0)
	if len(x.shape) != 4 || b < 1 {
		return fmt.Errorf("%w: input %s with blocksize %d: want [N C H W] and a blocksize of at least 1", ErrShape, shapeString(x.shape), b)
	}
	n, ch, h, w := x.shape[0], x.shape[1], x.shape[2], x.shape[3]
	var shape []int64
	if c.n.GetOpType() == "DepthToSpace" {
		if ch%(b*b) != 0 {
			return fmt.Errorf("%w: %d channels are not a multiple of blocksize² %d", ErrShape, ch, b*b)
		}
		shape = []int64{n, ch / (b * b), h * b, w * b}
	} else {
		if h%b != 0 || w%b != 0 {
			return fmt.Errorf("%w: %d×%d is not a multiple of blocksize %d", ErrShape, h, w, b)
		}
		shape = []int64{n, ch * b * b, h / b, w / b}
	}
	c.set(0, x.elem, shape, nil)
	return nil
}

// inferTopK keeps the k largest (or smallest) along axis, with indices.
func inferTopK(c *nodeCtx) error {
	x := c.in[0]
	k := c.attrInt("k", 0)
	if c.input(1) != nil {
		v, err := c.ints(1)
		if err != nil {
			return err
		}
		if len(v) != 1 {
			return fmt.Errorf("%w: k holds %d values", ErrShape, len(v))
		}
		k = v[0]
	}
	a, err := axis(c.attrInt("axis", -1), len(x.shape))
	if err != nil {
		return err
	}
	if k < 0 || k > x.shape[a] {
		return fmt.Errorf("%w: k %d for axis %d of size %d", ErrShape, k, a, x.shape[a])
	}
	shape := slices.Clone(x.shape)
	shape[a] = k
	c.set(0, x.elem, shape, nil)
	c.set(1, onnxpb.TensorProto_INT64, shape, nil)
	c.flops = elements(x.shape)
	return nil
}

// inferShapeOp gives the input's shape (from start to end) as values.
func inferShapeOp(c *nodeCtx) error {
	s := c.in[0].shape
	r := int64(len(s))
	clamp := func(v int64) int64 {
		if v < 0 {
			v += r
		}
		return min(max(v, 0), r)
	}
	start, end := clamp(c.attrInt("start", 0)), clamp(c.attrInt("end", r))
	vals := slices.Clone(s[start:max(start, end)])
	if vals == nil {
		vals = []int64{}
	}
	c.set(0, onnxpb.TensorProto_INT64, []int64{int64(len(vals))}, &value{ints: vals})
	return nil
}

// inferSize gives the input's element count as a scalar value.
func inferSize(c *nodeCtx) error {
	c.set(0, onnxpb.TensorProto_INT64, []int64{}, &value{ints: []int64{elements(c.in[0].shape)}})
	return nil
}

// inferConstant reads a Constant node's value.
func inferConstant(c *nodeCtx) error {
	for _, a := range c.n.GetAttribute() {
		switch a.GetName() {
		case "value":
			t := a.GetT()
			if t == nil {
				return fmt.Errorf("%w: attribute value holds no tensor", ErrShape)
			}
			if err := checkStored(t); err != nil {
				return err
			}
			c.set(0, onnxpb.TensorProto_DataType(t.GetDataType()), t.GetDims(), valueOf(t))
		case "value_float":
			c.set(0, onnxpb.TensorProto_FLOAT, []int64{}, &value{floats: []float64{float64(a.GetF())}})
		case "value_floats":
			fs := make([]float64, len(a.GetFloats()))
			for i, f := range a.GetFloats() {
				fs[i] = float64(f)
			}
			c.set(0, onnxpb.TensorProto_FLOAT, []int64{int64(len(fs))}, &value{floats: fs})
		case "value_int":
			c.set(0, onnxpb.TensorProto_INT64, []int64{}, &value{ints: []int64{a.GetI()}})
		case "value_ints":
			c.set(0, onnxpb.TensorProto_INT64, []int64{int64(len(a.GetInts()))}, &value{ints: slices.Clone(a.GetInts())})
		default:
			return fmt.Errorf("%w: a constant given as %s", ErrUnsupported, a.GetName())
		}
		return nil
	}
	return fmt.Errorf("%w: the constant has no value", ErrShape)
}

// inferConstantOfShape makes a tensor of its shape input's values, filled
// with its value attribute (a float 0 by default).
func inferConstantOfShape(c *nodeCtx) error {
	shape, err := c.ints(0)
	if err != nil {
		return err
	}
	if slices.ContainsFunc(shape, func(d int64) bool { return d < 0 }) {
		return fmt.Errorf("%w: shape %v", ErrShape, shape)
	}
	elem, fill := onnxpb.TensorProto_FLOAT, 0.0
	if a := c.attr("value"); a != nil && a.GetT() != nil {
		t := a.GetT()
		if err := checkStored(t); err != nil {
			return err
		}
		elem = onnxpb.TensorProto_DataType(t.GetDataType())
		if v := valueOf(t); v.known() && v.len() == 1 {
			fill = v.at(0)
		}
	}
	var val *value
	if n := elements(shape); n <= maxValues {
		if isInt(elem) {
			val = &value{ints: make([]int64, n)}
			for i := range val.ints {
				val.ints[i] = int64(fill)
			}
		} else {
			val = &value{floats: make([]float64, n)}
			for i := range val.floats {
				val.floats[i] = fill
			}
		}
	}
	c.set(0, elem, slices.Clone(shape), val)
	return nil
}

// inferRange makes [start, limit) by delta.
func inferRange(c *nodeCtx) error {
	var v [3]*value
	for i := range v {
		if v[i] = c.in[i].values(); !v[i].known() || v[i].len() != 1 {
			return fmt.Errorf("%w: input %d (%s) is computed from data at run time", ErrUnsupported, i, c.n.GetInput()[i])
		}
	}
	start, limit, delta := v[0].at(0), v[1].at(0), v[2].at(0)
	if delta == 0 {
		return fmt.Errorf("%w: delta 0", ErrShape)
	}
	n := int64(max(0, math.Ceil((limit-start)/delta)))
	var val *value
	if n <= maxValues {
		fs := make([]float64, n)
		for i := range fs {
			fs[i] = start + float64(i)*delta
		}
		val = &value{floats: fs}
		if isInt(c.in[0].elem) {
			val = &value{ints: val.asInts()}
		}
	}
	c.set(0, c.in[0].elem, []int64{n}, val)
	return nil
}

package onnxgraph

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// opClass says how a node's outputs count toward the activation bytes.
type opClass int

const (
	// classCompute produces new tensors: counted unless folded.
	classCompute opClass = iota
	// classElementwise maps its inputs element by element: fused into
	// its producer or run in place when only one input changes per run
	// (a bias, a scale, an activation function), counted otherwise.
	classElementwise
	// classView changes how a tensor is indexed, not its data: never
	// counted.
	classView
	// classShape reads a tensor's shape, not its data: never counted.
	classShape
)

// op is one operator the analysis knows: how its outputs count, and how
// to infer them.
type op struct {
	class opClass
	infer func(c *nodeCtx) error
}

// ops is every operator the analysis can infer and count, by type: an
// explicit table rather than registration, so that the list is in one
// place.
var ops = map[string]op{
	// Matrix products: the multiply-adds the model's FLOPs count.
	"Conv":          {classCompute, needs(2, inferConv)},
	"ConvTranspose": {classCompute, needs(2, inferConvTranspose)},
	"Gemm":          {classCompute, needs(2, inferGemm)},
	"MatMul":        {classCompute, needs(2, inferMatMul)},

	// Pooling and normalisation.
	"MaxPool":                   {classCompute, needs(1, inferPool)},
	"AveragePool":               {classCompute, needs(1, inferPool)},
	"LpPool":                    {classCompute, needs(1, inferPool)},
	"GlobalAveragePool":         {classCompute, needs(1, inferGlobalPool)},
	"GlobalMaxPool":             {classCompute, needs(1, inferGlobalPool)},
	"GlobalLpPool":              {classCompute, needs(1, inferGlobalPool)},
	"LayerNormalization":        {classCompute, needs(1, inferLayerNorm)},
	"InstanceNormalization":     {classCompute, sameShape(normOps)},
	"GroupNormalization":        {classCompute, sameShape(normOps)},
	"LpNormalization":           {classCompute, sameShape(normOps)},
	"MeanVarianceNormalization": {classCompute, sameShape(normOps)},
	"LRN":                       {classCompute, sameShape(normOps)},
	"BatchNormalization":        {classElementwise, needs(5, inferBatchNorm)},

	// Reductions.
	"ReduceMean":      {classCompute, needs(1, inferReduce)},
	"ReduceSum":       {classCompute, needs(1, inferReduce)},
	"ReduceMax":       {classCompute, needs(1, inferReduce)},
	"ReduceMin":       {classCompute, needs(1, inferReduce)},
	"ReduceProd":      {classCompute, needs(1, inferReduce)},
	"ReduceL1":        {classCompute, needs(1, inferReduce)},
	"ReduceL2":        {classCompute, needs(1, inferReduce)},
	"ReduceSumSquare": {classCompute, needs(1, inferReduce)},
	"ReduceLogSum":    {classCompute, needs(1, inferReduce)},
	"ReduceLogSumExp": {classCompute, needs(1, inferReduce)},
	"ArgMax":          {classCompute, needs(1, inferArgReduce)},
	"ArgMin":          {classCompute, needs(1, inferArgReduce)},

	// Element-wise functions of one tensor.
	"Relu":            {classElementwise, unary(1)},
	"LeakyRelu":       {classElementwise, unary(1)},
	"Elu":             {classElementwise, unary(1)},
	"Selu":            {classElementwise, unary(1)},
	"Celu":            {classElementwise, unary(1)},
	"ThresholdedRelu": {classElementwise, unary(1)},
	"Sigmoid":         {classElementwise, unary(1)},
	"HardSigmoid":     {classElementwise, unary(1)},
	"HardSwish":       {classElementwise, unary(1)},
	"Tanh":            {classElementwise, unary(1)},
	"Erf":             {classElementwise, unary(1)},
	"Gelu":            {classElementwise, unary(1)},
	"Softplus":        {classElementwise, unary(1)},
	"Softsign":        {classElementwise, unary(1)},
	"Mish":            {classElementwise, unary(1)},
	"Exp":             {classElementwise, unary(1)},
	"Log":             {classElementwise, unary(1)},
	"Sqrt":            {classElementwise, unary(1)},
	"Reciprocal":      {classElementwise, unary(1)},
	"Neg":             {classElementwise, unary(1)},
	"Abs":             {classElementwise, unary(1)},
	"Floor":           {classElementwise, unary(1)},
	"Ceil":            {classElementwise, unary(1)},
	"Round":           {classElementwise, unary(1)},
	"Sign":            {classElementwise, unary(1)},
	"Sin":             {classElementwise, unary(1)},
	"Cos":             {classElementwise, unary(1)},
	"Not":             {classElementwise, unary(1)},
	"IsNaN":           {classElementwise, unary(1)},
	"IsInf":           {classElementwise, unary(1)},
	"Softmax":         {classElementwise, unary(softmaxOps)},
	"LogSoftmax":      {classElementwise, unary(softmaxOps)},
	"Hardmax":         {classElementwise, unary(1)},
	"Cast":            {classElementwise, needs(1, inferCast)},
	"CastLike":        {classElementwise, needs(1, inferCast)},
	"Clip":            {classElementwise, unary(1)},
	"CumSum":          {classCompute, unary(1)},
	"Trilu":           {classCompute, unary(0)},

	// Element-wise operators of several tensors, broadcast.
	"Add":            {classElementwise, broadcast},
	"Sub":            {classElementwise, broadcast},
	"Mul":            {classElementwise, broadcast},
	"Div":            {classElementwise, broadcast},
	"Pow":            {classElementwise, broadcast},
	"Mod":            {classElementwise, broadcast},
	"Max":            {classElementwise, broadcast},
	"Min":            {classElementwise, broadcast},
	"Sum":            {classElementwise, broadcast},
	"Mean":           {classElementwise, broadcast},
	"PRelu":          {classElementwise, broadcast},
	"Equal":          {classElementwise, broadcast},
	"Less":           {classElementwise, broadcast},
	"LessOrEqual":    {classElementwise, broadcast},
	"Greater":        {classElementwise, broadcast},
	"GreaterOrEqual": {classElementwise, broadcast},
	"And":            {classElementwise, broadcast},
	"Or":             {classElementwise, broadcast},
	"Xor":            {classElementwise, broadcast},
	"Where":          {classElementwise, broadcast},

	// Views: the same data, indexed anew.
	"Reshape":   {classView, needs(2, inferReshape)},
	"Flatten":   {classView, needs(1, inferFlatten)},
	"Squeeze":   {classView, needs(1, inferSqueeze)},
	"Unsqueeze": {classView, needs(1, inferUnsqueeze)},
	"Identity":  {classView, unary(0)},
	"Dropout":   {classView, needs(1, inferDropout)},

	// Data movement and shape arithmetic.
	"Transpose":       {classCompute, needs(1, inferTranspose)},
	"Concat":          {classCompute, needs(1, inferConcat)},
	"Split":           {classCompute, needs(1, inferSplit)},
	"Slice":           {classCompute, needs(1, inferSlice)},
	"Gather":          {classCompute, needs(2, inferGather)},
	"GatherElements":  {classCompute, needs(2, inferGatherElements)},
	"Pad":             {classCompute, needs(1, inferPad)},
	"Expand":          {classCompute, needs(2, inferExpand)},
	"Tile":            {classCompute, needs(2, inferTile)},
	"Resize":          {classCompute, needs(1, inferResize)},
	"Upsample":        {classCompute, needs(1, inferResize)},
	"DepthToSpace":    {classCompute, needs(1, inferDepthToSpace)},
	"SpaceToDepth":    {classCompute, needs(1, inferDepthToSpace)},
	"TopK":            {classCompute, needs(1, inferTopK)},
	"Shape":           {classShape, needs(1, inferShapeOp)},
	"Size":            {classShape, needs(1, inferSize)},
	"Constant":        {classCompute, inferConstant},
	"ConstantOfShape": {classCompute, inferConstantOfShape},
	"Range":           {classCompute, needs(3, inferRange)},
}

// Operations per element of the element-wise operators that do more than
// one: softmax takes a maximum, an exponential, a sum and a division per
// element; a normalisation a mean, a variance, a normalisation, a scale
// and a shift.
const (
	softmaxOps = 4
	normOps    = 5
)

// Operators documents the operators the analysis knows, sorted.
func Operators() []string {
	names := make([]string, 0, len(ops))
	for name := range ops {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// nodeCtx is one node being inferred: its inputs (nil where absent), the
// outputs its op fills in, and its counts.
type nodeCtx struct {
	n     *onnxpb.NodeProto
	opset int64
	in    []*tensor
	out   []*tensor
	macs  int64
	flops int64
}

// input returns input i, nil where absent.
func (c *nodeCtx) input(i int) *tensor {
	if i < len(c.in) {
		return c.in[i]
	}
	return nil
}

// needs is an operator's inference that reads its first k inputs, which
// must be present.
func needs(k int, infer func(c *nodeCtx) error) func(c *nodeCtx) error {
	return func(c *nodeCtx) error {
		if err := c.need(k); err != nil {
			return err
		}
		return infer(c)
	}
}

// need refuses a node with fewer than k of its first inputs present.
func (c *nodeCtx) need(k int) error {
	for i := range k {
		if c.input(i) == nil {
			return fmt.Errorf("%w: input %d is missing; the operator needs %d", ErrShape, i, k)
		}
	}
	return nil
}

// set defines output i, unless the node leaves it unnamed.
func (c *nodeCtx) set(i int, elem onnxpb.TensorProto_DataType, shape []int64, val *value) {
	if i < len(c.out) {
		c.out[i] = &tensor{elem: elem, shape: shape, val: val}
	}
}

func (c *nodeCtx) attr(name string) *onnxpb.AttributeProto {
	for _, a := range c.n.GetAttribute() {
		if a.GetName() == name {
			return a
		}
	}
	return nil
}

func (c *nodeCtx) attrInt(name string, def int64) int64 {
	if a := c.attr(name); a != nil {
		return a.GetI()
	}
	return def
}

func (c *nodeCtx) attrInts(name string) ([]int64, bool) {
	if a := c.attr(name); a != nil {
		return a.GetInts(), true
	}
	return nil, false
}

func (c *nodeCtx) attrFloats(name string) ([]float32, bool) {
	if a := c.attr(name); a != nil {
		return a.GetFloats(), true
	}
	return nil, false
}

func (c *nodeCtx) attrString(name, def string) string {
	if a := c.attr(name); a != nil {
		return string(a.GetS())
	}
	return def
}

// ints returns the values of input i, which decide the output's shape
// (a Reshape's shape, a Pad's widths): unknown values are a refusal.
func (c *nodeCtx) ints(i int) ([]int64, error) {
	t := c.input(i)
	if t == nil {
		return nil, fmt.Errorf("%w: input %d is missing", ErrShape, i)
	}
	v := t.values()
	if !v.known() {
		return nil, fmt.Errorf("%w: input %d (%s) is computed from data at run time, so the output's shape cannot be known before; "+
			"mlsched needs shapes that depend on the input's shape alone", ErrUnsupported, i, c.n.GetInput()[i])
	}
	return v.asInts(), nil
}

// optionalInts returns input i's values, or the attribute's where the
// operator's opset takes them as one (axes before opset 13, say), and
// whether either was given.
func (c *nodeCtx) optionalInts(i int, attr string) ([]int64, bool, error) {
	if c.input(i) != nil {
		v, err := c.ints(i)
		return v, true, err
	}
	v, ok := c.attrInts(attr)
	return v, ok, nil
}

// axis normalizes a possibly negative axis of a rank-r tensor.
func axis(a int64, r int) (int, error) {
	if a < 0 {
		a += int64(r)
	}
	if a < 0 || a >= int64(r) {
		return 0, fmt.Errorf("%w: axis %d is out of range for rank %d", ErrShape, a, r)
	}
	return int(a), nil
}

// reduced is shape with the axes ax reduced, each kept as a 1 or dropped:
// the output shape of every reduction (ReduceX, ArgMax, global pooling,
// layer normalization's statistics).
func reduced(shape []int64, ax []int, keep bool) []int64 {
	out := make([]int64, 0, len(shape))
	for i, d := range shape {
		switch {
		case !slices.Contains(ax, i):
			out = append(out, d)
		case keep:
			out = append(out, 1)
		}
	}
	return out
}

// axesFrom is the axes from first up to rank, in order.
func axesFrom(first, rank int) []int {
	var out []int
	for i := first; i < rank; i++ {
		out = append(out, i)
	}
	return out
}

// axes normalizes a list of axes and refuses duplicates.
func axes(as []int64, r int) ([]int, error) {
	out := make([]int, len(as))
	for i, a := range as {
		n, err := axis(a, r)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out[:i], n) {
			return nil, fmt.Errorf("%w: axis %d is given twice", ErrShape, n)
		}
		out[i] = n
	}
	return out, nil
}

// unary is an element-wise operator of one tensor (further inputs, such
// as Clip's bounds, are scalars) doing perElem operations an element.
func unary(perElem int64) func(c *nodeCtx) error {
	return func(c *nodeCtx) error {
		if err := c.need(1); err != nil {
			return err
		}
		x := c.in[0]
		elem := x.elem
		switch c.n.GetOpType() {
		case "Not", "IsNaN", "IsInf":
			elem = onnxpb.TensorProto_BOOL
		}
		var val *value
		if c.n.GetOpType() == "Identity" {
			val = x.values()
		}
		c.set(0, elem, x.shape, val)
		c.flops = perElem * elements(x.shape)
		return nil
	}
}

// sameShape is an operator whose output has its first input's shape.
func sameShape(perElem int64) func(c *nodeCtx) error { return unary(perElem) }

func inferCast(c *nodeCtx) error {
	x := c.in[0]
	to := onnxpb.TensorProto_DataType(c.attrInt("to", 0))
	if c.n.GetOpType() == "CastLike" {
		if err := c.need(2); err != nil {
			return err
		}
		to = c.in[1].elem
	}
	if width(to) == 0 {
		return fmt.Errorf("%w: cast to %s", ErrUnsupported, typeName(to))
	}
	var val *value
	if v := x.values(); v.known() {
		switch {
		case isInt(to):
			val = &value{ints: v.asInts()}
		case isFloat(to):
			val = &value{floats: v.asFloats()}
		}
	}
	c.set(0, to, x.shape, val)
	c.flops = elements(x.shape)
	return nil
}

func inferDropout(c *nodeCtx) error {
	c.set(0, c.in[0].elem, c.in[0].shape, c.in[0].values())
	c.set(1, onnxpb.TensorProto_BOOL, c.in[0].shape, nil)
	return nil
}

// broadcastShapes is the numpy-style broadcast of shapes, as every
// multidirectional ONNX operator broadcasts.
func broadcastShapes(shapes ...[]int64) ([]int64, error) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
	}
	out := make([]int64, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		for i, d := range s {
			j := r - len(s) + i
			switch {
			case d == out[j] || d == 1:
			case out[j] == 1:
				out[j] = d
			default:
				return nil, fmt.Errorf("%w: shapes %s do not broadcast (axis %d: %d against %d)", ErrShape, shapesString(shapes), j, d, out[j])
			}
		}
	}
	return out, nil
}

func shapesString(shapes [][]int64) string {
	s := ""
	for i, sh := range shapes {
		if i > 0 {
			s += " and "
		}
		s += shapeString(sh)
	}
	return s
}

// broadcast infers a multidirectional element-wise operator, and
// computes its values where its inputs are small and known (shape
// arithmetic: a Shape times a constant, an Equal before a Where).
func broadcast(c *nodeCtx) error {
	op := c.n.GetOpType()
	k := 2
	switch op {
	case "Sum", "Mean", "Max", "Min":
		k = 1
	case "Where":
		k = 3
	}
	if err := c.need(k); err != nil {
		return err
	}
	var shapes [][]int64
	var present []*tensor
	for _, t := range c.in {
		if t != nil {
			shapes = append(shapes, t.shape)
			present = append(present, t)
		}
	}
	shape, err := broadcastShapes(shapes...)
	if err != nil {
		return err
	}
	elem := c.in[0].elem
	switch op {
	case "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor":
		elem = onnxpb.TensorProto_BOOL
	case "Where":
		elem = c.in[1].elem
	}
	n := elements(shape)
	c.set(0, elem, shape, broadcastValues(op, elem, shape, present))
	c.flops = n * int64(max(1, len(present)-1))
	return nil
}

// broadcastValues computes a small element-wise result from known
// inputs, or returns nil.
func broadcastValues(op string, elem onnxpb.TensorProto_DataType, shape []int64, in []*tensor) *value {
	n := elements(shape)
	if n > maxValues {
		return nil
	}
	vals := make([]*value, len(in))
	for i, t := range in {
		if vals[i] = t.values(); !vals[i].known() {
			return nil
		}
	}
	f := func(a []float64) (float64, bool) {
		switch op {
		case "Add", "Sum":
			s := 0.0
			for _, x := range a {
				s += x
			}
			return s, true
		case "Sub":
			return a[0] - a[1], true
		case "Mul":
			return a[0] * a[1], true
		case "Div":
			if a[1] == 0 {
				return 0, false
			}
			if isInt(elem) {
				return math.Trunc(a[0] / a[1]), true
			}
			return a[0] / a[1], true
		case "Max":
			return slices.Max(a), true
		case "Min":
			return slices.Min(a), true
		case "Equal":
			return b2f(a[0] == a[1]), true
		case "Less":
			return b2f(a[0] < a[1]), true
		case "LessOrEqual":
			return b2f(a[0] <= a[1]), true
		case "Greater":
			return b2f(a[0] > a[1]), true
		case "GreaterOrEqual":
			return b2f(a[0] >= a[1]), true
		case "And":
			return b2f(a[0] != 0 && a[1] != 0), true
		case "Or":
			return b2f(a[0] != 0 || a[1] != 0), true
		case "Where":
			if a[0] != 0 {
				return a[1], true
			}
			return a[2], true
		}
		return 0, false
	}
	out := make([]float64, n)
	args := make([]float64, len(in))
	idx := make([]int64, len(shape))
	for i := range out {
		// The index of element i in each input, broadcasting.
		rem := int64(i)
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		for j, t := range in {
			off, stride := int64(0), int64(1)
			for d := len(t.shape) - 1; d >= 0; d-- {
				if t.shape[d] > 1 {
					off += idx[len(shape)-len(t.shape)+d] * stride
				}
				stride *= t.shape[d]
			}
			args[j] = vals[j].at(int(off))
		}
		v, ok := f(args)
		if !ok {
			return nil
		}
		out[i] = v
	}
	if isInt(elem) {
		ints := make([]int64, n)
		for i, v := range out {
			ints[i] = int64(v)
		}
		return &value{ints: ints}
	}
	return &value{floats: out}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

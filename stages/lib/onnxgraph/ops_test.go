package onnxgraph

import (
	"math"
	"slices"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

const float = onnxpb.TensorProto_FLOAT

// opCase is one small graph with the shapes its outputs must have at
// batch 2, and its multiply-adds there, all derived by hand from the
// operator's definition.
type opCase struct {
	name  string
	build func(b *builder)
	want  map[string][]int64
	macs  int64
}

// opCases cover every operator of the table, each at least once.
var opCases = []opCase{
	{"Conv", func(b *builder) {
		b.input("x", float, -1, 3, 8, 8)
		b.node("Conv", ins("x", b.weights("w", 4, 3, 3, 3), b.weights("b", 4)), ins("y"), aInts("pads", 1, 1, 1, 1))
	}, map[string][]int64{"y": {2, 4, 8, 8}}, 2 * 4 * 8 * 8 * 3 * 9},
	{"Conv grouped, strided and dilated", func(b *builder) {
		b.input("x", float, -1, 4, 9, 9)
		b.node("Conv", ins("x", b.weights("w", 8, 2, 3, 3)), ins("y"), aInt("group", 2), aInts("strides", 2, 2), aInts("dilations", 2, 2))
	}, map[string][]int64{"y": {2, 8, 3, 3}}, 2 * 8 * 9 * 2 * 9},
	{"Conv same padding", func(b *builder) {
		b.input("x", float, -1, 1, 7, 7)
		b.node("Conv", ins("x", b.weights("w", 2, 1, 3, 3)), ins("y"), aString("auto_pad", "SAME_UPPER"), aInts("strides", 2, 2))
	}, map[string][]int64{"y": {2, 2, 4, 4}}, 2 * 2 * 16 * 9},
	{"Conv 1-D", func(b *builder) {
		b.input("x", float, -1, 2, 10)
		b.node("Conv", ins("x", b.weights("w", 3, 2, 4)), ins("y"))
	}, map[string][]int64{"y": {2, 3, 7}}, 2 * 3 * 7 * 2 * 4},
	{"ConvTranspose", func(b *builder) {
		b.input("x", float, -1, 4, 5, 5)
		b.node("ConvTranspose", ins("x", b.weights("w", 4, 2, 3, 3)), ins("y"), aInts("strides", 2, 2), aInts("pads", 1, 1, 1, 1), aInts("output_padding", 1, 1))
	}, map[string][]int64{"y": {2, 2, 10, 10}}, 2 * 4 * 25 * 2 * 9},
	{"Gemm", func(b *builder) {
		b.input("x", float, -1, 6)
		b.node("Gemm", ins("x", b.weights("w", 5, 6), b.weights("b", 5)), ins("y"), aInt("transB", 1))
	}, map[string][]int64{"y": {2, 5}}, 2 * 5 * 6},
	{"MatMul broadcast", func(b *builder) {
		b.input("x", float, -1, 3, 4, 6)
		b.node("MatMul", ins("x", b.weights("w", 6, 5)), ins("y"))
	}, map[string][]int64{"y": {2, 3, 4, 5}}, 2 * 3 * 4 * 5 * 6},
	{"MatMul by a vector", func(b *builder) {
		b.input("x", float, -1, 6)
		b.node("MatMul", ins("x", b.weights("w", 6)), ins("y"))
	}, map[string][]int64{"y": {2}}, 2 * 6},
	{"MaxPool ceil mode with indices", func(b *builder) {
		b.input("x", float, -1, 2, 8, 8)
		b.node("MaxPool", ins("x"), ins("y", "i"), aInts("kernel_shape", 3, 3), aInts("strides", 2, 2), aInt("ceil_mode", 1))
	}, map[string][]int64{"y": {2, 2, 4, 4}, "i": {2, 2, 4, 4}}, 0},
	{"AveragePool padded", func(b *builder) {
		b.input("x", float, -1, 3, 5, 5)
		b.node("AveragePool", ins("x"), ins("y"), aInts("kernel_shape", 2, 2), aInts("pads", 0, 0, 1, 1))
	}, map[string][]int64{"y": {2, 3, 5, 5}}, 0},
	{"LpPool", func(b *builder) {
		b.input("x", float, -1, 3, 6, 6)
		b.node("LpPool", ins("x"), ins("y"), aInts("kernel_shape", 3, 3), aInts("strides", 3, 3))
	}, map[string][]int64{"y": {2, 3, 2, 2}}, 0},
	{"global pools", func(b *builder) {
		b.input("x", float, -1, 3, 5, 5)
		b.node("GlobalMaxPool", ins("x"), ins("a"))
		b.node("GlobalAveragePool", ins("x"), ins("b"))
		b.node("GlobalLpPool", ins("x"), ins("c"))
	}, map[string][]int64{"a": {2, 3, 1, 1}, "b": {2, 3, 1, 1}, "c": {2, 3, 1, 1}}, 0},
	{"normalizations", func(b *builder) {
		b.opset = 18 // GroupNormalization's first
		b.input("x", float, -1, 3, 4, 4)
		b.node("LayerNormalization", ins("x", b.weights("s", 4, 4), b.weights("t", 4, 4)), ins("ln", "mean", "inv"), aInt("axis", 2))
		b.node("BatchNormalization", ins("x", b.weights("g", 3), b.weights("bb", 3), b.weights("m", 3), b.weights("v", 3)), ins("bn"))
		b.node("InstanceNormalization", ins("x", b.weights("is", 3), b.weights("ib", 3)), ins("in"))
		b.node("GroupNormalization", ins("x", b.weights("gs", 3), b.weights("gb", 3)), ins("gn"), aInt("num_groups", 3))
		b.node("LpNormalization", ins("x"), ins("lp"))
		b.node("MeanVarianceNormalization", ins("x"), ins("mvn"))
		b.node("LRN", ins("x"), ins("lrn"), aInt("size", 3))
	}, map[string][]int64{"ln": {2, 3, 4, 4}, "mean": {2, 3, 1, 1}, "inv": {2, 3, 1, 1}, "bn": {2, 3, 4, 4}, "in": {2, 3, 4, 4},
		"gn": {2, 3, 4, 4}, "lp": {2, 3, 4, 4}, "mvn": {2, 3, 4, 4}, "lrn": {2, 3, 4, 4}}, 0},
	{"reductions", func(b *builder) {
		b.input("x", float, -1, 3, 4, 4)
		b.node("ReduceMean", ins("x"), ins("mean"), aInts("axes", 2, 3), aInt("keepdims", 0))
		b.node("ReduceSum", ins("x", b.ints("ax", 1)), ins("sum"))
		b.node("ReduceMax", ins("x"), ins("all"))
		for _, op := range []string{"ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"} {
			b.node(op, ins("x"), ins(op), aInts("axes", -1))
		}
		b.node("ArgMax", ins("x"), ins("arg"), aInt("axis", 1), aInt("keepdims", 0))
		b.node("ArgMin", ins("x"), ins("argmin"), aInt("axis", -1))
	}, map[string][]int64{"mean": {2, 3}, "sum": {2, 1, 4, 4}, "all": {1, 1, 1, 1}, "ReduceMin": {2, 3, 4, 1},
		"ReduceProd": {2, 3, 4, 1}, "ReduceL1": {2, 3, 4, 1}, "ReduceL2": {2, 3, 4, 1}, "ReduceSumSquare": {2, 3, 4, 1},
		"ReduceLogSum": {2, 3, 4, 1}, "ReduceLogSumExp": {2, 3, 4, 1}, "arg": {2, 4, 4}, "argmin": {2, 3, 4, 1}}, 0},
	{"element-wise functions", func(b *builder) {
		b.input("x", float, -1, 3)
		x := "x"
		for _, op := range []string{"Relu", "LeakyRelu", "Elu", "Selu", "Celu", "ThresholdedRelu", "Sigmoid", "HardSigmoid",
			"HardSwish", "Tanh", "Erf", "Softplus", "Softsign", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs",
			"Floor", "Ceil", "Round", "Sign", "Sin", "Cos", "Softmax", "LogSoftmax", "Hardmax", "CumSum", "Trilu", "Identity"} {
			in := ins(x)
			if op == "CumSum" {
				in = ins(x, b.ints("cumaxis", 1))
			}
			b.node(op, in, ins(op))
			x = op
		}
		b.node("Clip", ins(x, b.scalar("lo", 0), ""), ins("clip"))
		b.node("Dropout", ins("clip"), ins("drop", "mask"))
		b.node("IsNaN", ins("drop"), ins("nan"))
		b.node("Not", ins("nan"), ins("not"))
		b.node("IsInf", ins("drop"), ins("inf"))
		b.node("Cast", ins("drop"), ins("half"), aInt("to", int64(onnxpb.TensorProto_FLOAT16)))
		b.node("CastLike", ins("half", "x"), ins("back"))
	}, map[string][]int64{"Identity": {2, 3}, "clip": {2, 3}, "drop": {2, 3}, "mask": {2, 3}, "not": {2, 3}, "inf": {2, 3}, "back": {2, 3}}, 0},
	{"broadcasting", func(b *builder) {
		b.input("x", float, -1, 3, 1)
		b.node("Add", ins("x", b.weights("w", 4)), ins("add"))
		for _, op := range []string{"Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu"} {
			b.node(op, ins("add", "x"), ins(op))
		}
		b.node("Sum", ins("add", "x", b.weights("w3", 1)), ins("sum3"))
		b.node("Mod", ins("x", "x"), ins("mod"), aInt("fmod", 1))
		b.node("Less", ins("add", "x"), ins("less"))
		b.node("Greater", ins("add", "x"), ins("greater"))
		b.node("LessOrEqual", ins("add", "x"), ins("le"))
		b.node("GreaterOrEqual", ins("add", "x"), ins("ge"))
		b.node("Equal", ins("add", "x"), ins("eq"))
		b.node("And", ins("less", "eq"), ins("and"))
		b.node("Or", ins("less", "eq"), ins("or"))
		b.node("Xor", ins("less", "eq"), ins("xor"))
		b.node("Where", ins("and", "add", b.weights("zero", 1)), ins("where"))
	}, map[string][]int64{"add": {2, 3, 4}, "Sub": {2, 3, 4}, "Pow": {2, 3, 4}, "Mean": {2, 3, 4}, "PRelu": {2, 3, 4},
		"sum3": {2, 3, 4}, "mod": {2, 3, 1}, "ge": {2, 3, 4}, "xor": {2, 3, 4}, "where": {2, 3, 4}}, 0},
	{"views", func(b *builder) {
		b.input("x", float, -1, 3, 4, 5)
		b.node("Reshape", ins("x", b.ints("s", 0, -1, 5)), ins("r"))
		b.node("Flatten", ins("x"), ins("f"), aInt("axis", 2))
		b.node("Unsqueeze", ins("r", b.ints("ua", 1, -1)), ins("u"))
		b.node("Squeeze", ins("u", b.ints("sa", 1)), ins("s1"))
		b.node("Squeeze", ins("u"), ins("s2"))
	}, map[string][]int64{"r": {2, 12, 5}, "f": {6, 20}, "u": {2, 1, 12, 5, 1}, "s1": {2, 12, 5, 1}, "s2": {2, 12, 5}}, 0},
	{"data movement", func(b *builder) {
		b.input("x", float, -1, 6)
		b.node("Transpose", ins("x"), ins("t"))
		b.node("Concat", ins("x", "x"), ins("c"), aInt("axis", 1))
		b.node("Split", ins("x", b.ints("parts", 1, 2, 3)), ins("p1", "p2", "p3"), aInt("axis", 1))
		b.node("Split", ins("x"), ins("h1", "h2"), aInt("axis", 1))
		b.node("Slice", ins("x", b.ints("st", 2), b.ints("en", -1), b.ints("ax", 1), b.ints("sp", 2)), ins("sl"))
		b.node("Slice", ins("x", b.ints("rst", -1), b.ints("ren", math.MinInt64), b.ints("rax", 1), b.ints("rsp", -1)), ins("rev"))
		b.node("Pad", ins("x", b.ints("pads", 1, 2, 3, 4)), ins("pad"))
		b.node("Tile", ins("x", b.ints("rep", 1, 3)), ins("tile"))
		b.node("Unsqueeze", ins("x", b.ints("u1", 1)), ins("x3"))
		b.node("Expand", ins("x3", b.ints("to", 1, 4, 1)), ins("exp"))
		b.node("Gather", ins("exp", b.ints("gi", 2, 2, 0)), ins("g"), aInt("axis", 1))
		b.node("Unsqueeze", ins(b.ints("ge", 0), b.ints("gea", 0)), ins("geidx"))
		b.node("GatherElements", ins("x", "geidx"), ins("gel"), aInt("axis", 1))
		b.node("TopK", ins("x", b.ints("k", 2)), ins("tv", "ti"))
	}, map[string][]int64{"t": {6, 2}, "c": {2, 12}, "p1": {2, 1}, "p2": {2, 2}, "p3": {2, 3}, "h1": {2, 3}, "h2": {2, 3},
		"sl": {2, 2}, "rev": {2, 6}, "pad": {6, 12}, "tile": {2, 18}, "exp": {2, 4, 6}, "g": {2, 3, 6}, "gel": {1, 1}, "tv": {2, 2}, "ti": {2, 2}}, 0},
	{"resize and space", func(b *builder) {
		b.input("x", float, -1, 8, 3, 3)
		b.node("Resize", ins("x", "", b.floats("scales", 1, 1, 2, 2)), ins("up"))
		b.node("Resize", ins("x", "", "", b.ints("sizes", 2, 8, 5, 7)), ins("to"))
		b.node("DepthToSpace", ins("x"), ins("d2s"), aInt("blocksize", 2))
		b.node("SpaceToDepth", ins("d2s"), ins("s2d"), aInt("blocksize", 2))
	}, map[string][]int64{"up": {2, 8, 6, 6}, "to": {2, 8, 5, 7}, "d2s": {2, 2, 6, 6}, "s2d": {2, 8, 3, 3}}, 0},
	{"Gelu and Mish", func(b *builder) {
		b.opset = 20 // Gelu's first; Mish's is 18
		b.input("x", float, -1, 3)
		b.node("Gelu", ins("x"), ins("y"))
		b.node("Mish", ins("y"), ins("z"))
	}, map[string][]int64{"z": {2, 3}}, 0},
	{"Upsample", func(b *builder) {
		b.opset = 9 // its last
		b.input("x", float, -1, 2, 3, 3)
		b.node("Upsample", ins("x", b.floats("scales", 1, 1, 2, 2)), ins("y"))
	}, map[string][]int64{"y": {2, 2, 6, 6}}, 0},
	{"shape arithmetic", func(b *builder) {
		b.input("x", float, -1, 3, 4)
		b.node("Shape", ins("x"), ins("shape"))
		b.node("Shape", ins("x"), ins("tail"), aInt("start", 1))
		b.node("Size", ins("x"), ins("size"))
		b.node("Gather", ins("shape", b.ints("zero", 0)), ins("n"))
		b.node("Mul", ins("n", b.ints("twelve", 12)), ins("flat"))
		b.node("Concat", ins("flat", b.ints("one", 1)), ins("target"), aInt("axis", 0))
		b.node("Reshape", ins("x", "target"), ins("r"))
		b.node("ConstantOfShape", ins("shape"), ins("zeros"))
		b.node("Constant", nil, ins("five"), aTensor("value", &onnxpb.TensorProto{DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), Int64Data: []int64{5}}))
		b.node("Constant", nil, ins("start"), &onnxpb.AttributeProto{Name: proto.String("value_int"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(0)})
		b.node("Constant", nil, ins("step"), &onnxpb.AttributeProto{Name: proto.String("value_int"), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(1)})
		b.node("Range", ins("start", "five", "step"), ins("range"))
		b.node("Slice", ins("shape", b.ints("s0", 0), b.ints("s1", 1)), ins("first"))
		b.node("Cast", ins("first"), ins("firstf"), aInt("to", int64(float)))
		b.node("Cast", ins("firstf"), ins("firsti"), aInt("to", int64(onnxpb.TensorProto_INT64)))
		b.node("Concat", ins("firsti", "tail"), ins("same"), aInt("axis", 0))
		b.node("Equal", ins("same", b.ints("m1", -1)), ins("isneg"))
		b.node("Where", ins("isneg", b.ints("one2", 1), "same"), ins("fixed"))
		b.node("Expand", ins("x", "fixed"), ins("expanded"))
		b.node("Range", ins(b.scalar("fs", 0), b.scalar("fl", 1), b.scalar("fd", 0.25)), ins("frange"))
	}, map[string][]int64{"shape": {3}, "tail": {2}, "size": {}, "r": {24, 1}, "zeros": {2, 3, 4}, "range": {5},
		"expanded": {2, 3, 4}, "frange": {4}}, 0},
}

// TestOperators infers each case at batch 2 and checks its output shapes
// and multiply-adds.
func TestOperators(t *testing.T) {
	covered := map[string]bool{}
	for _, tc := range opCases {
		t.Run(tc.name, func(t *testing.T) {
			b := newBuilder()
			tc.build(b)
			for name := range tc.want {
				b.output(name)
			}
			g := b.parse(t)
			p, err := g.Infer(0, 2)
			if err != nil {
				t.Fatalf("Infer: %v", err)
			}
			got := map[string][]int64{}
			var macs int64
			for _, n := range p.Nodes {
				covered[n.Op] = true
				macs += n.MACs
				for _, o := range n.Outputs {
					got[o.Name] = o.Shape
				}
			}
			for name, want := range tc.want {
				if s, ok := got[name]; !ok || !slices.Equal(s, want) {
					t.Errorf("%s: shape %v, want %v", name, s, want)
				}
			}
			if macs != tc.macs {
				t.Errorf("multiply-adds %d, want %d", macs, tc.macs)
			}
		})
	}
	for _, op := range Operators() {
		if !covered[op] {
			t.Errorf("operator %s is in the table but no case runs it", op)
		}
	}
}

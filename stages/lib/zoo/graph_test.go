package zoo

import (
	"encoding/binary"
	"math"
	"slices"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// decode parses a graph's bytes, failing the test on an error.
func decode(t *testing.T, g *Graph) *onnxpb.GraphProto {
	t.Helper()
	b, err := g.Bytes()
	if err != nil {
		t.Fatalf("Bytes: %v", err)
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		t.Fatalf("unmarshal: %v", err)
	}
	if m.GetIrVersion() != IRVersion || len(m.GetOpsetImport()) != 1 || m.GetOpsetImport()[0].GetVersion() != Opset {
		t.Errorf("ir_version %d, opset_import %v; want %d and opset %d", m.GetIrVersion(), m.GetOpsetImport(), IRVersion, Opset)
	}
	return m.GetGraph()
}

func testGraph(t *testing.T, precision string, seed int64) *Graph {
	t.Helper()
	g, err := NewGraph("test", precision, seed)
	if err != nil {
		t.Fatalf("NewGraph: %v", err)
	}
	return g
}

func floats(t *testing.T, tp *onnxpb.TensorProto) []float32 {
	t.Helper()
	raw := tp.GetRawData()
	switch onnxpb.TensorProto_DataType(tp.GetDataType()) {
	case onnxpb.TensorProto_FLOAT:
		v := make([]float32, len(raw)/4)
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		return v
	case onnxpb.TensorProto_FLOAT16:
		v := make([]float32, len(raw)/2)
		for i := range v {
			v[i] = float32(float16Value(binary.LittleEndian.Uint16(raw[2*i:])))
		}
		return v
	}
	t.Fatalf("tensor %s has data type %d", tp.GetName(), tp.GetDataType())
	return nil
}

// TestGraphFP32 builds a one-layer graph by hand and checks the proto: the
// output renames its producer instead of adding a node, and the weights
// given are stored as given.
func TestGraphFP32(t *testing.T) {
	g := testGraph(t, FP32, 1)
	x := g.Input("x", []int64{Batch, 2})
	w := g.Weights("w", []int64{2, 3}, []float32{1, 2, 3, 4, 5, -0.5})
	y := g.Op("Relu", g.Op("MatMul", x, w))
	g.Output("y", y, []int64{Batch, 3})
	gp := decode(t, g)

	var ops []string
	for _, n := range gp.GetNode() {
		ops = append(ops, n.GetOpType())
	}
	if want := []string{"MatMul", "Relu"}; !slices.Equal(ops, want) {
		t.Errorf("ops = %v, want %v", ops, want)
	}
	if last := gp.GetNode()[1]; !slices.Equal(last.GetOutput(), []string{"y"}) {
		t.Errorf("last node outputs %v, want [y]", last.GetOutput())
	}
	in := gp.GetInput()[0].GetType().GetTensorType()
	if d := in.GetShape().GetDim(); gp.GetInput()[0].GetName() != "x" || in.GetElemType() != int32(onnxpb.TensorProto_FLOAT) ||
		len(d) != 2 || d[0].GetDimParam() != "N" || d[1].GetDimValue() != 2 {
		t.Errorf("input = %v, want x: FLOAT [N, 2]", gp.GetInput()[0])
	}
	if got := floats(t, gp.GetInitializer()[0]); !slices.Equal(got, []float32{1, 2, 3, 4, 5, -0.5}) {
		t.Errorf("weights = %v, want the values given", got)
	}
}

// TestGraphFP16 checks the casts that keep an fp16 graph's interface fp32,
// and that weights are stored as halves.
func TestGraphFP16(t *testing.T) {
	g := testGraph(t, FP16, 1)
	x := g.Input("x", []int64{Batch, 2})
	y := g.Op("Mul", x, g.Weights("w", []int64{2}, []float32{0.1, 3}))
	g.Output("y", g.Op("Add", y, g.Scalar(1)), []int64{Batch, 2})
	gp := decode(t, g)

	nodes := gp.GetNode()
	var ops []string
	for _, n := range nodes {
		ops = append(ops, n.GetOpType())
	}
	if want := []string{"Cast", "Mul", "Constant", "Add", "Cast"}; !slices.Equal(ops, want) {
		t.Fatalf("ops = %v, want %v", ops, want)
	}
	first, last := nodes[0].GetAttribute()[0], nodes[4].GetAttribute()[0]
	if first.GetI() != int64(onnxpb.TensorProto_FLOAT16) || last.GetI() != int64(onnxpb.TensorProto_FLOAT) ||
		!slices.Equal(nodes[0].GetInput(), []string{"x"}) || !slices.Equal(nodes[4].GetOutput(), []string{"y"}) {
		t.Errorf("casts: %v, %v; want x to FLOAT16 first and to FLOAT as y last", nodes[0], nodes[4])
	}
	w := gp.GetInitializer()[0]
	if w.GetDataType() != int32(onnxpb.TensorProto_FLOAT16) || len(w.GetRawData()) != 4 {
		t.Errorf("w: data type %d, %d raw bytes; want FLOAT16 and 4", w.GetDataType(), len(w.GetRawData()))
	}
	if got := floats(t, w); got[0] != float32(float16Value(0x2e66)) || got[1] != 3 {
		t.Errorf("w = %v, want [0.1 and 3 rounded to half]", got)
	}
	if c := nodes[2].GetAttribute()[0].GetT(); c.GetDataType() != int32(onnxpb.TensorProto_FLOAT16) || len(c.GetDims()) != 0 {
		t.Errorf("scalar constant %v, want a rank-0 FLOAT16", c)
	}
}

// TestUniform checks the random initializers: within the bound, spread
// over it, a function of seed and name only.
func TestUniform(t *testing.T) {
	values := func(seed int64, before bool) []float32 {
		g := testGraph(t, FP32, seed)
		x := g.Input("x", []int64{Batch, 100})
		if before {
			// Another tensor first must not shift w's random stream.
			x = g.Op("Add", x, g.Uniform("b", []int64{100}, 1))
		}
		g.Output("y", g.Op("MatMul", x, g.Uniform("w", []int64{100, 100}, 0.5)), []int64{Batch, 100})
		for _, init := range decode(t, g).GetInitializer() {
			if init.GetName() == "w" {
				return floats(t, init)
			}
		}
		t.Fatal("no initializer w")
		return nil
	}
	w := values(3, false)
	var sum, sq float64
	for _, v := range w {
		if v < -0.5 || v >= 0.5 {
			t.Fatalf("value %g outside [-0.5, 0.5)", v)
		}
		sum += float64(v)
		sq += float64(v) * float64(v)
	}
	// 10,000 draws: the mean is within 4 standard errors of 0 and the
	// variance within 5% of 0.5²/3.
	n := float64(len(w))
	if mean, variance := sum/n, sq/n; math.Abs(mean) > 4*0.5/math.Sqrt(3*n) || math.Abs(variance/(0.25/3)-1) > 0.05 {
		t.Errorf("mean %g, variance %g; want about 0 and %g", mean, variance, 0.25/3)
	}
	if !slices.Equal(w, values(3, true)) {
		t.Error("adding another initializer first changed w")
	}
	if slices.Equal(w, values(4, false)) {
		t.Error("seeds 3 and 4 give the same w")
	}
}

// TestOutputOfInitializer covers an output that no node produces, which
// needs an Identity node.
func TestOutputOfInitializer(t *testing.T) {
	g := testGraph(t, FP32, 1)
	g.Input("x", []int64{1})
	g.Output("y", g.Fill("c", []int64{1}, 2), []int64{1})
	nodes := decode(t, g).GetNode()
	if len(nodes) != 1 || nodes[0].GetOpType() != "Identity" || nodes[0].GetOutput()[0] != "y" {
		t.Errorf("nodes = %v, want one Identity to y", nodes)
	}
}

func TestGraphErrors(t *testing.T) {
	tests := []struct {
		what  string
		build func(g *Graph)
		want  string
	}{
		{"duplicate name", func(g *Graph) {
			g.Fill("w", []int64{1}, 1)
			g.Fill("w", []int64{1}, 2)
		}, `tensor "w" defined twice`},
		{"undefined input", func(g *Graph) {
			g.Output("y", g.Op("Relu", "nope"), []int64{1})
		}, `input "nope" is not defined`},
		{"value count", func(g *Graph) {
			g.Weights("w", []int64{2, 2}, []float32{1, 2, 3})
		}, "initializer w: 3 values for dimensions [2 2] (4 elements)"},
		{"batch in an initializer", func(g *Graph) {
			g.Uniform("w", []int64{Batch, 2}, 1)
		}, "initializer w: dimensions [-1 2]: each must be positive"},
		{"bad input shape", func(g *Graph) {
			g.Input("x", []int64{0, 2})
		}, "input x: shape [0 2]: dimension 0 must be positive or Batch"},
		{"describe unknown", func(g *Graph) {
			g.Describe("w", "doc")
		}, "describe w: no such initializer"},
		{"no output", func(g *Graph) {
			g.Input("x", []int64{1})
		}, "graph test: no output"},
		{"first error kept", func(g *Graph) {
			g.Op("Relu", "first")
			g.Op("Relu", "second")
		}, `"first"`},
	}
	for _, tt := range tests {
		g := testGraph(t, FP32, 1)
		tt.build(g)
		b, err := g.Bytes()
		if err == nil {
			t.Errorf("%s: got %d bytes, want an error", tt.what, len(b))
			continue
		}
		if !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "zoo: graph test") {
			t.Errorf("%s: error %q, want it to start with \"zoo: graph test\" and contain %q", tt.what, err, tt.want)
		}
	}
	if _, err := NewGraph("", FP32, 1); err == nil {
		t.Error(`NewGraph("") succeeded, want an error`)
	}
}

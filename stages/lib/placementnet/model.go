package placementnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// The names the train stage's placement export gives its graph's input,
// output and standardisation initializers (stages/train/placement's
// InputName and OutputName, and the initializers its ONNX method writes).
// They are repeated here rather than imported so that serving does not
// link the trainer.
const (
	InputName  = "features"
	OutputName = "p"
	scaleName  = "scale"
	meanName   = "mean"
	stdName    = "std"
)

// standardisation is the warp and standardisation a placement graph applies
// to its input before the first layer: (asinh(x × scale) − mean) / std.
type standardisation struct {
	scale, mean, std [sim.NumFeatures]float32
}

// apply writes the standardized x into z, in float32 as the graph
// computes it: the product and the quotients in float32, asinh rounded
// from float64.
func (s *standardisation) apply(x, z *[sim.NumFeatures]float32) {
	for k, v := range x {
		z[k] = s.one(k, v)
	}
}

// one is feature k of apply, for the input v.
func (s *standardisation) one(k int, v float32) float32 {
	w := float32(math.Asinh(float64(v * s.scale[k])))
	return (w - s.mean[k]) / s.std[k]
}

// graph is a placement network's parsed ONNX graph: its standardisation,
// and what the layers after it need to be read (layers).
type graph struct {
	norm standardisation
	// z is the name of the standardisation's output, the first layer's
	// input.
	z       string
	inits   map[string]*onnxpb.TensorProto
	readers map[string][]*onnxpb.NodeProto
	nodes   int
	output  string
}

// parseModel reads model's ONNX bytes and checks that they are a placement
// network this package can serve: one float32 input [N, NumFeatures] named
// InputName and one float32 output [N, 1] named OutputName, N symbolic,
// whose input goes through Div(Sub(Asinh(Mul(x, scale)), mean), std) and
// nothing else on its way to the first layer, with scale, mean and std
// finite float32 [NumFeatures] initializers, scale and std positive.
func parseModel(model []byte) (*graph, error) {
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(model, &m); err != nil {
		return nil, fmt.Errorf("parse onnx model: %w", err)
	}
	g := m.GetGraph()
	if g == nil || len(g.GetNode()) == 0 {
		return nil, errors.New("parse onnx model: no graph")
	}
	inits := map[string]*onnxpb.TensorProto{}
	for _, t := range g.GetInitializer() {
		if _, dup := inits[t.GetName()]; dup {
			return nil, fmt.Errorf("initializer %q appears twice", t.GetName())
		}
		inits[t.GetName()] = t
	}
	// Before IR 4 initializers were listed among the graph's inputs too;
	// only the others are fed by the caller.
	var inputs []*onnxpb.ValueInfoProto
	for _, vi := range g.GetInput() {
		if _, ok := inits[vi.GetName()]; !ok {
			inputs = append(inputs, vi)
		}
	}
	if err := checkSignature("input", inputs, InputName, sim.NumFeatures); err != nil {
		return nil, err
	}
	if err := checkSignature("output", g.GetOutput(), OutputName, 1); err != nil {
		return nil, err
	}
	var s standardisation
	for _, w := range []struct {
		name string
		dst  *[sim.NumFeatures]float32
		pos  bool // must be positive: a divisor or a scale
	}{{scaleName, &s.scale, true}, {meanName, &s.mean, false}, {stdName, &s.std, true}} {
		t, ok := inits[w.name]
		if !ok {
			return nil, fmt.Errorf("no initializer %q", w.name)
		}
		if err := readVector(t, w.dst, w.pos); err != nil {
			return nil, fmt.Errorf("initializer %q: %w", w.name, err)
		}
	}
	readers := map[string][]*onnxpb.NodeProto{}
	for _, n := range g.GetNode() {
		for _, in := range n.GetInput() {
			readers[in] = append(readers[in], n)
		}
	}
	z, err := checkPrefix(readers)
	if err != nil {
		return nil, err
	}
	return &graph{norm: s, z: z, inits: inits, readers: readers, nodes: len(g.GetNode()), output: g.GetOutput()[0].GetName()}, nil
}

// checkSignature requires vis to be one float32 tensor named name of shape
// [N, width] with N symbolic: Network binds one shape per batch size.
func checkSignature(what string, vis []*onnxpb.ValueInfoProto, name string, width int64) error {
	if len(vis) != 1 {
		names := make([]string, len(vis))
		for i, vi := range vis {
			names[i] = vi.GetName()
		}
		return fmt.Errorf("graph has %d %ss %q, want one named %q", len(vis), what, names, name)
	}
	vi := vis[0]
	if vi.GetName() != name {
		return fmt.Errorf("graph %s is named %q, want %q", what, vi.GetName(), name)
	}
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return fmt.Errorf("%s %q is not a tensor", what, name)
	}
	if elem := onnxpb.TensorProto_DataType(tt.GetElemType()); elem != onnxpb.TensorProto_FLOAT {
		return fmt.Errorf("%s %q holds %v, want FLOAT", what, name, elem)
	}
	dims := tt.GetShape().GetDim()
	if len(dims) != 2 {
		return fmt.Errorf("%s %q has %d dimensions, want 2: [N, %d]", what, name, len(dims), width)
	}
	if _, fixed := dims[0].GetValue().(*onnxpb.TensorShapeProto_Dimension_DimValue); fixed {
		return fmt.Errorf("%s %q has a fixed batch dimension %d, want a symbolic one: [N, %d]", what, name, dims[0].GetDimValue(), width)
	}
	if w := dims[1].GetDimValue(); w != width {
		return fmt.Errorf("%s %q is %d wide, want [N, %d]", what, name, w, width)
	}
	return nil
}

// readVector writes t's values into dst: t must be a float32 tensor of
// shape [NumFeatures] stored in the model (tensorFloats), every value
// finite and, if positive, above zero.
func readVector(t *onnxpb.TensorProto, dst *[sim.NumFeatures]float32, positive bool) error {
	if dims := t.GetDims(); !slices.Equal(dims, []int64{sim.NumFeatures}) {
		return fmt.Errorf("shape %v, want [%d]", dims, sim.NumFeatures)
	}
	v, err := tensorFloats(t)
	if err != nil {
		return err
	}
	copy(dst[:], v)
	for k, v := range dst {
		f := float64(v)
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return fmt.Errorf("feature %d (%s) is %v", k, sim.FeatureNames[k], v)
		case positive && v <= 0:
			return fmt.Errorf("feature %d (%s) is %v, want a positive value", k, sim.FeatureNames[k], v)
		}
	}
	return nil
}

// tensorFloats returns the values of t, a float32 tensor stored in the
// model (raw_data, as stages/lib/zoo writes it, or float_data), every
// dimension from 1 to maxWidth.
func tensorFloats(t *onnxpb.TensorProto) ([]float32, error) {
	if elem := onnxpb.TensorProto_DataType(t.GetDataType()); elem != onnxpb.TensorProto_FLOAT {
		return nil, fmt.Errorf("holds %v, want FLOAT", elem)
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return nil, errors.New("stored outside the model")
	}
	size := 1
	for _, d := range t.GetDims() {
		if d < 1 || d > maxWidth {
			return nil, fmt.Errorf("shape %v, want every dimension from 1 to %d", t.GetDims(), maxWidth)
		}
		size *= int(d)
	}
	switch raw, fd := t.GetRawData(), t.GetFloatData(); {
	case len(raw) > 0:
		if len(raw) != 4*size {
			return nil, fmt.Errorf("%d bytes of raw data, want %d for shape %v", len(raw), 4*size, t.GetDims())
		}
		v := make([]float32, size)
		for k := range v {
			v[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
		return v, nil
	case len(fd) == size:
		return slices.Clone(fd), nil
	default:
		return nil, fmt.Errorf("%d values, want %d for shape %v", len(fd), size, t.GetDims())
	}
}

// checkPrefix requires the graph's input to reach the rest of the network
// only through Div(Sub(Asinh(Mul(x, scale)), mean), std), each step's output
// read by the next step alone, so that Standardize computes exactly what
// the first layer reads, and returns the name of Div's output. readers
// lists the nodes that read each value. Mul may take its operands in
// either order; Sub and Div may not.
func checkPrefix(readers map[string][]*onnxpb.NodeProto) (string, error) {
	steps := []struct {
		op    string
		other string // the initializer beside the previous step's output, or ""
		first bool   // the previous step's output must be the first operand
	}{{"Mul", scaleName, false}, {"Asinh", "", true}, {"Sub", meanName, true}, {"Div", stdName, true}}
	x, want := InputName, ""
	for _, st := range steps {
		want = st.op + "(" + x
		if st.other != "" {
			want += ", " + st.other
		}
		want += ")"
		rs := readers[x]
		if len(rs) != 1 {
			return "", fmt.Errorf("graph does not standardise its input as (asinh(%s × scale) − mean) / std: %s is read by %d nodes where %s should be its only reader", InputName, x, len(rs), want)
		}
		n := rs[0]
		ins := n.GetInput()
		ok := n.GetOpType() == st.op && len(n.GetOutput()) == 1
		switch {
		case !ok:
		case st.other == "":
			ok = len(ins) == 1
		case st.first:
			ok = slices.Equal(ins, []string{x, st.other})
		default:
			ok = slices.Equal(ins, []string{x, st.other}) || slices.Equal(ins, []string{st.other, x})
		}
		if !ok || n.GetDomain() != "" {
			return "", fmt.Errorf("graph does not standardise its input as (asinh(%s × scale) − mean) / std: %s is read by %s(%s), want %s", InputName, x, n.GetOpType(), strings.Join(ins, ", "), want)
		}
		x = n.GetOutput()[0]
	}
	return x, nil
}

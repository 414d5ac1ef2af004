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

// parseModel reads model's ONNX bytes and checks that they are a placement
// network this package can serve: one float32 input [N, NumFeatures] named
// InputName and one float32 output [N, 1] named OutputName, N symbolic,
// whose input goes through Div(Sub(Asinh(Mul(x, scale)), mean), std) and
// nothing else on its way to the first layer, with scale, mean and std
// finite float32 [NumFeatures] initializers, scale and std positive.
func parseModel(model []byte) (*standardisation, error) {
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
	if err := checkPrefix(g.GetNode()); err != nil {
		return nil, err
	}
	return &s, nil
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
// shape [NumFeatures] stored in the model (raw_data, as stages/lib/zoo writes
// it, or float_data), every value finite and, if positive, above zero.
func readVector(t *onnxpb.TensorProto, dst *[sim.NumFeatures]float32, positive bool) error {
	if elem := onnxpb.TensorProto_DataType(t.GetDataType()); elem != onnxpb.TensorProto_FLOAT {
		return fmt.Errorf("holds %v, want FLOAT", elem)
	}
	if dims := t.GetDims(); !slices.Equal(dims, []int64{sim.NumFeatures}) {
		return fmt.Errorf("shape %v, want [%d]", dims, sim.NumFeatures)
	}
	if t.GetDataLocation() == onnxpb.TensorProto_EXTERNAL {
		return errors.New("stored outside the model")
	}
	switch raw, fd := t.GetRawData(), t.GetFloatData(); {
	case len(raw) > 0:
		if len(raw) != 4*sim.NumFeatures {
			return fmt.Errorf("%d bytes of raw data, want %d", len(raw), 4*sim.NumFeatures)
		}
		for k := range dst {
			dst[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
	case len(fd) == sim.NumFeatures:
		copy(dst[:], fd)
	default:
		return fmt.Errorf("%d values, want %d", len(fd), sim.NumFeatures)
	}
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

// checkPrefix requires the graph's input to reach the rest of the network
// only through Div(Sub(Asinh(Mul(x, scale)), mean), std), each step's output
// read by the next step alone, so that Standardize computes exactly what
// the first layer reads. Mul may take its operands in either order; Sub and
// Div may not.
func checkPrefix(nodes []*onnxpb.NodeProto) error {
	readers := map[string][]*onnxpb.NodeProto{}
	for _, n := range nodes {
		for _, in := range n.GetInput() {
			readers[in] = append(readers[in], n)
		}
	}
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
			return fmt.Errorf("graph does not standardise its input as (asinh(%s × scale) − mean) / std: %s is read by %d nodes where %s should be its only reader", InputName, x, len(rs), want)
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
			return fmt.Errorf("graph does not standardise its input as (asinh(%s × scale) − mean) / std: %s is read by %s(%s), want %s", InputName, x, n.GetOpType(), strings.Join(ins, ", "), want)
		}
		x = n.GetOutput()[0]
	}
	return nil
}

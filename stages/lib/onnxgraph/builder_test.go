package onnxgraph

import (
	"encoding/binary"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// builder writes small ONNX graphs by hand, for tests that need what the
// zoo's Graph builder does not make: integer inputs, several dynamic axes,
// attributes of every type, broken files.
type builder struct {
	g     *onnxpb.GraphProto
	opset int64
}

func newBuilder() *builder {
	return &builder{g: &onnxpb.GraphProto{Name: proto.String("test")}, opset: 17}
}

// input declares a graph input; a dim of -1 is the symbolic "N", -2 an
// unnamed dynamic one.
func (b *builder) input(name string, elem onnxpb.TensorProto_DataType, dims ...int64) *builder {
	shape := &onnxpb.TensorShapeProto{}
	for _, d := range dims {
		dim := &onnxpb.TensorShapeProto_Dimension{}
		switch {
		case d == -1:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: "N"}
		case d >= 0:
			dim.Value = &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}
		}
		shape.Dim = append(shape.Dim, dim)
	}
	b.g.Input = append(b.g.Input, &onnxpb.ValueInfoProto{Name: proto.String(name), Type: &onnxpb.TypeProto{
		Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{ElemType: proto.Int32(int32(elem)), Shape: shape}}}})
	return b
}

// weights adds a float initializer of zeros.
func (b *builder) weights(name string, dims ...int64) string {
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: dims,
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), RawData: make([]byte, 4*elements(dims))})
	return name
}

// ints adds a 1-D int64 initializer, or a scalar where scalar is set.
func (b *builder) ints(name string, values ...int64) string {
	raw := make([]byte, 8*len(values))
	for i, v := range values {
		binary.LittleEndian.PutUint64(raw[8*i:], uint64(v))
	}
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(values))},
		DataType: proto.Int32(int32(onnxpb.TensorProto_INT64)), RawData: raw})
	return name
}

// floats adds a 1-D float initializer of the values.
func (b *builder) floats(name string, values ...float32) string {
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name), Dims: []int64{int64(len(values))},
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), FloatData: values})
	return name
}

// scalar adds a float scalar initializer.
func (b *builder) scalar(name string, v float32) string {
	b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String(name),
		DataType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)), FloatData: []float32{v}})
	return name
}

func (b *builder) node(op string, ins, outs []string, attrs ...*onnxpb.AttributeProto) *builder {
	b.g.Node = append(b.g.Node, &onnxpb.NodeProto{Name: proto.String(outs[0] + "_node"), OpType: proto.String(op),
		Input: ins, Output: outs, Attribute: attrs})
	return b
}

// output declares a graph output of unknown shape.
func (b *builder) output(name string) *builder {
	b.g.Output = append(b.g.Output, &onnxpb.ValueInfoProto{Name: proto.String(name)})
	return b
}

func (b *builder) bytes(t testing.TB) []byte {
	t.Helper()
	m := &onnxpb.ModelProto{IrVersion: proto.Int64(8), Graph: b.g,
		OpsetImport: []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(b.opset)}}}
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func (b *builder) parse(t testing.TB) *Graph {
	t.Helper()
	g, err := Parse(b.bytes(t))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return g
}

func aInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

func aInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

func aString(name, v string) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_STRING.Enum(), S: []byte(v)}
}

func aTensor(name string, t *onnxpb.TensorProto) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_TENSOR.Enum(), T: t}
}

func ins(names ...string) []string { return names }

package onnxgraph

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/zoo"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// TestRefusals feeds Parse and Summarize models the analysis must refuse,
// each with what the error must wrap and say (the node, the operator, the
// input at fault).
func TestRefusals(t *testing.T) {
	mlp, err := zoo.Build("mlp", zoo.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		bytes func(t *testing.T) []byte
		axis  int // -1: none named
		is    error
		want  []string
	}{
		{"empty", func(*testing.T) []byte { return nil }, -1, ErrNotONNX, []string{"empty"}},
		{"not protobuf", func(*testing.T) []byte { return []byte("name,batch\nresnet,1\n") }, -1, ErrNotONNX, []string{"protobuf"}},
		{"truncated", func(*testing.T) []byte { return mlp[:len(mlp)/2] }, -1, ErrNotONNX, []string{"truncated"}},
		{"unknown operator", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, 3).node("NonZero", ins("x"), ins("y")).output("y").bytes(t)
		}, -1, ErrUnsupported, []string{"node y_node (NonZero)", "not one mlsched can count"}},
		{"custom domain", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 3).node("FusedGemm", ins("x"), ins("y")).output("y")
			b.g.Node[0].Domain = proto.String("com.microsoft")
			return b.bytes(t)
		}, -1, ErrUnsupported, []string{"node y_node (com.microsoft.FusedGemm)", "domain com.microsoft"}},
		{"no batch axis", func(t *testing.T) []byte {
			return newBuilder().input("x", float, 1, 3).node("Relu", ins("x"), ins("y")).output("y").bytes(t)
		}, -1, ErrBatchAxis, []string{"input x [1 3] has no dynamic dimension", "dynamic_axes"}},
		{"two dynamic axes", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, -2).node("Relu", ins("x"), ins("y")).output("y").bytes(t)
		}, -1, ErrBatchAxis, []string{"input x [N ?] has 2 dynamic axes [0 1]", "batch_axis"}},
		{"two dynamic axes, one named", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, -2).node("Relu", ins("x"), ins("y")).output("y").bytes(t)
		}, 0, ErrBatchAxis, []string{"dynamic axes [1] besides the batch axis 0"}},
		{"batch axis out of range", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, 3).node("Relu", ins("x"), ins("y")).output("y").bytes(t)
		}, 2, ErrBatchAxis, []string{"batch_axis 2 is not an axis"}},
		{"integer input", func(t *testing.T) []byte {
			return newBuilder().input("ids", onnxpb.TensorProto_INT64, -1, 16).node("Cast", ins("ids"), ins("y"), aInt("to", 1)).output("y").bytes(t)
		}, -1, ErrUnsupported, []string{"input ids is INT64", "float32"}},
		{"two inputs", func(t *testing.T) []byte {
			return newBuilder().input("a", float, -1, 3).input("b", float, -1, 3).node("Add", ins("a", "b"), ins("y")).output("y").bytes(t)
		}, -1, ErrUnsupported, []string{"2 inputs (a, b)"}},
		{"two outputs", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, 3).node("Relu", ins("x"), ins("y")).node("Neg", ins("x"), ins("z")).
				output("y").output("z").bytes(t)
		}, -1, ErrUnsupported, []string{"2 outputs"}},
		{"external weights", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 3)
			w := b.weights("w", 3, 3)
			b.g.Initializer[0].RawData = nil
			b.g.Initializer[0].DataLocation = onnxpb.TensorProto_EXTERNAL.Enum()
			return b.node("MatMul", ins("x", w), ins("y")).output("y").bytes(t)
		}, -1, ErrUnsupported, []string{"initializer w", "external file"}},
		{"short weights", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 3)
			w := b.weights("w", 3, 3)
			b.g.Initializer[0].RawData = b.g.Initializer[0].RawData[:20]
			return b.node("MatMul", ins("x", w), ins("y")).output("y").bytes(t)
		}, -1, ErrNotONNX, []string{"initializer w", "raw_data holds 20 bytes", "need 36"}},
		{"double weights", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 3)
			b.g.Initializer = append(b.g.Initializer, &onnxpb.TensorProto{Name: proto.String("w"), Dims: []int64{3},
				DataType: proto.Int32(int32(onnxpb.TensorProto_DOUBLE)), DoubleData: []float64{1, 2, 3}})
			return b.node("Mul", ins("x", "w"), ins("y")).output("y").bytes(t)
		}, -1, ErrUnsupported, []string{"initializer w holds DOUBLE weights"}},
		{"fixed batch in a reshape", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 3, 4)
			return b.node("Reshape", ins("x", b.ints("s", 1, 12)), ins("y")).output("y").bytes(t)
		}, -1, ErrShape, []string{"node y_node (Reshape)", "cannot reshape [2 3 4]", "dynamic batch axis"}},
		{"data-dependent shape", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 2)
			b.node("Cast", ins("x"), ins("s"), aInt("to", int64(onnxpb.TensorProto_INT64)))
			return b.node("Reshape", ins("x", "s"), ins("y")).output("y").bytes(t)
		}, -1, ErrUnsupported, []string{"node y_node (Reshape)", "input 1 (s) is computed from data at run time"}},
		{"mismatched matmul", func(t *testing.T) []byte {
			b := newBuilder().input("x", float, -1, 3)
			return b.node("MatMul", ins("x", b.weights("w", 4, 2)), ins("y")).output("y").bytes(t)
		}, -1, ErrShape, []string{"node y_node (MatMul)", "inner dimensions 3 and 4 differ"}},
		{"missing tensor", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, 3).node("Add", ins("x", "nowhere"), ins("y")).output("y").bytes(t)
		}, -1, ErrNotONNX, []string{"input nowhere is produced by no earlier node"}},
		{"output mixes the batch", func(t *testing.T) []byte {
			return newBuilder().input("x", float, -1, 3).node("ReduceSum", ins("x"), ins("y"), aInt("keepdims", 0)).output("y").bytes(t)
		}, -1, ErrBatchAxis, []string{"output y is [] at batch 1 and [] at batch 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse(tt.bytes(t))
			if err == nil {
				_, err = g.Summarize(max(tt.axis, 0), tt.axis >= 0)
			}
			if !errors.Is(err, tt.is) {
				t.Fatalf("error %v, want one wrapping %v", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

package onnxgraph

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// MaxModelBytes bounds a model file: protobuf cannot encode a message of
// 2 GiB or more, so no valid self-contained ONNX file is larger.
const MaxModelBytes = 1<<31 - 1

// The errors a refusal wraps, for callers and tests that tell them apart.
var (
	// ErrNotONNX: the bytes are not an ONNX model (not protobuf, or a
	// protobuf without a graph, nodes or an operator set).
	ErrNotONNX = errors.New("not an ONNX model")
	// ErrUnsupported: the model uses something the analysis cannot count
	// or the profile cannot run (an operator, a type, external weights).
	ErrUnsupported = errors.New("unsupported")
	// ErrBatchAxis: the input has no batch axis, or several candidates.
	ErrBatchAxis = errors.New("batch axis")
	// ErrShape: a node's inputs do not fit the operator (bad shapes or
	// attributes), so its output cannot be inferred.
	ErrShape = errors.New("shape")
)

// Graph is a parsed ONNX model: its inputs and outputs, its parameters, and
// the nodes that Infer walks. It is read-only once parsed.
type Graph struct {
	// Name is the graph's name as the file gives it.
	Name string
	// Opset is the version of the default ("ai.onnx") operator set.
	Opset int64
	// Inputs are the graph inputs that are not initializers (older
	// exporters list every initializer as an input too), in file order.
	Inputs []Input
	// Outputs are the graph outputs' names, in file order.
	Outputs []string
	// Params is the number of elements of the floating-point initializers:
	// the model's weights. Integer initializers are shapes and indices, not
	// parameters.
	Params int64
	// ParamBytes is the size the floating-point initializers take at the
	// width the file stores them in.
	ParamBytes int64
	// Precision is FP32 or FP16: the element type that holds most of the
	// parameters.
	Precision string

	nodes []*onnxpb.NodeProto
	inits map[string]*onnxpb.TensorProto
}

// The precisions a model's weights can be stored in, as the rest of
// mlsched names them.
const (
	FP32 = "fp32"
	FP16 = "fp16"
)

// Input is a graph input as the file declares it.
type Input struct {
	Name string
	// Elem is the element type.
	Elem onnxpb.TensorProto_DataType
	// Dims are its dimensions, fixed or dynamic.
	Dims []Dim
}

// Dim is one dimension of a declared input: a fixed size, or a dynamic one
// (Value 0), which a symbolic name (Param) may label.
type Dim struct {
	Value int64
	Param string
}

// Dynamic reports whether the dimension's size is left to run time.
func (d Dim) Dynamic() bool { return d.Value <= 0 }

// String writes a dimension as it reads in messages: its size, its
// symbolic name, or "?".
func (d Dim) String() string {
	switch {
	case !d.Dynamic():
		return fmt.Sprint(d.Value)
	case d.Param != "":
		return d.Param
	}
	return "?"
}

// Parse reads a serialized ONNX ModelProto and checks what the analysis
// relies on: a graph with nodes, a default-domain operator set, tensor
// inputs, and initializers whose stored data matches their dimensions and
// lies in the file itself. It looks at no operator yet (Infer does).
func Parse(b []byte) (*Graph, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: the file is empty", ErrNotONNX)
	}
	if len(b) > MaxModelBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than protobuf's 2 GiB limit", ErrNotONNX, len(b))
	}
	var m onnxpb.ModelProto
	if err := proto.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: cannot decode it as protobuf (a truncated or foreign file?): %v", ErrNotONNX, err)
	}
	gp := m.GetGraph()
	switch {
	case m.GetIrVersion() <= 0:
		return nil, fmt.Errorf("%w: no ir_version (a truncated or foreign file?)", ErrNotONNX)
	case gp == nil:
		return nil, fmt.Errorf("%w: no graph (a truncated or foreign file?)", ErrNotONNX)
	case len(gp.GetNode()) == 0:
		return nil, fmt.Errorf("%w: the graph has no nodes", ErrNotONNX)
	}
	g := &Graph{Name: gp.GetName(), nodes: gp.GetNode(), inits: map[string]*onnxpb.TensorProto{}}
	for _, os := range m.GetOpsetImport() {
		if d := os.GetDomain(); d == "" || d == "ai.onnx" {
			g.Opset = os.GetVersion()
		}
	}
	if g.Opset <= 0 {
		return nil, fmt.Errorf("%w: no opset_import for the default ONNX domain (a truncated file?)", ErrNotONNX)
	}
	if len(m.GetFunctions()) > 0 {
		return nil, fmt.Errorf("%w: the model defines %d local functions (%s); mlsched counts only standard operators",
			ErrUnsupported, len(m.GetFunctions()), m.GetFunctions()[0].GetName())
	}
	if len(gp.GetSparseInitializer()) > 0 {
		return nil, fmt.Errorf("%w: sparse initializer %s; mlsched reads dense initializers only",
			ErrUnsupported, gp.GetSparseInitializer()[0].GetValues().GetName())
	}
	var fp32, fp16 int64
	for _, t := range gp.GetInitializer() {
		name := t.GetName()
		if name == "" {
			return nil, fmt.Errorf("%w: an initializer has no name", ErrNotONNX)
		}
		if _, dup := g.inits[name]; dup {
			return nil, fmt.Errorf("%w: initializer %s is defined twice", ErrNotONNX, name)
		}
		if err := checkStored(t); err != nil {
			return nil, fmt.Errorf("initializer %s: %w", name, err)
		}
		g.inits[name] = t
		dt := onnxpb.TensorProto_DataType(t.GetDataType())
		if !isFloat(dt) {
			continue
		}
		n := elements(t.GetDims())
		g.Params += n
		g.ParamBytes += n * int64(width(dt))
		switch dt {
		case onnxpb.TensorProto_FLOAT16:
			fp16 += n
		case onnxpb.TensorProto_FLOAT:
			fp32 += n
		default:
			return nil, fmt.Errorf("%w: initializer %s holds %s weights; mlsched's precisions are fp32 and fp16",
				ErrUnsupported, name, typeName(dt))
		}
	}
	g.Precision = FP32
	if fp16 > fp32 {
		g.Precision = FP16
	}
	for _, vi := range gp.GetInput() {
		if _, ok := g.inits[vi.GetName()]; ok {
			continue
		}
		in, err := inputOf(vi)
		if err != nil {
			return nil, err
		}
		g.Inputs = append(g.Inputs, in)
	}
	for _, vi := range gp.GetOutput() {
		g.Outputs = append(g.Outputs, vi.GetName())
	}
	if len(g.Outputs) == 0 {
		return nil, fmt.Errorf("%w: the graph has no outputs", ErrNotONNX)
	}
	return g, nil
}

// inputOf reads a graph input's declared type and shape.
func inputOf(vi *onnxpb.ValueInfoProto) (Input, error) {
	tt := vi.GetType().GetTensorType()
	if tt == nil {
		return Input{}, fmt.Errorf("%w: input %s is not a tensor (a sequence, map or optional)", ErrUnsupported, vi.GetName())
	}
	in := Input{Name: vi.GetName(), Elem: onnxpb.TensorProto_DataType(tt.GetElemType())}
	if tt.GetShape() == nil {
		return Input{}, fmt.Errorf("%w: input %s declares no shape; export it with one (a dynamic batch axis and fixed sizes elsewhere)",
			ErrBatchAxis, in.Name)
	}
	for _, d := range tt.GetShape().GetDim() {
		in.Dims = append(in.Dims, Dim{Value: d.GetDimValue(), Param: d.GetDimParam()})
	}
	return in, nil
}

// BatchAxis returns the batch axis of the model's one input: its only
// dynamic dimension, or the one axis names (ok set) when it has several.
// Every other dimension must be fixed, since the profile must give the
// input a shape to run it.
func (g *Graph) BatchAxis(axis int, named bool) (int, error) {
	in, err := g.Input()
	if err != nil {
		return 0, err
	}
	var dynamic []int
	for i, d := range in.Dims {
		if d.Dynamic() {
			dynamic = append(dynamic, i)
		}
	}
	shape := dimsString(in.Dims)
	switch {
	case named && (axis < 0 || axis >= len(in.Dims)):
		return 0, fmt.Errorf("%w: batch_axis %d is not an axis of input %s %s (it has %d)", ErrBatchAxis, axis, in.Name, shape, len(in.Dims))
	case named && !in.Dims[axis].Dynamic():
		return 0, fmt.Errorf("%w: batch_axis %d of input %s %s has the fixed size %d; the batch axis must be dynamic",
			ErrBatchAxis, axis, in.Name, shape, in.Dims[axis].Value)
	case named && len(dynamic) > 1:
		return 0, fmt.Errorf("%w: input %s %s has dynamic axes %v besides the batch axis %d; export it with every other axis fixed",
			ErrBatchAxis, in.Name, shape, slices.DeleteFunc(dynamic, func(i int) bool { return i == axis }), axis)
	case named:
		return axis, nil
	case len(dynamic) == 0:
		return 0, fmt.Errorf("%w: input %s %s has no dynamic dimension to batch along; export it with one "+
			"(torch.onnx.export(..., dynamic_axes={%q: {0: \"batch\"}}))", ErrBatchAxis, in.Name, shape, in.Name)
	case len(dynamic) > 1:
		return 0, fmt.Errorf("%w: input %s %s has %d dynamic axes %v; name the batch axis with batch_axis, and fix the others",
			ErrBatchAxis, in.Name, shape, len(dynamic), dynamic)
	}
	return dynamic[0], nil
}

// Input returns the model's one input, refusing a model of none or
// several (the profile feeds one tensor) and one whose elements are not
// float32 (the profile feeds float32 values).
func (g *Graph) Input() (Input, error) {
	switch len(g.Inputs) {
	case 0:
		return Input{}, fmt.Errorf("%w: the graph has no input besides its initializers", ErrUnsupported)
	case 1:
	default:
		names := make([]string, len(g.Inputs))
		for i, in := range g.Inputs {
			names[i] = in.Name
		}
		return Input{}, fmt.Errorf("%w: the graph has %d inputs (%s); mlsched feeds models of one input",
			ErrUnsupported, len(g.Inputs), strings.Join(names, ", "))
	}
	in := g.Inputs[0]
	if in.Elem != onnxpb.TensorProto_FLOAT {
		return Input{}, fmt.Errorf("%w: input %s is %s; mlsched feeds float32 inputs (export with a float32 input, casting inside the graph if need be)",
			ErrUnsupported, in.Name, typeName(in.Elem))
	}
	return in, nil
}

func dimsString(dims []Dim) string {
	s := make([]string, len(dims))
	for i, d := range dims {
		s[i] = d.String()
	}
	return "[" + strings.Join(s, " ") + "]"
}

// Nodes returns how many nodes the graph has.
func (g *Graph) Nodes() int { return len(g.nodes) }

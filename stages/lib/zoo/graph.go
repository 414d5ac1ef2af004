package zoo

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// IRVersion and Opset are the ONNX IR version and default-domain operator set
// every model is written for. IR 8 with opset 17 is the newest pair the onnx
// 1.12 checker the tests run accepts, and onnxruntime 1.24 runs it; opset 17
// is the first with LayerNormalization, and it has no Gelu (opset 20), which
// is why the ViT builds GELU from Erf.
const (
	IRVersion = 8
	Opset     = 17
)

// The precisions a model's weights and activations can be stored in.
const (
	FP32 = "fp32"
	FP16 = "fp16"
)

// Batch stands for the dynamic batch dimension in shapes given to the
// builder and returned by Signature; it is written to the model as the
// symbolic dimension "N".
const Batch = -1

// batchParam is the dim_param the Batch dimension is serialized as.
const batchParam = "N"

// maxModelBytes bounds the tensor bytes one model may hold: protobuf cannot
// serialize a message of 2 GiB or more, and the graph itself needs a little
// room besides the tensors.
const maxModelBytes = 1<<31 - 1<<20

// Precisions returns the valid precision names, fp32 first.
func Precisions() []string { return []string{FP32, FP16} }

// Graph builds one ONNX model: graph inputs and outputs, initializers, nodes
// and constants. Weights and activations inside the graph are stored in the
// graph's precision, while its inputs and outputs are always fp32: an fp16
// graph casts its inputs on the way in and its outputs on the way out.
//
// Methods return the name of the tensor they define so that calls compose.
// The first error (a duplicate or unknown tensor name, a bad shape) is kept
// and returned by Bytes, like bufio.Writer's, so that a model reads as a
// plain sequence of layers.
type Graph struct {
	graph *onnxpb.GraphProto
	elem  onnxpb.TensorProto_DataType // element type inside the graph
	width int                         // bytes per element of elem
	seed  uint64
	doc   string

	defined  map[string]bool   // every tensor name, to refuse duplicates and dangling inputs
	producer map[string]int    // tensor name → index of the node that outputs it
	consts   map[string]string // constant's key → name, so equal constants are shared
	bytes    int64             // tensor bytes so far, against maxModelBytes
	nodes    int
	err      error
}

// NewGraph starts a graph called name whose weights are stored in precision
// (FP32, FP16, or "" for FP32) and whose random initializers derive from
// seed.
func NewGraph(name, precision string, seed int64) (*Graph, error) {
	g, err := newGraph(name, precision, seed)
	if err != nil {
		return nil, fmt.Errorf("zoo: new graph %q: %w", name, err)
	}
	return g, nil
}

// newGraph is NewGraph with errors left for the caller to prefix.
func newGraph(name, precision string, seed int64) (*Graph, error) {
	if name == "" {
		return nil, errors.New("name is empty")
	}
	g := &Graph{
		graph:    &onnxpb.GraphProto{Name: proto.String(name)},
		seed:     uint64(seed),
		defined:  map[string]bool{},
		producer: map[string]int{},
		consts:   map[string]string{},
	}
	switch precision {
	case FP32, "":
		g.elem, g.width = onnxpb.TensorProto_FLOAT, 4
	case FP16:
		g.elem, g.width = onnxpb.TensorProto_FLOAT16, 2
	default:
		return nil, fmt.Errorf("precision %q: %w (valid: %s)", precision, ErrUnknownPrecision, strings.Join(Precisions(), ", "))
	}
	return g, nil
}

// SetDoc sets the model's doc string, which tools such as Netron show; the
// zoo records the architecture, seed and precision there.
func (g *Graph) SetDoc(doc string) { g.doc = doc }

// Input declares an fp32 graph input of the given shape (Batch for the
// dynamic batch dimension) and returns the tensor that carries it in the
// graph's precision.
func (g *Graph) Input(name string, shape []int64) string {
	if !g.define(name) {
		return name
	}
	vi, err := valueInfo(name, shape)
	if err != nil {
		g.fail(fmt.Errorf("input %s: %w", name, err))
		return name
	}
	g.graph.Input = append(g.graph.Input, vi)
	if g.elem == onnxpb.TensorProto_FLOAT {
		return name
	}
	return g.Node("Cast", []string{name}, AttrInt("to", int64(g.elem)))
}

// Output declares x, a tensor in the graph's precision, as the fp32 graph
// output name of the given shape. In an fp32 graph x's producer is renamed
// so that no Identity node is added.
func (g *Graph) Output(name, x string, shape []int64) {
	vi, err := valueInfo(name, shape)
	if err != nil {
		g.fail(fmt.Errorf("output %s: %w", name, err))
		return
	}
	i, produced := g.producer[x]
	switch {
	case g.elem != onnxpb.TensorProto_FLOAT:
		g.nodeNamed(name, "Cast", []string{x}, AttrInt("to", int64(onnxpb.TensorProto_FLOAT)))
	case produced && g.graph.Node[i].GetOpType() != "Constant": // constants are shared under their name

		if !g.define(name) {
			return
		}
		for _, n := range g.graph.Node {
			for j, in := range n.Input {
				if in == x {
					n.Input[j] = name
				}
			}
		}
		n := g.graph.Node[i]
		n.Output[slices.Index(n.Output, x)] = name
		delete(g.producer, x)
		delete(g.defined, x)
		g.producer[name] = i
	default:
		// x is a graph input, an initializer or a constant: an output
		// needs a node of its own.
		g.nodeNamed(name, "Identity", []string{x})
	}
	g.graph.Output = append(g.graph.Output, vi)
}

// Uniform adds an initializer of the given dimensions drawn uniformly from
// [-bound, bound) and returns its name. Its values depend only on the
// graph's seed and on name, so adding a layer leaves every other layer's
// weights unchanged; an fp16 graph stores the fp32 values rounded to half.
func (g *Graph) Uniform(name string, dims []int64, bound float64) string {
	src := rand.NewPCG(g.seed, nameHash(name))
	// Each 64-bit draw gives two 24-bit integers k. float32 holds k − 2²³,
	// in [−2²³, 2²³), exactly, and scaling it by bound/2²³ rounds once,
	// never up to +bound: 24 random bits, as many as a float32 carries.
	unit := float32(bound) / (1 << 23)
	var spare uint64
	odd := false
	return g.initializer(name, dims, func(dst []float32) {
		for i := range dst {
			if !odd {
				spare = src.Uint64()
				dst[i] = float32(int32(spare>>40)-1<<23) * unit
			} else {
				dst[i] = float32(int32(spare>>8&(1<<24-1))-1<<23) * unit
			}
			odd = !odd
		}
	})
}

// Fill adds an initializer whose elements all equal v, as layer-norm scales
// (1) and shifts (0) start out, and returns its name.
func (g *Graph) Fill(name string, dims []int64, v float32) string {
	return g.initializer(name, dims, func(dst []float32) {
		for i := range dst {
			dst[i] = v
		}
	})
}

// Weights adds an initializer holding values, in row-major order, for
// example trained weights, and returns its name.
func (g *Graph) Weights(name string, dims []int64, values []float32) string {
	if n, err := elements(dims); err == nil && n != int64(len(values)) {
		g.fail(fmt.Errorf("initializer %s: %d values for dimensions %v (%d elements)", name, len(values), dims, n))
		return name
	}
	return g.initializer(name, dims, func(dst []float32) {
		values = values[copy(dst, values):]
	})
}

// Describe sets the doc string of the tensor initializer name, used to say
// how a parameter relates to the reference model (a folded batch norm).
func (g *Graph) Describe(name, doc string) {
	for _, t := range g.graph.Initializer {
		if t.GetName() == name {
			t.DocString = proto.String(doc)
			return
		}
	}
	g.fail(fmt.Errorf("describe %s: no such initializer", name))
}

// Scalar returns a rank-0 constant holding v in the graph's precision,
// shared by every caller asking for the same value.
func (g *Graph) Scalar(v float32) string {
	key := "scalar " + strconv.FormatUint(uint64(math.Float32bits(v)), 16)
	return g.constant(key, func() *onnxpb.TensorProto {
		return &onnxpb.TensorProto{
			DataType: proto.Int32(int32(g.elem)),
			RawData:  g.encode(1, func(dst []float32) { dst[0] = v }),
		}
	})
}

// Int64s returns a rank-1 int64 constant holding values, as Reshape shapes
// and Pad widths are given; equal constants are shared.
func (g *Graph) Int64s(values ...int64) string {
	return g.int64Constant(fmt.Sprint("int64s ", values), []int64{int64(len(values))}, values)
}

// Int64Scalar returns a rank-0 int64 constant, as a Gather index that drops
// the gathered axis is given.
func (g *Graph) Int64Scalar(v int64) string {
	return g.int64Constant(fmt.Sprint("int64 ", v), nil, []int64{v})
}

// Op adds a node without attributes and returns its output.
func (g *Graph) Op(op string, inputs ...string) string {
	return g.Node(op, inputs)
}

// Node adds a node of the default domain with one output, named after the
// operator and the node count, and returns that output. Every input must
// already be defined, which also keeps the nodes in topological order; an
// empty input leaves an optional input out.
func (g *Graph) Node(op string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	g.nodes++
	return g.nodeNamed(op+"_"+strconv.Itoa(g.nodes), op, inputs, attrs...)
}

// Bytes returns the serialized ModelProto, or the first error met while
// building. Serialization is deterministic: the same calls give the same
// bytes.
func (g *Graph) Bytes() ([]byte, error) {
	b, err := g.serialize()
	if err != nil {
		return nil, fmt.Errorf("zoo: graph %s: %w", g.graph.GetName(), err)
	}
	return b, nil
}

// serialize is Bytes with errors left for the caller to prefix.
func (g *Graph) serialize() ([]byte, error) {
	if g.err != nil {
		return nil, g.err
	}
	if len(g.graph.Output) == 0 {
		return nil, errors.New("no output")
	}
	m := &onnxpb.ModelProto{
		IrVersion:    proto.Int64(IRVersion),
		OpsetImport:  []*onnxpb.OperatorSetIdProto{{Domain: proto.String(""), Version: proto.Int64(Opset)}},
		ProducerName: proto.String("mlsched"),
		Graph:        g.graph,
	}
	if g.doc != "" {
		m.DocString = proto.String(g.doc)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("serialize: %w", err)
	}
	return b, nil
}

// nodeNamed adds a node whose single output is called out.
func (g *Graph) nodeNamed(out, op string, inputs []string, attrs ...*onnxpb.AttributeProto) string {
	for _, in := range inputs {
		if in != "" && !g.defined[in] {
			g.fail(fmt.Errorf("node %s (%s): input %q is not defined", out, op, in))
			return out
		}
	}
	if !g.define(out) {
		return out
	}
	g.producer[out] = len(g.graph.Node)
	g.graph.Node = append(g.graph.Node, &onnxpb.NodeProto{
		Name:      proto.String(out),
		OpType:    proto.String(op),
		Input:     slices.Clone(inputs),
		Output:    []string{out},
		Attribute: attrs,
	})
	return out
}

// initializer adds a tensor in the graph's precision whose elements fill
// writes, in order, a chunk at a time.
func (g *Graph) initializer(name string, dims []int64, fill func(dst []float32)) string {
	n, err := elements(dims)
	if err != nil {
		g.fail(fmt.Errorf("initializer %s: %w", name, err))
		return name
	}
	if !g.reserve(name, n*int64(g.width)) || !g.define(name) {
		return name
	}
	g.graph.Initializer = append(g.graph.Initializer, &onnxpb.TensorProto{
		Name:     proto.String(name),
		Dims:     slices.Clone(dims),
		DataType: proto.Int32(int32(g.elem)),
		RawData:  g.encode(int(n), fill),
	})
	return name
}

// encode writes n elements, produced by fill a chunk at a time, in the
// graph's precision as raw_data wants them: fixed width, little-endian.
// raw_data rather than float_data keeps fp16 at two bytes an element and
// lets the serializer copy one slice per tensor; the chunks keep the fp32
// staging buffer small however large the tensor.
func (g *Graph) encode(n int, fill func(dst []float32)) []byte {
	raw := make([]byte, n*g.width)
	var chunk [4096]float32
	for done := 0; done < n; {
		c := chunk[:min(len(chunk), n-done)]
		fill(c)
		out := raw[done*g.width:]
		if g.elem == onnxpb.TensorProto_FLOAT {
			for i, v := range c {
				binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
			}
		} else {
			for i, v := range c {
				binary.LittleEndian.PutUint16(out[2*i:], float16Bits(v))
			}
		}
		done += len(c)
	}
	return raw
}

// constant adds a Constant node whose value make builds, once per key.
// Constants are nodes rather than initializers so that the initializers are
// exactly the model's parameters.
func (g *Graph) constant(key string, make func() *onnxpb.TensorProto) string {
	if name, ok := g.consts[key]; ok {
		return name
	}
	g.nodes++
	name := "Constant_" + strconv.Itoa(g.nodes)
	g.consts[key] = name
	return g.nodeNamed(name, "Constant", nil, &onnxpb.AttributeProto{
		Name: proto.String("value"),
		Type: onnxpb.AttributeProto_TENSOR.Enum(),
		T:    make(),
	})
}

func (g *Graph) int64Constant(key string, dims, values []int64) string {
	return g.constant(key, func() *onnxpb.TensorProto {
		return &onnxpb.TensorProto{
			Dims:      dims,
			DataType:  proto.Int32(int32(onnxpb.TensorProto_INT64)),
			Int64Data: slices.Clone(values),
		}
	})
}

// define records a new tensor name, failing on an empty or duplicate one.
func (g *Graph) define(name string) bool {
	switch {
	case g.err != nil:
		return false
	case name == "":
		g.fail(errors.New("empty tensor name"))
		return false
	case g.defined[name]:
		g.fail(fmt.Errorf("tensor %q defined twice", name))
		return false
	}
	g.defined[name] = true
	return true
}

// reserve accounts for n more tensor bytes, failing past protobuf's limit.
func (g *Graph) reserve(name string, n int64) bool {
	if g.bytes+n > maxModelBytes {
		g.fail(fmt.Errorf("initializer %s: %d bytes would take the model past protobuf's 2 GiB limit", name, n))
		return false
	}
	g.bytes += n
	return true
}

// fail keeps the first error, which Bytes returns.
func (g *Graph) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// elements is the element count of a tensor with fixed dimensions.
func elements(dims []int64) (int64, error) {
	n := int64(1)
	for _, d := range dims {
		if d <= 0 {
			return 0, fmt.Errorf("dimensions %v: each must be positive", dims)
		}
		if n > maxModelBytes/d {
			return 0, fmt.Errorf("dimensions %v: too many elements", dims)
		}
		n *= d
	}
	return n, nil
}

// valueInfo describes an fp32 graph input or output.
func valueInfo(name string, shape []int64) (*onnxpb.ValueInfoProto, error) {
	dims := make([]*onnxpb.TensorShapeProto_Dimension, len(shape))
	for i, d := range shape {
		switch {
		case d == Batch:
			dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimParam{DimParam: batchParam}}
		case d > 0:
			dims[i] = &onnxpb.TensorShapeProto_Dimension{Value: &onnxpb.TensorShapeProto_Dimension_DimValue{DimValue: d}}
		default:
			return nil, fmt.Errorf("shape %v: dimension %d must be positive or Batch", shape, i)
		}
	}
	return &onnxpb.ValueInfoProto{
		Name: proto.String(name),
		Type: &onnxpb.TypeProto{Value: &onnxpb.TypeProto_TensorType{TensorType: &onnxpb.TypeProto_Tensor{
			ElemType: proto.Int32(int32(onnxpb.TensorProto_FLOAT)),
			Shape:    &onnxpb.TensorShapeProto{Dim: dims},
		}}},
	}, nil
}

// nameHash picks a tensor's random stream from its name.
func nameHash(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return h.Sum64()
}

// AttrInt returns an integer node attribute.
func AttrInt(name string, v int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INT.Enum(), I: proto.Int64(v)}
}

// AttrInts returns an integer-list node attribute, as kernel shapes, strides,
// pads and permutations are given.
func AttrInts(name string, v ...int64) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_INTS.Enum(), Ints: v}
}

// AttrFloat returns a float node attribute.
func AttrFloat(name string, v float32) *onnxpb.AttributeProto {
	return &onnxpb.AttributeProto{Name: proto.String(name), Type: onnxpb.AttributeProto_FLOAT.Enum(), F: proto.Float32(v)}
}

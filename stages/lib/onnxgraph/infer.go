package onnxgraph

import (
	"errors"
	"fmt"

	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// maxElements bounds any tensor the analysis infers: far beyond what any
// machine holds, it keeps products of dimensions from overflowing int64.
const maxElements = 1 << 50

// Tensor is one tensor of a pass: its name, element type and shape at the
// pass's batch size.
type Tensor struct {
	Name  string
	Elem  onnxpb.TensorProto_DataType
	Shape []int64
}

// Elements is the tensor's element count.
func (t Tensor) Elements() int64 { return elements(t.Shape) }

// Bytes is the tensor's size at its element type's width.
func (t Tensor) Bytes() int64 { return t.Elements() * int64(width(t.Elem)) }

// Node is one operator of a pass and what it costs there: the figures a
// per-operator latency model needs (nn-Meter's kernel-level view, Zhang et
// al., MobiSys 2021) and that the model's totals sum.
type Node struct {
	// Name is the node's name, or its first output's when it has none.
	Name string
	// Op is the operator type, e.g. "Conv".
	Op string
	// Inputs are the node's inputs in order, an absent optional input
	// with an empty Name; Outputs its outputs.
	Inputs, Outputs []Tensor
	// MACs are the multiply-adds of a matrix operator (Conv,
	// ConvTranspose, Gemm, MatMul), 0 for any other.
	MACs int64
	// FLOPs are the node's arithmetic: 2·MACs for a matrix operator, and
	// for the others an operation count per element (doc.go).
	FLOPs int64
	// BytesRead are the bytes of the node's inputs, parameters included;
	// BytesWritten those of its outputs; ParamBytes the share of
	// BytesRead that is initializers.
	BytesRead, BytesWritten, ParamBytes int64
	// Folded marks a node whose inputs are all constants (initializers
	// and constant nodes): a runtime computes it once when it loads the
	// model, and it costs nothing per run. Its figures count in no total.
	Folded bool
	// Activation marks a node whose outputs count toward the model's
	// activation bytes: not a view (Reshape), not an element-wise
	// operator a runtime fuses or runs in place (doc.go).
	Activation bool
}

// Pass is the graph's tensors and nodes at one batch size.
type Pass struct {
	// Batch is the batch size the input was given.
	Batch int64
	// Input is the graph's input at that size.
	Input Tensor
	// Nodes are the graph's nodes in file (topological) order.
	Nodes []Node
	// Outputs are the graph's outputs.
	Outputs []Tensor
}

// NodeError is a node's refusal: what is wrong, and where.
type NodeError struct {
	// Node is the node's name (its first output's when it has none), Op
	// its operator type.
	Node, Op string
	Err      error
}

func (e *NodeError) Error() string { return fmt.Sprintf("node %s (%s): %v", e.Node, e.Op, e.Err) }

// Unwrap returns the underlying error.
func (e *NodeError) Unwrap() error { return e.Err }

// tensor is what a pass knows of a tensor while it walks the graph.
type tensor struct {
	elem  onnxpb.TensorProto_DataType
	shape []int64
	// batched says that the tensor derives from the graph input: its
	// contents, and maybe its size, change from run to run.
	batched bool
	// param says that it is an initializer.
	param bool
	// val is its contents where it is small and known; init, for an
	// initializer, where to read them when first asked.
	val  *value
	init *onnxpb.TensorProto
}

// values returns the tensor's contents, or nil where unknown.
func (t *tensor) values() *value {
	if t.val == nil && t.init != nil {
		t.val, t.init = valueOf(t.init), nil
	}
	return t.val
}

// Infer walks the graph with its input's batch axis (see BatchAxis) set to
// batch and every other dimension as declared, infers every tensor's shape
// and counts every node. A node the analysis cannot infer, because its
// operator is one it does not know or its inputs do not fit, stops the
// pass with a *NodeError naming it.
func (g *Graph) Infer(axis int, batch int64) (*Pass, error) {
	in, err := g.Input()
	if err != nil {
		return nil, err
	}
	if axis < 0 || axis >= len(in.Dims) || batch < 1 {
		return nil, fmt.Errorf("%w: batch axis %d, batch %d: not an axis of input %s %s, or not a batch size",
			ErrBatchAxis, axis, batch, in.Name, dimsString(in.Dims))
	}
	shape := make([]int64, len(in.Dims))
	for i, d := range in.Dims {
		switch {
		case i == axis:
			shape[i] = batch
		case d.Dynamic():
			return nil, fmt.Errorf("%w: input %s %s: axis %d is dynamic besides the batch axis %d", ErrBatchAxis, in.Name, dimsString(in.Dims), i, axis)
		default:
			shape[i] = d.Value
		}
	}
	env := make(map[string]*tensor, len(g.inits)+len(g.nodes))
	for name, t := range g.inits {
		env[name] = &tensor{elem: onnxpb.TensorProto_DataType(t.GetDataType()), shape: t.GetDims(), param: true, init: t}
	}
	env[in.Name] = &tensor{elem: in.Elem, shape: shape, batched: true}
	p := &Pass{Batch: batch, Input: Tensor{Name: in.Name, Elem: in.Elem, Shape: shape}, Nodes: make([]Node, 0, len(g.nodes))}
	for i, n := range g.nodes {
		node, err := g.inferNode(env, n)
		if err != nil {
			name := n.GetName()
			if name == "" {
				name = fmt.Sprintf("#%d", i)
				if len(n.GetOutput()) > 0 {
					name = n.GetOutput()[0]
				}
			}
			return nil, &NodeError{Node: name, Op: opName(n), Err: err}
		}
		if node.Name == "" {
			node.Name = fmt.Sprintf("#%d", i)
		}
		p.Nodes = append(p.Nodes, node)
	}
	for _, name := range g.Outputs {
		t, ok := env[name]
		if !ok {
			return nil, fmt.Errorf("%w: graph output %s is produced by no node", ErrNotONNX, name)
		}
		p.Outputs = append(p.Outputs, Tensor{Name: name, Elem: t.elem, Shape: t.shape})
	}
	return p, nil
}

// opName is a node's operator as messages name it: with its domain where
// it is not the default one.
func opName(n *onnxpb.NodeProto) string {
	if d := n.GetDomain(); d != "" && d != "ai.onnx" {
		return d + "." + n.GetOpType()
	}
	return n.GetOpType()
}

// inferNode infers one node's outputs into env and returns its figures.
func (g *Graph) inferNode(env map[string]*tensor, n *onnxpb.NodeProto) (Node, error) {
	node := Node{Name: n.GetName(), Op: n.GetOpType()}
	if node.Name == "" && len(n.GetOutput()) > 0 {
		node.Name = n.GetOutput()[0]
	}
	if d := n.GetDomain(); d != "" && d != "ai.onnx" {
		return node, fmt.Errorf("%w: operator %s of domain %s: mlsched counts only the standard ONNX operators (doc: docs/models.md)",
			ErrUnsupported, n.GetOpType(), d)
	}
	o, ok := ops[n.GetOpType()]
	if !ok {
		return node, fmt.Errorf("%w: operator %s (opset %d) is not one mlsched can count; the ones it can are listed in docs/models.md",
			ErrUnsupported, n.GetOpType(), g.Opset)
	}
	c := &nodeCtx{n: n, opset: g.Opset, in: make([]*tensor, len(n.GetInput())), out: make([]*tensor, len(n.GetOutput()))}
	batched := 0
	for i, name := range n.GetInput() {
		if name == "" {
			continue
		}
		t, ok := env[name]
		if !ok {
			return node, fmt.Errorf("%w: input %s is produced by no earlier node (the graph is out of order or names a missing tensor)", ErrNotONNX, name)
		}
		c.in[i] = t
		if t.batched {
			batched++
		}
	}
	if err := o.infer(c); err != nil {
		if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrShape) {
			return node, err
		}
		return node, fmt.Errorf("%w: %w", ErrShape, err)
	}
	for i, name := range n.GetOutput() {
		if name == "" {
			continue
		}
		t := c.out[i]
		if t == nil {
			return node, fmt.Errorf("%w: output %d (%s) is one mlsched does not infer", ErrUnsupported, i, name)
		}
		for _, d := range t.shape {
			if d < 0 {
				return node, fmt.Errorf("%w: output %s would have shape %s", ErrShape, name, shapeString(t.shape))
			}
		}
		if elements(t.shape) > maxElements {
			return node, fmt.Errorf("%w: output %s would have %s elements", ErrShape, name, shapeString(t.shape))
		}
		if _, dup := env[name]; dup {
			return node, fmt.Errorf("%w: tensor %s is defined twice", ErrNotONNX, name)
		}
		// A batched tensor's contents are known only where they derive
		// from the input's shape (Shape, then Gather, Concat...), which a
		// pass fixes: the graph input itself has no known values.
		t.batched = batched > 0
		env[name] = t
	}
	node.Folded = batched == 0
	node.Inputs, node.Outputs = tensorsOf(n.GetInput(), c.in), tensorsOf(n.GetOutput(), c.out)
	for i, t := range node.Inputs {
		node.BytesRead += t.Bytes()
		if c.in[i] != nil && c.in[i].param {
			node.ParamBytes += t.Bytes()
		}
	}
	for _, t := range node.Outputs {
		node.BytesWritten += t.Bytes()
	}
	node.MACs, node.FLOPs = c.macs, c.flops
	if c.macs > 0 {
		node.FLOPs = 2 * c.macs
	}
	switch o.class {
	case classCompute:
		node.Activation = !node.Folded
	case classElementwise:
		node.Activation = batched >= 2
	}
	return node, nil
}

// tensorsOf describes a node's inputs or outputs, an absent one (an
// optional input left out, an output not asked for) as Tensor{}, which
// has no bytes.
func tensorsOf(names []string, ts []*tensor) []Tensor {
	out := make([]Tensor, len(ts))
	for i, t := range ts {
		if t != nil {
			out[i] = Tensor{Name: names[i], Elem: t.elem, Shape: t.shape}
		}
	}
	return out
}

package placementnet

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/mlsched/mlsched/stages/lib/sim"
	"github.com/mlsched/mlsched/stages/lib/zoo/onnxpb"
)

// maxLayers and maxWidth bound the networks LoadGo reads: the train
// stage exports three layers 64 wide; the bounds only keep a hostile
// model from asking for gigabytes.
const (
	maxLayers = 16
	maxWidth  = 4096
)

// dense is one fully connected layer of the network as read from the
// graph: y = W·x + b, W [out][in] row-major.
type dense struct {
	in, out int
	w, b    []float32
}

// layers reads the network after the standardisation, as the train stage
// exports it: Gemm(z, W, B) with transB = 1, W [out, in] and B [out]
// float32 initializers, each hidden layer followed by Relu, the last one,
// one wide, by Sigmoid, whose output is the graph's. No other node may
// read any of these values, and the graph may have no other node. Each
// error names the node or initializer at fault.
func (g *graph) layers() ([]dense, error) {
	x, in := g.z, sim.NumFeatures
	var ls []dense
	visited := 4 // the standardisation's Mul, Asinh, Sub and Div
	for {
		n, err := g.only(x, "Gemm")
		if err != nil {
			return nil, err
		}
		if len(ls) == maxLayers {
			return nil, fmt.Errorf("more than %d Gemm layers", maxLayers)
		}
		l, err := g.gemm(n, x, in)
		if err != nil {
			return nil, fmt.Errorf("layer %d (%s): %w", len(ls)+1, n.GetName(), err)
		}
		ls = append(ls, l)
		visited++
		x, in = n.GetOutput()[0], l.out
		rs := g.readers[x]
		if len(rs) != 1 {
			return nil, fmt.Errorf("the output of layer %d (%s) is read by %d nodes, want one Relu or Sigmoid", len(ls), n.GetName(), len(rs))
		}
		act := rs[0]
		if len(act.GetInput()) != 1 || len(act.GetOutput()) != 1 || act.GetDomain() != "" || len(act.GetAttribute()) != 0 {
			return nil, fmt.Errorf("the output of layer %d (%s) is read by %s(%d inputs, %d attributes), want Relu or Sigmoid of it alone",
				len(ls), n.GetName(), act.GetOpType(), len(act.GetInput()), len(act.GetAttribute()))
		}
		visited++
		x = act.GetOutput()[0]
		switch act.GetOpType() {
		case "Relu":
			if x == g.output {
				return nil, fmt.Errorf("the graph's output %q is Relu of layer %d (%s), want Sigmoid of the last layer", x, len(ls), n.GetName())
			}
			continue
		case "Sigmoid":
		default:
			return nil, fmt.Errorf("the output of layer %d (%s) is read by %s, want Relu or Sigmoid", len(ls), n.GetName(), act.GetOpType())
		}
		switch {
		case x != g.output:
			return nil, fmt.Errorf("Sigmoid after layer %d gives %q, want the graph's output %q", len(ls), x, g.output)
		case len(g.readers[x]) != 0:
			return nil, fmt.Errorf("the graph's output %q is read by %d nodes, want none", x, len(g.readers[x]))
		case in != 1:
			return nil, fmt.Errorf("the last layer (%s) is %d wide, want 1", n.GetName(), in)
		case visited != g.nodes:
			return nil, fmt.Errorf("graph has %d nodes, want only the %d of the standardisation and the layers", g.nodes, visited)
		}
		return ls, nil
	}
}

// only returns the one node that reads x, which must be an op node of
// the default domain with one output.
func (g *graph) only(x, op string) (*onnxpb.NodeProto, error) {
	rs := g.readers[x]
	if len(rs) != 1 {
		return nil, fmt.Errorf("%s is read by %d nodes, want one %s", x, len(rs), op)
	}
	n := rs[0]
	if n.GetOpType() != op || n.GetDomain() != "" || len(n.GetOutput()) != 1 {
		return nil, fmt.Errorf("%s is read by %s, want %s", x, n.GetOpType(), op)
	}
	return n, nil
}

// gemm reads the Gemm node n, whose first input is x, in wide: its
// attributes must leave it W·x + B (transB = 1; alpha, beta 1 and transA
// 0 if given), its weights finite.
func (g *graph) gemm(n *onnxpb.NodeProto, x string, in int) (dense, error) {
	ins := n.GetInput()
	if len(ins) != 3 || ins[0] != x {
		return dense{}, fmt.Errorf("inputs %q, want [%s, weight, bias]", ins, x)
	}
	transB := false
	for _, a := range n.GetAttribute() {
		ok := false
		switch a.GetName() {
		case "transB":
			transB = a.GetI() == 1
			ok = a.GetI() == 0 || transB
		case "transA":
			ok = a.GetI() == 0
		case "alpha", "beta":
			ok = a.GetF() == 1
		}
		if !ok {
			return dense{}, fmt.Errorf("attribute %s = %v, want transB 1, transA 0, alpha and beta 1", a.GetName(), attrValue(a))
		}
	}
	if !transB {
		return dense{}, errors.New("transB is not 1: want the weight as [out, in], nn.Linear's layout")
	}
	w, wdims, err := g.floats(ins[1])
	if err != nil {
		return dense{}, err
	}
	if len(wdims) != 2 || wdims[1] != int64(in) || wdims[0] < 1 || wdims[0] > maxWidth {
		return dense{}, fmt.Errorf("weight %q has shape %v, want [out, %d] with out from 1 to %d", ins[1], wdims, in, maxWidth)
	}
	out := int(wdims[0])
	b, bdims, err := g.floats(ins[2])
	if err != nil {
		return dense{}, err
	}
	if !slices.Equal(bdims, []int64{int64(out)}) {
		return dense{}, fmt.Errorf("bias %q has shape %v, want [%d]", ins[2], bdims, out)
	}
	return dense{in: in, out: out, w: w, b: b}, nil
}

// floats returns the values and shape of the float32 initializer name
// (tensorFloats), every value finite: an infinite weight times a zero
// input is NaN in one order of summation and not another.
func (g *graph) floats(name string) ([]float32, []int64, error) {
	t, ok := g.inits[name]
	if !ok {
		return nil, nil, fmt.Errorf("%q is not an initializer", name)
	}
	v, err := tensorFloats(t)
	if err != nil {
		return nil, nil, fmt.Errorf("initializer %q: %w", name, err)
	}
	for k, x := range v {
		if f := float64(x); math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, nil, fmt.Errorf("initializer %q: value %d is %v", name, k, x)
		}
	}
	return v, t.GetDims(), nil
}

// attrValue is an attribute's value for an error message.
func attrValue(a *onnxpb.AttributeProto) any {
	if a.GetType() == onnxpb.AttributeProto_FLOAT {
		return a.GetF()
	}
	return a.GetI()
}

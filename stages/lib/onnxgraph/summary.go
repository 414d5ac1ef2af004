package onnxgraph

import (
	"fmt"
	"slices"
)

// bytesPerFP32 is the width every catalog byte figure assumes, whatever
// the file stores (package catalog's convention).
const bytesPerFP32 = 4

// Summary is what the catalog holds of a model, derived from its graph:
// the figures a zoo model's catalog entry has, under the same
// conventions (package catalog).
type Summary struct {
	// Input is the input's name; InputShape one sample's shape, without
	// the batch axis; BatchAxis where the batch axis sits in the input.
	Input      string
	InputShape []int64
	BatchAxis  int
	// Output, OutputShape and OutputBatchAxis are the same of the output.
	Output          string
	OutputShape     []int64
	OutputBatchAxis int
	// Precision is what the file's weights are stored in, FP32 or FP16.
	Precision string
	// Params is the number of floating-point initializer elements.
	Params int64
	// FLOPsPerSample is 2 × the multiply-adds of one sample's Conv,
	// ConvTranspose, Gemm and MatMul nodes.
	FLOPsPerSample int64
	// InputBytesPerSample, ActivationBytesPerSample and WeightBytes are
	// fp32 sizes: one sample's input, the outputs of one sample's nodes
	// that count as activations (Node.Activation), and the parameters.
	InputBytesPerSample      int64
	ActivationBytesPerSample int64
	WeightBytes              int64
}

// Summarize derives the model's catalog figures. axis names the batch
// axis where named is set (see BatchAxis). The model must have one
// float32 input and one output whose size follows the batch along one
// axis; the per-sample figures are the growth from one sample to two, and
// must grow in proportion to the batch (checked at four).
func (g *Graph) Summarize(axis int, named bool) (Summary, error) {
	a, err := g.BatchAxis(axis, named)
	if err != nil {
		return Summary{}, err
	}
	if len(g.Outputs) != 1 {
		return Summary{}, fmt.Errorf("%w: the graph has %d outputs (%v); mlsched runs models of one output", ErrUnsupported, len(g.Outputs), g.Outputs)
	}
	var passes [3]*Pass
	var totals [3]totals
	for i, b := range []int64{1, 2, 4} {
		if passes[i], err = g.Infer(a, b); err != nil {
			return Summary{}, err
		}
		totals[i] = totalsOf(passes[i])
	}
	per := totals[1].minus(totals[0])
	if totals[2].minus(totals[1]) != per.times(2) {
		return Summary{}, fmt.Errorf("%w: the model's work does not grow in proportion to the batch "+
			"(%d multiply-adds at batch 1, %d at 2, %d at 4); does a node mix the samples of a batch?",
			ErrBatchAxis, totals[0].macs, totals[1].macs, totals[2].macs)
	}
	out1, out2 := passes[0].Outputs[0], passes[1].Outputs[0]
	outAxis, differ := -1, 0
	for i := range min(len(out1.Shape), len(out2.Shape)) {
		if out2.Shape[i] != out1.Shape[i] {
			differ++
			if out1.Shape[i] == 1 && out2.Shape[i] == 2 {
				outAxis = i
			}
		}
	}
	if differ != 1 || outAxis < 0 || len(out1.Shape) != len(out2.Shape) {
		return Summary{}, fmt.Errorf("%w: output %s is %s at batch 1 and %s at batch 2; mlsched needs one output axis that follows the batch",
			ErrBatchAxis, out1.Name, shapeString(out1.Shape), shapeString(out2.Shape))
	}
	in := passes[0].Input
	return Summary{
		Input:                    in.Name,
		InputShape:               slices.Delete(slices.Clone(in.Shape), a, a+1),
		BatchAxis:                a,
		Output:                   out1.Name,
		OutputShape:              slices.Delete(slices.Clone(out1.Shape), outAxis, outAxis+1),
		OutputBatchAxis:          outAxis,
		Precision:                g.Precision,
		Params:                   g.Params,
		FLOPsPerSample:           2 * per.macs,
		InputBytesPerSample:      bytesPerFP32 * in.Elements(),
		ActivationBytesPerSample: bytesPerFP32 * per.activations,
		WeightBytes:              bytesPerFP32 * g.Params,
	}, nil
}

// totals are a pass's sums over the nodes that run: the multiply-adds,
// and the elements of the outputs that count as activations.
type totals struct{ macs, activations int64 }

func totalsOf(p *Pass) totals {
	var t totals
	for _, n := range p.Nodes {
		if n.Folded {
			continue
		}
		t.macs += n.MACs
		if n.Activation {
			for _, o := range n.Outputs {
				if o.Name != "" { // an output the node leaves out
					t.activations += o.Elements()
				}
			}
		}
	}
	return t
}

func (t totals) minus(u totals) totals { return totals{t.macs - u.macs, t.activations - u.activations} }
func (t totals) times(k int64) totals  { return totals{k * t.macs, k * t.activations} }

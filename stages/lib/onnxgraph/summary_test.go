package onnxgraph_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mlsched/mlsched/stages/lib/catalog"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph"
	"github.com/mlsched/mlsched/stages/lib/onnxgraph/testmodels"
	"github.com/mlsched/mlsched/stages/lib/zoo"
)

// TestZooMatchesCatalog derives every zoo model's figures from the graph
// the zoo builds, in both precisions, and checks them against the
// catalog's built-in entry, which counts the same layers by hand
// (stages/lib/catalog/arch.go): the analysis sees what the catalog says.
func TestZooMatchesCatalog(t *testing.T) {
	for _, name := range zoo.Names() {
		for _, prec := range zoo.Precisions() {
			t.Run(name+"/"+prec, func(t *testing.T) {
				b, err := zoo.Build(name, zoo.Options{Seed: 7, Precision: prec})
				if err != nil {
					t.Fatal(err)
				}
				g, err := onnxgraph.Parse(b)
				if err != nil {
					t.Fatal(err)
				}
				s, err := g.Summarize(0, false)
				if err != nil {
					t.Fatal(err)
				}
				c, _ := catalog.Zoo().Lookup(name)
				got := []int64{s.Params, s.FLOPsPerSample, s.InputBytesPerSample, s.ActivationBytesPerSample, s.WeightBytes}
				want := []int64{c.Params, c.FLOPsPerSample, c.InputBytesPerSample, c.ActivationBytesPerSample, c.WeightBytes}
				if !slices.Equal(got, want) {
					t.Errorf("params, FLOPs, input, activation and weight bytes = %v, catalog %v", got, want)
				}
				if s.Input != c.Input || !slices.Equal(s.InputShape, c.InputShape) || s.BatchAxis != int(c.BatchAxis) ||
					s.Output != c.Output || !slices.Equal(s.OutputShape, c.OutputShape) || s.OutputBatchAxis != int(c.OutputBatchAxis) {
					t.Errorf("signature %s %v axis %d -> %s %v axis %d, catalog %s %v axis %d -> %s %v axis %d",
						s.Input, s.InputShape, s.BatchAxis, s.Output, s.OutputShape, s.OutputBatchAxis,
						c.Input, c.InputShape, c.BatchAxis, c.Output, c.OutputShape, c.OutputBatchAxis)
				}
				if s.Precision != prec {
					t.Errorf("Precision = %s, want %s", s.Precision, prec)
				}
			})
		}
	}
}

// TestTestModels checks the test models' figures against their layers'
// hand counts.
func TestTestModels(t *testing.T) {
	for _, build := range []func(string, int64) (testmodels.Model, error){testmodels.MobileNet, testmodels.WideMLP, testmodels.Encoder} {
		for _, prec := range zoo.Precisions() {
			m, err := build(prec, 3)
			if err != nil {
				t.Fatal(err)
			}
			t.Run(m.Name+"/"+prec, func(t *testing.T) {
				g, err := onnxgraph.Parse(m.ONNX)
				if err != nil {
					t.Fatal(err)
				}
				s, err := g.Summarize(0, false)
				if err != nil {
					t.Fatal(err)
				}
				if s.FLOPsPerSample != 2*m.MACs || s.Params != m.Params || !slices.Equal(s.InputShape, m.Input) ||
					!slices.Equal(s.OutputShape, m.Output) || s.Precision != prec {
					t.Errorf("FLOPs %d, params %d, input %v, output %v, %s; want %d, %d, %v, %v, %s",
						s.FLOPsPerSample, s.Params, s.InputShape, s.OutputShape, s.Precision, 2*m.MACs, m.Params, m.Input, m.Output, prec)
				}
			})
		}
	}
}

// TestPerNode checks a pass's per-node figures on the MLP, small enough to
// count by hand: Gemm 10→64 is 640 multiply-adds a sample, reads its input,
// weights and bias, and writes 64 floats a sample.
func TestPerNode(t *testing.T) {
	b, err := zoo.Build("mlp", zoo.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	g, err := onnxgraph.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	p, err := g.Infer(0, 3)
	if err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, n := range p.Nodes {
		ops = append(ops, n.Op)
	}
	if want := []string{"Gemm", "Relu", "Gemm", "Relu", "Gemm", "Sigmoid"}; !slices.Equal(ops, want) {
		t.Fatalf("ops %v, want %v", ops, want)
	}
	first := p.Nodes[0]
	params := int64(4 * (64*10 + 64))
	want := onnxgraph.Node{Name: first.Name, Op: "Gemm", MACs: 3 * 640, FLOPs: 2 * 3 * 640,
		BytesRead: 4*3*10 + params, BytesWritten: 4 * 3 * 64, ParamBytes: params, Activation: true}
	first.Inputs, first.Outputs = nil, nil
	if !reflect.DeepEqual(first, want) {
		t.Errorf("first node %+v, want %+v", first, want)
	}
	relu := p.Nodes[1]
	if relu.Activation || relu.Folded || relu.FLOPs != 3*64 || relu.MACs != 0 {
		t.Errorf("Relu: activation %v, folded %v, FLOPs %d, MACs %d; want in place, run, %d FLOPs, no MACs",
			relu.Activation, relu.Folded, relu.FLOPs, relu.MACs, 3*64)
	}
}

// TestOtherBatchAxis summarizes a model whose batch axis is the second:
// [5, N, 8] through a MatMul to [5, N, 4].
func TestOtherBatchAxis(t *testing.T) {
	g, err := zoo.NewGraph("seqfirst", zoo.FP32, 1)
	if err != nil {
		t.Fatal(err)
	}
	x := g.Input("x", []int64{5, zoo.Batch, 8})
	g.Output("y", g.Op("MatMul", x, g.Uniform("w", []int64{8, 4}, 1)), []int64{5, zoo.Batch, 4})
	b, err := g.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	gr, err := onnxgraph.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	s, err := gr.Summarize(0, false)
	if err != nil {
		t.Fatal(err)
	}
	if s.BatchAxis != 1 || !slices.Equal(s.InputShape, []int64{5, 8}) || s.OutputBatchAxis != 1 ||
		!slices.Equal(s.OutputShape, []int64{5, 4}) || s.FLOPsPerSample != 2*5*8*4 || s.ActivationBytesPerSample != 4*5*4 {
		t.Errorf("summary %+v; want batch axis 1 in and out, [5 8] -> [5 4], %d FLOPs and %d activation bytes a sample",
			s, 2*5*8*4, 4*5*4)
	}
	if _, err := gr.Summarize(0, true); !errors.Is(err, onnxgraph.ErrBatchAxis) || !strings.Contains(err.Error(), "fixed size 5") {
		t.Errorf("Summarize with batch_axis 0 = %v, want a refusal of the fixed axis", err)
	}
}
